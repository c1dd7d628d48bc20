/* intervals.c — see intervals.h.  GPU records do not arrive in start order
 * (CUPTI hands buffers back as they complete, and the reader merges sources
 * by chunk), so intervals are kept and sorted once, when the union is asked
 * for. */
#include "analysis/intervals.h"

#include <stdlib.h>

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
	qsort(set->v, set->n, sizeof(*set->v), cmp_ival);
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
