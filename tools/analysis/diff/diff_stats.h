/* diff_stats.h — is a difference between two runs' step times larger than
 * their run-to-run noise?  The two tests `gpuprof diff` reports
 * (docs/REPORT.md, "gpuprof diff"):
 *
 *  - Mann-Whitney U (Wilcoxon rank-sum), two-sided: U_A = the number of
 *    pairs (a, b) with a > b, plus half the ties.  Exact p (the distribution
 *    of U over every ordering) when there are no ties and both samples have
 *    at most 25 values; otherwise the normal approximation with the tie
 *    correction and a continuity correction of 1/2 (scipy.stats.mannwhitneyu,
 *    method="asymptotic").  p = 1 when every value is the same.
 *  - Bootstrap: the 95 % interval of median(B) - median(A) over 2000
 *    resamples (each sample drawn with replacement from its own run),
 *    percentiles 2.5 and 97.5 interpolated linearly; the generator is
 *    splitmix64 seeded with 1, so the interval is the same on every run.
 *
 * Both treat steps as independent draws; steps of one run are not quite
 * (a slow phase lasts several steps), so p is a guide, not a guarantee.
 * Worse, a whole run is often faster or slower than another identical one
 * (CPU placement, clocks): with one run a side that offset cannot be told
 * from an effect.  With two or more runs a side the verdict comes from
 *
 *  - Welch's t test on the runs' median step times: t = (mean_B - mean_A) /
 *    se, se^2 = s_A^2/n_A + s_B^2/n_B (sample variances of the run medians),
 *    Welch-Satterthwaite df, two-sided p from Student's t (the regularised
 *    incomplete beta function, Numerical Recipes' continued fraction), and
 *    the 95 % interval mean_B - mean_A +- t_{0.975,df} se.  se = 0: p = 1
 *    when the means are equal, else 0.  A permutation test over runs is
 *    exact but cannot go below 2 / C(n_A + n_B, n_A): 0.1 for 3 + 3 runs. */
#ifndef GPUPROF_ANALYSIS_DIFF_DIFF_STATS_H
#define GPUPROF_ANALYSIS_DIFF_DIFF_STATS_H

#include <stddef.h>
#include <stdint.h>

#define DIFF_EXACT_MAX 25       /* exact U distribution up to this many values per sample */
#define DIFF_BOOTSTRAP 2000
#define DIFF_BOOTSTRAP_SEED 1u

struct mwu { double u_a, z, p; int exact; };

/* a[0..na), b[0..nb) unchanged.  na, nb > 0. */
void mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct mwu *out);
/* The 95 % bootstrap interval of median(b) - median(a) (DIFF_BOOTSTRAP
 * resamples, seed DIFF_BOOTSTRAP_SEED). */
void bootstrap_median_diff(const double *a, size_t na, const double *b, size_t nb, double *lo, double *hi);
struct welch { double mean_a, mean_b, sd_a, sd_b, t, df, p, lo, hi; };

/* a[0..na), b[0..nb): na, nb >= 2. */
void welch_t(const double *a, size_t na, const double *b, size_t nb, struct welch *out);
/* Two-sided P(|T| >= |t|) for Student's t with df > 0 degrees of freedom. */
double student_t_p(double t, double df);
/* The t with student_t_p(t, df) = p (0 < p < 1). */
double student_t_inv(double p, double df);

#endif
