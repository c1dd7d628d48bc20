/* autograd_seq.h — backward kernels given to the forward layer that created
 * them, by PyTorch's autograd sequence numbers in the NVTX ranges of
 * `torch.autograd.profiler.emit_nvtx` (docs/STACKS.md "Layers").
 *
 * The rule (what a forward op range and its layer path are, which range a
 * backward kernel belongs to, when seq N gives a path) and PyTorch's side
 * of it: docs/STACKS.md "Layers", "Backward kernels".
 *
 * Lifecycle: new (the context's ranges, indexed), forward() for every
 * launch call of a forward thread and backward() for every backward kernel,
 * in any order, then resolve() (once the trace is read; repeatable), which
 * hands out the backward work by path.
 * Memory: 4 bytes per NVTX range (per range from the first to the last
 * that a forward launch was in: a time shard's own); about 40 bytes (an entry and its hash
 * slot) per backward range that launched kernels, and per forward op range
 * with a layer (during resolve); one entry per distinct layer path. */
#ifndef GPUPROF_ANALYSIS_LAYERS_AUTOGRAD_SEQ_H
#define GPUPROF_ANALYSIS_LAYERS_AUTOGRAD_SEQ_H

#include <stdint.h>

#include "analysis/join/attribution.h"
#include "analysis/layers/layers.h"

struct autograd_seq;

/* a: the NVTX ranges, indexed (attribution_index); must outlive it */
struct autograd_seq *autograd_seq_new(const struct attribution *a);
void autograd_seq_free(struct autograd_seq *s); /* NULL ok */

/* A launch call of a forward thread started at t: its layer path
 * path[0..n) (n 0: not in a forward; path NULL: not known).  The strings
 * must live as long as s. */
void autograd_seq_forward(struct autograd_seq *s, uint32_t pid, uint32_t tid, uint64_t t, const char *const *path,
			  uint32_t n);
/* A backward kernel of ns launched by a call started at t: 1 when it is
 * inside a range with a seq (kept for resolve), 0 when not (the caller
 * keeps it). */
int autograd_seq_backward(struct autograd_seq *s, uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns);

/* Backward work kept: cb once per backward range.  stk names the threads:
 * a backward thread's (layers_autograd_thread) ranges are not forward op
 * ranges. */
void autograd_seq_resolve(struct autograd_seq *s, struct stacks *stk, layers_backward_fn cb, void *ctx);

/* Adds src (the same ranges; the time shards of `stats --threads`) to s:
 * the ranges' states (common prefixes: the order does not matter) and the
 * backward work.  src's path strings are interned in stk, s's stacks
 * (they die with src's). */
void autograd_seq_merge(struct autograd_seq *s, const struct autograd_seq *src, struct stacks *stk);

#endif
