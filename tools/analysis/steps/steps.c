/* steps.c — see steps.h. */
#include "analysis/steps/steps.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/intervals.h"
#include "analysis/core/quantile.h"
#include "common/spill.h"
#include "common/tool.h"
#include "common/util.h"
#include "analysis/gpu/windows.h"

const char *const step_bucket_names[SB_COUNT] = {
	"compute", "comm", "memory", "host_wait", "sync", "launch", "other",
};

#define UNKNOWN_END UINT64_MAX
#define NO_STEP UINT32_MAX
#define MAX_PH 4
/* the longest an operation may trail the stream (the finalize slack), and
 * how long records are kept when no step needs them */
#define HOLD_NS 5000000000ull

struct bop {
	struct gpu_op op;
	uint32_t step;            /* NVTX: the step it was launched in */
	uint32_t ph[MAX_PH];      /* NVTX: phase names it was launched in */
	uint8_t nph;
};

struct bapi {
	uint64_t s, e;
	uint8_t sync, alloc, counted; /* counted: not the driver record of a counted runtime call */
};

/* A thread whose sync/alloc call was first looked up after steps_mark
 * (steps_slice_fresh_ok) */
struct tidcorr { uint32_t tid; uint64_t corr; };

struct sproc {
	struct steps_proc out;
	/* out.rows' record 0 is row row0 of the engine (steps_mark and steps_take
	 * drop the finalized ones of a slice's engine); nfin counts from the
	 * engine's first row.  NVTX: the plan's rows, all made at the start,
	 * or (lazy: a slice's engine) as they are needed; the index is the
	 * plan's.  Trace: made as the markers come; in a slice's engine the
	 * index counts from its lead-in (steps_take renumbers). */
	size_t row0, nfin;
	int lazy;
	uint64_t last_fin_e;      /* trace: the end of the last row finalized (nfin > 0) */
	struct tidcorr *fresh; size_t nfresh, cfresh;
	int open;                 /* trace: the last row's end is not known yet */
	struct bop *ops; size_t nops, cops;
	size_t nsorted;           /* ops[0 .. nsorted) are in cmp_bop order (finalize) */
	struct bop *tmp; size_t ctmp; /* finalize's merge buffer */
	struct bapi *api; size_t napi, capi;
	uint64_t pruned_end;      /* latest end of the operations pruned */
	uint64_t max_dur;         /* longest operation seen */
	uint64_t last_prune;
	struct u32map byid;       /* NVTX: range id -> its row (~11 bytes a step) */
	u64map tid_corr;          /* tid -> correlation id of its last counted sync/alloc call */
	uint32_t step_tid, step_depth; /* NVTX: the step ranges' thread/depth (from the first) */
	/* trace, a marker told apart by the one before it (plan->marker_after) */
	struct step_stream_last *mkq; size_t nmkq, cmkq;
};

struct steps {
	gp_reader *r;
	const struct attribution *a;
	const struct winset *win;
	uint64_t kernel_wait;
	u64map pid2p;
	struct sproc *p; size_t np;
	u64map name_sync;         /* API name id -> 1 plain, 2 sync, 3 alloc */
	uint64_t now;
	uint32_t *idbuf; size_t cidbuf;
	int warned_idle;
	int marked;               /* steps_mark ran: the threads first seen since are noted */
	int ranges_shared;        /* byid: the template's (steps_new_slice), not freed */
};

int step_api_is_sync(const char *name)
{
	if (strstr(name, "Synchronize")) return 1;
	if ((strstr(name, "emcpy") || strstr(name, "emset")) && !strstr(name, "Async")) return 1;
	return 0;
}

int step_api_is_alloc(const char *name)
{
	return strstr(name, "Malloc") || strstr(name, "HostAlloc") || strstr(name, "MemAlloc") ||
	       strstr(name, "cuMemCreate");
}

static struct sproc *proc_find(struct steps *st, uint32_t pid)
{
	uint64_t *s = u64map_get(&st->pid2p, pid, 0);
	return s ? &st->p[*s] : NULL;
}

/* The rows and phases a slice engine holds in memory (16 of them at
 * --threads 16); the rest go to a file. */
#define SLICE_ROWS_MEM (1u << 20)

const struct step_row *step_row(const struct steps_proc *p, size_t k) { return spill_get(p->rows, k); }
struct step_row *step_row_w(const struct steps_proc *p, size_t k) { return spill_at(p->rows, k); }
const struct step_phase *step_phase(const struct steps_proc *p, size_t k) { return spill_get(p->ph, k); }

static void row_push(struct steps_proc *o, const struct step_row *w)
{
	*(struct step_row *)spill_push(o->rows) = *w;
	o->nrows++;
}

static void phase_push(struct steps_proc *o, const struct step_phase *ph)
{
	*(struct step_phase *)spill_push(o->ph) = *ph;
	o->nph++;
}

/* NVTX row k of the plan, as steps_new makes it. */
static void plan_row(const struct step_plan *pl, const struct attribution *a, size_t k, struct step_row *w)
{
	const struct step_def sd = step_plan_step(pl, a, k);
	*w = (struct step_row){ .pid = pl->pid, .index = (uint32_t)k, .number = sd.number >= 0 ? sd.number : (int64_t)k,
				.range_id = sd.range_id, .s = sd.s, .e = sd.e };
}

/* The rows the engine knows: NVTX the plan's, trace those found so far. */
static size_t rows_known(const struct sproc *p)
{
	return p->out.plan->method == STEP_NVTX ? p->out.plan->nsteps : p->row0 + p->out.nrows;
}

/* Row k of the engine (row0 <= k < rows_known); a lazy engine makes the
 * plan's rows up to it, reading the plan through the engine's attribution
 * (a slice's view on its thread). */
static struct step_row *row_at(const struct steps *st, struct sproc *p, size_t k)
{
	while (p->lazy && k >= p->row0 + p->out.nrows) {
		struct step_row w;
		plan_row(p->out.plan, st->a, p->row0 + p->out.nrows, &w);
		row_push(&p->out, &w);
	}
	return step_row_w(&p->out, k - p->row0);
}

/* Process i of st: plan pl's, its rows held in mem bytes. */
static struct sproc *proc_init(struct steps *st, size_t i, const struct step_plan *pl, size_t mem)
{
	struct sproc *p = &st->p[i];
	p->out.pid = pl->pid;
	p->out.plan = pl;
	u64map_init(&p->tid_corr);
	*u64map_get(&st->pid2p, pl->pid, 1) = i;
	p->out.rows = spill_new(sizeof(struct step_row), mem);
	p->out.ph = spill_new(sizeof(struct step_phase), mem / 4);
	return p;
}

/* What steps_new and steps_new_slice share: an engine of n processes,
 * each then made by proc_init. */
static struct steps *steps_alloc(gp_reader *r, const struct attribution *a, uint64_t kernel_wait,
				 const struct winset *win, size_t n)
{
	struct steps *st = xcalloc(1, sizeof(*st));
	st->r = r;
	st->a = a;
	st->kernel_wait = kernel_wait;
	st->win = win;
	u64map_init(&st->pid2p);
	u64map_init(&st->name_sync);
	st->p = xcalloc(n ? n : 1, sizeof(*st->p));
	st->np = n;
	return st;
}

struct steps *steps_new(gp_reader *r, const struct attribution *a, const struct step_detect *sd,
			const struct steps_opts *opts)
{
	size_t n = step_detect_nplans(sd);
	struct steps *st = steps_alloc(r, a, opts && opts->kernel_wait_ns ? opts->kernel_wait_ns : STEP_KERNEL_WAIT_NS,
				       opts ? opts->windows : NULL, n);
	for (size_t i = 0; i < n; i++) {
		const struct step_plan *pl = step_detect_plan(sd, i);
		struct sproc *p = proc_init(st, i, pl, STEPS_ROWS_MEM);
		if (pl->method != STEP_NVTX) continue;
		u32map_reserve(&p->byid, pl->nsteps);
		for (size_t k = 0; k < pl->nsteps; k++) {
			struct step_row w;
			plan_row(pl, a, k, &w);
			row_push(&p->out, &w);
			u32map_put(&p->byid, pl->range_ids[k], (uint32_t)k);
		}
		if (pl->nsteps) {
			const struct attr_range x = attribution_range(a, pl->range_ids[0]);
			p->step_tid = x.tid;
			p->step_depth = x.depth;
		}
	}
	return st;
}

struct steps *steps_new_slice(const struct steps *tmpl, const struct attribution *a, uint64_t from)
{
	/* tmpl's reader until steps_set_reader gives the slice's */
	struct steps *st = steps_alloc(tmpl->r, a, tmpl->kernel_wait, tmpl->win, tmpl->np);
	st->ranges_shared = 1;
	for (size_t i = 0; i < tmpl->np; i++) {
		const struct sproc *t = &tmpl->p[i];
		const struct step_plan *pl = t->out.plan;
		struct sproc *p = proc_init(st, i, pl, SLICE_ROWS_MEM);
		p->byid = t->byid; /* read only */
		p->step_tid = t->step_tid;
		p->step_depth = t->step_depth;
		if (pl->method != STEP_NVTX) continue;
		/* the steps that ended before the slice's reading began are
		 * finalized at its first record, and are not its own */
		p->lazy = 1;
		while (p->nfin < pl->nsteps && attribution_range(a, pl->range_ids[p->nfin]).e <= from) p->nfin++;
		p->row0 = p->nfin;
	}
	return st;
}

void steps_free(struct steps *st)
{
	if (!st) return;
	for (size_t i = 0; i < st->np; i++) {
		struct sproc *p = &st->p[i];
		spill_free(p->out.rows); spill_free(p->out.ph);
		free(p->ops); free(p->tmp); free(p->api);
		free(p->fresh); free(p->mkq);
		if (!st->ranges_shared) u32map_free(&p->byid);
		u64map_free(&p->tid_corr);
	}
	free(st->p);
	free(st->idbuf);
	u64map_free(&st->pid2p);
	u64map_free(&st->name_sync);
	free(st);
}

size_t steps_nprocs(const struct steps *st) { return st->np; }
struct steps_proc *steps_proc(struct steps *st, size_t i) { return &st->p[i].out; }
const struct attribution *steps_attribution(const struct steps *st) { return st->a; }
uint64_t steps_kernel_wait(const struct steps *st) { return st->kernel_wait; }

int steps_gpu_recorded(const struct winset *w, uint32_t pid, uint64_t t)
{
	if (!w || !w->n) return 1;
	size_t lo, hi;
	winset_range(w, pid, &lo, &hi);
	return lo == hi || winset_find(w, pid, t) >= 0;
}

int steps_unrecorded(const struct winset *w, uint32_t pid, uint64_t s, uint64_t e)
{
	if (!w || !w->n) return 0;
	size_t lo, hi;
	winset_range(w, pid, &lo, &hi);
	long a = winset_find(w, pid, s), b = winset_find(w, pid, e);
	return lo < hi && (a < 0 || a != b);
}

static int active(const struct sproc *p)
{
	return p && (p->out.plan->method == STEP_NVTX || p->out.plan->method == STEP_TRACE);
}

static void note_pending(struct sproc *p)
{
	if (p->nops + p->napi > p->out.pending_max) p->out.pending_max = p->nops + p->napi;
}

void steps_api(struct steps *st, uint32_t pid, uint32_t tid, const gp_rec_api *a)
{
	struct sproc *p = proc_find(st, pid);
	if (!active(p)) return;
	uint64_t *cls = u64map_get(&st->name_sync, a->name_id, 1);
	if (!*cls) {
		const char *name = tool_str(st->r, a->name_id);
		*cls = step_api_is_sync(name) ? 2 : step_api_is_alloc(name) ? 3 : 1;
	}
	struct bapi b = { .s = a->start_ns, .e = a->end_ns > a->start_ns ? a->end_ns : a->start_ns,
			  .sync = *cls == 2, .alloc = *cls == 3 };
	if (b.sync || b.alloc) {
		/* the runtime call and the driver call inside it share the id: one call */
		if (st->marked && !u64map_get(&p->tid_corr, tid, MAP_FIND)) {
			struct tidcorr f = { tid, a->correlation_id };
			VEC_PUSH(p->fresh, p->nfresh, p->cfresh, f);
		}
		uint64_t *last = u64map_get(&p->tid_corr, tid, 1);
		b.counted = !a->correlation_id || *last != a->correlation_id;
		*last = a->correlation_id;
	}
	VEC_PUSH(p->api, p->napi, p->capi, b);
	note_pending(p);
}

static void add_phase(struct bop *b, uint32_t name)
{
	for (uint8_t i = 0; i < b->nph; i++)
		if (b->ph[i] == name) return;
	if (b->nph < MAX_PH) b->ph[b->nph++] = name;
}

/* Whether op starts a step of a trace plan: its signature is the
 * marker's, and (marker_after) the copy or memset before it on its stream
 * was marker_after (step_detect.c's context, in the order the operations
 * come, which is their stream's) */
static int is_marker(struct sproc *p, const struct step_plan *pl, const struct gpu_op *op)
{
	uint64_t sig = step_sig(op->kind, op->name_id, op->copy_kind, op->bytes);
	if (pl->sizeless) sig = step_sig_sizeless(sig);
	if (!pl->marker_after) return sig == pl->marker;
	if (!step_sig_is_marker(sig)) return 0;
	uint64_t *last = step_stream_last(&p->mkq, &p->nmkq, &p->cmkq, step_stream_key(op->device, op->stream));
	int hit = sig == pl->marker && *last == pl->marker_after;
	*last = sig;
	return hit;
}

static int cmp_mkq(const void *x, const void *y)
{
	const struct step_stream_last *a = x, *b = y;
	return a->q < b->q ? -1 : a->q > b->q;
}

void steps_op(void *ctx, const struct gpu_op *op)
{
	struct steps *st = ctx;
	struct sproc *p = proc_find(st, op->pid);
	if (!active(p)) return;
	if (op->e - op->s > p->max_dur) p->max_dur = op->e - op->s;
	struct bop b = { .op = *op, .step = NO_STEP };
	const struct step_plan *pl = p->out.plan;
	if (pl->method == STEP_NVTX && op->has_call) {
		size_t n = attribution_op(st->a, op, &st->idbuf, &st->cidbuf);
		for (size_t i = 0; i < n; i++) {
			uint64_t row = u32map_find(&p->byid, st->idbuf[i]);
			if (row && row - 1 < b.step) b.step = (uint32_t)(row - 1);
		}
		if (b.step != NO_STEP) {
			for (size_t i = 0; i < n; i++) {
				const struct attr_range x = attribution_range(st->a, st->idbuf[i]);
				if (x.kind == GP_NVTX_PUSHPOP && x.tid == p->step_tid && x.depth == p->step_depth + 1)
					add_phase(&b, x.name);
			}
			if (b.step < p->nfin) p->out.late_ops++;
		}
	} else if (pl->method == STEP_TRACE) {
		if (op->has_call && p->nfin && op->call_s < p->last_fin_e) p->out.late_ops++;
		if (is_marker(p, pl, op)) {
			uint64_t at = op->has_call ? op->call_s : op->s;
			struct step_row *last = p->out.nrows ? step_row_w(&p->out, p->out.nrows - 1) : NULL;
			if (!last || at > last->s) {
				if (last && p->open) last->e = at;
				uint32_t index = (uint32_t)(p->row0 + p->out.nrows);
				struct step_row w = { .pid = op->pid, .index = index, .number = index, .range_id = UINT32_MAX,
						      .s = at, .e = UNKNOWN_END };
				row_push(&p->out, &w);
				p->open = 1;
			}
		}
	}
	VEC_PUSH(p->ops, p->nops, p->cops, b);
	note_pending(p);
}

/* ------------------------------------------------------------ finalize one step */
#define CMP(a, b) if ((a) != (b)) return (a) < (b) ? -1 : 1
static int cmp_bop(const void *x, const void *y)
{
	const struct bop *a = x, *b = y;
	CMP(a->op.s, b->op.s);
	/* at one start time, a recorded launch call first, the earliest first */
	if (a->op.has_call != b->op.has_call) return a->op.has_call ? -1 : 1;
	CMP(a->op.call_s, b->op.call_s);
	CMP(a->op.corr, b->op.corr);
	/* the rest only makes the order total: then the sorted operations
	 * are the same whatever order they came in and however much of them
	 * was sorted before (the steps in slices compare the operations held
	 * as a set, steps_state).  Finalize's figures do not depend on it:
	 * operations of one call at one start have the same call fields. */
	CMP(a->op.e, b->op.e);
	CMP(a->op.device, b->op.device);
	CMP(a->op.stream, b->op.stream);
	CMP(a->op.kind, b->op.kind);
	CMP(a->op.name_id, b->op.name_id);
	CMP(a->op.bytes, b->op.bytes);
	CMP(a->op.copy_kind, b->op.copy_kind);
	CMP(a->op.graph_node, b->op.graph_node);
	CMP(a->op.pid, b->op.pid);
	return 0;
}
#undef CMP

/* Time of [a, b) covered by the union u (disjoint, ordered). */
static uint64_t cover(const struct ivset *u, uint64_t a, uint64_t b)
{
	if (a >= b || !u->n) return 0;
	uint64_t c = 0;
	for (size_t i = FIRST_WHERE(k, u->n, u->v[k].e > a); i < u->n && u->v[i].s < b; i++) {
		uint64_t s = u->v[i].s > a ? u->v[i].s : a, e = u->v[i].e < b ? u->v[i].e : b;
		if (e > s) c += e - s;
	}
	return c;
}

/* The idle gap [g0, g1) before operation `next` (NULL: no operation follows
 * before the step's end; its launch call starts after it), within [s, e),
 * into the idle buckets of `bucket`. */
static void classify(const struct steps *st, uint64_t *bucket, const struct ivset *sync, uint64_t g0, uint64_t g1,
		     const struct gpu_op *next, uint64_t s, uint64_t e)
{
	uint64_t a = g0 > s ? g0 : s, b = g1 < e ? g1 : e;
	if (a >= b) return;
	if (next && !next->has_call) {
		bucket[SB_OTHER] += b - a;
	} else if (!next || next->call_s > g0) {
		uint64_t hs = next && next->call_s < b ? (next->call_s > a ? next->call_s : a) : b;
		uint64_t sy = cover(sync, a, hs);
		bucket[SB_SYNC] += sy;
		bucket[SB_HOST_WAIT] += (b - a) - sy;
	} else if (next->call_e > g0 || g1 - g0 <= st->kernel_wait) {
		bucket[SB_LAUNCH] += b - a;
	} else {
		bucket[SB_OTHER] += b - a;
	}
}

/* A launch call (+1) or its operation's GPU start (-1) on a stream, for
 * the queue length; ix: the operation's place in the sorted ops */
struct qev { uint64_t t; uint64_t key; uint32_t ix; uint8_t member; };
static int cmp_qev(const void *x, const void *y)
{
	const struct qev *a = x, *b = y;
	if (a->t != b->t) return a->t < b->t ? -1 : 1;
	return a->ix < b->ix ? -1 : a->ix > b->ix;
}

static int member(const struct sproc *p, const struct bop *b, size_t k, const struct step_row *w)
{
	if (p->out.plan->method == STEP_NVTX) return b->step == k;
	return b->op.has_call && b->op.call_s >= w->s && b->op.call_s < w->e;
}

static void finalize(struct steps *st, struct sproc *p, size_t k)
{
	struct step_row row = *row_at(st, p, k), *w = &row;
	uint64_t s = w->s, e = w->e, wall = e - s;
	/* in a windowed trace, a step not inside one window lacks GPU records */
	if (st->win && st->win->n) {
		size_t lo, hi;
		winset_range(st->win, w->pid, &lo, &hi);
		w->unrecorded = steps_unrecorded(st->win, w->pid, s, e);
		/* GPU work recorded from a window that opened after the trace
		 * began (a capture, a sampled trace): the run's steps before
		 * may have left nothing here.  Trace steps are found from GPU
		 * work, so none before is ever seen; an NVTX step says by its
		 * number (steps count from 0 or 1: step 18312 had others) */
		int late = lo < hi && st->win->v[lo].s > gp_reader_header(st->r)->start_trace_ns;
		w->run_before_unseen = late && (p->out.plan->method == STEP_TRACE || w->number > 1);
	}
	/* ops in cmp_bop order: the prefix left sorted by the last finalize
	 * (prune keeps the order) merged with the operations added since,
	 * sorted (equal keys: the prefix's first, as a stable sort of the whole) */
	sort_tail(p->ops, p->nsorted, p->nops, sizeof(*p->ops), cmp_bop, (void **)&p->tmp, &p->ctmp);
	p->nsorted = p->nops;
	/* busy buckets: unions of the operations clipped to [s, e) */
	struct ivset c = { 0 }, n = { 0 }, m = { 0 }, cn = { 0 }, sync = { 0 }, api = { 0 };
	for (size_t i = 0; i < p->nops; i++) {
		const struct gpu_op *o = &p->ops[i].op;
		if (o->e <= s || o->s >= e) continue;
		uint64_t a = o->s > s ? o->s : s, b = o->e < e ? o->e : e;
		ivset_add(o->cls == OPC_COMPUTE ? &c : o->cls == OPC_COMM ? &n : &m, a, b);
		if (o->cls != OPC_MEMORY) ivset_add(&cn, a, b);
	}
	uint64_t uc = ivset_union(&c).busy, un = ivset_union(&n).busy, um = ivset_union(&m).busy;
	ivset_union(&cn);
	w->bucket[SB_COMPUTE] = uc;
	w->bucket[SB_COMM] = un - ivset_overlap(&n, &c);
	w->bucket[SB_MEMORY] = um - ivset_overlap(&m, &cn);
	uint64_t busy = w->bucket[SB_COMPUTE] + w->bucket[SB_COMM] + w->bucket[SB_MEMORY];
	/* host side: synchronising calls (any thread), all calls (pauses), counts */
	for (size_t i = 0; i < p->napi; i++) {
		const struct bapi *b = &p->api[i];
		if (b->e < s || b->s >= e) continue;
		uint64_t a = b->s > s ? b->s : s, z = b->e < e ? b->e : e;
		ivset_add(&api, a, z);
		if (b->sync) ivset_add(&sync, a, z);
		if (b->s < s || !b->counted) continue;
		if (b->sync) w->sync_calls++;
		if (b->alloc) w->alloc_calls++;
	}
	ivset_union(&sync);
	ivset_union(&api);
	uint64_t prev = s;
	for (size_t i = 0; i < api.n; i++) {
		if (api.v[i].s > prev && api.v[i].s - prev > w->pause_max) w->pause_max = api.v[i].s - prev;
		if (api.v[i].e > prev) prev = api.v[i].e;
	}
	if (e > prev && e - prev > w->pause_max) w->pause_max = e - prev;
	/* idle: the gaps of the whole GPU timeline, each classified by the
	 * operation that ends it, clipped to the step (its idle buckets are
	 * 0: a row is finalized once) */
	uint64_t cur = p->pruned_end;
	int closed = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const struct gpu_op *o = &p->ops[i].op;
		if (o->s > cur) {
			classify(st, w->bucket, &sync, cur, o->s, o, s, e);
			if (o->s >= e) { closed = 1; break; }
		}
		if (o->e > cur) cur = o->e;
		if (cur >= e) { closed = 1; break; }
	}
	if (!closed && cur < e) classify(st, w->bucket, &sync, cur, e, NULL, s, e);
	uint64_t idle = w->bucket[SB_HOST_WAIT] + w->bucket[SB_SYNC] + w->bucket[SB_LAUNCH] + w->bucket[SB_OTHER];
	if (busy + idle != wall) {
		/* cannot happen: the gaps are the complement of the union */
		if (!st->warned_idle)
			tool_warn("steps: internal: step %" PRId64 " of pid %u: buckets sum to %" PRIu64 " ns, not %" PRIu64,
				  w->number, w->pid, busy + idle, wall);
		st->warned_idle = 1;
	}
	/* launched work and HTA's launch statistics */
	double *cpu = NULL, *gpu = NULL, *dly = NULL; /* exact: durations under 2^53 ns */
	size_t nl = 0, ng = 0, nd = 0, cl = 0, cg = 0, cd = 0;
	w->ph_off = (uint32_t)p->out.nph;
	w->ph_n = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const struct bop *b = &p->ops[i];
		if (!member(p, b, k, w)) continue;
		const struct gpu_op *o = &b->op;
		uint64_t d = o->e - o->s;
		if (o->kind == OP_KERNEL) { w->kernels++; w->kernel_ns += d; }
		else { w->memops++; w->memop_ns += d; }
		if (p->out.plan->method == STEP_NVTX && o->has_call && o->tid != p->step_tid) w->other_thread++;
		for (uint8_t q = 0; q < b->nph; q++) {
			size_t j;
			for (j = w->ph_off; j < p->out.nph && step_phase(&p->out, j)->name != b->ph[q]; j++) ;
			if (j == p->out.nph) {
				struct step_phase ph = { .name = b->ph[q] };
				phase_push(&p->out, &ph);
				w->ph_n++;
			}
			struct step_phase *ph = spill_at(p->out.ph, j);
			if (o->kind == OP_KERNEL) { ph->kernels++; ph->kernel_ns += d; }
			else { ph->memops++; ph->memop_ns += d; }
		}
		if (!o->has_call) continue;
		uint64_t cd_ns = o->call_e - o->call_s, delay = o->s > o->call_e ? o->s - o->call_e : 0;
		VEC_PUSH(cpu, nl, cl, (double)cd_ns);
		VEC_PUSH(gpu, ng, cg, (double)d);
		VEC_PUSH(dly, nd, cd, (double)delay);
		if (cd_ns <= STEP_SHORT_CPU_NS && d < cd_ns) w->short_ops++;
		if (cd_ns > STEP_RUNTIME_OUTLIER_NS) w->runtime_outliers++;
		if (delay > STEP_DELAY_OUTLIER_NS) w->delay_outliers++;
		if (delay > w->delay_max) w->delay_max = delay;
	}
	w->launched = nl;
	/* selection, not a sort: a step's launches are hundreds to thousands;
	 * of an even count, the mean of the two middle values, truncated */
	w->cpu_med = (uint64_t)median_select(cpu, nl);
	w->gpu_med = (uint64_t)median_select(gpu, nl);
	w->delay_med = (uint64_t)median_select(dly, nl);
	free(cpu); free(gpu); free(dly);
	/* queue length per stream (HTA): +1 at a launch call, -1 at its GPU
	 * start, in time order; at one instant the GPU starts first, then the
	 * calls, each in the order of the ops.  The starts are in order
	 * already (ops are sorted by start); the calls nearly (launch order),
	 * so they are sorted only when they are not. */
	struct qev *up = NULL, *down = NULL;
	size_t nup = 0, ndown = 0, cup = 0, cdown = 0;
	/* Events after the step's last launch call change no figure of it:
	 * those of operations launched and started after it are left out
	 * (steps finalized together after a late record held them would
	 * each sort all the operations held meanwhile) */
	uint64_t last = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const struct bop *b = &p->ops[i];
		if (b->op.has_call && b->op.call_s > last && member(p, b, k, w)) last = b->op.call_s;
	}
	for (size_t i = 0; i < p->nops; i++) {
		const struct bop *b = &p->ops[i];
		if (!b->op.has_call) continue;
		if (b->op.call_s > last && b->op.s > last) continue;
		uint64_t key = ((uint64_t)b->op.device << 32) | b->op.stream;
		struct qev a = { b->op.call_s, key, (uint32_t)i, (uint8_t)member(p, b, k, w) };
		struct qev z = { b->op.s, key, (uint32_t)i, 0 };
		VEC_PUSH(up, nup, cup, a);
		VEC_PUSH(down, ndown, cdown, z);
	}
	size_t u = 1;
	while (u < nup && cmp_qev(&up[u - 1], &up[u]) <= 0) u++;
	if (u < nup) qsort(up, nup, sizeof(*up), cmp_qev);
	u64map q;
	u64map_init(&q);
	for (size_t i = 0, j = 0; i < nup || j < ndown;) {
		int is_up = j == ndown || (i < nup && up[i].t < down[j].t);
		const struct qev *e = is_up ? &up[i++] : &down[j++];
		uint64_t *v = u64map_get(&q, e->key, 1);
		if (is_up) (*v)++;
		else if (*v) (*v)--;
		if (e->member && *v > w->queue_max) w->queue_max = (uint32_t)*v;
	}
	u64map_free(&q);
	free(up);
	free(down);
	free(c.v); free(n.v); free(m.v); free(cn.v); free(sync.v); free(api.v);
	p->last_fin_e = w->e;
	*row_at(st, p, k) = row;
}

/* Drops what no step from here on needs: operations that ended by P and
 * were launched before it, API calls that ended by P. */
static void prune(struct sproc *p, uint64_t P)
{
	size_t w = 0, sorted = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const struct gpu_op *o = &p->ops[i].op;
		if (o->e <= P && (!o->has_call || o->call_s < P)) {
			if (o->e > p->pruned_end) p->pruned_end = o->e;
			continue;
		}
		if (i < p->nsorted) sorted++;
		p->ops[w++] = p->ops[i];
	}
	p->nops = w;
	p->nsorted = sorted; /* the kept ones of the sorted prefix are the new prefix */
	w = 0;
	for (size_t i = 0; i < p->napi; i++)
		if (p->api[i].e > P) p->api[w++] = p->api[i];
	p->napi = w;
}

static void advance_proc(struct steps *st, struct sproc *p, uint64_t now, uint64_t frontier)
{
	int done = 0;
	while (p->nfin < rows_known(p)) {
		struct step_row *w = row_at(st, p, p->nfin);
		if (w->e == UNKNOWN_END) break;
		uint64_t slack = p->max_dur < HOLD_NS ? p->max_dur : HOLD_NS;
		if (now != UINT64_MAX && (now < w->e + slack || frontier < w->e)) break;
		/* A step finalized after another in this call first drops what
		 * it no longer needs: steps held back together (a late GPU record
		 * holds the frontier) would otherwise each go over all that
		 * accumulated meanwhile (quadratic: 18 s for 600,000 records with
		 * gen_bigtrace --late, against 0.1 s).  The prune below, at the
		 * step's start, so a step's figures do not depend on how many
		 * were finalized at once; the last one's is the one below. */
		if (done) prune(p, w->s);
		finalize(st, p, p->nfin);
		p->nfin++;
		done = 1;
	}
	/* What the next step needs starts at its start.  With no step pending,
	 * keep the last HOLD_NS, and what was launched since the frontier: a
	 * trace step may still begin there (its first operation may be late). */
	uint64_t hold = now > HOLD_NS ? now - HOLD_NS : 0;
	if (!done && hold < p->last_prune + HOLD_NS / 4) return;
	uint64_t P = hold < frontier ? hold : frontier;
	prune(p, p->nfin < rows_known(p) ? row_at(st, p, p->nfin)->s : P);
	p->last_prune = hold;
}

void steps_advance(struct steps *st, uint64_t now, uint64_t frontier)
{
	if (now <= st->now) return;
	st->now = now;
	for (size_t i = 0; i < st->np; i++)
		if (active(&st->p[i])) advance_proc(st, &st->p[i], now, frontier);
}

/* The last trace step has no next boundary: it is a step when it launched
 * about as many operations as the most common step (within 10 %); it ends
 * where the last of its launch calls and GPU operations ended (partial). */
static void close_last_trace_step(struct sproc *p)
{
	if (!p->open || !p->out.nrows) return;
	struct step_row *w = step_row_w(&p->out, p->out.nrows - 1);
	size_t n = 0;
	uint64_t end = w->s;
	for (size_t i = 0; i < p->nops; i++) {
		const struct gpu_op *o = &p->ops[i].op;
		if (!o->has_call || o->call_s < w->s) continue;
		n++;
		if (o->call_e > end) end = o->call_e;
		if (o->e > end) end = o->e;
	}
	size_t want = p->out.plan->period_ops;
	if (n * 10 >= want * 9 && n * 10 <= want * 11 && end > w->s) {
		w->e = end;
		w->partial = 1;
	} else {
		spill_truncate(p->out.rows, --p->out.nrows);
	}
	p->open = 0;
}

void steps_finish(struct steps *st)
{
	for (size_t i = 0; i < st->np; i++) {
		struct sproc *p = &st->p[i];
		if (!active(p)) continue;
		if (p->out.plan->method == STEP_TRACE) close_last_trace_step(p);
		advance_proc(st, p, UINT64_MAX, UINT64_MAX);
	}
}

/* ------------------------------------------------------------ slices */

/* Drops the rows finalized (and their phases): they were taken, or are
 * not the slice's own (its lead-in's). */
static void drop_finalized(struct sproc *p)
{
	size_t d = p->nfin - p->row0;
	if (d > p->out.nrows) d = p->out.nrows;
	if (d) { /* the rows after them (not finalized: a few) into a new spill */
		struct spill *old = p->out.rows;
		size_t n = p->out.nrows;
		p->out.rows = spill_new(sizeof(struct step_row), SLICE_ROWS_MEM);
		p->out.nrows = 0;
		for (size_t k = d; k < n; k++) {
			struct step_row w = *(const struct step_row *)spill_get(old, k);
			row_push(&p->out, &w);
		}
		spill_free(old);
	}
	p->row0 += d;
	spill_truncate(p->out.ph, 0); /* phases are made when a row is finalized */
	p->out.nph = 0;
}

void steps_set_reader(struct steps *st, gp_reader *r)
{
	st->r = r;
}

void steps_set_longest(struct steps *st, uint32_t pid, uint64_t ns)
{
	struct sproc *p = proc_find(st, pid);
	if (p) p->max_dur = ns;
}

/* The rows finalized dropped, the counters from 0 (steps_mark, steps_take). */
static void restart(struct sproc *p)
{
	drop_finalized(p);
	p->out.late_ops = 0;
	p->out.pending_max = 0;
	p->nfresh = 0;
}

void steps_mark(struct steps *st)
{
	st->marked = 1;
	for (size_t i = 0; i < st->np; i++) restart(&st->p[i]);
}

/* A GPU operation and what the steps noted of it. */
static void bop_state(const struct bop *x, struct bytes *b)
{
	gpu_op_state(&x->op, b);
	bytes_u64(b, (uint64_t)x->step << 8 | x->nph);
	for (uint8_t q = 0; q < x->nph; q++) bytes_u64(b, x->ph[q]);
}

void steps_state(const struct steps *st, struct bytes *b)
{
	bytes_u64(b, st->now);
	for (size_t i = 0; i < st->np; i++) {
		const struct sproc *p = &st->p[i];
		if (!active(p)) continue;
		bytes_u64(b, i);
		if (p->out.plan->method == STEP_NVTX) {
			bytes_u64(b, p->nfin); /* the plan's index: the rows after it are the plan's */
		} else {
			/* the rows not finalized (the open one last), and the end of
			 * the last one finalized (late operations) */
			size_t first = p->nfin - p->row0;
			bytes_u64(b, p->open);
			bytes_u64(b, p->out.nrows - first);
			for (size_t k = first; k < p->out.nrows; k++) {
				bytes_u64(b, step_row(&p->out, k)->s);
				bytes_u64(b, step_row(&p->out, k)->e);
			}
			bytes_u64(b, p->nfin > 0);
			bytes_u64(b, p->nfin ? p->last_fin_e : 0);
			/* each stream's last copy or memset (a marker's context) */
			struct step_stream_last *q = xmalloc((p->nmkq ? p->nmkq : 1) * sizeof(*q));
			if (p->nmkq) memcpy(q, p->mkq, p->nmkq * sizeof(*q));
			qsort(q, p->nmkq, sizeof(*q), cmp_mkq);
			bytes_u64(b, p->nmkq);
			for (size_t k = 0; k < p->nmkq; k++) {
				bytes_u64(b, q[k].q);
				bytes_u64(b, q[k].sig);
			}
			free(q);
		}
		/* the operations as a set: finalize sorts them (a total order,
		 * cmp_bop), so neither the order they came in nor how much of
		 * them was sorted before changes a figure */
		bytes_u64(b, p->nops);
		struct bop *sorted = xmalloc((p->nops ? p->nops : 1) * sizeof(*sorted));
		if (p->nops) memcpy(sorted, p->ops, p->nops * sizeof(*sorted));
		qsort(sorted, p->nops, sizeof(*sorted), cmp_bop);
		for (size_t k = 0; k < p->nops; k++) bop_state(&sorted[k], b);
		free(sorted);
		bytes_u64(b, p->napi);
		for (size_t k = 0; k < p->napi; k++) {
			const struct bapi *a = &p->api[k];
			bytes_u64(b, a->s);
			bytes_u64(b, a->e);
			bytes_u64(b, (uint64_t)a->sync << 16 | a->alloc << 8 | a->counted);
		}
		bytes_u64(b, p->pruned_end);
		/* only the slack reads it, capped */
		bytes_u64(b, p->max_dur < HOLD_NS ? p->max_dur : HOLD_NS);
		bytes_u64(b, p->last_prune);
	}
}

int steps_fresh_ok(const struct steps *before, const struct steps *st)
{
	for (size_t i = 0; i < st->np && i < before->np; i++) {
		const struct sproc *p = &st->p[i];
		for (size_t k = 0; k < p->nfresh; k++) {
			uint64_t *v = u64map_get((u64map *)&before->p[i].tid_corr, p->fresh[k].tid, MAP_FIND);
			if (v && p->fresh[k].corr && *v == p->fresh[k].corr) return 0;
		}
	}
	return 1;
}

void steps_take(struct steps *sum, struct steps *st)
{
	for (size_t i = 0; i < st->np && i < sum->np; i++) {
		struct sproc *d = &sum->p[i], *p = &st->p[i];
		size_t n = p->nfin - p->row0;
		if (n > p->out.nrows) n = p->out.nrows;
		for (size_t k = 0; k < n; k++) {
			struct step_row w = *step_row(&p->out, k);
			w.ph_off += (uint32_t)d->out.nph;
			if (p->out.plan->method == STEP_NVTX) {
				*step_row_w(&d->out, w.index) = w;
			} else {
				w.index = (uint32_t)d->out.nrows;
				w.number = w.index;
				row_push(&d->out, &w);
			}
		}
		for (size_t k = 0; k < p->out.nph; k++) {
			struct step_phase ph = *step_phase(&p->out, k);
			phase_push(&d->out, &ph);
		}
		d->out.late_ops += p->out.late_ops;
		if (p->out.pending_max > d->out.pending_max) d->out.pending_max = p->out.pending_max;
		restart(p);
	}
}
