/* test_ivpair_merge.c — streaming unions (analysis/core/intervals.h) cut into
 * time slices and merged (ivpair_merge, ivset_merge_cut), against one pair
 * fed every interval: random kernel and copy intervals on three streams
 * (starts increasing with random gaps, durations up to many gaps long,
 * arrival slightly out of start order, never more than the lag), cut into
 * 2..16 slices of time, each slice's pair keeping its head (but the
 * first), merged in sequence and as stats' shards' tree, then into an
 * empty pair (the driver's).  Whenever no merge says IVM_INEXACT, busy
 * time, gaps, the largest gap, the overlap and every stream's union must
 * equal the one pair's; a constructed case (an interval of the first slice
 * running past the second slice's first cut) must say IVM_INEXACT.  Prints
 * "ok" or the failed checks; exit 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/intervals.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

enum { NSTREAMS = 3, MAXK = 16 };

struct iv { uint64_t s, e; int which, stream; };

/* A pair and the sets cut with it (a device and its streams). */
struct dev {
	struct ivpair p;
	struct ivset set[NSTREAMS];
	struct ivdone done[NSTREAMS];
	struct ivset head[NSTREAMS];
};

static void dev_add(struct dev *d, const struct iv *v, size_t lag)
{
	uint64_t s = v->s, e = v->e;
	if (!ivpair_admit(&d->p, &s, &e)) return;
	ivset_add(&d->set[v->stream], s, e);
	uint64_t x = ivpair_add(&d->p, v->which, s, e, lag);
	if (x)
		for (int k = 0; k < NSTREAMS; k++) ivpair_cut_other(&d->p, x, &d->set[k], &d->done[k], &d->head[k]);
}

/* 1: merged exactly; 0: IVM_INEXACT */
static int dev_merge(struct dev *d, struct dev *s, size_t lag)
{
	uint64_t x;
	enum iv_merge m = ivpair_merge(&d->p, &s->p, lag, &x);
	if (m == IVM_INEXACT) return 0;
	for (int k = 0; k < NSTREAMS; k++) {
		ivset_merge_cut(m, &d->set[k], &d->done[k], &d->head[k], &s->set[k], &s->done[k], &s->head[k], NULL);
		if (x) ivpair_cut_other(&d->p, x, &d->set[k], &d->done[k], &d->head[k]);
	}
	return 1;
}

static void dev_free(struct dev *d)
{
	ivpair_free(&d->p);
	for (int k = 0; k < NSTREAMS; k++) { free(d->set[k].v); free(d->head[k].v); }
}

struct result { struct ivsum a, b, str[NSTREAMS]; uint64_t overlap, late; };

static void dev_finish(struct dev *d, struct result *r)
{
	ivpair_finish(&d->p, &r->a, &r->b, &r->overlap);
	r->late = d->p.late;
	for (int k = 0; k < NSTREAMS; k++) {
		if (d->head[k].n) ivset_fold_head(&d->head[k], &d->done[k]);
		r->str[k] = ivset_union_done(&d->set[k], &d->done[k]);
	}
}

static int sum_eq(struct ivsum x, struct ivsum y)
{
	return x.busy == y.busy && x.gaps == y.gaps && x.largest == y.largest;
}

static void compare(const struct result *got, const struct result *want, const char *what, uint64_t seed, int k)
{
	CHECK(sum_eq(got->a, want->a) && sum_eq(got->b, want->b) && got->overlap == want->overlap,
	      "%s, seed %llu, %d slices: busy %llu/%llu gaps %llu/%llu largest %llu/%llu overlap %llu, want "
	      "busy %llu/%llu gaps %llu/%llu largest %llu/%llu overlap %llu",
	      what, (unsigned long long)seed, k, (unsigned long long)got->a.busy, (unsigned long long)got->b.busy,
	      (unsigned long long)got->a.gaps, (unsigned long long)got->b.gaps, (unsigned long long)got->a.largest,
	      (unsigned long long)got->b.largest, (unsigned long long)got->overlap, (unsigned long long)want->a.busy,
	      (unsigned long long)want->b.busy, (unsigned long long)want->a.gaps, (unsigned long long)want->b.gaps,
	      (unsigned long long)want->a.largest, (unsigned long long)want->b.largest,
	      (unsigned long long)want->overlap);
	for (int s = 0; s < NSTREAMS; s++)
		CHECK(sum_eq(got->str[s], want->str[s]), "%s, seed %llu, %d slices: stream %d busy %llu gaps %llu, want %llu %llu",
		      what, (unsigned long long)seed, k, s, (unsigned long long)got->str[s].busy,
		      (unsigned long long)got->str[s].gaps, (unsigned long long)want->str[s].busy,
		      (unsigned long long)want->str[s].gaps);
}

/* n intervals, in arrival order: starts increasing, shuffled within
 * blocks of `disorder` (at most the lag: then none arrives late) */
static struct iv *make(uint64_t *rng, size_t n, size_t disorder, uint64_t maxdur)
{
	struct iv *v = malloc(n * sizeof(*v));
	uint64_t t = 1000;
	for (size_t i = 0; i < n; i++) {
		t += sm_next(rng) % 50;
		uint64_t d = sm_next(rng) % 4 == 0 ? 0 : sm_next(rng) % maxdur;
		v[i] = (struct iv){ t, t + d, (int)(sm_next(rng) % 3 == 0), (int)(sm_next(rng) % NSTREAMS) };
	}
	for (size_t b = 0; disorder > 1 && b < n; b += disorder)
		for (size_t i = b; i < n && i < b + disorder; i++) {
			size_t m = (b + disorder < n ? b + disorder : n) - i;
			size_t j = i + sm_next(rng) % m;
			struct iv x = v[i];
			v[i] = v[j];
			v[j] = x;
		}
	return v;
}

/* The slices' pairs (slice i: starts in [cut[i], cut[i+1])), each fed its
 * intervals in arrival order. */
static void slices(struct dev *d, int k, const struct iv *v, size_t n, const uint64_t *cut, size_t lag)
{
	memset(d, 0, (size_t)k * sizeof(*d));
	for (int i = 0; i < k; i++) d[i].p.keep_head = i > 0;
	for (size_t j = 0; j < n; j++) {
		int i = 0;
		while (i + 1 < k && v[j].s >= cut[i + 1]) i++;
		dev_add(&d[i], &v[j], lag);
	}
}

static int merge_seq(struct dev *d, int k, size_t lag)
{
	int ok = 1;
	for (int i = 1; i < k; i++) {
		if (ok && !dev_merge(&d[0], &d[i], lag)) ok = 0;
		dev_free(&d[i]);
	}
	return ok;
}

/* as stats_shards.c: slice i merges i + step for step = 1, 2, 4, ... while
 * i is a multiple of 2 x step; the driver's empty state takes slice 0's */
static int merge_tree(struct dev *d, int k, size_t lag)
{
	int ok = 1;
	for (int step = 1; step < k; step *= 2)
		for (int i = 0; i + step < k; i += 2 * step) {
			if (ok && !dev_merge(&d[i], &d[i + step], lag)) ok = 0;
			dev_free(&d[i + step]);
		}
	return ok;
}

static void run(uint64_t seed, size_t n, size_t lag, size_t disorder, uint64_t maxdur, int *exact, int *inexact)
{
	uint64_t rng = seed;
	struct iv *v = make(&rng, n, disorder, maxdur);
	struct dev one;
	memset(&one, 0, sizeof(one));
	for (size_t j = 0; j < n; j++) dev_add(&one, &v[j], lag);
	struct result want;
	dev_finish(&one, &want);
	CHECK(want.late == 0, "seed %llu: the one pair met late intervals", (unsigned long long)seed);
	uint64_t first = v[0].s, last = v[0].s;
	for (size_t j = 0; j < n; j++) {
		if (v[j].s < first) first = v[j].s;
		if (v[j].s > last) last = v[j].s;
	}
	for (int k = 2; k <= MAXK; k++) {
		uint64_t cut[MAXK];
		for (int i = 0; i < k; i++) cut[i] = i ? first + (last - first) * (uint64_t)i / (uint64_t)k : 0;
		for (int tree = 0; tree < 2; tree++) {
			struct dev d[MAXK];
			slices(d, k, v, n, cut, lag);
			int ok = tree ? merge_tree(d, k, lag) : merge_seq(d, k, lag);
			struct dev main;
			memset(&main, 0, sizeof(main));
			if (ok) ok = dev_merge(&main, &d[0], lag);
			if (ok) {
				struct result got;
				dev_finish(&main, &got);
				compare(&got, &want, tree ? "tree" : "sequence", seed, k);
				(*exact)++;
			} else {
				(*inexact)++;
			}
			dev_free(&d[0]);
			dev_free(&main);
		}
	}
	dev_free(&one);
	free(v);
}

int main(void)
{
	int exact = 0, inexact = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		size_t lag = 4 + seed % 29;
		run(seed, 200 + (size_t)(seed * 97 % 4000), lag, lag, seed % 3 ? 120 : 3000, &exact, &inexact);
	}
	CHECK(exact > 1000, "only %d of %d merges were exact", exact, exact + inexact);

	/* an interval of slice 0 that runs past slice 1's first cut: inexact */
	struct dev d[2];
	memset(d, 0, sizeof(d));
	d[1].p.keep_head = 1;
	struct iv longone = { 900, 100000, 0, 0 };
	dev_add(&d[0], &longone, 4);
	for (uint64_t t = 1000; t < 1100; t++) {
		struct iv x = { t, t + 1, 0, 1 };
		dev_add(&d[1], &x, 4);
	}
	CHECK(d[1].p.head_end > 1000 && d[1].p.head_end < 100000, "slice 1 did not cut (head_end %llu)",
	      (unsigned long long)d[1].p.head_end);
	CHECK(!dev_merge(&d[0], &d[1], 4), "a pending interval past the next slice's head merged as exact");
	dev_free(&d[0]);
	dev_free(&d[1]);

	if (fails) {
		printf("%d checks failed\n", fails);
		return 1;
	}
	printf("ok (%d merges exact, %d inexact)\n", exact, inexact);
	return 0;
}
