/* intervals.c — see intervals.h.  GPU records do not arrive in start order
 * (CUPTI hands buffers back as they complete, and the reader merges sources
 * by chunk), so intervals are kept and sorted once, when the union is asked
 * for. */
#include "analysis/intervals.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void ivset_add(struct ivset *set, uint64_t s, uint64_t e)
{
	struct ival iv = { s, e < s ? s : e };
	VEC_PUSH(set->v, set->n, set->cap, iv);
}

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	if (x->s != y->s) return x->s < y->s ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

struct ivsum ivset_union(struct ivset *set)
{
	struct ivsum sum = { 0, 0, 0, set->n };
	if (!set->n) return sum;
	/* the union needs start order only (at one start the walk below
	 * merges whatever the ends' order): many callers add in start order
	 * already, and a check is a tenth of a sort */
	size_t k = 1;
	while (k < set->n && set->v[k].s >= set->v[k - 1].s) k++;
	if (k < set->n) qsort(set->v, set->n, sizeof(*set->v), cmp_ival);
	size_t w = 0;
	for (size_t i = 1; i < set->n; i++) {
		if (set->v[i].s <= set->v[w].e) {
			if (set->v[i].e > set->v[w].e) set->v[w].e = set->v[i].e;
			continue;
		}
		uint64_t gap = set->v[i].s - set->v[w].e;
		sum.gaps++;
		if (gap > sum.largest) sum.largest = gap;
		set->v[++w] = set->v[i];
	}
	set->n = w + 1;
	for (size_t i = 0; i < set->n; i++) sum.busy += set->v[i].e - set->v[i].s;
	return sum;
}

uint64_t ivset_overlap(const struct ivset *a, const struct ivset *b)
{
	uint64_t ov = 0;
	size_t i = 0, j = 0;
	while (i < a->n && j < b->n) {
		uint64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		uint64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (e > s) ov += e - s;
		if (a->v[i].e <= b->v[j].e) i++;
		else j++;
	}
	return ov;
}

/* [s, e) joins the summed part (pieces come in time order, disjoint). */
static void done_add(struct ivdone *d, uint64_t s, uint64_t e)
{
	if (d->has && s > d->last_e) {
		uint64_t gap = s - d->last_e;
		d->sum.gaps++;
		if (gap > d->sum.largest) d->sum.largest = gap;
	}
	d->sum.busy += e - s;
	if (!d->has || e > d->last_e) d->last_e = e;
	d->has = 1;
}

void ivset_cut(struct ivset *set, struct ivdone *done, uint64_t x, struct ivset *pre)
{
	ivset_union(set);
	size_t i = 0;
	while (i < set->n && set->v[i].s < x) {
		struct ival *v = &set->v[i];
		uint64_t e = v->e < x ? v->e : x;
		done_add(done, v->s, e);
		if (pre) ivset_add(pre, v->s, e);
		if (v->e > x) { v->s = x; break; }
		i++;
	}
	if (i) memmove(set->v, set->v + i, (set->n - i) * sizeof(*set->v)); /* v may be NULL when i is 0 */
	set->n -= i;
}

struct ivsum ivsum_after(struct ivsum rest, const struct ivset *set, const struct ivdone *done)
{
	if (!done->has) return rest;
	if (set->n && set->v[0].s > done->last_e) { /* the gap across the cut */
		uint64_t gap = set->v[0].s - done->last_e;
		rest.gaps++;
		if (gap > rest.largest) rest.largest = gap;
	}
	rest.busy += done->sum.busy;
	rest.gaps += done->sum.gaps;
	if (done->sum.largest > rest.largest) rest.largest = done->sum.largest;
	return rest;
}

struct ivsum ivset_union_done(struct ivset *set, const struct ivdone *done)
{
	return ivsum_after(ivset_union(set), set, done);
}

int ivpair_admit(struct ivpair *p, uint64_t *s, uint64_t *e)
{
	if (*e < *s) *e = *s;
	if (*s >= p->cut) return 1;
	p->late++;
	p->late_ns += (*e < p->cut ? *e : p->cut) - *s;
	if (*e <= p->cut) return 0;
	*s = p->cut;
	return 1;
}

uint64_t ivpair_add(struct ivpair *p, int which, uint64_t s, uint64_t e, size_t lag)
{
	ivset_add(&p->set[which], s, e);
	size_t n = p->set[0].n + p->set[1].n;
	if (n < (p->next_cut ? p->next_cut : 2 * lag)) return 0;
	uint64_t *st = xmalloc(n * sizeof(*st));
	for (size_t i = 0; i < p->set[0].n; i++) st[i] = p->set[0].v[i].s;
	for (size_t i = 0; i < p->set[1].n; i++) st[p->set[0].n + i] = p->set[1].v[i].s;
	uint64_t x = u64_select(st, n, n - lag); /* every lag additions: a sort was a fifth of stats's util */
	free(st);
	uint64_t made = 0;
	if (x > p->cut) {
		struct ivset pre[2] = { { 0 }, { 0 } };
		for (int i = 0; i < 2; i++) ivset_cut(&p->set[i], &p->done[i], x, &pre[i]);
		p->overlap_done += ivset_overlap(&pre[0], &pre[1]);
		free(pre[0].v); free(pre[1].v);
		p->cut = made = x;
	}
	p->next_cut = p->set[0].n + p->set[1].n + lag;
	return made;
}

void ivpair_finish(struct ivpair *p, struct ivsum *a, struct ivsum *b, uint64_t *overlap)
{
	*a = ivset_union_done(&p->set[0], &p->done[0]);
	*b = ivset_union_done(&p->set[1], &p->done[1]);
	*overlap = p->overlap_done + ivset_overlap(&p->set[0], &p->set[1]);
}

void ivpair_free(struct ivpair *p)
{
	free(p->set[0].v); free(p->set[1].v);
	memset(p, 0, sizeof(*p));
}
