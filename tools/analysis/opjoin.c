/* opjoin.c — see opjoin.h.
 *
 * Two queues in arrival order, each with a map from (pid, correlation id) to
 * its newest entry: the launch calls, and the operations still waiting for
 * their call.  Entries leave from the head once paired (and, for calls, past
 * grace), so the queues hold the unpaired lag window.  Indices in the maps
 * are absolute (base + position) so that compacting a queue does not
 * invalidate them. */
#include "analysis/opjoin.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gp_launch.h"
#include "common/tool.h"
#include "common/util.h"

#define DEFAULT_MAX_WAITING ((size_t)1 << 22)
#define DEFAULT_GRACE_NS 1000000000ull
#define NONE UINT64_MAX

struct call {
	uint64_t corr;
	uint64_t s, e, last_e;   /* last_e: latest end of an operation joined to it */
	uint64_t ops;            /* operations joined to it */
	uint32_t pid, tid, name_id, stack_id;
	uint8_t launch, graph, joined, ok;  /* launch: its operation is waited for */
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
	size_t max_waiting;
	uint64_t grace;
	opjoin_cb cb;
	opjoin_call_cb call_cb;
	void *ctx;
	u64map call_idx;         /* key -> absolute index in calls */
	struct call *calls; size_t chead, cn, ccap; uint64_t cbase;
	size_t cfirst;           /* no pending launch call before this position */
	u64map pend_idx;         /* key -> absolute index of the newest pending op */
	struct pending_op *pend; size_t phead, pn, pcap; uint64_t pbase;
	u64map name_class;       /* kernel name id -> class + 1 */
	struct opjoin_counts counts;
	uint64_t now;
};

static uint64_t key_of(uint32_t pid, uint64_t corr) { return ((uint64_t)pid << 40) ^ corr; }

struct opjoin *opjoin_new(gp_reader *r, const struct opjoin_opts *opts, opjoin_cb cb, void *ctx)
{
	struct opjoin *j = xcalloc(1, sizeof(*j));
	j->r = r;
	j->cb = cb;
	j->ctx = ctx;
	j->max_waiting = opts && opts->max_waiting ? opts->max_waiting : DEFAULT_MAX_WAITING;
	j->grace = opts && opts->grace_ns ? opts->grace_ns : DEFAULT_GRACE_NS;
	j->call_cb = opts && opts->sz >= offsetof(struct opjoin_opts, call_cb) + sizeof(opts->call_cb)
		     ? opts->call_cb : NULL;
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
	free(j);
}

/* An operation waits for its call. */
static void pend_push(struct opjoin *j, const struct gpu_op *op)
{
	struct pending_op p;
	memset(&p, 0, sizeof(p));
	p.op = *op;
	uint64_t *slot = u64map_get(&j->pend_idx, key_of(op->pid, op->corr), 1);
	p.prev = *slot ? *slot - 1 : NONE;
	VEC_PUSH(j->pend, j->pn, j->pcap, p);
	*slot = j->pbase + j->pn; /* absolute index + 1 */
}

static void call_push(struct opjoin *j, const struct call *c)
{
	VEC_PUSH(j->calls, j->cn, j->ccap, *c);
	*u64map_get(&j->call_idx, key_of(c->pid, c->corr), 1) = j->cbase + j->cn - 1;
}

static struct call *call_find(struct opjoin *j, uint32_t pid, uint64_t corr)
{
	uint64_t *slot = u64map_get(&j->call_idx, key_of(pid, corr), 0);
	if (!slot) return NULL;
	struct call *c = &j->calls[*slot - j->cbase];
	return c->pid == pid && c->corr == corr ? c : NULL;
}

static void deliver(struct opjoin *j, struct gpu_op *op, struct call *c)
{
	if (c) {
		op->has_call = 1;
		op->call_s = c->s; op->call_e = c->e;
		op->tid = c->tid; op->call_name_id = c->name_id;
		op->graph = c->graph;
		op->stack_id = c->stack_id;
		c->joined = 1;
		c->ops++;
		if (op->e > c->last_e) c->last_e = op->e;
	} else {
		j->counts.ops_no_call++;
	}
	j->counts.ops++;
	j->cb(j->ctx, op);
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
		if (a->start_ns < c->s) { c->s = a->start_ns; c->name_id = a->name_id; }
		if (a->end_ns > c->e) c->e = a->end_ns;
		if (!c->stack_id) c->stack_id = a->stack_id;
		c->launch |= (uint8_t)launch;
		c->graph |= kind == GP_LAUNCH_GRAPH;
		c->ok &= a->status == 0;
		return;
	}
	struct call nc;
	memset(&nc, 0, sizeof(nc));
	nc.corr = a->correlation_id;
	nc.s = a->start_ns;
	nc.e = a->end_ns > a->start_ns ? a->end_ns : a->start_ns;
	nc.pid = pid; nc.tid = tid; nc.name_id = a->name_id; nc.stack_id = a->stack_id;
	nc.launch = (uint8_t)launch; /* 0: not waited for (failed, or activity not recorded then) */
	nc.graph = kind == GP_LAUNCH_GRAPH;
	nc.ok = a->status == 0;
	call_push(j, &nc);
	c = &j->calls[j->cn - 1];
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
	memset(&op, 0, sizeof(op));
	op.pid = pid;
	switch (rec->type) {
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		op.s = k->start_ns; op.e = k->end_ns; op.corr = k->correlation_id;
		op.device = k->device_id; op.stream = k->stream_id; op.name_id = k->name_id;
		op.graph_node = k->graph_node_id;
		op.kind = OP_KERNEL;
		op.cls = (uint8_t)kernel_class(j, k->name_id);
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		op.s = m->start_ns; op.e = m->end_ns; op.corr = m->correlation_id;
		op.device = m->device_id; op.stream = m->stream_id;
		op.bytes = m->bytes; op.copy_kind = m->copy_kind;
		op.kind = OP_MEMCPY; op.cls = OPC_MEMORY;
		break;
	}
	case GP_REC_MEMSET:
		/* the same leading fields as a memcpy, by another name */
		op.s = rec->u.memset.start_ns; op.e = rec->u.memset.end_ns; op.corr = rec->u.memset.correlation_id;
		op.device = rec->u.memset.device_id; op.stream = rec->u.memset.stream_id;
		op.bytes = rec->u.memset.bytes;
		op.kind = OP_MEMSET; op.cls = OPC_MEMORY;
		break;
	default:
		return;
	}
	if (op.e < op.s) op.e = op.s;
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

static void call_pop_head(struct opjoin *j)
{
	struct call *c = &j->calls[j->chead];
	uint64_t abs = j->cbase + j->chead;
	uint64_t key = key_of(c->pid, c->corr);
	uint64_t *slot = u64map_get(&j->call_idx, key, 0);
	if (slot && *slot == abs) u64map_del(&j->call_idx, key);
	if (c->launch && !c->joined) j->counts.calls_no_op++;
	if (j->call_cb) {
		struct launch_call lc = { c->s, c->e, c->corr, c->pid, c->tid, c->name_id, c->stack_id, c->ops,
					  c->graph, c->ok };
		j->call_cb(j->ctx, &lc);
	}
	j->chead++;
}

static void compact(struct opjoin *j)
{
	if (j->chead > 4096 && j->chead * 2 > j->cn) {
		memmove(j->calls, j->calls + j->chead, (j->cn - j->chead) * sizeof(*j->calls));
		j->cn -= j->chead;
		j->cfirst = j->cfirst > j->chead ? j->cfirst - j->chead : 0;
		j->cbase += j->chead;
		j->chead = 0;
	}
	if (j->phead > 4096 && j->phead * 2 > j->pn) {
		memmove(j->pend, j->pend + j->phead, (j->pn - j->phead) * sizeof(*j->pend));
		j->pn -= j->phead;
		j->pbase += j->phead;
		j->phead = 0;
	}
}

void opjoin_advance(struct opjoin *j, uint64_t now)
{
	if (now > j->now) j->now = now;
	while (j->phead < j->pn) {
		const struct pending_op *p = &j->pend[j->phead];
		if (!p->done && j->pn - j->phead <= j->max_waiting) break;
		if (!p->done) j->counts.gave_up++;
		pend_pop_head(j);
	}
	while (j->chead < j->cn) {
		const struct call *c = &j->calls[j->chead];
		uint64_t last = c->e > c->last_e ? c->e : c->last_e;
		int waited = c->launch && !c->joined;
		if (!waited ? last + j->grace > j->now : j->cn - j->chead <= j->max_waiting) break;
		if (waited) j->counts.gave_up++;
		call_pop_head(j);
	}
	compact(j);
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
	/* an operation still waiting for its call was launched before it started */
	for (size_t i = j->phead; i < j->pn; i++) {
		const struct pending_op *p = &j->pend[i];
		if (p->done) continue;
		if (p->op.s < f) f = p->op.s;
		break;
	}
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

void opjoin_merge(struct opjoin *dst, struct opjoin *src)
{
	/* src's operations whose call was before the cut, then dst's whose
	 * call came after it (in arrival order, as one join would pair them) */
	join_across(dst, src, dst);
	join_across(dst, dst, src);
	for (size_t i = src->chead; i < src->cn; i++) call_push(dst, &src->calls[i]);
	for (size_t i = src->phead; i < src->pn; i++)
		if (!src->pend[i].done) pend_push(dst, &src->pend[i].op);
	dst->counts.ops += src->counts.ops;
	dst->counts.ops_no_call += src->counts.ops_no_call;
	dst->counts.calls_no_op += src->counts.calls_no_op;
	dst->counts.gave_up += src->counts.gave_up;
	/* what one join would have let go by src's end */
	opjoin_advance(dst, src->now);
	src->chead = src->cn;
	src->phead = src->pn;
}

void opjoin_finish(struct opjoin *j)
{
	while (j->phead < j->pn) pend_pop_head(j);
	while (j->chead < j->cn) call_pop_head(j);
}

void opjoin_counts(const struct opjoin *j, struct opjoin_counts *out)
{
	*out = j->counts;
}
