/* diff.h — what changed between two sets of runs (`gpuprof diff A B`,
 * `gpuprof diff A1 A2 ... --vs B1 B2 ...`; docs/REPORT.md): what differs in
 * their set-up (diff_setup.h), their steady-state steps aligned, step time
 * A vs B with a test of whether the difference exceeds the run-to-run noise
 * (diff_stats.h), and the deltas per step of the buckets, kernels, NVTX
 * ranges, API calls and copies, ranked by how much they move.
 *
 * Use: for each pair (one process of every run of A and of B: the same
 * rank, or the same place in pid order), diff_align picks the steps to
 * compare; a step_profile.h pass over each trace with those steps fills
 * .prof; diff_tables_fill makes the tables and one headline per pair.
 *
 * Alignment, the per-step means and the verdict: docs/REPORT.md
 * "gpuprof diff". */
#ifndef GPUPROF_ANALYSIS_DIFF_DIFF_H
#define GPUPROF_ANALYSIS_DIFF_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/steps/step_profile.h"
#include "analysis/steps/steps.h"
#include "common/report.h"

#define DIFF_ALIGN_MIN 3
#define DIFF_ALPHA 0.05
#define DIFF_TOP 20
/* The default --noise: with one run a side, a change of the median step time
 * smaller than this (%) is within the run-to-run noise.  Identical MNIST
 * runs on the H200 differed by 10 % (median step time, the report phase of
 * 2026-12-03) and spread over 2.38-3.10 and 2.04-2.89 ms per step, +-13 %
 * and +-17 % about their middle (docs/PERFORMANCE.md). */
#define DIFF_NOISE_PCT 15.0

struct diff_run {                           /* one process of one run (trace) */
	const char *path;                   /* its trace */
	size_t trace;                       /* the trace's index (the caller's) */
	uint32_t pid;
	const struct steps_proc *p;         /* summarised (step_summarize: warm-up flags set) */
	struct step_row *rows; size_t n; /* the aligned steps (diff_align), copies */
	const struct step_profile_proc *prof;   /* their profile; NULL: none */
	const char *cmd, *settings;         /* its process record's; NULL: unknown */
	size_t nthreads, nprocs;            /* its threads that recorded; processes in its trace */
};

struct diff_side { struct diff_run *run; size_t nrun; };
/* The steps of every run of a side. */
size_t diff_side_steps(const struct diff_side *s);

struct diff_pair {
	int32_t rank;                       /* -1: none */
	struct diff_side a, b;
	char aligned[160];                  /* how the steps were aligned (one line) */
};

struct diff_opts {
	double alpha;    /* significance level; 0: DIFF_ALPHA */
	size_t top;      /* rows per pair in the kernel, NVTX and API tables; 0: all */
	double noise_pct; /* one run a side: the floor (%); < 0: DIFF_NOISE_PCT */
};

/* Fills the runs' rows and n, and d->aligned. */
void diff_align(struct diff_pair *d, int keep_warmup);
void diff_pair_free(struct diff_pair *d); /* the rows and runs */

enum { DT_SUMMARY, DT_SETUP, DT_STEPS, DT_RUNS, DT_BUCKETS, DT_KERNELS, DT_NVTX, DT_API, DT_COPIES, DT_COUNT };
/* "diff", "diff_setup", "diff_steps", "diff_runs", "diff_buckets", "diff_kernels", "diff_nvtx",
 * "diff_api", "diff_copies" */
extern const char *const diff_table_names[DT_COUNT];

struct diff_tables {
	struct report rep[DT_COUNT];
	char note[DT_COUNT][1024]; /* rep[i].note points here when not empty */
	char **headline;        /* one line per pair (also the diff table's rows) */
	size_t nheadline;
};

void diff_tables_fill(struct diff_tables *out, struct diff_pair *pairs, size_t npairs, const struct diff_opts *o);
void diff_tables_free(struct diff_tables *t);

#endif
