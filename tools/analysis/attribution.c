/* attribution.c — see attribution.h.
 *
 * The index: ranges in "lanes", each lane sorted by start with the running
 * maximum of the ends.  A push/pop lane is one thread at one nesting depth
 * (ranges in it do not overlap, so the search stops after one step); a
 * start/end lane is every start/end range begun on one thread (they may
 * overlap: the backward walk stops where no earlier range reaches t).  A
 * query looks at every lane of the process (ATTR_ANY_THREAD) or the lanes of
 * the calling thread (ATTR_SAME_THREAD): a binary search per lane. */
#include "analysis/attribution.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define STARTEND_DEPTH UINT16_MAX
_Static_assert(sizeof(struct attr_range) == 32, "attr_range: 32 bytes a range");

struct lane {
	uint32_t pid, tid, depth;
	size_t off, n;            /* ids[off .. off+n) sorted by start */
};

struct attribution {
	enum attr_rule rule;
	struct attr_range *r; size_t nr, cr;
	strmap name_idx; char **names; size_t nnames, cnames;
	uint32_t *ids;            /* by lane, then start */
	uint64_t *maxe;           /* running max of ends within the lane */
	struct lane *lanes; size_t nlanes, clanes;
	u64map pid_lanes;         /* pid -> first lane index + 1; a pid's lanes are contiguous */
};

const char *attr_rule_name(enum attr_rule rule)
{
	return rule == ATTR_SAME_THREAD ? "same-thread" : "any-thread";
}

int attr_rule_parse(const char *s, enum attr_rule *out)
{
	if (!strcmp(s, "any-thread")) *out = ATTR_ANY_THREAD;
	else if (!strcmp(s, "same-thread")) *out = ATTR_SAME_THREAD;
	else return -1;
	return 0;
}

struct attribution *attribution_new(enum attr_rule rule)
{
	struct attribution *a = xcalloc(1, sizeof(*a));
	a->rule = rule;
	strmap_init(&a->name_idx);
	u64map_init(&a->pid_lanes);
	return a;
}

void attribution_free(struct attribution *a)
{
	if (!a) return;
	for (size_t i = 0; i < a->nnames; i++) free(a->names[i]);
	free(a->names);
	strmap_free(&a->name_idx);
	free(a->r); free(a->ids); free(a->maxe); free(a->lanes);
	u64map_free(&a->pid_lanes);
	free(a);
}

uint32_t attribution_add_range(struct attribution *a, uint32_t pid, uint32_t tid, const gp_rec_nvtx_range *n,
			       const char *name)
{
	int is_new;
	size_t *slot = strmap_get(&a->name_idx, name, &is_new);
	if (is_new) {
		*slot = a->nnames;
		char *copy = xstrdup(name);
		VEC_PUSH(a->names, a->nnames, a->cnames, copy);
	}
	struct attr_range rg;
	rg.s = n->start_ns;
	rg.e = n->end_ns > n->start_ns ? n->end_ns : n->start_ns;
	rg.pid = pid;
	rg.tid = tid;
	rg.kind = (uint8_t)n->kind;
	rg.depth = n->kind != GP_NVTX_PUSHPOP ? STARTEND_DEPTH
		   : n->depth < STARTEND_DEPTH ? (uint16_t)n->depth : STARTEND_DEPTH - 1;
	rg.name = (uint32_t)*slot;
	VEC_PUSH(a->r, a->nr, a->cr, rg);
	return (uint32_t)(a->nr - 1);
}

static const struct attribution *sort_a;
static int cmp_lane_order(const void *x, const void *y)
{
	const struct attr_range *p = &sort_a->r[*(const uint32_t *)x], *q = &sort_a->r[*(const uint32_t *)y];
	if (p->pid != q->pid) return p->pid < q->pid ? -1 : 1;
	if (p->tid != q->tid) return p->tid < q->tid ? -1 : 1;
	if (p->depth != q->depth) return p->depth < q->depth ? -1 : 1;
	if (p->s != q->s) return p->s < q->s ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

void attribution_index(struct attribution *a)
{
	a->ids = xmalloc((a->nr ? a->nr : 1) * sizeof(*a->ids));
	a->maxe = xmalloc((a->nr ? a->nr : 1) * sizeof(*a->maxe));
	for (size_t i = 0; i < a->nr; i++) a->ids[i] = (uint32_t)i;
	sort_a = a;
	qsort(a->ids, a->nr, sizeof(*a->ids), cmp_lane_order);
	for (size_t i = 0; i < a->nr;) {
		const struct attr_range *first = &a->r[a->ids[i]];
		struct lane l = { first->pid, first->tid, first->depth, i, 0 };
		uint64_t m = 0;
		size_t k = i;
		for (; k < a->nr; k++) {
			const struct attr_range *x = &a->r[a->ids[k]];
			if (x->pid != l.pid || x->tid != l.tid || x->depth != l.depth) break;
			if (x->e > m) m = x->e;
			a->maxe[k] = m;
		}
		l.n = k - i;
		if (!a->nlanes || a->lanes[a->nlanes - 1].pid != l.pid)
			*u64map_get(&a->pid_lanes, l.pid, 1) = a->nlanes + 1;
		VEC_PUSH(a->lanes, a->nlanes, a->clanes, l);
		i = k;
	}
}

size_t attribution_nranges(const struct attribution *a) { return a->nr; }
const struct attr_range *attribution_range(const struct attribution *a, uint32_t id) { return &a->r[id]; }
size_t attribution_nnames(const struct attribution *a) { return a->nnames; }
const char *attribution_name(const struct attribution *a, uint32_t name) { return a->names[name]; }
enum attr_rule attribution_rule(const struct attribution *a) { return a->rule; }

size_t attribution_at(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t *out,
		      size_t max)
{
	uint64_t *first = u64map_get((u64map *)&a->pid_lanes, pid, 0);
	if (!first) return 0;
	size_t n = 0;
	for (size_t li = *first - 1; li < a->nlanes && a->lanes[li].pid == pid; li++) {
		const struct lane *l = &a->lanes[li];
		if (a->rule == ATTR_SAME_THREAD && l->tid != tid) continue;
		/* last range of the lane with s <= t */
		size_t lo = 0, hi = l->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (a->r[a->ids[l->off + mid]].s <= t) lo = mid + 1;
			else hi = mid;
		}
		for (size_t k = lo; k-- > 0;) {
			if (a->maxe[l->off + k] <= t) break; /* nothing at or before k reaches t */
			const struct attr_range *x = &a->r[a->ids[l->off + k]];
			if (x->e > t) {
				if (n < max) out[n] = a->ids[l->off + k];
				n++;
			}
		}
	}
	return n;
}

size_t attribution_op(const struct attribution *a, const struct gpu_op *op, uint32_t **buf, size_t *cap)
{
	if (!op->has_call) return 0;
	size_t n = attribution_at(a, op->pid, op->tid, op->call_s, *buf, *cap);
	if (n > *cap) {
		vec_reserve((void **)buf, cap, n, sizeof(**buf));
		n = attribution_at(a, op->pid, op->tid, op->call_s, *buf, *cap);
	}
	return n;
}
