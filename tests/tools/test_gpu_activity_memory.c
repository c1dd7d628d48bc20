/* test_gpu_activity_memory.c — `gpuprof report`'s GPU intervals
 * (analysis/gpu/gpu_activity.h with bins: summed per bin as they stream, in
 * every slice of its pass): the bytes malloc holds for a device fed N
 * kernels and copies on 4 streams, each stream's back to back with gaps,
 * arriving out of start order by up to 2,000 records, stay under 1 MiB
 * after 2^18 and after 2^20 records (the pairs' lag GPU_ACTIVITY_LAG_BINS;
 * at GPU_ACTIVITY_LAG, ~4 MiB: fails), and the sums (busy, gaps, largest
 * gap, overlap, per stream, per bin) equal those of the same records at
 * GPU_ACTIVITY_LAG.  A record 20,000 records late (later than
 * GPU_ACTIVITY_LAG_BINS, not GPU_ACTIVITY_LAG) asks for the sums again
 * (gpu_activity_redo); the records above do not.  Prints "ok" or the
 * failed checks; exit 1 on failure. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/gpu_activity.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

enum { NSTREAMS = 4, NBINS = 1000, SHUFFLE = 2000 };
#define PID 7u

static double held(void)
{
	struct mallinfo2 m = mallinfo2();
	return (double)(m.uordblks + m.hblkhd);
}

struct rec { uint64_t s, e; uint32_t stream; int copy; };

static int by_start(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* n records: each stream's operations back to back but after a gap every
 * 8th, sorted by start, then records up to SHUFFLE apart swapped; the one
 * in the middle moved late_by records later (0: none). */
static struct rec *records(size_t n, size_t late_by)
{
	struct rec *v = malloc(n * sizeof(*v));
	uint64_t t = 1000000, freed[NSTREAMS] = { 0 }, seed = 41;
	for (size_t i = 0; i < n; i++) {
		uint32_t st = (uint32_t)(sm_next(&seed) % NSTREAMS);
		uint64_t d = 1000 + sm_next(&seed) % 5000, s = freed[st] > t ? freed[st] : t;
		if (i % 8 == 0) s += 500 + sm_next(&seed) % 3000;
		v[i] = (struct rec){ s, s + d, st, st == NSTREAMS - 1 };
		freed[st] = s + d;
		t += 1000;
	}
	qsort(v, n, sizeof(*v), by_start);
	for (size_t i = 0; i + SHUFFLE < n; i += SHUFFLE / 2) {
		size_t j = i + sm_next(&seed) % SHUFFLE;
		struct rec x = v[i];
		v[i] = v[j];
		v[j] = x;
	}
	if (late_by && n / 2 + late_by < n) {
		size_t i = n / 2;
		struct rec x = v[i];
		memmove(v + i, v + i + 1, late_by * sizeof(*v));
		v[i + late_by] = x;
	}
	return v;
}

static void feed(struct gpu_activity *g, const struct gpu_bins *bn, size_t lag, const struct rec *v, size_t n)
{
	g->bins = bn;
	g->lag = lag;
	gpu_activity_process(g, PID, 1, 0);
	for (size_t i = 0; i < n; i++)
		gpu_activity_add(g, PID, 0, v[i].stream, v[i].s, v[i].e, v[i].copy ? GPU_WORK_COPY : GPU_WORK_KERNEL);
}

static int same_sum(const struct ivsum *a, const struct ivsum *b)
{
	return a->busy == b->busy && a->gaps == b->gaps && a->largest == b->largest && a->count == b->count;
}

/* g and w (the same records, w at GPU_ACTIVITY_LAG) finished: the same sums. */
static void same(struct gpu_activity *g, struct gpu_activity *w, const char *what)
{
	struct winset none = { 0 };
	gpu_activity_finish(g, &none);
	gpu_activity_finish(w, &none);
	CHECK(g->ndevs == 1 && w->ndevs == 1 && g->nstrs == NSTREAMS && w->nstrs == NSTREAMS, "%s: devices, streams",
	      what);
	if (g->ndevs != 1 || w->ndevs != 1 || g->nstrs != w->nstrs) return;
	const struct gpu_dev *a = &g->devs[0], *b = &w->devs[0];
	CHECK(same_sum(&a->ksum, &b->ksum) && same_sum(&a->csum, &b->csum) && a->overlap == b->overlap,
	      "%s: the device's sums differ (busy %llu vs %llu)", what, (unsigned long long)a->ksum.busy,
	      (unsigned long long)b->ksum.busy);
	for (size_t i = 0; i < g->nstrs; i++)
		CHECK(same_sum(&g->strs[i].ksum, &w->strs[i].ksum) && same_sum(&g->strs[i].csum, &w->strs[i].csum),
		      "%s: stream %zu's sums differ", what, i);
	for (int k = 0; k < 2; k++)
		CHECK(a->busy && b->busy && !memcmp(a->busy->v[k], b->busy->v[k], NBINS * sizeof(uint64_t)),
		      "%s: the busy time per bin differs (%s)", what, k ? "copies" : "kernels");
}

int main(void)
{
	const size_t ns[2] = { (size_t)1 << 18, (size_t)1 << 20 };
	for (int r = 0; r < 2; r++) {
		size_t n = ns[r];
		struct rec *v = records(n, 0);
		struct gpu_bins bn = { v[0].s, v[n - 1].e + 10000000, 0, NBINS };
		bn.width = (bn.t1 - bn.t0 + NBINS - 1) / NBINS;
		double h0 = held();
		struct gpu_activity g = { 0 };
		feed(&g, &bn, 0, v, n);
		double h = held() - h0;
		printf("%zu records: %.0f bytes held at the bins' lag\n", n, h);
		CHECK(h < 1024.0 * 1024, "%zu records: %.0f bytes held, more than 1 MiB", n, h);
		CHECK(!gpu_activity_redo(&g) && !gpu_activity_late(&g, NULL), "%zu records: none late at the bins' lag", n);
		struct gpu_activity w = { 0 };
		feed(&w, &bn, GPU_ACTIVITY_LAG, v, n);
		same(&g, &w, n == ns[0] ? "2^18" : "2^20");
		gpu_activity_free(&g);
		gpu_activity_free(&w);
		free(v);
	}
	/* a record later than the bins' lag: summed again (at GPU_ACTIVITY_LAG
	 * it is not late) */
	size_t n = (size_t)1 << 18;
	struct rec *v = records(n, 20000);
	struct gpu_bins bn = { v[0].s, v[0].s + 100000000000ull, 100000000, NBINS };
	struct gpu_activity g = { 0 }, w = { 0 };
	feed(&g, &bn, 0, v, n);
	feed(&w, &bn, GPU_ACTIVITY_LAG, v, n);
	CHECK(gpu_activity_redo(&g), "a record 20,000 late: summed again");
	CHECK(!gpu_activity_redo(&w) && !gpu_activity_late(&w, NULL), "at GPU_ACTIVITY_LAG: not late, not again");
	gpu_activity_free(&g);
	gpu_activity_free(&w);
	free(v);
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
