/* layer_ranges.h — backward kernels given to the forward layer that made
 * their autograd node, by the NVTX ranges that `gpuprof run --layers` has
 * the job open around each such node's backward (shim/python/sitecustomize.py;
 * docs/STACKS.md "Backward kernels without emit_nvtx").
 *
 * A backward kernel (the caller decides which) goes to PATH > "(backward)"
 * of the innermost push/pop range "gpuprof.backward PATH" (default domain)
 * open on its launching thread at its launch call; outside any, it is not
 * kept (the caller tries the emit_nvtx join).
 *
 * Lifecycle: new (the context's ranges, indexed), backward() per backward
 * kernel, then resolve() (repeatable).  Memory: an entry (about 40 bytes)
 * per distinct range name that holds kernels; nothing per range. */
#ifndef GPUPROF_ANALYSIS_LAYERS_LAYER_RANGES_H
#define GPUPROF_ANALYSIS_LAYERS_LAYER_RANGES_H

#include <stdint.h>

#include "analysis/join/attribution.h"
#include "analysis/layers/layers.h"

#define LAYER_RANGE_PREFIX "gpuprof.backward "
#define LAYER_RANGE_SEP " > "

struct layer_ranges;

/* a: the NVTX ranges, indexed (attribution_index); must outlive it */
struct layer_ranges *layer_ranges_new(const struct attribution *a);
void layer_ranges_free(struct layer_ranges *lr); /* NULL ok */

/* A backward kernel of ns launched by a call started at t on thread tid of
 * pid: 1 when it is inside such a range (kept for resolve), else 0. */
int layer_ranges_backward(struct layer_ranges *lr, uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns);

/* Adds src's kept work (the same ranges: the time shards of `stats
 * --threads`) to lr. */
void layer_ranges_merge(struct layer_ranges *lr, const struct layer_ranges *src);

/* cb once per range name with kernels: its PATH split at " > " (strings
 * live as long as lr). */
void layer_ranges_resolve(struct layer_ranges *lr, layers_backward_fn cb, void *ctx);

#endif
