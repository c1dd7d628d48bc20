/* quantile.h — quantiles of a stream of unsigned values (durations, sizes)
 * in bounded memory.  A sketch starts exact (it keeps the values) and its
 * owner may switch it to a histogram at any time (qsketch_to_histogram):
 * log-spaced buckets, DDSketch's mapping (Masson, Rim, Lee, "DDSketch: a
 * fast and fully-mergeable quantile sketch with relative-error guarantees",
 * VLDB 2019): value v > 0 goes to bucket i = ceil(log_g(v)) with
 * g = (1 + a) / (1 - a), and bucket i stands for 2 g^i / (g + 1).  Every
 * value of bucket i lies within a relative distance a of that, so any
 * quantile read from the histogram is within QSKETCH_REL_ERR of the exact
 * one (the k-th smallest value, same k).  Zero is counted apart (exact).
 * Memory: 8 bytes per value while exact; then 8 bytes per bucket between
 * the smallest and largest value's buckets (a range of 1000x: 692 buckets,
 * 5.5 KiB), whatever the number of values.
 * tests/tools/test_quantile.c checks the bound against exact values. */
#ifndef GPUPROF_ANALYSIS_CORE_QUANTILE_H
#define GPUPROF_ANALYSIS_CORE_QUANTILE_H

#include <stddef.h>
#include <stdint.h>

#define QSKETCH_REL_ERR 0.005

/* The quantile of the tools, numpy's default ("linear"): quantile p (0..1)
 * of n values is at rank h = (n - 1) p (0-based), between the values of
 * ranks lo = floor(h) and hi = lo + 1 (lo at the last): value(lo) +
 * frac (value(hi) - value(lo)), frac = h - lo.  n > 0. */
struct qrank { uint64_t lo, hi; double frac; };
struct qrank qrank_of(uint64_t n, double p);
/* Quantile p of v[0..n), sorted ascending; 0 for n = 0. */
double quantile_sorted(const double *v, size_t n, double p);
/* Quantile p of v[0..n), which it sorts; 0 for n = 0. */
double quantile_of(double *v, size_t n, double p);
/* Median of v[0..n) by selection, without a sort (the bootstrap's
 * thousands of medians): the middle value, or the mean of the two middle
 * values for an even n (qsketch_median's definition); reorders v.  0 for
 * n = 0. */
double median_select(double *v, size_t n);

/* Zero-initialised = empty and exact. */
struct qsketch {
	uint64_t n;                 /* values added */
	/* exact: the values (sorted when read) */
	uint64_t *v; size_t nv, cv;
	size_t sorted;              /* v[0 .. sorted) is sorted */
	/* histogram */
	int approx;
	uint64_t zeros;
	int32_t lo;                 /* bucket index of cnt[0] */
	uint64_t *cnt; size_t ncnt; /* buckets lo .. lo + ncnt - 1 */
};

void qsketch_add(struct qsketch *q, uint64_t v);
/* Exact -> histogram (the values are binned and freed); no-op if already. */
void qsketch_to_histogram(struct qsketch *q);
/* Exact mode: the q->nv values, sorted (once, and again only after more
 * were added); NULL once a histogram. */
const uint64_t *qsketch_sorted(struct qsketch *q);
/* The k-th smallest value (0-based, k < n): exact, or the estimate of its
 * bucket clamped to [min, max] (the caller's exact extremes).  Exact mode
 * sorts the values (once, and again only after more were added). */
double qsketch_kth(struct qsketch *q, uint64_t k, uint64_t min, uint64_t max);
/* Median: the middle value, or the mean of the two middle values for an
 * even count; 0 when empty. */
double qsketch_median(struct qsketch *q, uint64_t min, uint64_t max);
/* Quantile p (0..1) by qrank_of: exact, or from the two ranks' estimates;
 * 0 when empty. */
double qsketch_quantile(struct qsketch *q, double p, uint64_t min, uint64_t max);
/* Adds the values of src to dst: kept when both are exact (and sorted,
 * by one linear merge, when both were: qsketch_sorted), else dst becomes a
 * histogram (src's values or buckets binned into it). */
void qsketch_merge(struct qsketch *dst, const struct qsketch *src);
void qsketch_free(struct qsketch *q);

#endif
