/* diff.h — what changed between two runs (`gpuprof diff A B`,
 * docs/REPORT.md): their steady-state steps aligned, step time A vs B with a
 * test of whether the difference exceeds the run-to-run noise
 * (diff_stats.h), and the deltas per step of the buckets, kernels, NVTX
 * ranges, API calls and copies, ranked by how much they move.
 *
 * Use: for each pair of processes (one of A, one of B: the same rank, or in
 * order), diff_align picks the steps to compare; a step_profile.h pass over
 * each trace with those steps fills .prof; diff_tables_fill makes the
 * tables and one headline per pair.
 *
 * Alignment: the counted steps of each run (docs/STEPS.md: not warm-up,
 * not partial, inside the GPU-activity windows); when both runs number
 * their steps (NVTX "step <N>") and at least DIFF_ALIGN_MIN numbers are
 * counted in both, only those numbers, so the same part of training is
 * compared.  Per-step figures are means over the aligned steps (the buckets
 * then add up to the change in mean step time); the step time itself is
 * compared by median, with the rank test and the bootstrap interval. */
#ifndef GPUPROF_ANALYSIS_DIFF_H
#define GPUPROF_ANALYSIS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/step_profile.h"
#include "analysis/steps.h"
#include "common/report.h"

#define DIFF_ALIGN_MIN 3
#define DIFF_ALPHA 0.05
#define DIFF_TOP 20

struct diff_side {
	uint32_t pid;
	int32_t rank;
	const struct steps_proc *p;         /* summarised (step_summarize: warm-up flags set) */
	const struct step_row **rows; size_t n; /* the aligned steps (diff_align) */
	const struct step_profile_proc *prof;   /* their profile; NULL: none */
};

struct diff_pair {
	struct diff_side a, b;
	char aligned[160];                  /* how the steps were aligned (one line) */
};

struct diff_opts {
	size_t sz;       /* sizeof(struct diff_opts) */
	double alpha;    /* significance level; 0: DIFF_ALPHA */
	size_t top;      /* rows per pair in the kernel, NVTX and API tables; 0: all */
};

/* Fills d->a.rows, d->b.rows and d->aligned from d->a.p and d->b.p. */
void diff_align(struct diff_pair *d, int keep_warmup);
void diff_pair_free(struct diff_pair *d);

enum { DT_SUMMARY, DT_STEPS, DT_BUCKETS, DT_KERNELS, DT_NVTX, DT_API, DT_COPIES, DT_COUNT };
/* "diff", "diff_steps", "diff_buckets", "diff_kernels", "diff_nvtx", "diff_api", "diff_copies" */
extern const char *const diff_table_names[DT_COUNT];

struct diff_tables {
	struct report rep[DT_COUNT];
	char note[DT_COUNT][640]; /* rep[i].note points here when not empty */
	char **headline;        /* one line per pair (also the diff table's rows) */
	size_t nheadline;
};

void diff_tables_fill(struct diff_tables *out, struct diff_pair *pairs, size_t npairs, const struct diff_opts *o);
void diff_tables_free(struct diff_tables *t);

#endif
