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
 * The storage is two spills (common/spill.h), so that the index costs disk
 * past ATTR_MEM_CAP, not memory, however many ranges the trace has (a
 * day's trace holds tens of millions: at 16 bytes a range in memory it
 * was the largest thing every command held):
 *   by range id (24 bytes): start, end, name, lane;
 *   by lane position (24 bytes): start, the running maximum of the ends
 *     up to it (the range's own end where the ends rise, so a push/pop
 *     lane needs no other), the range's id.
 * A lane's positions are chunks of CHUNK records of the second spill,
 * written as its ranges come (pop order, which within one thread and one
 * depth is start order), so the index needs no sort of the ranges: only a
 * lane whose starts do not rise in that order (start/end ranges, a damaged
 * trace) is read back, sorted and written again, that lane alone in
 * memory.  What stays in memory grows with the lanes, names and processes,
 * and by 4 bytes a chunk (CHUNK ranges of a lane).  Queries come nearly in
 * time order (the steps' pass, a slice's), so the spills' blocks they read
 * are few at a time and stay in the query state's caches (one reader per
 * spill, attr_memo: a view's own, for the threads of --threads). */
#include "analysis/join/attribution.h"

#include <stdlib.h>
#include <string.h>

#include "common/spill.h"
#include "common/util.h"

#define STARTEND_DEPTH UINT16_MAX
#define CHUNK 32                      /* a lane's positions a record of the position spill */
#define ATTR_MEM_CAP ((size_t)8 << 20) /* each spill's bytes in memory: a trace of ~350,000 ranges stays there */

struct by_id { uint64_t s, e; uint32_t name, lane; };
struct by_pos { uint64_t s, maxe; uint32_t id, pad; };

struct lane {
	uint32_t pid, tid;
	uint16_t depth;
	uint8_t kind;             /* its first range's; others in odd_kind */
	uint8_t unsorted;         /* its starts fell in add order: sorted at the index */
	uint8_t overlap;          /* an end fell: a range's end is not its maxe */
	uint8_t crossed;          /* a range ends after the next one starts (else t is in one at most) */
	size_t n;
	uint64_t min_s, maxe;     /* its ranges' first start and last end: a query outside needs no read */
	uint64_t last_s;          /* the add phase's */
	uint32_t *chunk; size_t cchunk; /* its positions' records in pos */
};

struct attribution {
	enum attr_rule rule;
	struct spill *byid, *pos;
	size_t nr;
	u64map odd_kind;          /* id -> kind, for a range whose kind is not its lane's */
	strmap name_idx; char **names; size_t nnames, cnames;
	struct lane *lanes; size_t nlanes, clanes;
	u64map thread_idx;        /* pid << 32 | tid -> thread number + 1 (add phase) */
	u64map lane_idx;          /* thread number << 16 | depth -> lane + 1 (add phase) */
	uint32_t nthreads;
	/* the index */
	uint32_t *order;          /* lanes in (pid, tid, depth) order */
	u64map pid_lanes;         /* pid -> first place in order + 1; a pid's lanes are contiguous */
	struct attr_memo *memo;   /* attribution_op's last answer, the spills' readers (a query changes it) */
	const struct attribution *of; /* a view (attribution_view): whose index this is; NULL: its own */
};

/* The steps, nvtx and comm analyses each ask attribution_op for the same
 * operation in turn (stats_ctx hands each op to all of them): the last
 * answer is kept and given again for the same process, thread and call
 * start.  A pointer, so that a query through a const attribution may
 * update it; queries are for one thread at a time. */
struct lane_hint {
	size_t lo;                /* the first position whose range starts after t */
	uint64_t lo_s;            /* its start (UINT64_MAX: none) */
	struct by_pos prev;       /* position lo - 1 (lo > 0) */
};

struct attr_memo {
	int refs;                 /* the views that share it (attribution_view_sharing) */
	int has;
	uint32_t pid, tid;
	uint64_t t;
	uint32_t *ids; size_t n, cap;
	/* per lane: where attribution_at's last search in it ended.  Queries
	 * come nearly in time order, so the next one gallops from there (a
	 * few probes near it instead of ~log2(ranges) across the lane), or
	 * ends there without a read while t is still between the same two
	 * starts (the kernels of one range). */
	struct lane_hint *hint; size_t nhint;
	struct spill_reader *rid, *rpos; /* made at the first read */
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
	a->byid = spill_new(sizeof(struct by_id), ATTR_MEM_CAP);
	a->pos = spill_new(CHUNK * sizeof(struct by_pos), ATTR_MEM_CAP);
	strmap_init(&a->name_idx);
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
	spill_reader_free(m->rid);
	spill_reader_free(m->rpos);
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
	memo_free(a->memo); /* its readers before their spills */
	spill_free(a->byid);
	spill_free(a->pos);
	u64map_free(&a->odd_kind);
	for (size_t i = 0; i < a->nlanes; i++) free(a->lanes[i].chunk);
	free(a->lanes);
	u64map_free(&a->thread_idx);
	u64map_free(&a->lane_idx);
	free(a->order);
	u64map_free(&a->pid_lanes);
	free(a);
}

/* Range id's record, through the query state's reader once indexed. */
static struct by_id range_rec(const struct attribution *a, uint32_t id)
{
	if (!a->order) return *(const struct by_id *)spill_get(a->byid, id);
	if (!a->memo->rid) a->memo->rid = spill_reader_new(a->byid);
	return *(const struct by_id *)spill_reader_at(a->memo->rid, id);
}

/* Position k of lane l, once indexed. */
static struct by_pos lane_at(const struct attribution *a, const struct lane *l, size_t k)
{
	if (!a->memo->rpos) a->memo->rpos = spill_reader_new(a->pos);
	return ((const struct by_pos *)spill_reader_at(a->memo->rpos, l->chunk[k / CHUNK]))[k % CHUNK];
}

/* The lane of (pid, tid, depth), made on first use. */
static uint32_t lane_of(struct attribution *a, uint32_t pid, uint32_t tid, uint16_t depth, uint8_t kind)
{
	uint64_t *th = u64map_get(&a->thread_idx, (uint64_t)pid << 32 | tid, MAP_INSERT);
	if (!*th) *th = ++a->nthreads;
	uint64_t *ln = u64map_get(&a->lane_idx, (*th - 1) << 16 | depth, MAP_INSERT);
	if (!*ln) {
		struct lane l = { .pid = pid, .tid = tid, .depth = depth, .kind = kind };
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

/* Position k of lane l, to write (before the index); k == l->n: a new
 * one, the first of a chunk making it. */
static struct by_pos *lane_w(struct attribution *a, struct lane *l, size_t k)
{
	if (k == l->n && k % CHUNK == 0) {
		size_t nc = k / CHUNK;
		VEC_PUSH(l->chunk, nc, l->cchunk, (uint32_t)spill_count(a->pos));
		spill_push(a->pos);
	}
	return (struct by_pos *)spill_at(a->pos, l->chunk[k / CHUNK]) + k % CHUNK;
}

uint32_t attribution_add_range_named(struct attribution *a, uint32_t pid, uint32_t tid, const gp_rec_nvtx_range *n,
				     uint32_t nm)
{
	uint32_t id = (uint32_t)a->nr++;
	uint64_t s = n->start_ns, e = n->end_ns > n->start_ns ? n->end_ns : n->start_ns;
	uint8_t kind = (uint8_t)n->kind;
	uint16_t depth = n->kind != GP_NVTX_PUSHPOP ? STARTEND_DEPTH
			 : n->depth < STARTEND_DEPTH ? (uint16_t)n->depth : STARTEND_DEPTH - 1;
	uint32_t li = lane_of(a, pid, tid, depth, kind);
	struct lane *l = &a->lanes[li];
	if (l->kind != kind) *u64map_get(&a->odd_kind, id, MAP_INSERT) = kind;
	*(struct by_id *)spill_push(a->byid) = (struct by_id){ s, e, nm, li };
	if (l->n && s < l->last_s) l->unsorted = 1;
	if (!l->n || s < l->min_s) l->min_s = s;
	if (e < l->maxe) l->overlap = 1;
	if (l->n && s < l->maxe) l->crossed = 1;
	if (e > l->maxe) l->maxe = e;
	l->last_s = s;
	*lane_w(a, l, l->n) = (struct by_pos){ s, l->maxe, id, 0 };
	l->n++;
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
	const struct by_pos *p = x, *q = y;
	if (p->s != q->s) return p->s < q->s ? -1 : 1;
	return p->id < q->id ? -1 : p->id > q->id;
}

/* A lane whose starts fell: its positions sorted by (start, id), the
 * running maximum of the ends again.  The lane alone in memory. */
static void sort_lane(struct attribution *a, struct lane *l)
{
	struct by_pos *v = xmalloc(l->n * sizeof(*v));
	for (size_t k = 0; k < l->n; k++) v[k] = *lane_w(a, l, k);
	qsort(v, l->n, sizeof(*v), cmp_start_id);
	uint64_t m = 0;
	l->overlap = l->crossed = 0;
	for (size_t k = 0; k < l->n; k++) {
		uint64_t e = ((const struct by_id *)spill_get(a->byid, v[k].id))->e;
		if (e < m) l->overlap = 1;
		if (k && v[k].s < m) l->crossed = 1;
		if (e > m) m = e;
		v[k].maxe = m;
		*lane_w(a, l, k) = v[k];
	}
	free(v);
}

void attribution_index(struct attribution *a)
{
	/* the add phase's maps are not needed any more */
	u64map_free(&a->thread_idx);
	u64map_free(&a->lane_idx);
	u64map_init(&a->thread_idx);
	u64map_init(&a->lane_idx);
	for (size_t i = 0; i < a->nlanes; i++)
		if (a->lanes[i].unsorted) sort_lane(a, &a->lanes[i]);
	/* the lanes in (pid, tid, depth) order: a process's together */
	a->order = xmalloc((a->nlanes ? a->nlanes : 1) * sizeof(*a->order));
	for (size_t i = 0; i < a->nlanes; i++) a->order[i] = (uint32_t)i;
	sort_a = a;
	qsort(a->order, a->nlanes, sizeof(*a->order), cmp_lane_key);
	for (size_t i = 0; i < a->nlanes; i++)
		if (!i || a->lanes[a->order[i - 1]].pid != a->lanes[a->order[i]].pid)
			*u64map_get(&a->pid_lanes, a->lanes[a->order[i]].pid, MAP_INSERT) = i + 1;
	spill_seal(a->byid);
	spill_seal(a->pos);
}

size_t attribution_nranges(const struct attribution *a) { return a->nr; }

struct attr_range attribution_range(const struct attribution *a, uint32_t id)
{
	const struct by_id r = range_rec(a, id);
	const struct lane *l = &a->lanes[r.lane];
	struct attr_range x = { .s = r.s, .e = r.e, .pid = l->pid, .tid = l->tid, .name = r.name, .depth = l->depth,
				.kind = l->kind };
	if (a->odd_kind.n) {
		uint64_t *k = u64map_get((u64map *)&a->odd_kind, id, MAP_FIND);
		if (k) x.kind = (uint8_t)*k;
	}
	return x;
}

size_t attribution_nnames(const struct attribution *a) { return a->nnames; }
const char *attribution_name(const struct attribution *a, uint32_t name) { return a->names[name]; }
enum attr_rule attribution_rule(const struct attribution *a) { return a->rule; }

/* which lanes of the process a query looks at */
enum lanes_of { LANES_RULE, LANES_OWN_PUSHPOP };

static size_t lanes_at(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t *out,
		       size_t max, enum lanes_of which)
{
	uint64_t *first = u64map_get((u64map *)&a->pid_lanes, pid, MAP_FIND);
	if (!first) return 0;
	if (a->memo->nhint != a->nlanes) {
		free(a->memo->hint);
		a->memo->hint = xcalloc(a->nlanes ? a->nlanes : 1, sizeof(*a->memo->hint));
		a->memo->nhint = a->nlanes;
	}
	size_t n = 0;
	for (size_t li = *first - 1; li < a->nlanes && a->lanes[a->order[li]].pid == pid; li++) {
		const struct lane *l = &a->lanes[a->order[li]];
		if (which == LANES_OWN_PUSHPOP ? l->tid != tid || l->depth == STARTEND_DEPTH
					       : a->rule == ATTR_SAME_THREAD && l->tid != tid)
			continue;
		if (t < l->min_s || t >= l->maxe) continue;
		/* lo: the first range of the lane with s > t (ranges before it
		 * start at or before t), bracketed from the last answer */
		struct lane_hint *hn = &a->memo->hint[li];
		size_t lo = hn->lo, hi = l->n, h = hn->lo;
		if (lo > 0 && lo < l->n && hn->prev.s <= t && hn->lo_s <= t) {
			/* t passed the next start: most often (queries in time
			 * order) not the one after it too, so the step costs one
			 * read, and the search below none */
			const struct by_pos next = lo + 1 < l->n ? lane_at(a, l, lo + 1) : (struct by_pos){ .s = UINT64_MAX };
			if (t < next.s) {
				hn->prev = lane_at(a, l, lo);
				hn->lo = ++lo;
				hn->lo_s = next.s;
			}
		}
		if (!(lo > 0 && lo <= l->n && hn->prev.s <= t && t < hn->lo_s)) {
			lo = 0;
			if (h > l->n) h = l->n;
			if (h < l->n && lane_at(a, l, h).s <= t) {
				size_t step = 1;
				lo = h + 1;
				while (lo + step <= l->n && lane_at(a, l, lo + step - 1).s <= t) lo += step, step *= 2;
				hi = lo + step <= l->n ? lo + step - 1 : l->n;
			} else {
				size_t step = 1;
				hi = h;
				while (hi >= step && lane_at(a, l, hi - step).s > t) hi -= step, step *= 2;
				lo = hi >= step ? hi - step + 1 : 0;
			}
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (lane_at(a, l, mid).s <= t) lo = mid + 1;
				else hi = mid;
			}
			hn->lo = lo;
			hn->lo_s = lo < l->n ? lane_at(a, l, lo).s : UINT64_MAX;
			if (lo) hn->prev = lane_at(a, l, lo - 1);
		}
		for (size_t k = lo; k-- > 0;) {
			const struct by_pos p = k + 1 == lo ? hn->prev : lane_at(a, l, k);
			if (p.maxe <= t) break; /* nothing at or before k reaches t */
			if ((l->overlap ? range_rec(a, p.id).e : p.maxe) > t) {
				if (n < max) out[n] = p.id;
				n++;
			}
			if (!l->crossed) break; /* the ranges before end before this one starts */
		}
	}
	return n;
}

size_t attribution_at(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t *out,
		      size_t max)
{
	return lanes_at(a, pid, tid, t, out, max, LANES_RULE);
}

size_t attribution_open_on(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t *out,
			   size_t max)
{
	return lanes_at(a, pid, tid, t, out, max, LANES_OWN_PUSHPOP);
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
