/* devprops.h — the device properties of a trace (GP_REC_DEVICE) per process
 * and device; a later record for the same device replaces an earlier one. */
#ifndef GPUPROF_ANALYSIS_GPU_DEVPROPS_H
#define GPUPROF_ANALYSIS_GPU_DEVPROPS_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "common/util.h"

/* Zero-initialised = empty. */
struct devprops { u64map idx; gp_rec_device *v; size_t n, cap; };

void devprops_add(struct devprops *dp, uint32_t pid, const gp_rec_device *d);
/* NULL when the trace has no record for (pid, dev). */
const gp_rec_device *devprops_get(const struct devprops *dp, uint32_t pid, uint32_t dev);
void devprops_free(struct devprops *dp);

#endif
