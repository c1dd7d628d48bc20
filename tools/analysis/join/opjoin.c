/* opjoin.c — see opjoin.h.
 *
 * Two queues in arrival order, each with a map from (pid, correlation id) to
 * its newest entry: the launch calls, and the operations still waiting for
 * their call.  Entries leave from the head once paired (and, for calls, past
 * grace), so the queues hold the unpaired lag window.  Indices in the maps
 * are absolute (base + position) so that compacting a queue does not
 * invalidate them. */
#include "analysis/join/opjoin.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gp_launch.h"
#include "common/tool.h"
#include "common/util.h"

#define MAX_WAITING ((size_t)1 << 22) /* unpaired calls, and operations, kept at most */
#define DEFAULT_GRACE_NS 1000000000ull
#define NONE UINT64_MAX

struct call {
	uint64_t corr;
	uint64_t s, e, last_e;   /* last_e: latest end of an operation joined to it */
	uint64_t ops;            /* operations joined to it */
	uint32_t pid, tid, name_id, stack_id;
	uint32_t held;           /* its operations held (opjoin_opts.slice_from) */
	uint8_t launch, graph, joined, ok;  /* launch: its operation is waited for */
	uint8_t runtime;         /* a runtime-domain record of it came (the outer one) */
};

/* pend_idx values are absolute index + 1 (a fresh map slot reads 0); prev
 * is a plain absolute index. */
struct pending_op {
	struct gpu_op op;
	uint64_t prev;           /* absolute index of an older one with the same key, or NONE */
	uint8_t done;            /* delivered (its call came) */
};

struct opjoin {
	gp_reader *r;
	uint64_t grace;
	opjoin_cb cb;
	opjoin_call_cb call_cb;
	void *ctx;
	u64map call_idx;         /* key -> absolute index in calls */
	struct call *calls; size_t chead, cn, ccap; uint64_t cbase;
	size_t cfirst;           /* no pending launch call before this position */
	u64map pend_idx;         /* key -> absolute index of the newest pending op */
	struct pending_op *pend; size_t phead, pn, pcap; uint64_t pbase;
	size_t pfirst;           /* no pending op the frontier waits for before this position */
	u64map name_class;       /* kernel name id -> class + 1 */
	struct opjoin_counts counts;
	uint64_t now;
	uint64_t hold_until;     /* opjoin_opts.slice_from + grace (0: none) */
	uint64_t orphan_before;  /* opjoin_opts.orphan_before */
	struct gpu_op *held; size_t nheld, cheld; /* joined, not delivered yet (their call's fields later) */
	struct call *kept; size_t nkept, ckept; /* calls that may be inner halves, past grace: out of
						 * the queue, kept for the merge */
};

static uint64_t key_of(uint32_t pid, uint64_t corr) { return ((uint64_t)pid << 40) ^ corr; }

struct opjoin *opjoin_new(gp_reader *r, const struct opjoin_opts *opts, opjoin_cb cb, void *ctx)
{
	struct opjoin *j = xcalloc(1, sizeof(*j));
	j->r = r;
	j->cb = cb;
	j->ctx = ctx;
	j->grace = opts && opts->grace_ns ? opts->grace_ns : DEFAULT_GRACE_NS;
	j->call_cb = opts ? opts->call_cb : NULL;
	uint64_t from = opts ? opts->slice_from : 0;
	j->hold_until = from ? from + j->grace : 0;
	j->orphan_before = opts ? opts->orphan_before : 0;
	u64map_init(&j->call_idx);
	u64map_init(&j->pend_idx);
	u64map_init(&j->name_class);
	return j;
}

void opjoin_free(struct opjoin *j)
{
	if (!j) return;
	u64map_free(&j->call_idx);
	u64map_free(&j->pend_idx);
	u64map_free(&j->name_class);
	free(j->calls);
	free(j->pend);
	free(j->held);
	free(j->kept);
	free(j);
}

void opjoin_set_reader(struct opjoin *j, gp_reader *r)
{
	j->r = r;
}

/* An operation waits for its call. */
static void pend_push(struct opjoin *j, const struct gpu_op *op)
{
	struct pending_op p = { .op = *op };
	uint64_t *slot = u64map_get(&j->pend_idx, key_of(op->pid, op->corr), 1);
	p.prev = *slot ? *slot - 1 : NONE;
	VEC_PUSH(j->pend, j->pn, j->pcap, p);
	*slot = j->pbase + j->pn; /* absolute index + 1 */
}

static struct call *call_push(struct opjoin *j, const struct call *c)
{
	VEC_PUSH(j->calls, j->cn, j->ccap, *c);
	*u64map_get(&j->call_idx, key_of(c->pid, c->corr), 1) = j->cbase + j->cn - 1;
	return &j->calls[j->cn - 1];
}

static struct call *call_find(struct opjoin *j, uint32_t pid, uint64_t corr)
{
	uint64_t *slot = u64map_get(&j->call_idx, key_of(pid, corr), 0);
	if (!slot) return NULL;
	struct call *c = &j->calls[*slot - j->cbase];
	return c->pid == pid && c->corr == corr ? c : NULL;
}

/* A call that may be the inner (driver) half of one whose outer record is
 * before the slice (opjoin_opts.slice_from). */
static int may_be_inner(const struct opjoin *j, const struct call *c)
{
	return !c->runtime && c->s < j->hold_until;
}

/* An operation joined to c goes out with c's fields as they are now. */
static void send(struct opjoin *j, struct gpu_op *op, const struct call *c)
{
	op->has_call = 1;
	op->call_s = c->s; op->call_e = c->e;
	op->tid = c->tid; op->call_name_id = c->name_id;
	op->graph = c->graph;
	op->stack_id = c->stack_id;
	j->counts.ops++;
	j->cb(j->ctx, op);
}

/* The held operations of c's key go out through j, with c's fields. */
static void release(struct opjoin *j, struct call *c)
{
	size_t o = 0;
	for (size_t i = 0; i < j->nheld; i++) {
		struct gpu_op op = j->held[i];
		if (op.pid == c->pid && op.corr == c->corr) send(j, &op, c);
		else j->held[o++] = op;
	}
	j->nheld = o;
	c->held = 0;
}

/* An operation of c goes out, or is held while c may be an inner half
 * (its fields may still change). */
static void send_or_hold(struct opjoin *j, struct gpu_op *op, struct call *c)
{
	if (!may_be_inner(j, c)) {
		send(j, op, c);
		return;
	}
	VEC_PUSH(j->held, j->nheld, j->cheld, *op);
	c->held++;
}

static void deliver(struct opjoin *j, struct gpu_op *op, struct call *c)
{
	if (c) {
		c->joined = 1;
		c->ops++;
		if (op->e > c->last_e) c->last_e = op->e;
		send_or_hold(j, op, c);
		return;
	}
	j->counts.ops_no_call++;
	j->counts.ops++;
	j->cb(j->ctx, op);
}

/* Another record of call c (the runtime call around the driver call, or
 * the same call's half from the next slice: opjoin_merge) makes one
 * launch. */
static void call_union(struct call *c, uint64_t s, uint64_t e, uint32_t name_id, uint32_t stack_id, int launch,
		       int graph, int ok, int runtime)
{
	if (s < c->s) { c->s = s; c->name_id = name_id; }
	if (e > c->e) c->e = e;
	if (!c->stack_id) c->stack_id = stack_id;
	c->launch |= (uint8_t)launch;
	c->graph |= (uint8_t)graph;
	c->ok &= (uint8_t)ok;
	c->runtime |= (uint8_t)runtime;
}

void opjoin_api(struct opjoin *j, uint32_t pid, uint32_t tid, const gp_rec_api *a, int recorded)
{
	if (!a->correlation_id) return;
	enum gp_launch_kind kind = gp_launch_kind(a->domain, a->cbid);
	struct call *c = call_find(j, pid, a->correlation_id);
	if (!c && kind == GP_LAUNCH_NONE) return; /* no GPU work comes of it */
	/* waited for: a launch that returned success while GPU activity was recorded */
	int launch = kind != GP_LAUNCH_NONE && a->status == 0 && recorded;
	if (c) {
		/* the runtime call around the driver call: one launch */
		call_union(c, a->start_ns, a->end_ns, a->name_id, a->stack_id, launch, kind == GP_LAUNCH_GRAPH,
			   a->status == 0, a->domain == GP_API_RUNTIME);
		if (c->held && !may_be_inner(j, c)) release(j, c);
		return;
	}
	/* launch 0: not waited for (failed, or activity not recorded then) */
	struct call nc = { .corr = a->correlation_id, .s = a->start_ns,
			   .e = a->end_ns > a->start_ns ? a->end_ns : a->start_ns,
			   .pid = pid, .tid = tid, .name_id = a->name_id, .stack_id = a->stack_id,
			   .launch = (uint8_t)launch, .graph = kind == GP_LAUNCH_GRAPH, .ok = a->status == 0,
			   .runtime = a->domain == GP_API_RUNTIME };
	c = call_push(j, &nc);
	/* operations that came first */
	uint64_t *ps = u64map_get(&j->pend_idx, key_of(pid, a->correlation_id), 0);
	if (!ps) return;
	uint64_t i = *ps - 1;
	u64map_del(&j->pend_idx, key_of(pid, a->correlation_id));
	while (i != NONE && i >= j->pbase + j->phead) {
		struct pending_op *p = &j->pend[i - j->pbase];
		if (p->op.pid == pid && p->op.corr == a->correlation_id && !p->done) {
			p->done = 1;
			deliver(j, &p->op, c);
		}
		i = p->prev;
	}
}

static int kernel_class(struct opjoin *j, uint32_t name_id)
{
	uint64_t *s = u64map_get(&j->name_class, name_id, 1);
	if (!*s) *s = 1 + (strcasestr(tool_str(j->r, name_id), "nccl") ? OPC_COMM : OPC_COMPUTE);
	return (int)(*s - 1);
}

void opjoin_gpu(struct opjoin *j, uint32_t pid, const gp_record *rec)
{
	struct gpu_op op;
	if (!gpu_op_of(rec, pid, &op)) return;
	if (op.kind == OP_KERNEL) op.cls = (uint8_t)kernel_class(j, op.name_id);
	struct call *c = op.corr ? call_find(j, pid, op.corr) : NULL;
	if (c || !op.corr) {
		deliver(j, &op, c);
		return;
	}
	pend_push(j, &op);
}

static void pend_pop_head(struct opjoin *j)
{
	struct pending_op *p = &j->pend[j->phead];
	uint64_t abs = j->pbase + j->phead;
	uint64_t key = key_of(p->op.pid, p->op.corr);
	uint64_t *slot = u64map_get(&j->pend_idx, key, 0);
	if (slot && *slot == abs + 1) u64map_del(&j->pend_idx, key);
	if (!p->done) {
		p->done = 1;
		deliver(j, &p->op, NULL);
	}
	j->phead++;
}

/* Call c leaves the join: its held operations go, then it. */
static void call_leave(struct opjoin *j, struct call *c)
{
	if (c->launch && !c->joined) j->counts.calls_no_op++;
	if (c->held) release(j, c);
	if (j->call_cb) {
		struct launch_call lc = { c->s, c->e, c->corr, c->pid, c->tid, c->name_id, c->stack_id, c->ops,
					  c->graph, c->ok };
		j->call_cb(j->ctx, &lc);
	}
}

static void call_pop_head(struct opjoin *j)
{
	struct call *c = &j->calls[j->chead];
	uint64_t abs = j->cbase + j->chead;
	uint64_t key = key_of(c->pid, c->corr);
	uint64_t *slot = u64map_get(&j->call_idx, key, 0);
	if (slot && *slot == abs) u64map_del(&j->call_idx, key);
	/* one that may be the inner half of a call before the slice waits
	 * for the merge (out of the queue: it must not hold the rest) */
	if (may_be_inner(j, c)) VEC_PUSH(j->kept, j->nkept, j->ckept, *c);
	else call_leave(j, c);
	j->chead++;
}

/* A queue (v[0 .. *n) of size-byte entries) without the entries before
 * *head once they are most of it; an absolute index (base + position)
 * stays valid. */
static void compact(void *v, size_t size, size_t *head, size_t *n, size_t *first, uint64_t *base)
{
	if (*head <= 4096 || *head * 2 <= *n) return;
	memmove(v, (char *)v + *head * size, (*n - *head) * size);
	*n -= *head;
	*first = *first > *head ? *first - *head : 0;
	*base += *head;
	*head = 0;
}

void opjoin_advance(struct opjoin *j, uint64_t now)
{
	if (now > j->now) j->now = now;
	while (j->phead < j->pn) {
		const struct pending_op *p = &j->pend[j->phead];
		if (!p->done && j->pn - j->phead <= MAX_WAITING) break;
		if (!p->done) j->counts.gave_up++;
		pend_pop_head(j);
	}
	while (j->chead < j->cn) {
		const struct call *c = &j->calls[j->chead];
		uint64_t last = c->e > c->last_e ? c->e : c->last_e;
		int waited = c->launch && !c->joined;
		if (!waited ? last + j->grace > j->now : j->cn - j->chead <= MAX_WAITING) break;
		if (waited) j->counts.gave_up++;
		call_pop_head(j);
	}
	compact(j->calls, sizeof(*j->calls), &j->chead, &j->cn, &j->cfirst, &j->cbase);
	compact(j->pend, sizeof(*j->pend), &j->phead, &j->pn, &j->pfirst, &j->pbase);
}

uint64_t opjoin_frontier(struct opjoin *j)
{
	uint64_t f = UINT64_MAX;
	if (j->cfirst < j->chead) j->cfirst = j->chead;
	while (j->cfirst < j->cn) {
		const struct call *c = &j->calls[j->cfirst];
		if (c->launch && !c->joined) { f = c->s; break; }
		j->cfirst++;
	}
	/* an operation still waiting for its call was launched before it
	 * started (but one that may never pair: opjoin_opts.orphan_before).
	 * Those passed over stay so (done is for good, orphan_before is the
	 * join's): a cursor, not a scan a record (a slice's orphans, its
	 * operations whose calls are in slices before, may be thousands) */
	if (j->pfirst < j->phead) j->pfirst = j->phead;
	while (j->pfirst < j->pn && (j->pend[j->pfirst].done || j->pend[j->pfirst].op.s < j->orphan_before))
		j->pfirst++;
	if (j->pfirst < j->pn && j->pend[j->pfirst].op.s < f) f = j->pend[j->pfirst].op.s;
	return f;
}

/* Joins the operations `waiting` waits for to the calls `calls` holds,
 * delivered through dst. */
static void join_across(struct opjoin *dst, struct opjoin *waiting, struct opjoin *calls)
{
	for (size_t i = waiting->phead; i < waiting->pn; i++) {
		struct pending_op *p = &waiting->pend[i];
		if (p->done) continue;
		struct call *c = call_find(calls, p->op.pid, p->op.corr);
		if (!c) continue;
		p->done = 1;
		deliver(dst, &p->op, c);
	}
}

/* src's call sc, after dst's: one dst holds too is the same call cut in
 * two (its runtime record before the cut, its driver record after), and
 * becomes one.  queued: sc is in src's queue (else it had left it: kept).
 * Returns where it is now: 1 in dst's queue, 2 in dst's kept (may still be
 * the inner half of a call before dst's slice), 0 leaving (whole, past
 * grace: *out is it). */
static int merge_call(struct opjoin *dst, const struct call *sc, int queued, struct call *out)
{
	struct call *dc = call_find(dst, sc->pid, sc->corr);
	*out = *sc;
	out->held = 0;
	if (dc) {
		call_union(dc, sc->s, sc->e, sc->name_id, sc->stack_id, sc->launch, sc->graph, sc->ok, sc->runtime);
		dc->joined |= sc->joined;
		dc->ops += sc->ops;
		if (sc->last_e > dc->last_e) dc->last_e = sc->last_e;
		return 1;
	}
	if (queued) {
		call_push(dst, out);
		return 1;
	}
	if (may_be_inner(dst, out)) {
		VEC_PUSH(dst->kept, dst->nkept, dst->ckept, *out);
		return 2;
	}
	return 0;
}

static int cmp_call_key(const void *x, const void *y)
{
	const struct call *a = x, *b = y;
	if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int cmp_held(const void *x, const void *y)
{
	const struct gpu_op *a = x, *b = y;
	if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* src's held operations of call c (now dst's): out through dst with the
 * whole call's fields, or held on where it may still be an inner half. */
static void merge_held(struct opjoin *dst, const struct gpu_op *held, size_t n, struct call *c)
{
	for (size_t i = 0; i < n; i++) {
		struct gpu_op op = held[i];
		send_or_hold(dst, &op, c);
	}
	if (c->held && !may_be_inner(dst, c)) release(dst, c);
}

void opjoin_merge(struct opjoin *dst, struct opjoin *src)
{
	/* src's held operations by call, sorted (one pass below, not one
	 * search of them per call) */
	if (src->nheld > 1) qsort(src->held, src->nheld, sizeof(*src->held), cmp_held);
	size_t nk0 = dst->nkept;
	struct call *leaving = NULL;
	size_t nleaving = 0, cleaving = 0;
	for (size_t i = 0; i < src->nkept + (src->cn - src->chead); i++) {
		int queued = i >= src->nkept;
		const struct call *sc = queued ? &src->calls[src->chead + i - src->nkept] : &src->kept[i];
		struct call c;
		if (!merge_call(dst, sc, queued, &c)) VEC_PUSH(leaving, nleaving, cleaving, c);
	}
	if (nleaving > 1) qsort(leaving, nleaving, sizeof(*leaving), cmp_call_key);
	/* the held operations to their call: dst's queued one, a kept one
	 * (few: only where dst's slice is shorter than grace), or one leaving */
	for (size_t h = 0; h < src->nheld;) {
		size_t e = h + 1;
		while (e < src->nheld && !cmp_held(&src->held[h], &src->held[e])) e++;
		uint32_t pid = src->held[h].pid;
		uint64_t corr = src->held[h].corr;
		struct call *c = call_find(dst, pid, corr);
		for (size_t k = nk0; !c && k < dst->nkept; k++)
			if (dst->kept[k].pid == pid && dst->kept[k].corr == corr) c = &dst->kept[k];
		if (!c && nleaving) {
			struct call key = { .pid = pid, .corr = corr };
			c = bsearch(&key, leaving, nleaving, sizeof(*leaving), cmp_call_key);
		}
		if (c) merge_held(dst, &src->held[h], e - h, c);
		h = e;
	}
	for (size_t k = 0; k < nleaving; k++) call_leave(dst, &leaving[k]);
	free(leaving);
	src->nkept = 0;
	src->nheld = 0;
	/* operations either one still waits for whose call is now dst's (in
	 * arrival order, as one join would pair them) */
	join_across(dst, dst, dst);
	join_across(dst, src, dst);
	for (size_t i = src->phead; i < src->pn; i++)
		if (!src->pend[i].done) pend_push(dst, &src->pend[i].op);
	opjoin_take_counts(src, &dst->counts);
	/* what one join would have let go by src's end */
	opjoin_advance(dst, src->now);
	src->chead = src->cn;
	src->phead = src->pn;
}

void opjoin_mark(struct opjoin *j)
{
	for (size_t i = j->phead; i < j->pn; i++) {
		struct pending_op *p = &j->pend[i];
		if (p->done) continue;
		p->done = 1;
		u64map_del(&j->pend_idx, key_of(p->op.pid, p->op.corr));
	}
	while (j->phead < j->pn && j->pend[j->phead].done) j->phead++;
	memset(&j->counts, 0, sizeof(j->counts));
}

void gpu_op_state(const struct gpu_op *o, struct bytes *b)
{
	bytes_u64(b, o->s);
	bytes_u64(b, o->e);
	bytes_u64(b, o->call_s);
	bytes_u64(b, o->call_e);
	bytes_u64(b, o->corr);
	bytes_u64(b, (uint64_t)o->pid << 32 | o->tid);
	bytes_u64(b, (uint64_t)o->device << 32 | o->stream);
	bytes_u64(b, (uint64_t)o->name_id << 32 | o->call_name_id);
	bytes_u64(b, (uint64_t)o->stack_id << 32 | (uint64_t)o->kind << 24 | o->cls << 16 | o->has_call << 8 | o->graph);
	bytes_u64(b, o->bytes);
	bytes_u64(b, o->copy_kind);
	bytes_u64(b, o->graph_node);
}

void opjoin_state(const struct opjoin *j, struct bytes *b)
{
	bytes_u64(b, j->now);
	bytes_u64(b, j->cn - j->chead);
	bytes_u64(b, j->cfirst > j->chead ? j->cfirst - j->chead : 0);
	for (size_t i = j->chead; i < j->cn; i++) {
		const struct call *c = &j->calls[i];
		/* not c->ops: only the launch calls' callback reads it */
		bytes_u64(b, c->corr);
		bytes_u64(b, c->s);
		bytes_u64(b, c->e);
		bytes_u64(b, c->last_e);
		bytes_u64(b, (uint64_t)c->pid << 32 | c->tid);
		bytes_u64(b, (uint64_t)c->name_id << 32 | c->stack_id);
		bytes_u64(b, (uint64_t)c->held << 40 | (uint64_t)c->launch << 32 | c->graph << 24 | c->joined << 16 |
				     c->ok << 8 | c->runtime);
	}
	/* the queue's length counts toward MAX_WAITING; its delivered entries
	 * do nothing else */
	bytes_u64(b, j->pn - j->phead);
	for (size_t i = j->phead; i < j->pn; i++) {
		const struct pending_op *p = &j->pend[i];
		if (p->done) continue;
		bytes_u64(b, i - j->phead);
		gpu_op_state(&p->op, b);
	}
	bytes_u64(b, j->nheld);
	bytes_u64(b, j->nkept);
}

void opjoin_take_counts(struct opjoin *j, struct opjoin_counts *sum)
{
	sum->ops += j->counts.ops;
	sum->ops_no_call += j->counts.ops_no_call;
	sum->calls_no_op += j->counts.calls_no_op;
	sum->gave_up += j->counts.gave_up;
	memset(&j->counts, 0, sizeof(j->counts));
}

void opjoin_finish(struct opjoin *j)
{
	while (j->phead < j->pn) pend_pop_head(j);
	while (j->chead < j->cn) call_pop_head(j);
	/* no merge comes: the kept ones are whole */
	for (size_t i = 0; i < j->nkept; i++) call_leave(j, &j->kept[i]);
	j->nkept = 0;
}

void opjoin_counts(const struct opjoin *j, struct opjoin_counts *out)
{
	*out = j->counts;
}
