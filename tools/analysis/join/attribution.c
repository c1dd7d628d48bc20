/* attribution.c — see attribution.h.
 *
 * The index: ranges in "lanes", each lane sorted by start.  A push/pop lane
 * is one thread at one nesting depth (ranges in it do not overlap, so the
 * search stops after one step); a start/end lane is every start/end range
 * begun on one thread (they may overlap: the backward walk stops where no
 * earlier range reaches t, by the running maximum of the ends).  A query
 * looks at every lane of the process (ATTR_ANY_THREAD) or the lanes of the
 * calling thread (ATTR_SAME_THREAD): a binary search per lane.
 *
 * The storage, 16 bytes a range (a day's trace holds millions of ranges:
 * this was the largest thing `stats` held, at 44 bytes), by range id:
 *   start   4: signed offset from its block's base (the start of the
 *              block's first range; a block is 64 ids, which are added in
 *              pop order, so close in time); a start 2^31 ns or more away
 *              keeps its value in a map
 *   length  4: a range of 2^32-1 ns or more keeps its end in a map
 *   name and lane 4: 16 bits each while both fit (the lane holds pid,
 *              thread, depth and kind); past that two arrays of 4 bytes
 * and by lane position the id (4).  The running maximum of the ends (8 a
 * range) is kept only for the lanes where it is not the range's own end:
 * those whose ranges overlap (start/end ranges). */
#include "analysis/join/attribution.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define STARTEND_DEPTH UINT16_MAX
#define LONG_LEN UINT32_MAX      /* len[]: the end is in long_e */
#define FAR_OFF INT32_MIN        /* soff[]: the start is in far_s */
#define BLOCK_SHIFT 6            /* 64 ids share a start base */
#define NO_MAXE SIZE_MAX

struct lane {
	uint32_t pid, tid;
	uint16_t depth;
	uint8_t kind;             /* its first range's; others in odd_kind */
	size_t off, n;            /* ids[off .. off+n) sorted by start, then id */
	size_t maxe_off;          /* maxe[maxe_off + k]: running max of ends; NO_MAXE: the ends rise */
};

struct attribution {
	enum attr_rule rule;
	/* by range id */
	int32_t *soff; size_t csoff;   /* start - sbase[id >> BLOCK_SHIFT], or FAR_OFF */
	uint64_t *sbase; size_t nsbase, csbase;
	uint32_t *len; size_t clen;
	uint32_t *nl; size_t cnl;      /* name << 16 | lane while packed */
	int wide;                      /* name and lane in name[] and lane[] instead */
	uint32_t *name, *lane;         /* lane: index (in pid, tid, depth order after the index) */
	size_t nr;
	u64map far_s;             /* id -> start, for FAR_OFF */
	u64map long_e;            /* id -> end, for ranges of LONG_LEN ns or more */
	u64map odd_kind;          /* id -> kind, for a range whose kind is not its lane's */
	strmap name_idx; char **names; size_t nnames, cnames;
	struct lane *lanes; size_t nlanes, clanes;
	u64map thread_idx;        /* pid << 32 | tid -> thread number + 1 (add phase) */
	u64map lane_idx;          /* thread number << 16 | depth -> lane + 1 (add phase) */
	uint32_t nthreads;
	/* the index */
	uint32_t *ids;            /* by lane, then start */
	uint64_t *maxe; size_t nmaxe, cmaxe;
	u64map pid_lanes;         /* pid -> first lane index + 1; a pid's lanes are contiguous */
	struct attr_memo *memo;   /* attribution_op's last answer (a query changes it) */
	const struct attribution *of; /* a view (attribution_view): whose index this is; NULL: its own */
};

/* The steps, nvtx and comm analyses each ask attribution_op for the same
 * operation in turn (stats_ctx hands each op to all of them): the last
 * answer is kept and given again for the same process, thread and call
 * start.  A pointer, so that a query through a const attribution may
 * update it; queries are for one thread at a time. */
struct attr_memo {
	int refs;                 /* the views that share it (attribution_view_sharing) */
	int has;
	uint32_t pid, tid;
	uint64_t t;
	uint32_t *ids; size_t n, cap;
	/* per lane: where attribution_at's last search in it ended.  Queries
	 * come nearly in time order, so the next one gallops from there (a
	 * few probes near it instead of ~log2(ranges) across the lane). */
	size_t *hint; size_t nhint;
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
	u64map_init(&a->far_s);
	u64map_init(&a->long_e);
	u64map_init(&a->odd_kind);
	u64map_init(&a->thread_idx);
	u64map_init(&a->lane_idx);
	u64map_init(&a->pid_lanes);
	a->memo = xcalloc(1, sizeof(*a->memo));
	a->memo->refs = 1;
	return a;
}

struct attribution *attribution_view(const struct attribution *a)
{
	struct attribution *v = xmalloc(sizeof(*v));
	*v = *a; /* the index's pointers: read only from here on */
	v->of = a;
	v->memo = xcalloc(1, sizeof(*v->memo));
	v->memo->refs = 1;
	return v;
}

struct attribution *attribution_view_sharing(const struct attribution *v)
{
	struct attribution *w = xmalloc(sizeof(*w));
	*w = *v;
	w->of = v->of ? v->of : v;
	/* the sharers may be freed on different threads (after their reads) */
	__atomic_add_fetch(&w->memo->refs, 1, __ATOMIC_RELAXED);
	return w;
}

static void memo_free(struct attr_memo *m)
{
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0) return; /* another view's still */
	free(m->ids);
	free(m->hint);
	free(m);
}

void attribution_free(struct attribution *a)
{
	if (!a) return;
	if (a->of) {
		memo_free(a->memo);
		free(a);
		return;
	}
	for (size_t i = 0; i < a->nnames; i++) free(a->names[i]);
	free(a->names);
	strmap_free(&a->name_idx);
	free(a->soff); free(a->sbase); free(a->len); free(a->nl); free(a->name); free(a->lane);
	u64map_free(&a->far_s);
	u64map_free(&a->long_e);
	u64map_free(&a->odd_kind);
	free(a->lanes);
	memo_free(a->memo);
	u64map_free(&a->thread_idx);
	u64map_free(&a->lane_idx);
	free(a->ids); free(a->maxe);
	u64map_free(&a->pid_lanes);
	free(a);
}

static uint64_t range_start(const struct attribution *a, uint32_t id)
{
	if (a->soff[id] != FAR_OFF) return a->sbase[id >> BLOCK_SHIFT] + (uint64_t)(int64_t)a->soff[id];
	return *u64map_get((u64map *)&a->far_s, id, MAP_FIND);
}

static uint64_t range_end(const struct attribution *a, uint32_t id)
{
	if (a->len[id] != LONG_LEN) return range_start(a, id) + a->len[id];
	return *u64map_get((u64map *)&a->long_e, id, MAP_FIND);
}

static uint32_t range_name(const struct attribution *a, uint32_t id)
{
	return a->wide ? a->name[id] : a->nl[id] >> 16;
}

static uint32_t range_lane(const struct attribution *a, uint32_t id)
{
	return a->wide ? a->lane[id] : a->nl[id] & 0xffff;
}

static void set_lane(struct attribution *a, uint32_t id, uint32_t lane)
{
	if (a->wide) a->lane[id] = lane;
	else a->nl[id] = (a->nl[id] & 0xffff0000u) | lane;
}

/* 65536 names or lanes: name and lane in arrays of their own from now on. */
static void widen(struct attribution *a)
{
	size_t cap = a->cnl ? a->cnl : 16;
	a->name = xmalloc(cap * sizeof(*a->name));
	a->lane = xmalloc(cap * sizeof(*a->lane));
	for (size_t i = 0; i < a->nr; i++) {
		a->name[i] = a->nl[i] >> 16;
		a->lane[i] = a->nl[i] & 0xffff;
	}
	free(a->nl);
	a->nl = NULL;
	a->wide = 1;
}

/* The lane of (pid, tid, depth), made on first use. */
static uint32_t lane_of(struct attribution *a, uint32_t pid, uint32_t tid, uint16_t depth, uint8_t kind)
{
	uint64_t *th = u64map_get(&a->thread_idx, (uint64_t)pid << 32 | tid, MAP_INSERT);
	if (!*th) *th = ++a->nthreads;
	uint64_t *ln = u64map_get(&a->lane_idx, (*th - 1) << 16 | depth, MAP_INSERT);
	if (!*ln) {
		struct lane l = { pid, tid, depth, kind, 0, 0, NO_MAXE };
		VEC_PUSH(a->lanes, a->nlanes, a->clanes, l);
		*ln = a->nlanes;
	}
	return (uint32_t)(*ln - 1);
}

uint32_t attribution_name_intern(struct attribution *a, const char *name)
{
	int is_new;
	size_t *slot = strmap_get(&a->name_idx, name, &is_new);
	if (is_new) {
		*slot = a->nnames;
		char *copy = xstrdup(name);
		VEC_PUSH(a->names, a->nnames, a->cnames, copy);
	}
	return (uint32_t)*slot;
}

uint32_t attribution_add_range(struct attribution *a, uint32_t pid, uint32_t tid, const gp_rec_nvtx_range *n,
			       const char *name)
{
	return attribution_add_range_named(a, pid, tid, n, attribution_name_intern(a, name));
}

uint32_t attribution_add_range_named(struct attribution *a, uint32_t pid, uint32_t tid, const gp_rec_nvtx_range *n,
				     uint32_t nm)
{
	uint32_t id = (uint32_t)a->nr;
	uint64_t s = n->start_ns, e = n->end_ns > n->start_ns ? n->end_ns : n->start_ns;
	uint8_t kind = (uint8_t)n->kind;
	uint16_t depth = n->kind != GP_NVTX_PUSHPOP ? STARTEND_DEPTH
			 : n->depth < STARTEND_DEPTH ? (uint16_t)n->depth : STARTEND_DEPTH - 1;
	uint32_t l = lane_of(a, pid, tid, depth, kind);
	if (a->lanes[l].kind != kind) *u64map_get(&a->odd_kind, id, MAP_INSERT) = kind;
	uint32_t len = e - s < LONG_LEN ? (uint32_t)(e - s) : LONG_LEN;
	if (len == LONG_LEN) *u64map_get(&a->long_e, id, MAP_INSERT) = e;
	if (!(id & ((1u << BLOCK_SHIFT) - 1))) VEC_PUSH(a->sbase, a->nsbase, a->csbase, s);
	int64_t off = (int64_t)(s - a->sbase[id >> BLOCK_SHIFT]);
	int32_t soff = off > INT32_MIN && off <= INT32_MAX ? (int32_t)off : FAR_OFF;
	if (soff == FAR_OFF) *u64map_get(&a->far_s, id, MAP_INSERT) = s;
	if (!a->wide && (nm > 0xffff || l > 0xffff)) widen(a);
	size_t nr = a->nr;
	VEC_PUSH(a->soff, nr, a->csoff, soff);
	nr = a->nr;
	VEC_PUSH(a->len, nr, a->clen, len);
	if (a->wide) {
		size_t c = a->cnl;
		nr = a->nr;
		VEC_PUSH(a->name, nr, c, nm);
		nr = a->nr;
		VEC_PUSH(a->lane, nr, a->cnl, l);
	} else {
		nr = a->nr;
		VEC_PUSH(a->nl, nr, a->cnl, nm << 16 | l);
	}
	a->nr++;
	return id;
}

static const struct attribution *sort_a;
static int cmp_lane_key(const void *x, const void *y)
{
	const struct lane *p = &sort_a->lanes[*(const uint32_t *)x], *q = &sort_a->lanes[*(const uint32_t *)y];
	if (p->pid != q->pid) return p->pid < q->pid ? -1 : 1;
	if (p->tid != q->tid) return p->tid < q->tid ? -1 : 1;
	if (p->depth != q->depth) return p->depth < q->depth ? -1 : 1;
	return 0;
}

static int cmp_start_id(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	uint64_t si = range_start(sort_a, i), sj = range_start(sort_a, j);
	if (si != sj) return si < sj ? -1 : 1;
	return i < j ? -1 : i > j;
}

void attribution_index(struct attribution *a)
{
	/* the add phase's maps are not needed any more */
	u64map_free(&a->thread_idx);
	u64map_free(&a->lane_idx);
	u64map_init(&a->thread_idx);
	u64map_init(&a->lane_idx);
	/* lanes in (pid, tid, depth) order; the ranges' lane numbers follow */
	uint32_t *order = xmalloc((a->nlanes ? a->nlanes : 1) * sizeof(*order));
	uint32_t *rank = xmalloc((a->nlanes ? a->nlanes : 1) * sizeof(*rank));
	for (size_t i = 0; i < a->nlanes; i++) order[i] = (uint32_t)i;
	sort_a = a;
	qsort(order, a->nlanes, sizeof(*order), cmp_lane_key);
	struct lane *sorted = xmalloc((a->nlanes ? a->nlanes : 1) * sizeof(*sorted));
	for (size_t i = 0; i < a->nlanes; i++) {
		sorted[i] = a->lanes[order[i]];
		rank[order[i]] = (uint32_t)i;
	}
	free(a->lanes);
	a->lanes = sorted;
	a->clanes = a->nlanes;
	free(order);
	for (size_t i = 0; i < a->nr; i++) {
		uint32_t l = rank[range_lane(a, (uint32_t)i)];
		set_lane(a, (uint32_t)i, l);
		a->lanes[l].n++;
	}
	free(rank);
	size_t off = 0;
	for (size_t i = 0; i < a->nlanes; i++) {
		a->lanes[i].off = off;
		off += a->lanes[i].n;
		a->lanes[i].n = 0;
	}
	/* ids by lane, in id order: sorted by start when the starts rise */
	a->ids = xmalloc((a->nr ? a->nr : 1) * sizeof(*a->ids));
	for (size_t i = 0; i < a->nr; i++) {
		struct lane *l = &a->lanes[range_lane(a, (uint32_t)i)];
		a->ids[l->off + l->n++] = (uint32_t)i;
	}
	for (size_t li = 0; li < a->nlanes; li++) {
		struct lane *l = &a->lanes[li];
		uint32_t *v = a->ids + l->off;
		int sorted_s = 1, rising_e = 1;
		for (size_t k = 1; k < l->n && sorted_s; k++)
			if (range_start(a, v[k]) < range_start(a, v[k - 1])) sorted_s = 0;
		if (!sorted_s) qsort(v, l->n, sizeof(*v), cmp_start_id);
		uint64_t m = 0;
		for (size_t k = 0; k < l->n; k++) {
			uint64_t e = range_end(a, v[k]);
			if (e < m) { rising_e = 0; break; }
			m = e;
		}
		if (!rising_e) {
			l->maxe_off = a->nmaxe;
			vec_reserve((void **)&a->maxe, &a->cmaxe, a->nmaxe + l->n, sizeof(*a->maxe));
			m = 0;
			for (size_t k = 0; k < l->n; k++) {
				uint64_t e = range_end(a, v[k]);
				if (e > m) m = e;
				a->maxe[a->nmaxe++] = m;
			}
		}
		if (!li || a->lanes[li - 1].pid != l->pid)
			*u64map_get(&a->pid_lanes, l->pid, MAP_INSERT) = li + 1;
	}
}

size_t attribution_nranges(const struct attribution *a) { return a->nr; }

struct attr_range attribution_range(const struct attribution *a, uint32_t id)
{
	const struct lane *l = &a->lanes[range_lane(a, id)];
	struct attr_range x;
	memset(&x, 0, sizeof(x));
	x.s = range_start(a, id);
	x.e = range_end(a, id);
	x.pid = l->pid;
	x.tid = l->tid;
	x.name = range_name(a, id);
	x.depth = l->depth;
	x.kind = l->kind;
	if (a->odd_kind.n) {
		uint64_t *k = u64map_get((u64map *)&a->odd_kind, id, MAP_FIND);
		if (k) x.kind = (uint8_t)*k;
	}
	return x;
}

size_t attribution_nnames(const struct attribution *a) { return a->nnames; }
const char *attribution_name(const struct attribution *a, uint32_t name) { return a->names[name]; }
enum attr_rule attribution_rule(const struct attribution *a) { return a->rule; }

size_t attribution_at(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t *out,
		      size_t max)
{
	uint64_t *first = u64map_get((u64map *)&a->pid_lanes, pid, MAP_FIND);
	if (!first) return 0;
	if (a->memo->nhint != a->nlanes) {
		free(a->memo->hint);
		a->memo->hint = xcalloc(a->nlanes ? a->nlanes : 1, sizeof(*a->memo->hint));
		a->memo->nhint = a->nlanes;
	}
	size_t n = 0;
	for (size_t li = *first - 1; li < a->nlanes && a->lanes[li].pid == pid; li++) {
		const struct lane *l = &a->lanes[li];
		if (a->rule == ATTR_SAME_THREAD && l->tid != tid) continue;
		const uint32_t *v = a->ids + l->off;
		/* lo: the first range of the lane with s > t (ranges before it
		 * start at or before t), bracketed from the last answer */
		size_t lo = 0, hi = l->n, h = a->memo->hint[li];
		if (h > l->n) h = l->n;
		if (h < l->n && range_start(a, v[h]) <= t) {
			size_t step = 1;
			lo = h + 1;
			while (lo + step <= l->n && range_start(a, v[lo + step - 1]) <= t) lo += step, step *= 2;
			hi = lo + step <= l->n ? lo + step - 1 : l->n;
		} else {
			size_t step = 1;
			hi = h;
			while (hi >= step && range_start(a, v[hi - step]) > t) hi -= step, step *= 2;
			lo = hi >= step ? hi - step + 1 : 0;
		}
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (range_start(a, v[mid]) <= t) lo = mid + 1;
			else hi = mid;
		}
		a->memo->hint[li] = lo;
		for (size_t k = lo; k-- > 0;) {
			uint64_t e = range_end(a, v[k]);
			uint64_t m = l->maxe_off == NO_MAXE ? e : a->maxe[l->maxe_off + k];
			if (m <= t) break; /* nothing at or before k reaches t */
			if (e > t) {
				if (n < max) out[n] = v[k];
				n++;
			}
		}
	}
	return n;
}

size_t attribution_op(const struct attribution *a, const struct gpu_op *op, uint32_t **buf, size_t *cap)
{
	if (!op->has_call) return 0;
	struct attr_memo *m = a->memo;
	if (!(m->has && m->pid == op->pid && m->tid == op->tid && m->t == op->call_s)) {
		m->n = attribution_at(a, op->pid, op->tid, op->call_s, m->ids, m->cap);
		if (m->n > m->cap) {
			vec_reserve((void **)&m->ids, &m->cap, m->n, sizeof(*m->ids));
			m->n = attribution_at(a, op->pid, op->tid, op->call_s, m->ids, m->cap);
		}
		m->has = 1; m->pid = op->pid; m->tid = op->tid; m->t = op->call_s;
	}
	if (m->n > *cap) vec_reserve((void **)buf, cap, m->n, sizeof(**buf));
	if (m->n) memcpy(*buf, m->ids, m->n * sizeof(**buf));
	return m->n;
}
