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

uint64_t winset_covered(const struct winset *w)
{
	/* processes may overlap in time (merged traces): union over all */
	struct ivset u = { 0 };
	for (size_t i = 0; i < w->n; i++) ivset_add(&u, w->v[i].s, w->v[i].e);
	uint64_t sum = ivset_union(&u).busy;
	free(u.v);
	return sum;
}

void winset_range(const struct winset *w, uint32_t pid, size_t *lo, size_t *hi)
{
	*lo = FIRST_WHERE(k, w->n, w->v[k].pid >= pid);
	*hi = FIRST_WHERE(k, w->n, w->v[k].pid > pid);
}

long winset_find(const struct winset *w, uint32_t pid, uint64_t t)
{
	size_t lo, hi;
	winset_range(w, pid, &lo, &hi);
	/* the last window of pid starting at or before t */
	size_t a = lo + FIRST_WHERE(k, hi - lo, w->v[lo + k].s > t);
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
