/* autograd_seq.h — backward kernels given to the forward layer that created
 * them, by PyTorch's autograd sequence numbers in the NVTX ranges of
 * `torch.autograd.profiler.emit_nvtx` (docs/STACKS.md "Layers").
 *
 * Under emit_nvtx every op's RecordFunction becomes a push/pop range whose
 * text PyTorch builds in getNvtxStr (torch/csrc/profiler/util.cpp):
 * "NAME, seq = N[, op_id = K][, sizes = ...]".  A forward op dispatched
 * through autograd with grad mode on carries N = the number the next
 * autograd node made on its thread will get (at::sequence_number::peek(),
 * a thread_local counter that only grows: aten/src/ATen/SequenceNumber.cpp);
 * a backward node's range (Node::operator() in
 * torch/csrc/autograd/function.h) carries the number that node got.  So:
 *
 *   a forward op range is a push/pop range with a seq on a thread that is
 *   not a backward thread; its layer path is the common prefix of the layer
 *   paths of the launch calls made on its thread inside it, or, when none
 *   was, of its nearest enclosing forward op range that has launches (not
 *   across a range without a seq: a C++ op keeps its Python frames);
 *   a backward kernel (the caller decides which) belongs to the outermost
 *   range with a seq open on its launching thread at its call; it goes to
 *   the layer path of seq N of its process when every forward op range of
 *   that process with seq N has the same non-empty path, else (several
 *   paths, a range with no known path or no layer, no forward range with
 *   that N) it stays unattributed.
 *
 * Several forward ranges share one N by design (peek() is read before the
 * node is made: aten::linear and its aten::t, or an op that made no node and
 * the next that did); the rule accepts them only when they agree.  The
 * counter is per thread and the text does not name the thread, so forward
 * ops on two threads of one process can give N twice: they must agree too.
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

/* Which threads are backward threads (their ranges are not forward op
 * ranges). */
typedef int (*autograd_seq_thread_fn)(void *ctx, uint32_t pid, uint32_t tid);
/* Backward work kept: cb once per backward range with its path (n 0:
 * unattributed), its kernel time and kernels. */
typedef void (*autograd_seq_work_fn)(void *ctx, const char *const *path, uint32_t n, uint64_t ns, uint64_t kernels);
void autograd_seq_resolve(struct autograd_seq *s, autograd_seq_thread_fn backward_thread, autograd_seq_work_fn cb,
			  void *ctx);

/* Adds src (the same ranges; the time shards of `stats --threads`) to s:
 * the ranges' states (common prefixes: the order does not matter) and the
 * backward work.  src's path strings are s's own through own(ctx, str)
 * (they die with src's stacks). */
void autograd_seq_merge(struct autograd_seq *s, const struct autograd_seq *src,
			const char *(*own)(void *ctx, const char *str), void *ctx);

/* The N of ", seq = N" in a range's text (followed by its end or ','); -1
 * none. */
int64_t autograd_seq_of(const char *name);

#endif
