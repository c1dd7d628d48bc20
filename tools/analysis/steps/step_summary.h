/* step_summary.h — what the steps of one process add up to: warm-up
 * steps, the steps counted, step-time statistics, GPU busy share, the
 * buckets over the steps, outlier steps and what differs in each, with
 * the definitions of docs/STEPS.md "Step detection" (warm-up) and "Summary
 * and outliers" (quantile.h's quantiles).  Works on the finished rows of
 * steps.h (O(steps)). */
#ifndef GPUPROF_ANALYSIS_STEPS_STEP_SUMMARY_H
#define GPUPROF_ANALYSIS_STEPS_STEP_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/steps/steps.h"

struct qstats { double min, p10, med, p90, max, mean; };

struct step_summary {
	size_t nwarm, ncounted, noutliers;
	struct qstats time;
	uint64_t wall;                      /* sum of the counted steps' times */
	double busy_pct;                    /* (compute + comm + memory) / wall */
	uint64_t bucket[SB_COUNT];          /* sums over the counted steps */
	struct qstats bucket_q[SB_COUNT];   /* per step */
	struct qstats kernels, kernel_ns;   /* launched, per step */
	/* launch statistics over the counted steps */
	uint64_t launched, short_ops, runtime_outliers, delay_outliers, delay_max;
	uint32_t queue_max;
	double cpu_med, gpu_med, delay_med; /* medians of the per-step medians */
	char **why;                         /* per row: what differs (outliers), else NULL */
	/* a host that runs ahead of the GPU: the GPU work launched per counted
	 * step (kernel + copy and set time) against the mean step */
	struct qstats gpu_work;             /* per step */
	int runs_ahead;                     /* gpu_work.mean > STEP_RUN_AHEAD x wall / ncounted */
};
/* The host issued more GPU work per step than its step lasted: the steps
 * are the host's, the pipeline's step is the GPU's (as ADV_RUN_AHEAD). */
#define STEP_RUN_AHEAD 1.2

/* Whether the summaries count a step: not partial, inside one GPU-activity
 * window, and not warm-up unless keep_warmup (after step_summarize). */
int step_counted(const struct step_row *w, int keep_warmup);
/* Flags warm-up and outlier rows (step_row.warmup/outlier) and fills *out. */
void step_summarize(struct steps_proc *p, int keep_warmup, struct step_summary *out);
void step_summary_free(struct step_summary *s, size_t nrows);

#endif
