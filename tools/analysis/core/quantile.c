/* quantile.c — see quantile.h. */
#include "analysis/core/quantile.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* g = (1 + a) / (1 - a); buckets of v > 0: ceil(log(v) / log(g)) */
static double log_gamma(void)
{
	/* computed once; atomic: sketches fill on several threads (stats --threads) */
	static _Atomic double lg;
	double v = atomic_load_explicit(&lg, memory_order_relaxed);
	if (!v) {
		v = log((1.0 + QSKETCH_REL_ERR) / (1.0 - QSKETCH_REL_ERR));
		atomic_store_explicit(&lg, v, memory_order_relaxed);
	}
	return v;
}

static int32_t bucket_of(uint64_t v)
{
	return (int32_t)ceil(log((double)v) / log_gamma());
}

static double bucket_value(int32_t i)
{
	double g = exp(log_gamma());
	return 2.0 * exp((double)i * log_gamma()) / (g + 1.0);
}

static void bucket_add(struct qsketch *q, int32_t i, uint64_t count)
{
	if (!q->ncnt) {
		q->cnt = xcalloc(1, sizeof(*q->cnt));
		q->ncnt = 1;
		q->lo = i;
	} else if (i < q->lo) {
		size_t grow = (size_t)(q->lo - i);
		uint64_t *n = xcalloc(q->ncnt + grow, sizeof(*n));
		memcpy(n + grow, q->cnt, q->ncnt * sizeof(*n));
		free(q->cnt);
		q->cnt = n; q->ncnt += grow; q->lo = i;
	} else if ((size_t)(i - q->lo) >= q->ncnt) {
		size_t want = (size_t)(i - q->lo) + 1;
		q->cnt = xrealloc(q->cnt, want * sizeof(*q->cnt));
		memset(q->cnt + q->ncnt, 0, (want - q->ncnt) * sizeof(*q->cnt));
		q->ncnt = want;
	}
	q->cnt[i - q->lo] += count;
}

static void hist_add(struct qsketch *q, uint64_t v, uint64_t count)
{
	if (!v) { q->zeros += count; return; }
	bucket_add(q, bucket_of(v), count);
}

void qsketch_add(struct qsketch *q, uint64_t v)
{
	q->n++;
	if (q->approx) hist_add(q, v, 1);
	else VEC_PUSH(q->v, q->nv, q->cv, v);
}

void qsketch_to_histogram(struct qsketch *q)
{
	if (q->approx) return;
	q->approx = 1;
	for (size_t i = 0; i < q->nv; i++) hist_add(q, q->v[i], 1);
	free(q->v);
	q->v = NULL; q->nv = q->cv = q->sorted = 0;
}

const uint64_t *qsketch_sorted(struct qsketch *q)
{
	if (q->approx) return NULL;
	if (q->sorted != q->nv) {
		qsort(q->v, q->nv, sizeof(uint64_t), cmp_u64);
		q->sorted = q->nv;
	}
	return q->v;
}

double qsketch_kth(struct qsketch *q, uint64_t k, uint64_t min, uint64_t max)
{
	if (!q->approx) {
		const uint64_t *v = qsketch_sorted(q);
		return k < q->nv ? (double)v[k] : 0;
	}
	if (k < q->zeros) return 0;
	uint64_t seen = q->zeros;
	for (size_t i = 0; i < q->ncnt; i++) {
		seen += q->cnt[i];
		if (k < seen) {
			double e = bucket_value(q->lo + (int32_t)i);
			if (e < (double)min) e = (double)min;
			if (e > (double)max) e = (double)max;
			return e;
		}
	}
	return (double)max;
}

double qsketch_median(struct qsketch *q, uint64_t min, uint64_t max)
{
	if (!q->n) return 0;
	if (q->n & 1) return qsketch_kth(q, q->n / 2, min, max);
	return (qsketch_kth(q, q->n / 2 - 1, min, max) + qsketch_kth(q, q->n / 2, min, max)) / 2.0;
}

struct qrank qrank_of(uint64_t n, double p)
{
	double h = (double)(n - 1) * p;
	uint64_t lo = (uint64_t)floor(h);
	struct qrank r = { lo, lo + 1 < n ? lo + 1 : lo, h - (double)lo };
	return r;
}

double qsketch_quantile(struct qsketch *q, double p, uint64_t min, uint64_t max)
{
	if (!q->n) return 0;
	struct qrank r = qrank_of(q->n, p);
	double a = qsketch_kth(q, r.lo, min, max), b = qsketch_kth(q, r.hi, min, max);
	return a + r.frac * (b - a);
}

double quantile_sorted(const double *v, size_t n, double p)
{
	if (!n) return 0;
	struct qrank r = qrank_of(n, p);
	return v[r.lo] + r.frac * (v[r.hi] - v[r.lo]);
}

double quantile_of(double *v, size_t n, double p)
{
	if (!n) return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return quantile_sorted(v, n, p);
}

/* quickselect (three-way partition): the k-th smallest of v[0..n), with
 * v[0..k) the k smallest afterwards */
static double select_k(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* k is in [lo, hi) */
	while (hi - lo > 1) {
		double p = v[lo + (hi - lo) / 2], t;
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (v[i] < p) { t = v[lt]; v[lt++] = v[i]; v[i++] = t; }
			else if (v[i] > p) { t = v[--gt]; v[gt] = v[i]; v[i] = t; }
			else i++;
		}
		if (k < lt) hi = lt;
		else if (k >= gt) lo = gt;
		else return p;
	}
	return v[k];
}

double median_select(double *v, size_t n)
{
	if (!n) return 0;
	double hi = select_k(v, n, n / 2);
	if (n % 2) return hi;
	/* the largest of the lower half, now in v[0 .. n/2) */
	double lo = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lo) lo = v[i];
	return (lo + hi) / 2;
}

void qsketch_merge(struct qsketch *dst, const struct qsketch *src)
{
	if (!src->approx && !dst->approx) {
		if (!src->nv) {
		} else if (dst->sorted == dst->nv && src->sorted == src->nv) {
			/* both sorted (the shards of `stats --threads`): one linear
			 * merge keeps them sorted, so the median needs no sort */
			size_t n = dst->nv + src->nv, i = 0, j = 0, k = 0;
			uint64_t *m = xmalloc(n * sizeof(*m));
			while (i < dst->nv && j < src->nv) m[k++] = src->v[j] < dst->v[i] ? src->v[j++] : dst->v[i++];
			while (i < dst->nv) m[k++] = dst->v[i++];
			while (j < src->nv) m[k++] = src->v[j++];
			free(dst->v);
			dst->v = m; dst->nv = dst->cv = dst->sorted = n;
		} else {
			for (size_t i = 0; i < src->nv; i++) VEC_PUSH(dst->v, dst->nv, dst->cv, src->v[i]);
		}
		dst->n += src->n;
		return;
	}
	qsketch_to_histogram(dst);
	dst->n += src->n;
	if (!src->approx) {
		for (size_t i = 0; i < src->nv; i++) hist_add(dst, src->v[i], 1);
		return;
	}
	dst->zeros += src->zeros;
	for (size_t i = 0; i < src->ncnt; i++)
		if (src->cnt[i]) bucket_add(dst, src->lo + (int32_t)i, src->cnt[i]);
}

void qsketch_free(struct qsketch *q)
{
	free(q->v);
	free(q->cnt);
	memset(q, 0, sizeof(*q));
}
