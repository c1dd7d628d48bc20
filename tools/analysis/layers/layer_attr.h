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
 * Lifecycle: new, then add() for the stack records (MODULE, STACK, THREAD,
 * SOURCE) as they are read, op() for each GPU operation the caller counts
 * (its selection), call() for every launch call, selected or not (the
 * forward op ranges need all of them), then resolve() (repeatable).
 * Memory: the stacks (stacks.h), two stack_work tables (stack_work.h) and
 * autograd_seq's and layer_ranges'. */
#ifndef GPUPROF_ANALYSIS_LAYERS_LAYER_ATTR_H
#define GPUPROF_ANALYSIS_LAYERS_LAYER_ATTR_H

#include <stdint.h>

#include "gp_trace.h"
#include "analysis/join/attribution.h"
#include "analysis/layers/graph_sites.h"
#include "analysis/join/opjoin.h"

struct layer_attr;

/* ranges: the NVTX ranges, indexed (attribution_index), for the backward
 * join; NULL: no backward join.  Must outlive la. */
struct layer_attr *layer_attr_new(gp_reader *r, const struct attribution *ranges);
void layer_attr_free(struct layer_attr *la); /* NULL ok */

/* A stack record (MODULE, STACK, THREAD, SOURCE; others are ignored). */
void layer_attr_add(struct layer_attr *la, const gp_record *rec);
/* Whether the trace has stacks (so far: they come before timed records). */
int layer_attr_has_stacks(const struct layer_attr *la);
/* A GPU operation to count.  graphs: the capture sites read so far (a
 * capture comes before any launch of its graph); NULL: none. */
void layer_attr_op(struct layer_attr *la, const struct gpu_op *op, const struct graph_sites *graphs);
/* Every launch call (the forward side of the backward join). */
void layer_attr_call(struct layer_attr *la, const struct launch_call *c);

/* Adds src (the same trace's next slice of time: the time shards of `stats
 * --threads`, every slice with every stack record) to la; la reads strings
 * through r from now on (src's reader closes).  src is left to be freed. */
void layer_attr_merge(struct layer_attr *la, struct layer_attr *src, gp_reader *r);

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
