/* launch_join.h — GPU work joined to the call that launched it, per launch:
 * API records give (pid, correlation id) -> thread and stack id, kernels and
 * memcpy/memset records give the GPU time.  Either may come first.  Used by
 * `stats --report launch_sites` and `export --format folded`. */
#ifndef GPUPROF_TOOL_LAUNCH_JOIN_H
#define GPUPROF_TOOL_LAUNCH_JOIN_H

#include <stdint.h>

#include "gp_trace.h"
#include "analysis/gpu_work.h"

struct joined_launch {
	uint32_t pid, tid, stack_id; /* stack_id 0: the call had none, or no call was recorded */
	uint8_t has_api;             /* a launch call was recorded */
	uint8_t launch_call;         /* counts as a launch (see launch_join_api) */
	uint32_t kernels, memops;
	uint64_t kernel_ns, memop_ns;
};

struct launch_join;

struct launch_join *launch_join_new(void);
void launch_join_free(struct launch_join *j); /* NULL ok */
/* An API call on pid/tid.  Calls without a correlation id are ignored; the
 * runtime and driver calls of one launch share the id and count once (the
 * first stack id wins, a later one fills a missing one).  A call counts as a
 * launch when it is a launch call (gp_launch.h: kernel, graph, memcpy,
 * memset) or GPU work is correlated with it. */
void launch_join_api(struct launch_join *j, uint32_t pid, uint32_t tid, const gp_rec_api *a);
/* GPU work of `ns` for (pid, correlation id). */
void launch_join_gpu(struct launch_join *j, uint32_t pid, uint64_t corr, enum gpu_work work, uint64_t ns);
/* All launches (order unspecified); valid until the next call or free. */
const struct joined_launch *launch_join_all(const struct launch_join *j, size_t *n);

#endif
