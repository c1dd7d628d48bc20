/* diff_stats.c — see diff_stats.h. */
#include "analysis/diff_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/step_summary.h"
#include "common/util.h"

struct ranked { double v; int from_a; };

static int cmp_ranked(const void *x, const void *y)
{
	double a = ((const struct ranked *)x)->v, b = ((const struct ranked *)y)->v;
	return a < b ? -1 : a > b;
}

/* P(U <= u) for samples of m and n values without ties: every ordering is
 * equally likely; f(m, n, u) orderings give U = u, and the largest value
 * is one of A (it beats all n of B) or one of B:
 *   f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u). */
static double exact_cdf(size_t m, size_t n, double u)
{
	size_t umax = m * n;
	/* f[i][j][k], i <= m, j <= n, k <= umax */
#define F(i, j, k) f[((i) * (n + 1) + (j)) * (umax + 1) + (k)]
	double *f = xcalloc((m + 1) * (n + 1) * (umax + 1), sizeof(double));
	for (size_t i = 0; i <= m; i++)
		for (size_t j = 0; j <= n; j++) {
			if (!i || !j) { F(i, j, 0) = 1; continue; }
			for (size_t k = 0; k <= i * j; k++)
				F(i, j, k) = (k >= j ? F(i - 1, j, k - j) : 0) + F(i, j - 1, k);
		}
	double total = 0, below = 0;
	for (size_t k = 0; k <= umax; k++) {
		total += F(m, n, k);
		if ((double)k <= u + 1e-9) below += F(m, n, k);
	}
#undef F
	free(f);
	return below / total;
}

void mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct mwu *out)
{
	size_t N = na + nb;
	struct ranked *r = xmalloc(N * sizeof(*r));
	for (size_t i = 0; i < na; i++) r[i] = (struct ranked){ a[i], 1 };
	for (size_t i = 0; i < nb; i++) r[na + i] = (struct ranked){ b[i], 0 };
	qsort(r, N, sizeof(*r), cmp_ranked);
	/* average ranks over ties; the tie term sum(t^3 - t) */
	double rank_a = 0, ties = 0;
	for (size_t i = 0; i < N;) {
		size_t j = i;
		while (j < N && r[j].v == r[i].v) j++;
		double t = (double)(j - i), avg = ((double)i + 1 + (double)j) / 2;
		for (size_t k = i; k < j; k++)
			if (r[k].from_a) rank_a += avg;
		ties += t * t * t - t;
		i = j;
	}
	free(r);
	double n1 = (double)na, n2 = (double)nb;
	memset(out, 0, sizeof(*out));
	out->u_a = rank_a - n1 * (n1 + 1) / 2;
	double mu = n1 * n2 / 2;
	if (ties == 0 && na <= DIFF_EXACT_MAX && nb <= DIFF_EXACT_MAX) {
		double u = out->u_a < n1 * n2 - out->u_a ? out->u_a : n1 * n2 - out->u_a;
		out->exact = 1;
		out->p = 2 * exact_cdf(na, nb, u);
		if (out->p > 1) out->p = 1;
		return;
	}
	double var = n1 * n2 / 12 * ((double)N + 1 - ties / ((double)N * ((double)N - 1)));
	if (var <= 0) { out->p = 1; return; }
	double d = fabs(out->u_a - mu) - 0.5;
	if (d < 0) d = 0;
	out->z = (out->u_a - mu < 0 ? -d : d) / sqrt(var);
	out->p = erfc(fabs(out->z) / sqrt(2.0));
	if (out->p > 1) out->p = 1;
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

double diff_median(double *v, size_t n)
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

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double resampled_median(const double *v, size_t n, double *tmp, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++) tmp[i] = v[splitmix64(seed) % n];
	return diff_median(tmp, n);
}

void bootstrap_median_diff(const double *a, size_t na, const double *b, size_t nb, double *lo, double *hi)
{
	uint64_t seed = DIFF_BOOTSTRAP_SEED;
	double *tmp = xmalloc((na > nb ? na : nb) * sizeof(double));
	double *d = xmalloc(DIFF_BOOTSTRAP * sizeof(double));
	for (size_t k = 0; k < DIFF_BOOTSTRAP; k++) {
		double ma = resampled_median(a, na, tmp, &seed);
		double mb = resampled_median(b, nb, tmp, &seed);
		d[k] = mb - ma;
	}
	*lo = step_quantile(d, DIFF_BOOTSTRAP, 0.025);
	*hi = step_quantile(d, DIFF_BOOTSTRAP, 0.975);
	free(d);
	free(tmp);
}
