/* test_counters.c — analysis/gpu/counters.c with a limit (as stats sets
 * it) against brute force over the same samples: three series of 300,000
 * samples at irregular times (past COUNTERS_EXACT_SAMPLES, so folded into
 * buckets), integer and fractional values, fed whole and in 2, 3, 7 and 16
 * slices of time merged in order (as `stats --threads`):
 *   - samples, min, max exact; the sum of integer values exact, of
 *     fractional ones and the time-weighted sum within 1e-12 relative;
 *   - the buckets the same at every slice count (the final grid);
 *   - the mean over 400 random spans within the bound counters.h states
 *     ((max - min) x the samples of the buckets across the span's edges /
 *     the samples inside), and that bound under 0.1 % of the range for
 *     spans holding nine tenths of the series (as util's steps do);
 *   - memory: at most COUNTERS_BUCKETS buckets and fewer than the limit of
 *     samples pending at any time;
 *   - a series under the limit: every sample kept, means exact to the bit.
 * Prints "ok" or the failed checks; exit 1 on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/counters.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

enum { NS = 3, N = 300000, SMALL = 5000 };
static const char *const names[NS] = { "nvml.gpu_util", "nvml.power_mw", "pm.frac_pct" };
static struct csample smp[NS][N];

static void feed(struct counters *c, int series, size_t i)
{
	gp_rec_counter k;
	memset(&k, 0, sizeof(k));
	k.ts_ns = smp[series][i].t;
	k.device_id = 0;
	if (series == 2) { k.kind = GP_COUNTER_DOUBLE; k.value.d = smp[series][i].v; }
	else { k.kind = GP_COUNTER_INT; k.value.i = (int64_t)smp[series][i].v; }
	c->limit = COUNTERS_EXACT_SAMPLES;
	counters_add(c, 7, &k, names[series]);
	for (size_t j = 0; j < c->n; j++)
		CHECK(c->v[j].nb <= COUNTERS_BUCKETS && c->v[j].n < COUNTERS_EXACT_SAMPLES, "bounded: %zu buckets, %zu samples",
		      c->v[j].nb, c->v[j].n);
}

/* The samples of [t0, t1) of every series in time order, as a slice reads them */
static void feed_slice(struct counters *c, uint64_t t0, uint64_t t1, size_t n)
{
	for (int q = 0; q < NS; q++)
		for (size_t i = 0; i < n; i++)
			if (smp[q][i].t >= t0 && smp[q][i].t < t1) feed(c, q, i);
}

static const struct cseries *find(const struct counters *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name)) return &c->v[i];
	return NULL;
}

/* n samples over slices cut at k - 1 points, merged in time order */
static void build(struct counters *c, int k, size_t n, uint64_t end)
{
	memset(c, 0, sizeof(*c));
	c->limit = COUNTERS_EXACT_SAMPLES;
	for (int i = 0; i < k; i++) {
		uint64_t t0 = end / (uint64_t)k * (uint64_t)i, t1 = i == k - 1 ? end + 1 : end / (uint64_t)k * (uint64_t)(i + 1);
		if (!i) { feed_slice(c, t0, t1, n); continue; }
		struct counters s;
		memset(&s, 0, sizeof(s));
		s.limit = COUNTERS_EXACT_SAMPLES;
		feed_slice(&s, t0, t1, n);
		counters_merge(c, &s);
		counters_free(&s);
	}
	counters_finish(c);
}

static void check_series(const struct cseries *q, int series, size_t n, const char *what)
{
	double mn = smp[series][0].v, mx = mn, sum = 0, tw = 0;
	for (size_t i = 0; i < n; i++) {
		double v = smp[series][i].v;
		if (v < mn) mn = v;
		if (v > mx) mx = v;
		sum += v;
		if (i + 1 < n) tw += v * (double)(smp[series][i + 1].t - smp[series][i].t);
	}
	struct cfigures f;
	counters_figures(q, &f);
	CHECK(f.n == n && f.min == mn && f.max == mx, "%s %s: n %llu min %g max %g", what, names[series],
	      (unsigned long long)f.n, f.min, f.max);
	CHECK(series == 2 ? fabs(f.sum - sum) <= 1e-12 * fabs(sum) : f.sum == sum, "%s %s: sum %.17g vs %.17g", what,
	      names[series], f.sum, sum);
	CHECK(fabs(f.tw - tw) <= 1e-12 * fabs(tw), "%s %s: tw %.17g vs %.17g", what, names[series], f.tw, tw);
	CHECK(f.t_first == smp[series][0].t && f.t_last == smp[series][n - 1].t, "%s: first/last time", what);
}

int main(void)
{
	uint64_t rng = 41;
	for (int q = 0; q < NS; q++) {
		uint64_t t = 1000000 + (uint64_t)q * 977;
		for (size_t i = 0; i < N; i++) {
			t += 5000000 + sm_next(&rng) % 10000000; /* 5 to 15 ms apart */
			smp[q][i].t = t;
			smp[q][i].v = q == 0 ? (double)(sm_next(&rng) % 101)
				    : q == 1 ? (double)(300000 + sm_next(&rng) % 400000) : 100 * sm_unif(&rng);
		}
	}
	uint64_t end = 0;
	for (int q = 0; q < NS; q++) if (smp[q][N - 1].t > end) end = smp[q][N - 1].t;

	struct counters one, more;
	build(&one, 1, N, end);
	for (int q = 0; q < NS; q++) {
		const struct cseries *a = find(&one, names[q]);
		CHECK(a && a->width && a->nb <= COUNTERS_BUCKETS && !a->n, "%s folded", names[q]);
		if (a) check_series(a, q, N, "whole");
	}
	static const int ks[] = { 2, 3, 7, 16 };
	for (size_t x = 0; x < sizeof(ks) / sizeof(ks[0]); x++) {
		build(&more, ks[x], N, end);
		for (int q = 0; q < NS; q++) {
			const struct cseries *a = find(&one, names[q]), *b = find(&more, names[q]);
			if (!a || !b) { CHECK(0, "series missing"); continue; }
			check_series(b, q, N, "slices");
			int same = a->width == b->width && a->nb == b->nb;
			for (size_t i = 0; same && i < a->nb; i++)
				same = a->b[i].k == b->b[i].k && a->b[i].n == b->b[i].n && a->b[i].t0 == b->b[i].t0 &&
				       a->b[i].t1 == b->b[i].t1;
			CHECK(same, "%d slices: %s's buckets differ (width %llu/%llu, %zu/%zu)", ks[x], names[q],
			      (unsigned long long)a->width, (unsigned long long)b->width, a->nb, b->nb);
			if (q == 0)
				CHECK(counters_mean(&one, names[q], 7, 0, end / 5, end / 2) ==
				      counters_mean(&more, names[q], 7, 0, end / 5, end / 2), "%d slices: integer mean differs", ks[x]);
		}
		counters_free(&more);
	}

	/* the mean over spans against brute force, within the stated bound */
	double worst = 0;
	for (int r = 0; r < 400; r++) {
		int q = r % NS;
		const struct cseries *a = find(&one, names[q]);
		uint64_t s = sm_next(&rng) % end, e = s + sm_next(&rng) % (end - s + 1);
		if (r % 4 == 0) { s = sm_next(&rng) % (end / 10); e = s + end / 10 * 9; } /* as util's span: most of the trace */
		double sum = 0, mn = smp[q][0].v, mx = mn;
		size_t n = 0;
		for (size_t i = 0; i < N; i++) {
			double v = smp[q][i].v;
			if (v < mn) mn = v;
			if (v > mx) mx = v;
			if (smp[q][i].t >= s && smp[q][i].t <= e) { sum += v; n++; }
		}
		double m = counters_mean(&one, names[q], 7, 0, s, e);
		uint64_t edge = 0;
		for (size_t i = 0; a && i < a->nb; i++) {
			const struct cbucket *b = &a->b[i];
			if ((b->t0 < s && b->t1 >= s) || (b->t0 <= e && b->t1 > e)) edge += b->n;
		}
		if (!n) { CHECK(m < 0 || edge, "span %d: no samples, mean %g", r, m); continue; }
		double exact = sum / (double)n, bound = (mx - mn) * (double)edge / (double)n;
		CHECK(fabs(m - exact) <= bound * (1 + 1e-9) + 1e-9 * fabs(exact), "span %d (%s): mean %.9g vs %.9g, bound %g", r,
		      names[q], m, exact, bound);
		if (r % 4 == 0 && bound / (mx - mn) > worst) worst = bound / (mx - mn);
	}
	CHECK(worst < 1e-3, "the bound on spans of nine tenths: %g of the range", worst);
	counters_free(&one);

	/* under the limit: every sample, exact means */
	build(&one, 3, SMALL, smp[0][SMALL - 1].t);
	const struct cseries *a = find(&one, names[0]);
	CHECK(a && !a->width && a->n == SMALL, "small series kept whole");
	if (a) {
		check_series(a, 0, SMALL, "small");
		uint64_t s = smp[0][100].t, e = smp[0][SMALL - 200].t;
		double sum = 0;
		size_t n = 0;
		for (size_t i = 100; i <= SMALL - 200; i++) { sum += smp[0][i].v; n++; }
		CHECK(counters_mean(&one, names[0], 7, 0, s, e) == sum / (double)n, "small mean");
	}
	counters_free(&one);
	if (fails) { printf("%d checks failed\n", fails); return 1; }
	printf("ok (worst bound over nine tenths of a series: %.2g of the range)\n", worst);
	return 0;
}
