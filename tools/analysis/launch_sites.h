/* launch_sites.h — `gpuprof stats --report launch_sites`: call sites ranked
 * by the GPU time of the kernels launched from them. */
#ifndef GPUPROF_TOOL_LAUNCH_SITES_H
#define GPUPROF_TOOL_LAUNCH_SITES_H

#include "analysis/launch_join.h"
#include "analysis/stacks.h"
#include "common/report.h"

#define LAUNCH_SITES_NCOLS 9
extern const struct col launch_sites_cols[LAUNCH_SITES_NCOLS];
extern const char launch_sites_note[];

/* One row per site (see stacks.h), plus "(no stack)" for GPU work whose
 * launch call has no stack, so Time (%) adds up to 100. */
void launch_sites_fill(struct report *rep, struct stacks *st, const struct launch_join *lj);

#endif
