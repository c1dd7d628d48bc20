/* stats_drive.h — the driver of the stats reports over one trace, for
 * every command that consumes them (`gpuprof stats`, `gpuprof report`):
 * the pre-pass (in slices where the trace allows:
 * stats_prepass_shards.h), the reports that merge in shards on N threads
 * (stats_shards.h) beside one pass here for the others, their merge, then
 * stats_ctx_finish; a damaged trace, or a merge that could not be exact, is
 * read again on one thread.  What each report is, and the order of it all:
 * stats_report.h.
 *
 * Use: fill the inputs, stats_drive_plan (which reports go in shards; it
 * may replace the reader by one with fewer decoding threads: open what
 * reads through d->r after it), stats_drive_run, read ctx and self[],
 * stats_drive_free. */
#ifndef GPUPROF_REPORTS_STATS_DRIVE_H
#define GPUPROF_REPORTS_STATS_DRIVE_H

#include <stddef.h>
#include <stdint.h>

#include "common/report.h"
#include "reports/stats_prepass_shards.h"
#include "reports/stats_report.h"
#include "reports/stats_shards.h"

/* Where the time went (stats --verbose). */
struct stats_phase_times {
	double prepass, pass, shards, finish;
	struct stats_prepass_cpu pre; /* the pre-pass's slices (k 0: none) */
	struct stats_shards_times sh;
	struct stats_gpu_pass gpu;    /* finish's pass over the GPU operations in slices (cpu_sum 0: none) */
	int serial, nshards;
};

struct stats_drive {
	/* in */
	gp_reader *r;                 /* replaced by stats_drive_plan where shards run */
	const char *path;
	int strict;                   /* --strict: a truncated trace exits 2 */
	const struct stats_opts *so;
	const struct selection *sel;  /* NULL: the whole trace */
	int abs_time;
	enum name_form names;
	const int *run;               /* per report of the list: in the run (NULL: the steps report
				       * alone, as `gpuprof steps`: diff's and advise's drives) */
	int threads;                  /* 1: no slices */
	const struct stats_pre_hook *pre; /* NULL: none */
	/* the steps' prefix (steps_slice.h) of the slices, noted by the
	 * pre-pass whether the steps run in them or not, for the caller's
	 * own passes in the same slices (report's advise facts) */
	int want_prefix;
	int keep_going;               /* a failed step detection (steps_err says why): 0 ends the run
				       * with its message; 1 leaves the steps out (ctx.pipe.steps NULL);
				       * 2 ends the run, the message the caller's (diff names the trace) */
	/* NULL, or asked after the pre-pass (before any slice of the pass
	 * starts): non-zero ends the run there, ctx as the pre-pass left it
	 * (stopped_after_pre set): a --steps selection whose steps are all
	 * NVTX ranges needs nothing of the pass (reports/stats_selection.c) */
	int (*pre_enough)(const struct stats_ctx *ctx);
	/* out */
	struct stats_ctx ctx;
	void **self;                  /* per report: its state (run[i]) */
	void *pre_st;                 /* pre's state for the whole trace */
	const char *steps_err;        /* why the step detection failed; NULL */
	int read_rc;                  /* the pass's read status (its reader's: 0, or a GP_ERR_*) */
	int stopped_after_pre;        /* pre_enough said so */
	struct steps_prefix *prefix;  /* want_prefix: the slices' prefix (NULL: one thread); the caller's */
	struct stats_phase_times pt;
	/* the plan */
	size_t nreps;
	int *sharded;
	int nshards, gpu_threads;
	uint32_t shard_needs;
	struct selection none;        /* sel NULL */
	int *steps_alone;             /* run NULL */
};

/* Before anything is read: the process's allocator set for slices
 * (their threads' arenas give back what they free). */
void stats_drive_malloc(void);
void stats_drive_plan(struct stats_drive *d);
/* 0: fill and print; -1: nothing to print (the message given).  *code:
 * the exit code (tool_finish's: EXIT_OK, or 2 for a damaged trace). */
int stats_drive_run(struct stats_drive *d, int *code);
/* The tables, one per table of the list in its order (tab: named here),
 * filled for each report run with a table in want.  chosen: want holds
 * the tables asked for; else the default set is added to it (every table
 * of a report run that is in its default set, but those printed only when
 * named, unless want already has them: stats --per-step). */
void stats_drive_fill(struct stats_drive *d, int chosen, struct report *tab, int *want);
void stats_drive_free(struct stats_drive *d);

#endif
