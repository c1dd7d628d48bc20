/* stats_layers.c — `stats --report layers`: GPU kernel time per model
 * layer, as a tree (analysis/layers.h has the rule and the rows of their
 * own).  The context's join (GPU work to its launch call) aggregated by the
 * call's stack (analysis/stack_work.h), each stack's work then added at its
 * layer path.  A kernel of a CUDA graph whose node's capture is known
 * (the context's analysis/graph_sites.h) is aggregated by the captured launch's stack
 * instead.  A backward kernel inside a backward op's emit_nvtx range goes to
 * the forward op of the same sequence number where that is known
 * (analysis/autograd_seq.h, over the context's NVTX ranges): every launch
 * call of a forward thread says which layers its op ranges were open in.
 * A kernel counts when it starts in the selection. */
#include <stdlib.h>
#include <string.h>

#include "analysis/autograd_seq.h"
#include "analysis/graph_sites.h"
#include "analysis/layers.h"
#include "analysis/stack_work.h"
#include "analysis/stacks.h"
#include "common/util.h"
#include "reports/stats_report.h"

enum {
	LAY_TIME_PCT, LAY_TOTAL_NS, LAY_SELF_NS, LAY_KERNELS, LAY_SELF_KERNELS, LAY_DEPTH, LAY_LAYER,
	LAY_NAME, LAY_NCOLS
};
static const struct col layer_cols[LAY_NCOLS] = {
	[LAY_TIME_PCT] = { "Time (%)", "time_pct", COL_F1, COL_EVERYWHERE },
	[LAY_TOTAL_NS] = { "Kernel Time (ns)", "kernel_ns", COL_INT, COL_EVERYWHERE },
	[LAY_SELF_NS] = { "Self (ns)", "self_ns", COL_INT, COL_EVERYWHERE },
	[LAY_KERNELS] = { "Kernels", "kernels", COL_INT, COL_EVERYWHERE },
	[LAY_SELF_KERNELS] = { "Self Kernels", "self_kernels", COL_INT, COL_MACHINE_ONLY },
	[LAY_DEPTH] = { "Depth", "depth", COL_INT, COL_MACHINE_ONLY },
	[LAY_LAYER] = { "Layer", "layer_indented", COL_STR, COL_TABLE_ONLY },
	[LAY_NAME] = { "Name", "layer", COL_STR, COL_MACHINE_ONLY },
};

static const char layer_note[] =
	" Layer = the class of a Python forward frame (torch.nn.Module), indented under the\n"
	"   layer that called it.  Kernel Time = kernels launched inside the layer, Self =\n"
	"   not inside a layer below it; Time (%) = Kernel Time / all kernel time.  The Self\n"
	"   column adds up to all kernel time.  Rows in brackets: work that has no layer\n"
	"   (docs/STACKS.md \"Layers\").  (backward): backward kernels of the layer's ops,\n"
	"   by the sequence numbers of torch.autograd.profiler.emit_nvtx's ranges; without\n"
	"   them (or where they are ambiguous) backward kernels stay unattributed.\n"
	"   (CUDA graph, captured here): kernels a graph launch replayed, under the layer\n"
	"   whose launch was captured into the graph (torch.compile reduce-overhead).\n";

struct layers_report {
	struct stacks *stk;
	struct stack_work *sw;
	struct stack_work *captured; /* graph kernels by the stack of their node's capture */
	struct autograd_seq *seq;    /* backward kernels by emit_nvtx's sequence numbers */
	uint64_t layer_stacks;  /* stacks with a forward frame seen so far (in_default) */
};

static void *layers_new(const struct stats_ctx *ctx)
{
	struct layers_report *lr = xcalloc(1, sizeof(*lr));
	lr->stk = stacks_new(ctx->r);
	lr->sw = stack_work_new();
	lr->captured = stack_work_new();
	if (ctx->attr) lr->seq = autograd_seq_new(ctx->attr);
	return lr;
}

static void layers_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct layers_report *lr = self;
	stacks_add(lr->stk, r->rec);
}

static void layers_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	struct layers_report *lr = self;
	if (op->kind != OP_KERNEL || !stats_selected(ctx, op->s)) return;
	/* a graph's kernel: where its node was captured, when that is known
	 * (the capture came before any launch of the graph, so it has been
	 * read); else the graph launch call's, as any launch */
	struct graph_site site;
	if (op->graph_node && ctx->graphs && graph_sites_find(ctx->graphs, op->pid, op->graph_node, &site)) {
		struct gpu_op at = *op;
		at.tid = site.tid;
		at.stack_id = site.stack_id;
		at.has_call = 1;
		at.graph = 0;
		stack_work_op(lr->captured, &at);
		return;
	}
	/* a backward kernel inside a backward op's range: kept apart (its
	 * call's stack is the autograd thread's borrowed one) */
	if (lr->seq && !op->graph && op->has_call && op->stack_id &&
	    layers_backward(stacks_view(lr->stk, op->stack_id, op->pid, op->tid)) &&
	    autograd_seq_backward(lr->seq, op->pid, op->tid, op->call_s, op->e - op->s))
		return;
	stack_work_op(lr->sw, op);
}

/* Every launch call of a forward thread, selected or not: which layers the
 * op ranges open at its start were in (a stack the trace does not define
 * says nothing: not known). */
static void layers_call(void *self, const struct stats_ctx *ctx, const struct launch_call *c)
{
	struct layers_report *lr = self;
	if (!lr->seq || layers_autograd_thread(stacks_thread_name(lr->stk, c->pid, c->tid))) return;
	const struct stack_view *v = c->stack_id ? stacks_view(lr->stk, c->stack_id, c->pid, c->tid) : NULL;
	autograd_seq_forward(lr->seq, c->pid, c->tid, c->s, v ? v->layers : NULL, v ? v->nlayers : 0);
}

static int seq_backward_thread(void *self, uint32_t pid, uint32_t tid)
{
	struct layers_report *lr = self;
	return layers_autograd_thread(stacks_thread_name(lr->stk, pid, tid));
}

static struct layer_tree *seq_tree; /* autograd_seq_resolve's callback's tree */
static void seq_work(void *self, const char *const *fwd, uint32_t n, uint64_t ns, uint64_t kernels)
{
	const char *path[LAYER_PATH_MAX];
	uint32_t np = 0;
	if (n) {
		for (; np < n && np < LAYER_PATH_MAX - 1; np++) path[np] = fwd[np];
		path[np++] = LAYERS_BACKWARD_ROW;
	} else {
		path[np++] = LAYERS_BACKWARD_UNATTRIBUTED;
	}
	layer_tree_add(seq_tree, path, np, ns, kernels);
}

/* Every stack's kernel work at its path (its graph-launched part under
 * "(CUDA graph replay)"), and the graph kernels of known capture under
 * their capture's path. */
static struct layer_tree *layers_tree(struct layers_report *lr)
{
	struct layer_tree *t = layer_tree_new();
	lr->layer_stacks = 0;
	const char *path[LAYER_PATH_MAX];
	for (int captured = 0; captured < 2; captured++) {
		size_t n;
		const struct stack_work_entry *ls = stack_work_all(captured ? lr->captured : lr->sw, &n);
		for (size_t i = 0; i < n; i++) {
			const struct stack_work_entry *l = &ls[i];
			if (!l->kernels) continue;
			const struct stack_view *v =
				l->stack_id ? stacks_view(lr->stk, l->stack_id, l->pid, l->tid) : NULL;
			if (v && v->nlayers) lr->layer_stacks++;
			if (captured) {
				uint32_t np = layers_path(v, LAYERS_GRAPH_CAPTURED, path);
				layer_tree_add(t, path, np, l->kernel_ns, l->kernels);
				continue;
			}
			uint64_t gk = l->graph_kernels, gns = l->graph_kernel_ns;
			if (l->kernels > gk) {
				uint32_t np = layers_path(v, LAYERS_LAUNCHED, path);
				layer_tree_add(t, path, np, l->kernel_ns - gns, l->kernels - gk);
			}
			if (gk) {
				uint32_t np = layers_path(v, LAYERS_GRAPH_REPLAY, path);
				layer_tree_add(t, path, np, gns, gk);
			}
		}
	}
	if (lr->seq) {
		seq_tree = t;
		autograd_seq_resolve(lr->seq, seq_backward_thread, seq_work, lr);
		seq_tree = NULL;
	}
	return t;
}

static int layers_in_default(void *self, const struct stats_ctx *ctx)
{
	/* only for traces whose stacks show model layers */
	struct layers_report *lr = self;
	if (!stacks_count(lr->stk)) return 0;
	layer_tree_free(layers_tree(lr));
	return lr->layer_stacks > 0;
}

static void layers_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct layers_report *lr = self;
	int have = stacks_count(lr->stk) > 0;
	report_define(&tables[0], have ? "Layers (kernel time per model layer)"
				       : "Layers: none, the trace has no stacks (record with --stacks)",
		      layer_cols, LAY_NCOLS);
	tables[0].note = layer_note;
	if (!have) return;
	struct layer_tree *t = layers_tree(lr);
	uint64_t total = layer_tree_total(t);
	size_t n;
	const struct layer_node *rows = layer_tree_rows(t, &n);
	for (size_t i = 0; i < n; i++) {
		const struct layer_node *nd = &rows[i];
		struct cell *c = report_row(&tables[0]);
		cell_num(&c[LAY_TIME_PCT], total ? 100.0 * (double)nd->total_ns / (double)total : 0);
		cell_num(&c[LAY_TOTAL_NS], (double)nd->total_ns);
		cell_num(&c[LAY_SELF_NS], (double)nd->self_ns);
		cell_num(&c[LAY_KERNELS], (double)nd->kernels);
		cell_num(&c[LAY_SELF_KERNELS], (double)nd->self_kernels);
		cell_num(&c[LAY_DEPTH], (double)nd->depth);
		/* the table shows the depth as indentation; CSV and JSON have
		 * the depth and the bare name */
		size_t ind = 2 * (size_t)(nd->depth < 64 ? nd->depth : 64);
		char *label = xmalloc(ind + strlen(nd->name) + 1);
		memset(label, ' ', ind);
		strcpy(label + ind, nd->name);
		cell_str(&c[LAY_LAYER], label);
		cell_str(&c[LAY_NAME], nd->name);
		free(label);
	}
	layer_tree_free(t);
}

static void layers_free(void *self)
{
	struct layers_report *lr = self;
	stack_work_free(lr->sw);
	stack_work_free(lr->captured);
	autograd_seq_free(lr->seq);
	stacks_free(lr->stk);
	free(lr);
}

static const struct stats_table layers_tables[] = {
	{ "layers",
	  "GPU kernel time per model layer (trace recorded with --stacks):\n"
	  "the classes of the Python forward frames as a tree (GPT2Model >\n"
	  "GPT2Block > GPT2Attention > Linear), time with and without the\n"
	  "layers below, kernels; rows of their own for kernels outside any\n"
	  "forward, backward and CUDA-graph kernels (under the layer that\n"
	  "captured them where the trace shows it; backward kernels under\n"
	  "their forward layer when the job ran under emit_nvtx).  Part of\n"
	  "the default set only when the stacks have forward frames" },
};

const struct stats_report stats_report_layers = {
	.tables = layers_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MODULE) | STATS_TYPE(GP_REC_STACK) | STATS_TYPE(GP_REC_THREAD) |
		 STATS_TYPE(GP_REC_SOURCE),
	.needs = STATS_NEED_OPS | STATS_NEED_RANGES,
	.new = layers_new, .add = layers_add, .op = layers_op, .call = layers_call, .in_default = layers_in_default,
	.fill = layers_fill, .free = layers_free,
};
