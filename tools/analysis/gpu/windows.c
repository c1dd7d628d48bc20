/* windows.c — GPU-activity windows: collect, sort, merge, look up. */
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/windows.h"
#include "common/util.h"

void winset_add(struct winset *w, uint32_t pid, uint64_t s, uint64_t e)
{
	struct gpwin g = { pid, s, e < s ? s : e, 0 };
	VEC_PUSH(w->v, w->n, w->cap, g);
}

static int cmp_win(const void *a, const void *b)
{
	const struct gpwin *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->s != y->s) return x->s < y->s ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

void winset_finish(struct winset *w)
{
	if (!w->n) return;
	qsort(w->v, w->n, sizeof(*w->v), cmp_win);
	size_t o = 0;
	for (size_t i = 1; i < w->n; i++) {
		struct gpwin *p = &w->v[o];
		if (w->v[i].pid == p->pid && w->v[i].s <= p->e) {
			if (w->v[i].e > p->e) p->e = w->v[i].e;
			continue;
		}
		w->v[++o] = w->v[i];
	}
	w->n = o + 1;
}

static int cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

uint64_t winset_covered(const struct winset *w)
{
	if (!w->n) return 0;
	/* processes may overlap in time (merged traces): union over all */
	uint64_t *iv = xcalloc(w->n * 2, sizeof(uint64_t));
	for (size_t i = 0; i < w->n; i++) { iv[2 * i] = w->v[i].s; iv[2 * i + 1] = w->v[i].e; }
	qsort(iv, w->n, 2 * sizeof(uint64_t), cmp_u64pair);
	uint64_t sum = 0, cs = iv[0], ce = iv[1];
	for (size_t i = 1; i < w->n; i++) {
		if (iv[2 * i] <= ce) {
			if (iv[2 * i + 1] > ce) ce = iv[2 * i + 1];
			continue;
		}
		sum += ce - cs;
		cs = iv[2 * i]; ce = iv[2 * i + 1];
	}
	sum += ce - cs;
	free(iv);
	return sum;
}

void winset_range(const struct winset *w, uint32_t pid, size_t *lo, size_t *hi)
{
	size_t a = 0, b = w->n;
	while (a < b) { /* first with pid >= pid */
		size_t m = a + (b - a) / 2;
		if (w->v[m].pid < pid) a = m + 1; else b = m;
	}
	*lo = a;
	b = w->n;
	while (a < b) { /* first with pid > pid */
		size_t m = a + (b - a) / 2;
		if (w->v[m].pid <= pid) a = m + 1; else b = m;
	}
	*hi = a;
}

long winset_find(const struct winset *w, uint32_t pid, uint64_t t)
{
	size_t lo, hi;
	winset_range(w, pid, &lo, &hi);
	/* last window of pid starting at or before t */
	size_t a = lo, b = hi;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (w->v[m].s <= t) a = m + 1; else b = m;
	}
	if (a == lo) return -1;
	return t <= w->v[a - 1].e ? (long)(a - 1) : -1;
}

void winset_clip_set(struct winset *w, const struct ival *iv, size_t n)
{
	struct winset out = { 0 };
	for (size_t i = 0; i < w->n; i++)
		for (size_t j = 0; j < n && iv[j].s < w->v[i].e; j++) {
			uint64_t s = w->v[i].s > iv[j].s ? w->v[i].s : iv[j].s;
			uint64_t e = w->v[i].e < iv[j].e ? w->v[i].e : iv[j].e;
			if (e > s) winset_add(&out, w->v[i].pid, s, e);
		}
	free(w->v);
	*w = out;
}

void winset_free(struct winset *w)
{
	free(w->v);
	memset(w, 0, sizeof(*w));
}
