/* stack_work.h — GPU work and launch calls by the call stack of the launch
 * call (pid, thread, stack id): what `stats --report launch_sites` and
 * `export --format folded` weigh.  It takes what the correlation-id join
 * (opjoin.h) hands out — every GPU operation joined to its launch call, and
 * every launch call as it leaves the join — so launch sites attribute GPU
 * work by the same rule as the rest (attribution.h): to the call that
 * launched it (a graph launch's kernels all to the cudaGraphLaunch call —
 * callers that know the graph's capture sites pass such a kernel rebased to
 * its captured launch first, graph_sites_rebase; the runtime and driver
 * records of one launch are one call).
 *
 * Memory: one entry (64 bytes) per distinct (pid, thread, stack); GPU work
 * with no call or a call without a stack is one entry per process. */
#ifndef GPUPROF_ANALYSIS_STACKS_STACK_WORK_H
#define GPUPROF_ANALYSIS_STACKS_STACK_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join/opjoin.h"

struct stack_work_entry {
	uint32_t pid, tid, stack_id;  /* stack_id 0: no call, or a call without a stack (tid 0) */
	uint64_t launches;            /* launch calls */
	uint64_t kernels, memops;
	uint64_t kernel_ns, memop_ns;
	uint64_t graph_kernels, graph_kernel_ns; /* of the kernels: launched by a graph launch */
};

struct stack_work;

struct stack_work *stack_work_new(void);
void stack_work_free(struct stack_work *w); /* NULL ok */
/* opjoin's callbacks: ctx is the struct stack_work. */
void stack_work_op(void *ctx, const struct gpu_op *op);
void stack_work_call(void *ctx, const struct launch_call *c);
/* Adds src's entries to w (the time shards of `stats --threads`): its new
 * ones after w's, in src's order. */
void stack_work_merge(struct stack_work *w, const struct stack_work *src);
/* Every entry (order unspecified); valid until the next call or free. */
const struct stack_work_entry *stack_work_all(const struct stack_work *w, size_t *n);

#endif
