/* diff_stats.c — see diff_stats.h. */
#include "analysis/diff/diff_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/quantile.h"
#include "common/util.h"

struct ranked { double v; int from_a; };

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
	qsort(r, N, sizeof(*r), cmp_double); /* by v, the first field */
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
	out->p = erfc(d / sqrt(var) / sqrt(2.0)); /* d / sqrt(var): |z|, continuity-corrected */
	if (out->p > 1) out->p = 1;
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
	return median_select(tmp, n);
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
	*lo = quantile_of(d, DIFF_BOOTSTRAP, 0.025);
	*hi = quantile_of(d, DIFF_BOOTSTRAP, 0.975);
	free(d);
	free(tmp);
}

/* ln of the continued fraction of the incomplete beta function
 * (Numerical Recipes, betacf); converges for x < (a + 1) / (a + b + 2). */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
	if (fabs(d) < tiny) d = tiny;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny) d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny) c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny) d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny) c = tiny;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15) break;
	}
	return h;
}

/* the regularised incomplete beta function I_x(a, b) */
static double betai(double a, double b, double x)
{
	if (x <= 0) return 0;
	if (x >= 1) return 1;
	double bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a;
	return 1 - bt * betacf(b, a, 1 - x) / b;
}

/* Two-sided P(|T| >= |t|) for Student's t with df > 0 degrees of freedom. */
static double student_t_p(double t, double df)
{
	if (isnan(t) || !(df > 0)) return NAN;
	if (isinf(t)) return 0;
	double p = betai(df / 2, 0.5, df / (df + t * t));
	return p > 1 ? 1 : p;
}

/* The t with student_t_p(t, df) = p (0 < p < 1). */
static double student_t_inv(double p, double df)
{
	double lo = 0, hi = 1;
	while (student_t_p(hi, df) > p && hi < 1e12) hi *= 2;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (student_t_p(mid, df) > p) lo = mid;
		else hi = mid;
	}
	return (lo + hi) / 2;
}

static void mean_sd(const double *v, size_t n, double *mean, double *sd)
{
	double s = 0, ss = 0;
	for (size_t i = 0; i < n; i++) s += v[i];
	*mean = s / (double)n;
	for (size_t i = 0; i < n; i++) ss += (v[i] - *mean) * (v[i] - *mean);
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
}

void welch_t(const double *a, size_t na, const double *b, size_t nb, struct welch *out)
{
	memset(out, 0, sizeof(*out));
	mean_sd(a, na, &out->mean_a, &out->sd_a);
	mean_sd(b, nb, &out->mean_b, &out->sd_b);
	double d = out->mean_b - out->mean_a;
	double va = out->sd_a * out->sd_a / (double)na, vb = out->sd_b * out->sd_b / (double)nb;
	double se = sqrt(va + vb);
	if (se == 0) {
		out->df = (double)(na + nb - 2);
		out->t = d == 0 ? 0 : d < 0 ? -INFINITY : INFINITY;
		out->p = d == 0 ? 1 : 0;
		out->lo = out->hi = d;
		return;
	}
	out->t = d / se;
	out->df = (va + vb) * (va + vb) / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
	out->p = student_t_p(out->t, out->df);
	double q = student_t_inv(0.05, out->df);
	out->lo = d - q * se;
	out->hi = d + q * se;
}
