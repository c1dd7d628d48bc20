/* intervals.c — see intervals.h.  GPU records do not arrive in start order
 * (CUPTI hands buffers back as they complete, and the reader merges sources
 * by chunk), so intervals are kept and sorted once, when the union is asked
 * for. */
#include "analysis/core/intervals.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void ivset_add(struct ivset *set, uint64_t s, uint64_t e)
{
	struct ival iv = { s, e < s ? s : e };
	VEC_PUSH(set->v, set->n, set->cap, iv);
}

/* One more gap between busy intervals. */
static void gap_add(struct ivsum *sum, uint64_t gap)
{
	sum->gaps++;
	if (gap > sum->largest) sum->largest = gap;
}

/* b's busy time and gaps join a's (the gap between the two apart). */
static void sum_join(struct ivsum *a, const struct ivsum *b)
{
	a->busy += b->busy;
	a->gaps += b->gaps;
	if (b->largest > a->largest) a->largest = b->largest;
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
		gap_add(&sum, set->v[i].s - set->v[w].e);
		set->v[++w] = set->v[i];
	}
	set->n = w + 1;
	for (size_t i = 0; i < set->n; i++) sum.busy += set->v[i].e - set->v[i].s;
	return sum;
}

uint64_t ivset_intersect(const struct ivset *a, const struct ivset *b, struct ivset *out)
{
	uint64_t ov = 0;
	size_t i = 0, j = 0;
	while (i < a->n && j < b->n) {
		uint64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		uint64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (e > s) {
			ov += e - s;
			if (out) ivset_add(out, s, e);
		}
		if (a->v[i].e <= b->v[j].e) i++;
		else j++;
	}
	return ov;
}

uint64_t ivset_overlap(const struct ivset *a, const struct ivset *b) { return ivset_intersect(a, b, NULL); }

/* [s, e) joins the summed part (pieces come in time order, disjoint). */
static void done_add(struct ivdone *d, uint64_t s, uint64_t e)
{
	if (d->has && s > d->last_e) gap_add(&d->sum, s - d->last_e);
	d->sum.busy += e - s;
	if (!d->has) d->first_s = s;
	if (!d->has || e > d->last_e) d->last_e = e;
	d->has = 1;
}

/* b's summed pieces, all at or after a's, join a (the gap between them
 * counted). */
static void done_concat(struct ivdone *a, const struct ivdone *b)
{
	if (!b->has) return;
	if (!a->has) {
		*a = *b;
		return;
	}
	if (b->first_s > a->last_e) gap_add(&a->sum, b->first_s - a->last_e);
	sum_join(&a->sum, &b->sum);
	if (b->last_e > a->last_e) a->last_e = b->last_e;
}

/* Merges set into its union, sums the part before x into *done (an
 * interval across x is split at x), keeps the rest, and puts the summed
 * pieces in *pre when given (for an overlap).  Pieces must come in time
 * order: cut successive x in increasing order, and add no interval that
 * starts before the last cut. */
static void ivset_cut(struct ivset *set, struct ivdone *done, uint64_t x, struct ivset *pre)
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
	if (set->n && set->v[0].s > done->last_e) gap_add(&rest, set->v[0].s - done->last_e); /* across the cut */
	sum_join(&rest, &done->sum);
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

/* Cuts the pair at the start of the lag-th most recent pending interval
 * when it holds enough; returns where (0: not cut). */
static uint64_t pair_cut(struct ivpair *p, size_t lag)
{
	size_t n = p->set[0].n + p->set[1].n;
	if (n < (p->next_cut ? p->next_cut : 2 * lag)) return 0;
	uint64_t *st = xmalloc(n * sizeof(*st));
	for (size_t i = 0; i < p->set[0].n; i++) st[i] = p->set[0].v[i].s;
	for (size_t i = 0; i < p->set[1].n; i++) st[p->set[0].n + i] = p->set[1].v[i].s;
	uint64_t x = u64_select(st, n, n - lag); /* every lag additions: a sort was a fifth of stats's util */
	free(st);
	uint64_t made = 0;
	if (x > p->cut) {
		if (p->keep_head && !p->head_end) {
			/* a slice's first cut: its pieces wait for the merge */
			p->head_end = x;
			for (int i = 0; i < 2; i++) ivpair_cut_other(p, x, &p->set[i], &p->done[i], &p->head[i]);
		} else {
			struct ivset pre[2] = { { 0 }, { 0 } };
			for (int i = 0; i < 2; i++) ivset_cut(&p->set[i], &p->done[i], x, &pre[i]);
			p->overlap_done += ivset_overlap(&pre[0], &pre[1]);
			for (int i = 0; p->on_sum && i < 2; i++)
				for (size_t k = 0; k < pre[i].n; k++) p->on_sum(p->on_sum_arg, i, pre[i].v[k].s, pre[i].v[k].e);
			free(pre[0].v); free(pre[1].v);
		}
		p->cut = made = x;
	}
	p->next_cut = p->set[0].n + p->set[1].n + lag;
	return made;
}

uint64_t ivpair_add(struct ivpair *p, int which, uint64_t s, uint64_t e, size_t lag)
{
	ivset_add(&p->set[which], s, e);
	return pair_cut(p, lag);
}

void ivpair_cut_other(const struct ivpair *p, uint64_t x, struct ivset *set, struct ivdone *done, struct ivset *head)
{
	if (p->keep_head && p->head_end == x) {
		struct ivdone none = { { 0, 0, 0, 0 }, 0, 0, 0 };
		ivset_cut(set, &none, x, head);
	} else {
		ivset_cut(set, done, x, NULL);
	}
}

void ivpair_finish(struct ivpair *p, struct ivsum *a, struct ivsum *b, uint64_t *overlap)
{
	if (p->head[0].n || p->head[1].n) { /* a slice's, never merged after another */
		p->overlap_done += ivset_overlap(&p->head[0], &p->head[1]);
		ivset_fold_head(&p->head[0], &p->done[0]);
		ivset_fold_head(&p->head[1], &p->done[1]);
	}
	*a = ivset_union_done(&p->set[0], &p->done[0]);
	*b = ivset_union_done(&p->set[1], &p->done[1]);
	*overlap = p->overlap_done + ivset_overlap(&p->set[0], &p->set[1]);
}

void ivpair_free(struct ivpair *p)
{
	free(p->set[0].v); free(p->set[1].v);
	free(p->head[0].v); free(p->head[1].v);
	memset(p, 0, sizeof(*p));
}

void ivset_fold_head(struct ivset *head, struct ivdone *done)
{
	struct ivdone h = { { 0, 0, 0, 0 }, 0, 0, 0 };
	ivset_union(head);
	for (size_t i = 0; i < head->n; i++) done_add(&h, head->v[i].s, head->v[i].e);
	done_concat(&h, done);
	*done = h;
	free(head->v);
	memset(head, 0, sizeof(*head));
}

void ivset_append(struct ivset *dst, struct ivset *src)
{
	if (!dst->n) {
		free(dst->v);
		*dst = *src;
	} else {
		vec_reserve((void **)&dst->v, &dst->cap, dst->n + src->n, sizeof(*dst->v));
		if (src->n) memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
		dst->n += src->n;
		free(src->v);
	}
	memset(src, 0, sizeof(*src));
}

void ivset_merge_cut(enum iv_merge m, struct ivset *dset, struct ivdone *ddone, struct ivset *dhead,
		     struct ivset *sset, struct ivdone *sdone, struct ivset *shead, struct ivset *mid)
{
	if (m == IVM_PENDING) {
		ivset_append(dset, sset);
		ivset_append(dhead, shead); /* empty: src never cut */
		return;
	}
	struct ivset u = { 0 };
	ivset_append(&u, dset);
	ivset_append(&u, shead);
	ivset_union(&u);
	if (m == IVM_HEAD) {
		free(dhead->v);
		*dhead = u;
		*ddone = *sdone;
	} else {
		for (size_t i = 0; i < u.n; i++) done_add(ddone, u.v[i].s, u.v[i].e);
		done_concat(ddone, sdone);
		if (mid) *mid = u;
		else free(u.v);
	}
	ivset_append(dset, sset);
	memset(sdone, 0, sizeof(*sdone));
}

/* The latest end of a pair's pending intervals (0: none). */
static uint64_t pending_end(const struct ivpair *p)
{
	uint64_t e = 0;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < p->set[k].n; i++)
			if (p->set[k].v[i].e > e) e = p->set[k].v[i].e;
	return e;
}

/* The earliest start of src's intervals not summed (head and pending). */
static uint64_t unsummed_start(const struct ivpair *p)
{
	uint64_t s = UINT64_MAX;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < p->set[k].n; i++)
			if (p->set[k].v[i].s < s) s = p->set[k].v[i].s;
		for (size_t i = 0; i < p->head[k].n; i++)
			if (p->head[k].v[i].s < s) s = p->head[k].v[i].s;
	}
	return s;
}

enum iv_merge ivpair_merge(struct ivpair *d, struct ivpair *s, size_t lag, uint64_t *cut_at)
{
	*cut_at = 0;
	enum iv_merge m = IVM_PENDING;
	uint64_t x = 0; /* where src's summed part begins */
	if (s->cut) {
		m = d->keep_head && !d->cut ? IVM_HEAD : IVM_SUM;
		x = s->head_end;
		if (!x) /* a pair that kept no head sums from its first piece */
			for (int k = 0; k < 2; k++)
				if (s->done[k].has && (!x || s->done[k].first_s < x)) x = s->done[k].first_s;
		if (!x) x = s->cut;
		/* what dst has not summed must end before src's summed part */
		if (pending_end(d) > x) return IVM_INEXACT;
	}
	/* and src's intervals come after dst's cut (they are a later slice's) */
	if (d->cut && unsummed_start(s) < d->cut) return IVM_INEXACT;
	struct ivset mid[2] = { { 0 }, { 0 } };
	for (int k = 0; k < 2; k++)
		ivset_merge_cut(m, &d->set[k], &d->done[k], &d->head[k], &s->set[k], &s->done[k], &s->head[k], &mid[k]);
	if (m == IVM_SUM) d->overlap_done += ivset_overlap(&mid[0], &mid[1]) + s->overlap_done;
	else if (m == IVM_HEAD) d->overlap_done = s->overlap_done;
	/* the pieces summed here, as a cut of one pair would have */
	for (int k = 0; m == IVM_SUM && d->on_sum && k < 2; k++)
		for (size_t i = 0; i < mid[k].n; i++) d->on_sum(d->on_sum_arg, k, mid[k].v[i].s, mid[k].v[i].e);
	free(mid[0].v); free(mid[1].v);
	if (m == IVM_HEAD) d->head_end = x;
	d->late += s->late;
	d->late_ns += s->late_ns;
	if (m != IVM_PENDING) {
		d->cut = s->cut;
		d->next_cut = s->next_cut;
	} else {
		*cut_at = pair_cut(d, lag);
	}
	ivpair_free(s);
	return m;
}
