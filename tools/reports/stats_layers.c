/* stats_layers.c — `stats --report layers`: GPU kernel time per model
 * layer, as a tree (analysis/layers/layers.h has the rule and the rows of their
 * own).  The context's join (GPU work to its launch call) attributed by
 * analysis/layers/layer_attr.h — the graph kernels by the context's capture sites,
 * the backward kernels by the context's NVTX ranges — as export --format
 * folded --site layer does, each path's kernel time then added to the tree.
 * A kernel counts when it starts in the selection. */
#include <stdlib.h>
#include <string.h>

#include "analysis/layers/layer_attr.h"
#include "analysis/layers/layers.h"
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
	" Layer = the class of a Python forward (or nn.Module _call_impl) frame, indented\n"
	"   under the layer that called it.  Kernel Time = kernels launched inside the layer, Self =\n"
	"   not inside a layer below it; Time (%) = Kernel Time / all kernel time.  The Self\n"
	"   column adds up to all kernel time.  Rows in brackets: work that has no layer\n"
	"   (docs/STACKS.md \"Layers\").  (backward): backward kernels of the layer's ops,\n"
	"   by the layer ranges of `gpuprof run --layers`, else by the sequence numbers of\n"
	"   torch.autograd.profiler.emit_nvtx's ranges; without them (or where they are\n"
	"   ambiguous) backward kernels stay unattributed.\n"
	"   (CUDA graph, captured here): kernels a graph launch replayed, under the layer\n"
	"   whose launch was captured into the graph (torch.compile reduce-overhead).\n";

struct layers_report {
	struct layer_attr *la;
	uint64_t layer_stacks;  /* stacks with a forward frame seen so far (in_default) */
};

static void *layers_new(const struct stats_ctx *ctx)
{
	struct layers_report *lr = xcalloc(1, sizeof(*lr));
	lr->la = layer_attr_new(ctx->stacks, ctx->pipe.attr);
	return lr;
}

static void layers_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	struct layers_report *lr = self;
	if (op->kind == OP_KERNEL && stats_selected(ctx, op->s)) layer_attr_op(lr->la, op, ctx->graphs);
}

/* every launch call, selected or not (the forward op ranges) */
static void layers_call(void *self, const struct stats_ctx *ctx, const struct launch_call *c)
{
	struct layers_report *lr = self;
	layer_attr_call(lr->la, c);
}

/* Shards: the next slice's work (analysis/layers/layer_attr.h). */
static int layers_merge(void *self, void *from, const struct stats_ctx *ctx)
{
	struct layers_report *lr = self, *src = from;
	layer_attr_merge(lr->la, src->la);
	return 0;
}

static void tree_add(void *ctx, const char *const *path, uint32_t n, const struct layer_weight *w)
{
	if (w->kernels) layer_tree_add(ctx, path, n, w->kernel_ns, w->kernels);
}

static struct layer_tree *layers_tree(struct layers_report *lr)
{
	struct layer_tree *t = layer_tree_new();
	lr->layer_stacks = layer_attr_resolve(lr->la, tree_add, t);
	return t;
}

static int layers_in_default(void *self, const struct stats_ctx *ctx)
{
	/* only for traces whose stacks show model layers */
	struct layers_report *lr = self;
	if (!stacks_count(ctx->stacks)) return 0;
	layer_tree_free(layers_tree(lr));
	return lr->layer_stacks > 0;
}

static void layers_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct layers_report *lr = self;
	int have = stacks_count(ctx->stacks) > 0;
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
	layer_attr_free(lr->la);
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
	.needs = STATS_NEED_OPS | STATS_NEED_RANGES | STATS_NEED_STACKS,
	.new = layers_new, .op = layers_op, .call = layers_call, .merge = layers_merge,
	.in_default = layers_in_default,
	.fill = layers_fill, .free = layers_free,
};
