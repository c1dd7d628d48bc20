/* layer_attr.c — see layer_attr.h. */
#include "analysis/layers/layer_attr.h"

#include <stdlib.h>

#include "analysis/layers/autograd_seq.h"
#include "analysis/layers/layer_ranges.h"
#include "analysis/layers/layers.h"
#include "analysis/stacks/stack_work.h"
#include "analysis/stacks/stacks.h"
#include "common/util.h"

struct layer_attr {
	struct stacks *stk;          /* the caller's */
	struct stack_work *sw;       /* by the launch call's stack */
	struct stack_work *captured; /* graph kernels by the stack of their node's capture */
	struct autograd_seq *seq;    /* backward kernels by emit_nvtx's sequence numbers; NULL: none */
	struct layer_ranges *lrg;    /* backward kernels by gpuprof run --layers' ranges; NULL: none */
};

struct layer_attr *layer_attr_new(struct stacks *stk, const struct attribution *ranges)
{
	struct layer_attr *la = xcalloc(1, sizeof(*la));
	la->stk = stk;
	la->sw = stack_work_new();
	la->captured = stack_work_new();
	if (ranges) {
		la->seq = autograd_seq_new(ranges);
		la->lrg = layer_ranges_new(ranges);
	}
	return la;
}

void layer_attr_free(struct layer_attr *la)
{
	if (!la) return;
	stack_work_free(la->sw);
	stack_work_free(la->captured);
	autograd_seq_free(la->seq);
	layer_ranges_free(la->lrg);
	free(la);
}

void layer_attr_op(struct layer_attr *la, const struct gpu_op *op, const struct graph_sites *graphs)
{
	/* a graph's kernel: where its node was captured, when that is known;
	 * else the graph launch call's, as any launch */
	struct gpu_op at;
	if (graph_sites_rebase(graphs, op, &at)) {
		stack_work_op(la->captured, &at);
		return;
	}
	/* a backward kernel inside a layer range of gpuprof run --layers, else
	 * inside a backward op's emit_nvtx range: kept apart (its call's stack
	 * is the autograd thread's borrowed one) */
	if (la->seq && op->kind == OP_KERNEL && !op->graph && op->has_call && op->stack_id &&
	    layers_backward(stacks_view(la->stk, op->stack_id, op->pid, op->tid)) &&
	    (layer_ranges_backward(la->lrg, op->pid, op->tid, op->call_s, op->e - op->s) ||
	     autograd_seq_backward(la->seq, op->pid, op->tid, op->call_s, op->e - op->s)))
		return;
	stack_work_op(la->sw, op);
}

/* Every launch call of a forward thread: which layers the op ranges open at
 * its start were in (a stack the trace does not define says nothing: not
 * known). */
void layer_attr_call(struct layer_attr *la, const struct launch_call *c)
{
	if (!la->seq || layers_autograd_thread(stacks_thread_name(la->stk, c->pid, c->tid))) return;
	const struct stack_view *v = c->stack_id ? stacks_view(la->stk, c->stack_id, c->pid, c->tid) : NULL;
	autograd_seq_forward(la->seq, c->pid, c->tid, c->s, v ? v->layers : NULL, v ? v->nlayers : 0);
}

void layer_attr_merge(struct layer_attr *la, struct layer_attr *src)
{
	stack_work_merge(la->sw, src->sw);
	stack_work_merge(la->captured, src->captured);
	if (la->seq && src->seq) autograd_seq_merge(la->seq, src->seq, la->stk);
	if (la->lrg && src->lrg) layer_ranges_merge(la->lrg, src->lrg);
}

struct resolve {
	layer_attr_fn cb;
	void *ctx;
};

static void seq_work(void *arg, const char *const *fwd, uint32_t n, uint64_t ns, uint64_t kernels)
{
	struct resolve *rs = arg;
	const char *path[LAYER_PATH_MAX];
	uint32_t np = 0;
	if (n) {
		for (; np < n && np < LAYER_PATH_MAX - 1; np++) path[np] = fwd[np];
		path[np++] = LAYERS_BACKWARD_ROW;
	} else {
		path[np++] = LAYERS_BACKWARD_UNATTRIBUTED;
	}
	struct layer_weight w = { ns, kernels, 0, 0 };
	rs->cb(rs->ctx, path, np, &w);
}

static void emit(struct resolve *rs, const struct stack_view *v, enum layers_work work, const struct layer_weight *w)
{
	if (!w->kernels && !w->memops) return;
	const char *path[LAYER_PATH_MAX];
	uint32_t np = layers_path(v, work, path);
	rs->cb(rs->ctx, path, np, w);
}

/* Every stack's work at its path (its graph-launched kernels under "(CUDA
 * graph replay)"), the graph kernels of known capture under their capture's
 * path, then the backward work kept by the sequence numbers. */
uint64_t layer_attr_resolve(struct layer_attr *la, layer_attr_fn cb, void *ctx)
{
	struct resolve rs = { cb, ctx };
	uint64_t layer_stacks = 0;
	for (int captured = 0; captured < 2; captured++) {
		size_t n;
		const struct stack_work_entry *ls = stack_work_all(captured ? la->captured : la->sw, &n);
		for (size_t i = 0; i < n; i++) {
			const struct stack_work_entry *l = &ls[i];
			const struct stack_view *v =
				l->stack_id ? stacks_view(la->stk, l->stack_id, l->pid, l->tid) : NULL;
			if (l->kernels && v && v->nlayers) layer_stacks++;
			if (captured) {
				struct layer_weight w = { l->kernel_ns, l->kernels, 0, 0 };
				emit(&rs, v, LAYERS_GRAPH_CAPTURED, &w);
				continue;
			}
			uint64_t gk = l->graph_kernels, gns = l->graph_kernel_ns;
			struct layer_weight own = { l->kernel_ns - gns, l->kernels - gk, l->memop_ns, l->memops };
			struct layer_weight graph = { gns, gk, 0, 0 };
			emit(&rs, v, LAYERS_LAUNCHED, &own);
			emit(&rs, v, LAYERS_GRAPH_REPLAY, &graph);
		}
	}
	if (la->seq) autograd_seq_resolve(la->seq, la->stk, seq_work, &rs);
	if (la->lrg) layer_ranges_resolve(la->lrg, seq_work, &rs);
	return layer_stacks;
}
