/* gpu_activity.h — when the GPU was busy, per device and per stream: the
 * intervals of kernels and of copies (memcpy/memset), and at the end their
 * unions, idle gaps and the kernel/copy overlap.  In a windowed trace only
 * the time inside the process's GPU-activity windows counts (the shim
 * recorded no GPU activity outside them, so that time is not idle).  Feeds
 * the stats util and windows reports. */
#ifndef GPUPROF_TOOL_GPU_ACTIVITY_H
#define GPUPROF_TOOL_GPU_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gpu_work.h"
#include "analysis/intervals.h"
#include "analysis/windows.h"
#include "common/util.h"

struct gpu_dev {
	uint32_t pid, dev;
	int has; uint64_t span_s, span_e; /* first start, last end of its GPU work */
	struct ivset k, c;
	/* set by gpu_activity_finish */
	int windowed;          /* its process has GPU-activity windows */
	uint64_t span;         /* span_e - span_s, or the windows' total time */
	struct ivsum ksum, csum;
	uint64_t overlap;      /* kernel and copy time at once */
};

struct gpu_stream {
	uint32_t pid, dev, stream;
	struct ivset k, c;
	struct ivsum ksum, csum; /* set by gpu_activity_finish */
};

/* Zero-initialised = empty. */
struct gpu_activity {
	u64map dev_idx, str_idx;
	struct gpu_dev *devs; size_t ndevs, cdevs;
	struct gpu_stream *strs; size_t nstrs, cstrs;
};

void gpu_activity_add(struct gpu_activity *g, uint32_t pid, uint32_t dev, uint32_t stream,
		      uint64_t s, uint64_t e, enum gpu_work work);
/* After winset_finish (and any clip): counts the kernels starting inside
 * each window (win->v[i].kernels), sorts devices by (pid, device) and
 * streams by (pid, device, stream), clips to the windows and merges every
 * set into its union (ksum, csum).  Nothing is added after this. */
void gpu_activity_finish(struct gpu_activity *g, struct winset *win);
void gpu_activity_free(struct gpu_activity *g);

#endif
