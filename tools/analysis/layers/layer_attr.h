/* layer_attr.h — GPU work by model-layer path: the one attribution behind
 * `stats --report layers` and `export --format folded --site layer`
 * (docs/STACKS.md "Layers"), so both give the same paths and numbers.
 *
 * A GPU operation joined to its launch call (opjoin.h) goes to the layer
 * path (layers.h) of that call's stack, but for a graph kernel whose node's
 * capture is known (graph_sites_rebase) and a backward kernel when the NVTX
 * ranges are given (layer_ranges.h, then autograd_seq.h): docs/STACKS.md
 * "Layers".  Memcpys and memsets stay at their call's path.
 *
 * Lifecycle: new, then op() for each GPU operation the caller counts (its
 * selection), call() for every launch call, selected or not (the forward
 * op ranges need all of them), then resolve() (repeatable); the caller
 * feeds the stacks (stacks.h) the stack records (MODULE, STACK, THREAD,
 * SOURCE) as they are read.  Memory: two stack_work tables (stack_work.h)
 * and autograd_seq's and layer_ranges'. */
#ifndef GPUPROF_ANALYSIS_LAYERS_LAYER_ATTR_H
#define GPUPROF_ANALYSIS_LAYERS_LAYER_ATTR_H

#include <stdint.h>

#include "gp_trace.h"
#include "analysis/join/attribution.h"
#include "analysis/layers/graph_sites.h"
#include "analysis/join/opjoin.h"
#include "analysis/stacks/stacks.h"

struct layer_attr;

/* stk: the trace's stacks; ranges: the NVTX ranges, indexed
 * (attribution_index), for the backward join; NULL: no backward join.
 * Both must outlive la. */
struct layer_attr *layer_attr_new(struct stacks *stk, const struct attribution *ranges);
void layer_attr_free(struct layer_attr *la); /* NULL ok */

/* A GPU operation to count.  graphs: the capture sites read so far (a
 * capture comes before any launch of its graph); NULL: none. */
void layer_attr_op(struct layer_attr *la, const struct gpu_op *op, const struct graph_sites *graphs);
/* Every launch call (the forward side of the backward join). */
void layer_attr_call(struct layer_attr *la, const struct launch_call *c);

/* Adds src (the same trace's next slice of time: the time shards of `stats
 * --threads`, every slice with every stack record) to la, whose stacks
 * hold every stack by then (stacks_adopt).  src is left to be freed. */
void layer_attr_merge(struct layer_attr *la, struct layer_attr *src);

struct layer_weight {
	uint64_t kernel_ns, kernels;
	uint64_t memop_ns, memops;
};
/* cb(ctx, path, n, w): work w at path[0..n) (n >= 1; strings live as long
 * as la); a path may come more than once (add them up).  Returns the number
 * of launch stacks with a layer (a forward frame) that launched kernels. */
typedef void (*layer_attr_fn)(void *ctx, const char *const *path, uint32_t n, const struct layer_weight *w);
uint64_t layer_attr_resolve(struct layer_attr *la, layer_attr_fn cb, void *ctx);

#endif
