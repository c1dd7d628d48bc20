/* test_quantile.c — tools/analysis/core/quantile (the median sketch of `stats`)
 * and the summary's switch from exact values to it: on generated large
 * distributions, every quantile read from the histogram is within
 * QSKETCH_REL_ERR of the exact value (computed here by sorting a copy), and
 * a summary under its limit stays exact; past it, the groups the rule of
 * summary.h estimates are those of the table's counts, with the same
 * figures whatever the slices its values were cut in and their order of
 * merging.
 *
 * Distributions (1,000,003 values each, fixed seed): log-normal durations
 * (median 50 us, sigma 1.5), uniform 1..10^9, a bimodal mix (2 us and 5 ms
 * kernels), heavy duplicates (8 distinct values), one with zeros, and a
 * range that spans 1 ns .. 2^63.  And u64_select (tools/common/util.h, the
 * exact medians of the steps and the streaming unions' cut): on random
 * arrays of 1..300 values (few distinct, many, sorted, reversed), every k
 * gives what a sort puts at k, with nothing larger before it and nothing
 * smaller after. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/quantile.h"
#include "analysis/core/summary.h"
#include "common/util.h"
#include "splitmix.h"

static uint64_t rng = 12345;
static uint64_t rnd(void) { return sm_next(&rng); }
static double normal(void) { return sm_normal(&rng); }

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int fails;

/* relative error of est against the exact value x (0 only matches 0) */
static int within(double est, double x)
{
	if (x == 0) return est == 0;
	return fabs(est - x) <= QSKETCH_REL_ERR * x * (1 + 1e-9);
}

#define N 1000003ull

static void check(const char *what, uint64_t (*gen)(uint64_t i))
{
	uint64_t *v = malloc(N * sizeof(*v));
	struct qsketch q;
	memset(&q, 0, sizeof(q));
	uint64_t mn = UINT64_MAX, mx = 0;
	for (uint64_t i = 0; i < N; i++) {
		v[i] = gen(i);
		if (v[i] < mn) mn = v[i];
		if (v[i] > mx) mx = v[i];
		qsketch_add(&q, v[i]);
		if (i == N / 3) qsketch_to_histogram(&q); /* values before and after the switch */
	}
	qsort(v, N, sizeof(*v), cmp);
	double worst = 0;
	static const double qs[] = { 0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1 };
	for (size_t j = 0; j < sizeof(qs) / sizeof(qs[0]); j++) {
		uint64_t k = (uint64_t)(qs[j] * (double)(N - 1));
		double est = qsketch_kth(&q, k, mn, mx), x = (double)v[k];
		if (x) { double e = fabs(est - x) / x; if (e > worst) worst = e; }
		if (!within(est, x)) {
			fprintf(stderr, "FAIL %s: quantile %g: estimate %.1f, exact %.0f\n", what, qs[j], est, x);
			fails++;
		}
	}
	double med = qsketch_median(&q, mn, mx), exact = (double)v[N / 2]; /* N odd */
	if (!within(med, exact)) {
		fprintf(stderr, "FAIL %s: median %.1f, exact %.0f\n", what, med, exact);
		fails++;
	}
	printf("%-12s %zu buckets, worst relative error %.5f (bound %.3f)\n", what, q.ncnt, worst,
	       QSKETCH_REL_ERR);
	qsketch_free(&q);
	free(v);
}

static uint64_t g_lognormal(uint64_t i) { (void)i; return (uint64_t)(50000.0 * exp(1.5 * normal())); }
static uint64_t g_uniform(uint64_t i) { (void)i; return 1 + rnd() % 1000000000ull; }
static uint64_t g_bimodal(uint64_t i) { (void)i; return rnd() % 3 ? 2000 + rnd() % 200 : 5000000 + rnd() % 100000; }
static uint64_t g_dups(uint64_t i) { (void)i; return 1000ull << (rnd() % 8); }
static uint64_t g_zeros(uint64_t i) { (void)i; return rnd() % 4 ? 0 : 1 + rnd() % 100000; }
static uint64_t g_wide(uint64_t i) { (void)i; return 1ull << (rnd() % 64) | (rnd() & 0xff); }

/* the summary: under its limit exact; over it, the biggest group switches */
static void check_summary(void)
{
	struct summary t;
	memset(&t, 0, sizeof(t));
	size_t a = summary_group(&t, "a"), b = summary_group(&t, "b");
	for (uint64_t i = 0; i < 1000; i++) summary_add(&t, b, i);
	for (uint64_t i = 0; i < SUMMARY_EXACT_VALUES - 1000; i++) summary_add(&t, a, 7 + i % 1001);
	if (t.approx || t.g[a].q.approx || sgroup_median(&t.g[b]) != 499.5) {
		fprintf(stderr, "FAIL summary: switched under its limit (approx %zu), median b %.1f\n", t.approx,
			sgroup_median(&t.g[b]));
		fails++;
	}
	summary_add(&t, a, 5);  /* one over: a, the biggest, switches; b stays exact */
	if (t.approx != 1 || !t.g[a].q.approx || t.g[b].q.approx || t.exact != 1000) {
		fprintf(stderr, "FAIL summary: after the limit: approx %zu, a %d, b %d, exact %zu\n", t.approx,
			t.g[a].q.approx, t.g[b].q.approx, t.exact);
		fails++;
	}
	if (sgroup_median(&t.g[b]) != 499.5 || !within(sgroup_median(&t.g[a]), 507)) {
		fprintf(stderr, "FAIL summary: medians %.2f %.2f\n", sgroup_median(&t.g[a]), sgroup_median(&t.g[b]));
		fails++;
	}
	summary_free(&t);
	/* many names, few values each: past the limit, nothing switches */
	for (size_t i = 0; i < 1500; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%zu", i);
		size_t g = summary_group(&t, name);
		for (uint64_t j = 0; j < 1000; j++) summary_add(&t, g, j);
	}
	if (t.approx || t.exact != 1500 * 1000) {
		fprintf(stderr, "FAIL summary: many small groups: approx %zu, exact %zu\n", t.approx, t.exact);
		fails++;
	}
	summary_free(&t);
}

/* The rule of summary.h, computed here by brute force over the counts:
 * does group i switch to a histogram? */
static int rule_estimates(const uint64_t *n, size_t ng, size_t i)
{
	uint64_t w = 0;
	for (size_t h = 0; h < ng; h++) w += n[h] < n[i] ? n[h] : n[i];
	return n[i] >= SUMMARY_MIN_SWITCH && w > SUMMARY_EXACT_VALUES;
}

/* The same values, cut into consecutive slices merged in a random order of
 * neighbours (as stats --threads' slices are), end in the one-summary
 * result: the same groups estimated (those of the rule), and the same bits
 * of every figure; also on a table the rule keeps exact though the
 * one-summary pass went over its limit (a group past it only by the others'
 * counts). */
static void check_summary_order(void)
{
	/* 1.86 M values; c's all in the first part of the stream, with a third
	 * of the others' (one pass over its limit first switches c, the
	 * biggest then; merged slices may first meet a): under the rule b
	 * (150k: 606k weighed) and f (200k: 756k) stay exact, c (600k:
	 * 1.556 M) and a are estimated; e has fewer than SUMMARY_MIN_SWITCH */
	static const char *names[] = { "a", "b", "c", "d", "e", "f" };
	enum { NG = 6 };
	const uint64_t want[NG] = { 900000, 150000, 600000, 5000, 1000, 200000 };
	uint64_t total = 0, first[NG], later[NG];
	for (size_t i = 0; i < NG; i++) {
		total += want[i];
		first[i] = i == 2 ? want[i] : want[i] / 3;
		later[i] = want[i] - first[i];
	}
	uint8_t *grp = xmalloc(total);
	uint64_t *val = xmalloc(total * sizeof(*val)), k = 0;
	for (uint64_t *left = first; left; left = left == first ? later : NULL) {
		uint64_t rest = 0;
		for (size_t i = 0; i < NG; i++) rest += left[i];
		for (; rest; rest--, k++) {
			uint64_t pick = rnd() % rest, g = 0;
			while (pick >= left[g]) pick -= left[g++];
			left[g]--;
			grp[k] = (uint8_t)g;
			val[k] = g_lognormal(k) + g * 1000;
		}
	}
	struct summary one;
	memset(&one, 0, sizeof(one));
	for (size_t i = 0; i < NG; i++) summary_group(&one, names[i]);
	for (uint64_t k = 0; k < total; k++) summary_add(&one, grp[k], val[k]);
	summary_settle(&one);
	for (size_t i = 0; i < NG; i++)
		if (one.g[i].q.approx != rule_estimates(want, NG, i)) {
			fprintf(stderr, "FAIL summary rule: %s estimated %d\n", names[i], one.g[i].q.approx);
			fails++;
		}
	for (int trial = 0; trial < 6; trial++) {
		size_t k = 2 + rnd() % 15, cut[17];
		struct summary part[16];
		cut[0] = 0;
		cut[k] = total;
		for (size_t i = 1; i < k; i++) cut[i] = rnd() % total;
		qsort(cut + 1, k - 1, sizeof(*cut), cmp);
		memset(part, 0, sizeof(part));
		/* odd trials: the slices fill at once, a value of a random one
		 * at a time, on one board: together they hold little more than
		 * the limit (the counts not yet on the board), where each alone
		 * would keep all its values (each slice's own counts weigh less) */
		struct summary_board board;
		summary_board_init(&board, k);
		uint64_t at[16], held, peak = 0;
		for (size_t p = 0; p < k; p++) {
			at[p] = cut[p];
			if (trial & 1) part[p].board = &board;
		}
		for (uint64_t left = total; left; left--) {
			size_t p = 0;
			if (trial & 1)
				do p = rnd() % k; while (at[p] == cut[p + 1]);
			else
				while (at[p] == cut[p + 1]) p++;
			summary_add(&part[p], summary_group(&part[p], names[grp[at[p]]]), val[at[p]]);
			at[p]++;
			held = 0;
			for (size_t i = 0; i < k; i++) held += part[i].exact;
			if (held > peak) peak = held;
		}
		if ((trial & 1) && peak > SUMMARY_EXACT_VALUES * 3 / 2) {
			fprintf(stderr, "FAIL summary in %zu slices on a board: %" PRIu64 " values held\n", k, peak);
			fails++;
		}
		/* merge a random slice into the one before it until one is left */
		for (size_t live = k; live > 1; live--) {
			size_t d = rnd() % (live - 1);
			for (size_t i = 0; i < part[d + 1].n; i++) {
				struct sgroup *from = &part[d + 1].g[i];
				size_t g = summary_group(&part[d], from->name);
				qsketch_sorted(&part[d].g[g].q);
				qsketch_sorted(&from->q);
				summary_merge(&part[d], g, from);
			}
			summary_free(&part[d + 1]);
			memmove(&part[d + 1], &part[d + 2], (live - d - 2) * sizeof(*part));
		}
		struct summary all;
		memset(&all, 0, sizeof(all));
		for (size_t i = 0; i < part[0].n; i++)
			summary_merge(&all, summary_group(&all, part[0].g[i].name), &part[0].g[i]);
		summary_free(&part[0]);
		summary_settle(&all);
		for (size_t i = 0; i < NG; i++) {
			struct sgroup *x = &one.g[i], *y = &all.g[summary_group(&all, names[i])];
			double fx[3] = { sgroup_median(x), sgroup_quantile(x, 0.9), sgroup_stddev(x) };
			double fy[3] = { sgroup_median(y), sgroup_quantile(y, 0.9), sgroup_stddev(y) };
			if (x->q.approx != y->q.approx || x->n != y->n || x->total != y->total || memcmp(fx, fy, sizeof(fx))) {
				fprintf(stderr, "FAIL summary in %zu slices: %s estimated %d/%d, median %.17g/%.17g, "
					"p90 %.17g/%.17g, stddev %.17g/%.17g\n", k, names[i], x->q.approx, y->q.approx,
					fx[0], fy[0], fx[1], fy[1], fx[2], fy[2]);
				fails++;
			}
		}
		if (all.approx != one.approx) {
			fprintf(stderr, "FAIL summary in %zu slices: %zu estimated, one pass %zu\n", k, all.approx,
				one.approx);
			fails++;
		}
		summary_free(&all);
		summary_board_free(&board);
	}
	summary_free(&one);
	free(grp);
	free(val);
}

static void check_select(void)
{
	uint64_t v[300], w[300], sorted[300];
	for (int trial = 0; trial < 3000; trial++) {
		size_t n = 1 + rnd() % 300, k = rnd() % n;
		uint64_t span = trial % 3 == 0 ? 4 : trial % 3 == 1 ? 1000000 : UINT64_MAX;
		for (size_t i = 0; i < n; i++) v[i] = span == UINT64_MAX ? rnd() : rnd() % span;
		if (trial % 7 == 0) qsort(v, n, sizeof(*v), cmp);
		if (trial % 7 == 1)
			for (size_t i = 0; i < n / 2; i++) { uint64_t t = v[i]; v[i] = v[n - 1 - i]; v[n - 1 - i] = t; }
		memcpy(sorted, v, n * sizeof(*v));
		qsort(sorted, n, sizeof(*v), cmp);
		memcpy(w, v, n * sizeof(*v));
		uint64_t got = u64_select(w, n, k);
		int ok = got == sorted[k] && w[k] == got;
		for (size_t i = 0; ok && i < n; i++) ok = i < k ? w[i] <= got : i > k ? w[i] >= got : 1;
		qsort(w, n, sizeof(*w), cmp);
		ok = ok && !memcmp(w, sorted, n * sizeof(*w)); /* a permutation of the input */
		if (!ok && fails++ < 10) printf("FAIL: u64_select n %zu k %zu: %llu, a sort gives %llu\n", n, k,
					       (unsigned long long)got, (unsigned long long)sorted[k]);
	}
}

/* One definition: the quantiles of a list of doubles (steps, diff) and of an
 * exact sketch (stats) are the same numbers, numpy's "linear" ones; the
 * median by selection (the bootstrap's) is the sketch's median. */
static void check_definition(void)
{
	static const struct { double p, want; } fixed[] = { { 0, 10 }, { 0.1, 13 }, { 0.5, 25 }, { 0.9, 37 }, { 1, 40 } };
	double v[300], w[300];
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		double x[] = { 40, 10, 30, 20 };
		double got = quantile_of(x, 4, fixed[i].p);
		if (fabs(got - fixed[i].want) > 1e-9 && fails++ < 10)
			printf("FAIL: quantile_of {10,20,30,40} p %.2f: %g, numpy gives %g\n", fixed[i].p, got, fixed[i].want);
	}
	for (int trial = 0; trial < 500; trial++) {
		size_t n = 1 + rnd() % 300;
		struct qsketch q;
		memset(&q, 0, sizeof(q));
		uint64_t lo = UINT64_MAX, hi = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t x = trial % 2 ? rnd() % 50 : rnd() % 100000000;
			v[i] = (double)x;
			qsketch_add(&q, x);
			if (x < lo) lo = x;
			if (x > hi) hi = x;
		}
		static const double ps[] = { 0, 0.025, 0.1, 0.25, 0.5, 0.9, 0.975, 1 };
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
			memcpy(w, v, n * sizeof(*v));
			double a = quantile_of(w, n, ps[k]), b = qsketch_quantile(&q, ps[k], lo, hi);
			if (a != b && fails++ < 10) printf("FAIL: n %zu p %g: quantile_of %.17g, sketch %.17g\n", n, ps[k], a, b);
		}
		memcpy(w, v, n * sizeof(*v));
		double m = median_select(w, n), qm = qsketch_median(&q, lo, hi);
		if (m != qm && fails++ < 10) printf("FAIL: n %zu: median_select %.17g, sketch median %.17g\n", n, m, qm);
		qsketch_free(&q);
	}
}

int main(void)
{
	check_select();
	check_definition();
	check("lognormal", g_lognormal);
	check("uniform", g_uniform);
	check("bimodal", g_bimodal);
	check("duplicates", g_dups);
	check("zeros", g_zeros);
	check("wide", g_wide);
	check_summary();
	check_summary_order();
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
