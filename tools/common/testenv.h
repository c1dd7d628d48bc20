/* testenv.h — the settings from the environment that only tests use: each
 * moves a limit of the tools so that a small trace reaches a path that a
 * real one reaches at scale (a cut union, a spilled table, an estimated
 * median), or shows what a pass made.  Their names, syntax and ranges are
 * the table in testenv.c, documented once (docs/CLI.md "Test settings").
 * The user's settings are the shim's (libprof/gp_settings.h). */
#ifndef GPUPROF_COMMON_TESTENV_H
#define GPUPROF_COMMON_TESTENV_H

#include <stdint.h>

enum testenv {
	TESTENV_UNION_LAG,          /* GPUPROF_UNION_LAG: the streaming unions' lag */
	TESTENV_STEPS_LEAD,         /* GPUPROF_STEPS_LEAD: every steps slice's lead-in (a duration) */
	TESTENV_PREPASS_ONE_THREAD, /* GPUPROF_PREPASS_ONE_THREAD=1: stats' pre-pass on one thread */
	TESTENV_PREPASS_DUMP,       /* GPUPROF_PREPASS_DUMP=1: what the pre-pass made, on stderr */
	TESTENV_SPILL_MEM,          /* GPUPROF_SPILL_MEM: the bytes of each spill kept in memory */
	TESTENV_SUMMARY_EXACT,      /* GPUPROF_SUMMARY_EXACT: a table's limit of exact values */
	TESTENV_CACHE_MAX,          /* GPUPROF_CACHE_MAX: the steps' indexes' bytes in their directory */
};

/* 0 with *v (v: NULL for a switch) the setting's value, or -1 (*v
 * untouched) when it is not set or not valid: then the tools do what they
 * do without it. */
int testenv(enum testenv id, uint64_t *v);

#endif
