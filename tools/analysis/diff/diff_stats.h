/* diff_stats.h — is a difference between two runs' step times larger than
 * their run-to-run noise?  The tests `gpuprof diff` reports — Mann-Whitney
 * U, the bootstrap interval of the medians' difference, Welch's t on the
 * runs' medians — and why each: docs/REPORT.md "Is the difference larger
 * than the noise?". */
#ifndef GPUPROF_ANALYSIS_DIFF_DIFF_STATS_H
#define GPUPROF_ANALYSIS_DIFF_DIFF_STATS_H

#include <stddef.h>
#include <stdint.h>

#define DIFF_EXACT_MAX 25       /* exact U distribution up to this many values per sample */
#define DIFF_BOOTSTRAP 2000
#define DIFF_BOOTSTRAP_SEED 1u

struct mwu { double u_a, p; int exact; };

/* a[0..na), b[0..nb) unchanged.  na, nb > 0. */
void mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct mwu *out);
/* The 95 % bootstrap interval of median(b) - median(a) (DIFF_BOOTSTRAP
 * resamples, seed DIFF_BOOTSTRAP_SEED). */
void bootstrap_median_diff(const double *a, size_t na, const double *b, size_t nb, double *lo, double *hi);
struct welch { double mean_a, mean_b, sd_a, sd_b, t, df, p, lo, hi; };

/* a[0..na), b[0..nb): na, nb >= 2. */
void welch_t(const double *a, size_t na, const double *b, size_t nb, struct welch *out);

#endif
