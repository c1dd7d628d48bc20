/* gpu_activity.c — see gpu_activity.h. */
#include "analysis/gpu/gpu_activity.h"

#include <stdlib.h>
#include <string.h>

/* Adds the time of [s, e) to the bins it covers (a piece of a union). */
static void busy_add(void *arg, int which, uint64_t s, uint64_t e)
{
	struct gpu_busy *b = arg;
	const struct gpu_bins *bn = &b->bn;
	if (s < bn->t0) s = bn->t0;
	if (e > bn->t1) e = bn->t1;
	if (e <= s || !bn->width) return;
	for (size_t i = (size_t)((s - bn->t0) / bn->width); s < e && i < bn->n; i++) {
		uint64_t hi = bn->t0 + (i + 1) * bn->width;
		if (hi > e) hi = e;
		b->v[which][i] += hi - s;
		s = hi;
	}
}

/* Appends device d (pid, dev and how it is summed set) to g. */
static struct gpu_dev *dev_new(struct gpu_activity *g, struct gpu_dev *d)
{
	d->kc.keep_head = g->slice;
	if (g->bins) {
		/* the device's busy time per bin, summed as its unions are (a
		 * slice's too: the bins of the slices add up, gpu_activity_merge) */
		d->busy = xcalloc(1, sizeof(*d->busy));
		d->busy->bn = *g->bins;
		for (int i = 0; i < 2; i++) d->busy->v[i] = xcalloc(g->bins->n ? g->bins->n : 1, sizeof(uint64_t));
		d->kc.on_sum = busy_add;
		d->kc.on_sum_arg = d->busy;
	}
	*u64map_get(&g->dev_idx, ((uint64_t)d->pid << 32) | d->dev, MAP_INSERT) = g->ndevs;
	VEC_PUSH(g->devs, g->ndevs, g->cdevs, *d);
	return &g->devs[g->ndevs - 1];
}

static struct gpu_dev *dev_get(struct gpu_activity *g, uint32_t pid, uint32_t dev)
{
	uint64_t *s = u64map_get(&g->dev_idx, ((uint64_t)pid << 32) | dev, MAP_FIND);
	if (s) return &g->devs[*s];
	struct gpu_dev d = { .pid = pid, .dev = dev, .streamed = u64map_get(&g->streamed, pid, MAP_FIND) != NULL };
	if (d.streamed && g->clip) {
		size_t lo, hi;
		winset_range(g->clip, pid, &lo, &hi);
		if (hi - lo > 1) d.streamed = 0; /* gaps between windows do not count: kept */
		else if (hi > lo) { d.clipped = 1; d.clip_s = g->clip->v[lo].s; d.clip_e = g->clip->v[lo].e; }
	}
	return dev_new(g, &d);
}

/* pid and device folded into a stream's key: pids < 2^22, devices < 2^10 */
static uint64_t stream_key(uint32_t pid, uint32_t dev, uint32_t stream)
{
	return ((uint64_t)pid << 42) ^ ((uint64_t)dev << 32) ^ stream;
}

static struct gpu_stream *stream_find(struct gpu_activity *g, uint32_t pid, uint32_t dev, uint32_t stream)
{
	uint64_t *s = u64map_get(&g->str_idx, stream_key(pid, dev, stream), MAP_FIND);
	if (s && g->strs[*s].pid == pid && g->strs[*s].dev == dev && g->strs[*s].stream == stream) return &g->strs[*s];
	/* a collision of the folded key: a linear search */
	for (size_t i = 0; i < g->nstrs; i++)
		if (g->strs[i].pid == pid && g->strs[i].dev == dev && g->strs[i].stream == stream) return &g->strs[i];
	return NULL;
}

static struct gpu_stream *stream_get(struct gpu_activity *g, struct gpu_dev *d, uint32_t stream)
{
	struct gpu_stream *found = stream_find(g, d->pid, d->dev, stream);
	if (found) return found;
	struct gpu_stream u = { .pid = d->pid, .dev = d->dev, .stream = stream, .streamed = d->streamed };
	size_t di = (size_t)(d - g->devs);
	*u64map_get(&g->str_idx, stream_key(d->pid, d->dev, stream), MAP_INSERT) = g->nstrs;
	d = &g->devs[di];
	VEC_PUSH(d->strs, d->nstrs, d->cstrs, g->nstrs);
	VEC_PUSH(g->strs, g->nstrs, g->cstrs, u);
	return &g->strs[g->nstrs - 1];
}

static size_t lag_of(const struct gpu_activity *g)
{
	return g->lag ? g->lag : g->bins ? GPU_ACTIVITY_LAG_BINS : GPU_ACTIVITY_LAG;
}

void gpu_activity_process(struct gpu_activity *g, uint32_t pid, int settings_known, int windowed)
{
	if (!g->keep && settings_known && !windowed) *u64map_get(&g->streamed, pid, MAP_INSERT) = 1;
	else u64map_del(&g->streamed, pid);
}

/* The streams of d, cut where its pair was cut now. */
static void cut_streams(struct gpu_activity *g, const struct gpu_dev *d, uint64_t x)
{
	for (size_t i = 0; i < d->nstrs; i++) {
		struct gpu_stream *v = &g->strs[d->strs[i]];
		for (int w = 0; w < 2; w++) ivpair_cut_other(&d->kc, x, &v->set[w], &v->done[w], &v->head[w]);
	}
}

void gpu_activity_add(struct gpu_activity *g, uint32_t pid, uint32_t dev, uint32_t stream,
		      uint64_t s, uint64_t e, enum gpu_work work)
{
	struct gpu_dev *d = dev_get(g, pid, dev);
	if (e < s) e = s;
	if (!d->has || s < d->span_s) d->span_s = s;
	if (!d->has || e > d->span_e) d->span_e = e;
	d->has = 1;
	struct gpu_stream *u = stream_get(g, d, stream);
	int kern = work == GPU_WORK_KERNEL;
	if (!d->streamed) {
		ivset_add(&d->kc.set[!kern], s, e);
		ivset_add(&u->set[!kern], s, e);
		return;
	}
	/* as gpu_activity_finish clips a kept set to one window */
	if (d->clipped) {
		int instant_inside = s == e && s >= d->clip_s && s < d->clip_e;
		if (s < d->clip_s) s = d->clip_s;
		if (e > d->clip_e) e = d->clip_e;
		if (e <= s && !instant_inside) return;
		if (e < s) e = s;
	}
	d->n[!kern]++;
	u->n[!kern]++;
	if (!ivpair_admit(&d->kc, &s, &e)) return; /* too late: its time before the cut is lost */
	ivset_add(&u->set[!kern], s, e);
	uint64_t x = ivpair_add(&d->kc, !kern, s, e, lag_of(g));
	if (x) cut_streams(g, d, x);
}

uint64_t gpu_activity_late(const struct gpu_activity *g, uint64_t *late_ns)
{
	uint64_t n = 0, ns = 0;
	for (size_t i = 0; i < g->ndevs; i++) { n += g->devs[i].kc.late; ns += g->devs[i].kc.late_ns; }
	if (late_ns) *late_ns = ns;
	return n;
}

int gpu_activity_redo(const struct gpu_activity *g)
{
	return !g->lag && g->bins && gpu_activity_late(g, NULL);
}

static int cmp_dev(const void *a, const void *b)
{
	const struct gpu_dev *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct gpu_stream *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* Windowed trace: only what lies inside the process's windows counts (GPU
 * work outside them was not recorded, so the time there is not idle). */
static void ivset_clip_windows(struct ivset *set, const struct winset *w, size_t lo, size_t hi)
{
	struct ivset out = { 0 };
	for (size_t i = 0; i < set->n; i++)
		for (size_t j = lo; j < hi; j++) {
			uint64_t s = set->v[i].s > w->v[j].s ? set->v[i].s : w->v[j].s;
			uint64_t e = set->v[i].e < w->v[j].e ? set->v[i].e : w->v[j].e;
			int instant_inside = set->v[i].s == set->v[i].e && set->v[i].s >= w->v[j].s &&
					     set->v[i].s < w->v[j].e; /* a 0-length op still counts */
			if (e > s || instant_inside)
				ivset_add(&out, s, e > s ? e : s);
		}
	free(set->v);
	*set = out;
}

/* Union of a clipped set, with gaps counted only between busy intervals of
 * the same window (the time between windows is unrecorded, not idle). */
static struct ivsum ivset_union_windows(struct ivset *set, const struct winset *w, size_t lo, size_t hi)
{
	struct ivsum sum = ivset_union(set);
	sum.gaps = sum.largest = 0;
	for (size_t i = 1; i < set->n; i++) {
		size_t j = lo;
		while (j < hi && w->v[j].e <= set->v[i - 1].s) j++;
		if (j == hi || set->v[i].s >= w->v[j].e) continue; /* next one is in a later window */
		uint64_t gap = set->v[i].s - set->v[i - 1].e;
		sum.gaps++;
		if (gap > sum.largest) sum.largest = gap;
	}
	return sum;
}

/* Union of a set, clipped to the windows v[lo, hi) when there are any;
 * with the part summed before the cut and, n != 0, n intervals in all
 * (streamed sets: their pending intervals are merged ones). */
static struct ivsum merge(struct ivset *set, const struct ivdone *done, uint64_t n, const struct winset *w,
			  size_t lo, size_t hi)
{
	struct ivsum rest;
	if (hi == lo) {
		rest = ivset_union(set);
	} else {
		ivset_clip_windows(set, w, lo, hi);
		rest = ivset_union_windows(set, w, lo, hi);
	}
	rest = ivsum_after(rest, set, done);
	if (n) rest.count = n;
	return rest;
}

void gpu_activity_count_windows(const struct gpu_activity *g, struct winset *win)
{
	for (size_t i = 0; i < g->ndevs; i++)
		for (size_t j = 0; j < g->devs[i].kc.set[0].n; j++) {
			long w = winset_find(win, g->devs[i].pid, g->devs[i].kc.set[0].v[j].s);
			if (w >= 0) win->v[w].kernels++;
		}
}

void gpu_activity_finish(struct gpu_activity *g, struct winset *win)
{
	/* kernels per window: before the sets are clipped and merged */
	gpu_activity_count_windows(g, win);
	/* the indexes point into the arrays sorted here: not used after this */
	if (g->ndevs) qsort(g->devs, g->ndevs, sizeof(*g->devs), cmp_dev);
	if (g->nstrs) qsort(g->strs, g->nstrs, sizeof(*g->strs), cmp_stream);
	for (size_t i = 0; i < g->ndevs; i++) {
		struct gpu_dev *d = &g->devs[i];
		size_t lo = 0, hi = 0;
		winset_range(win, d->pid, &lo, &hi);
		d->windowed = hi > lo;
		d->span = d->span_e - d->span_s;
		if (d->windowed) {
			d->span = 0;
			for (size_t j = lo; j < hi; j++) d->span += win->v[j].e - win->v[j].s;
		}
		if (d->kc.head[0].n || d->kc.head[1].n) { /* a slice's, never merged */
			d->kc.overlap_done += ivset_overlap(&d->kc.head[0], &d->kc.head[1]);
			for (int w = 0; d->busy && w < 2; w++) {
				ivset_union(&d->kc.head[w]);
				for (size_t k = 0; k < d->kc.head[w].n; k++)
					busy_add(d->busy, w, d->kc.head[w].v[k].s, d->kc.head[w].v[k].e);
			}
			ivset_fold_head(&d->kc.head[0], &d->kc.done[0]);
			ivset_fold_head(&d->kc.head[1], &d->kc.done[1]);
		}
		d->ksum = merge(&d->kc.set[0], &d->kc.done[0], d->streamed ? d->n[0] : 0, win, lo, hi);
		d->csum = merge(&d->kc.set[1], &d->kc.done[1], d->streamed ? d->n[1] : 0, win, lo, hi);
		d->overlap = d->kc.overlap_done + ivset_overlap(&d->kc.set[0], &d->kc.set[1]);
		/* what no cut summed: the rest of the unions (all of a kept one) */
		for (int w = 0; d->busy && w < 2; w++)
			for (size_t k = 0; k < d->kc.set[w].n; k++) busy_add(d->busy, w, d->kc.set[w].v[k].s, d->kc.set[w].v[k].e);
	}
	for (size_t i = 0; i < g->nstrs; i++) {
		struct gpu_stream *u = &g->strs[i];
		size_t lo = 0, hi = 0;
		winset_range(win, u->pid, &lo, &hi);
		for (int w = 0; w < 2; w++)
			if (u->head[w].n) ivset_fold_head(&u->head[w], &u->done[w]); /* a slice's, never merged */
		u->ksum = merge(&u->set[0], &u->done[0], u->streamed ? u->n[0] : 0, win, lo, hi);
		u->csum = merge(&u->set[1], &u->done[1], u->streamed ? u->n[1] : 0, win, lo, hi);
	}
}

/* A stream of src into u, a stream of the same device of g, merged as the
 * device's pair was (m; kept sets are appended). */
static void merge_stream(const struct gpu_dev *d, enum iv_merge m, struct gpu_stream *u, struct gpu_stream *v)
{
	for (int w = 0; w < 2; w++) {
		u->n[w] += v->n[w];
		if (!d->streamed) ivset_append(&u->set[w], &v->set[w]);
		else ivset_merge_cut(m, &u->set[w], &u->done[w], &u->head[w], &v->set[w], &v->done[w], &v->head[w], NULL);
	}
}

/* One device of src into g (its device di, made with src's settings);
 * merged[j]: src's stream j is merged. */
static int merge_dev(struct gpu_activity *g, size_t di, struct gpu_activity *src, struct gpu_dev *s, char *merged)
{
	struct gpu_dev *d = &g->devs[di];
	if (d->streamed != s->streamed || d->clipped != s->clipped) return -1;
	if (s->has) {
		if (!d->has || s->span_s < d->span_s) d->span_s = s->span_s;
		if (!d->has || s->span_e > d->span_e) d->span_e = s->span_e;
		d->has = 1;
	}
	for (int w = 0; w < 2; w++) {
		d->n[w] += s->n[w];
		for (size_t i = 0; d->busy && s->busy && i < d->busy->bn.n; i++) d->busy->v[w][i] += s->busy->v[w][i];
		if (!d->streamed) ivset_append(&d->kc.set[w], &s->kc.set[w]);
	}
	enum iv_merge m = IVM_PENDING;
	uint64_t x = 0;
	if (d->streamed && (m = ivpair_merge(&d->kc, &s->kc, lag_of(g), &x)) == IVM_INEXACT) return -1;
	/* every stream of the device, in either: g's first (they are cut with
	 * the device's pair, so they merge as it did) */
	struct gpu_stream none = { 0 };
	for (size_t i = 0; i < d->nstrs; i++) {
		struct gpu_stream *u = &g->strs[d->strs[i]];
		struct gpu_stream *v = stream_find(src, u->pid, u->dev, u->stream);
		if (v) merged[v - src->strs] = 1;
		merge_stream(d, m, u, v ? v : &none);
	}
	for (size_t i = 0; i < s->nstrs; i++) {
		if (merged[s->strs[i]]) continue;
		struct gpu_stream *u = stream_get(g, &g->devs[di], src->strs[s->strs[i]].stream);
		merge_stream(&g->devs[di], m, u, &src->strs[s->strs[i]]);
	}
	if (x) cut_streams(g, &g->devs[di], x);
	return 0;
}

int gpu_activity_merge(struct gpu_activity *g, struct gpu_activity *src)
{
	int rc = 0;
	char *merged = xcalloc(src->nstrs ? src->nstrs : 1, 1);
	/* the processes' settings: the same records in every slice (metadata) */
	for (size_t i = 0; i < src->streamed.cap; i++)
		if (src->streamed.used[i]) *u64map_get(&g->streamed, src->streamed.slot[i].key, MAP_INSERT) = 1;
	for (size_t i = 0; i < src->ndevs && !rc; i++) {
		struct gpu_dev *s = &src->devs[i];
		uint64_t *slot = u64map_get(&g->dev_idx, ((uint64_t)s->pid << 32) | s->dev, MAP_FIND);
		size_t di = slot ? *slot : g->ndevs;
		if (!slot) {
			struct gpu_dev d = { .pid = s->pid, .dev = s->dev, .streamed = s->streamed,
					     .clipped = s->clipped, .clip_s = s->clip_s, .clip_e = s->clip_e };
			dev_new(g, &d);
		}
		rc = merge_dev(g, di, src, s, merged);
	}
	free(merged);
	gpu_activity_free(src);
	return rc;
}

void gpu_activity_free(struct gpu_activity *g)
{
	for (size_t i = 0; i < g->ndevs; i++) {
		ivpair_free(&g->devs[i].kc);
		free(g->devs[i].strs);
		if (g->devs[i].busy) { free(g->devs[i].busy->v[0]); free(g->devs[i].busy->v[1]); free(g->devs[i].busy); }
	}
	for (size_t i = 0; i < g->nstrs; i++) {
		for (int w = 0; w < 2; w++) { free(g->strs[i].set[w].v); free(g->strs[i].head[w].v); }
	}
	free(g->devs); free(g->strs);
	u64map_free(&g->dev_idx); u64map_free(&g->str_idx); u64map_free(&g->streamed);
	memset(g, 0, sizeof(*g));
}
