/* selopt.h — the selection options every trace-reading command takes
 * (stats, dump, export; SELOPT_HELP below, docs/CLI.md "Selection and time
 * base"), parsed here once; analysis/steps/selection.h turns them into time
 * intervals against a trace.  Given together they intersect. */
#ifndef GPUPROF_COMMON_SELOPT_H
#define GPUPROF_COMMON_SELOPT_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

struct sel_opts {
	uint64_t since, until;          /* ns after the trace start */
	int have_since, have_until;
	int have_steps;
	int64_t step_a, step_b;         /* --steps: INT64_MIN / INT64_MAX when open */
	const char *steps_arg;          /* as given, for messages */
	const char *range;              /* --range NAME; NULL none */
	int abs_time;                   /* --abs-time */
};

/* Option values outside the range of a plain char, for getopt_long. */
enum { SELOPT_SINCE = 0x1100, SELOPT_UNTIL, SELOPT_STEPS, SELOPT_RANGE, SELOPT_ABS_TIME };

/* The getopt_long entries, to put in a command's option table. */
#define SELOPT_LONG_OPTIONS \
	{ "since", required_argument, NULL, SELOPT_SINCE }, \
	{ "until", required_argument, NULL, SELOPT_UNTIL }, \
	{ "steps", required_argument, NULL, SELOPT_STEPS }, \
	{ "range", required_argument, NULL, SELOPT_RANGE }, \
	{ "abs-time", no_argument, NULL, SELOPT_ABS_TIME }

/* The --help lines (each starts with two spaces, 20 columns of option). */
#define SELOPT_HELP \
	"  --since T         only records starting T or later after the trace start\n" \
	"                    (T: 10ms, 2s, 500us, plain ns)\n" \
	"  --until T         only records starting before T after the trace start\n" \
	"  --steps A:B       only the time of steps A to B (both included; A: B: or A),\n" \
	"                    numbered as in stats --report steps (docs/STEPS.md)\n" \
	"  --range NAME      only the time of the NVTX ranges named NAME (or 'step *')\n" \
	"  --abs-time        times on the trace clock instead of since the trace start\n"

void sel_opts_init(struct sel_opts *o);
/* Handles option `opt` (a SELOPT_* value) with its argument: 1 taken, 0
 * not a selection option, -1 a bad value (the message printed). */
int sel_opts_parse(struct sel_opts *o, int opt, const char *arg);
/* After all options: 0, or -1 with the message printed (--since not before
 * --until). */
int sel_opts_check(const struct sel_opts *o);
/* Whether anything is selected (else every record). */
int sel_opts_any(const struct sel_opts *o);

#endif
