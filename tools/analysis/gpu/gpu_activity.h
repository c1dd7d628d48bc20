/* gpu_activity.h — when the GPU was busy, per device and per stream: the
 * intervals of kernels and of copies (memcpy/memset), and at the end their
 * unions, idle gaps and the kernel/copy overlap.  In a windowed trace only
 * the time inside the process's GPU-activity windows counts (the shim
 * recorded no GPU activity outside them, so that time is not idle).  Feeds
 * the stats util and windows reports. */
#ifndef GPUPROF_ANALYSIS_GPU_GPU_ACTIVITY_H
#define GPUPROF_ANALYSIS_GPU_GPU_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/core/intervals.h"
#include "analysis/gpu/windows.h"
#include "common/util.h"

/* Memory.  A process whose GPU activity may be windowed keeps every
 * interval until the end; any other process's intervals are summed as the
 * trace streams: each device's kernel and copy sets are an ivpair
 * (analysis/core/intervals.h) with lag GPU_ACTIVITY_LAG, its streams cut
 * where it is; a record later than that loses its time before the cut
 * (kc.late, kc.late_ns).  Why this is exact and its bounds: docs/CLI.md,
 * the `util` item of what stats keeps. */
#define GPU_ACTIVITY_LAG 65536
/* The lag of a pass that sums per bin (gpu_activity.bins: `gpuprof
 * report`, whose pass streams the intervals beside every other report's
 * state, in each of its slices): what a device and its streams hold grows
 * with the lag, ~5.8 MB at GPU_ACTIVITY_LAG and ~0.75 MB at this one
 * (tests/tools/test_gpu_activity_memory.c).  Where a record came later
 * than it (gpu_activity_redo), or slices could not merge exactly, the
 * caller sums the intervals again at GPU_ACTIVITY_LAG in a pass of its
 * own: the figures are those of GPU_ACTIVITY_LAG either way. */
#define GPU_ACTIVITY_LAG_BINS 8192

/* The two kinds of GPU work told apart. */
enum gpu_work { GPU_WORK_KERNEL, GPU_WORK_COPY /* memcpy or memset */ };

/* Equal bins over [t0, t1): bin i is [t0 + i width, t0 + (i + 1) width),
 * the last one cut at t1. */
struct gpu_bins { uint64_t t0, t1, width; size_t n; };
/* A device's kernel (v[0]) and copy (v[1]) time per bin: the time of each
 * bin its union covers (gpu_activity.bins). */
struct gpu_busy { struct gpu_bins bn; uint64_t *v[2]; };

struct gpu_dev {
	uint32_t pid, dev;
	int has; uint64_t span_s, span_e; /* first start, last end of its GPU work */
	struct ivpair kc;      /* set[0] kernels, set[1] copies: kept, or pending and cut */
	int streamed;          /* cut as it streams (see above) */
	int clipped; uint64_t clip_s, clip_e; /* streamed: clipped to [clip_s, clip_e) as added */
	uint64_t n[2];         /* intervals added: kernels, copies */
	size_t *strs; size_t nstrs, cstrs; /* its streams (indices into strs) */
	/* set by gpu_activity_finish */
	int windowed;          /* its process has GPU-activity windows */
	uint64_t span;         /* span_e - span_s, or the windows' total time */
	struct ivsum ksum, csum;
	uint64_t overlap;      /* kernel and copy time at once */
	struct gpu_busy *busy; /* with gpu_activity.bins: its unions per bin (complete once finished) */
};

struct gpu_stream {
	uint32_t pid, dev, stream;
	int streamed;          /* its device's */
	/* [0] kernels, [1] copies, cut as its device's pair (kc.set[0], kc.set[1]) */
	struct ivset set[2];
	uint64_t n[2];
	struct ivdone done[2];
	struct ivset head[2];  /* streamed, in a slice: the pieces of its device's first cut (ivpair.head) */
	struct ivsum ksum, csum; /* set by gpu_activity_finish */
};

/* Zero-initialised = empty. */
struct gpu_activity {
	u64map dev_idx, str_idx;
	struct gpu_dev *devs; size_t ndevs, cdevs;
	struct gpu_stream *strs; size_t nstrs, cstrs;
	u64map streamed;       /* pid -> 1: its intervals may be cut (gpu_activity_process) */
	int keep;              /* set by a caller that reads the devices' unions
				  (kc.set) after gpu_activity_finish, as `gpuprof
				  report`'s busy-over-time: no process is streamed */
	const struct winset *clip; /* set before the first record, when the windows
				  gpu_activity_finish will get are known: a streamed
				  process's intervals are clipped to its one window
				  there as they come (a process with several there
				  keeps every interval) */
	size_t lag;            /* set before the first record: the streamed pairs' lag
				  (0: GPU_ACTIVITY_LAG_BINS with bins, else
				  GPU_ACTIVITY_LAG) */
	int slice;             /* set before the first record: the records of a slice of
				  time after the first (stats' time shards): the
				  devices' pairs keep their heads (intervals.h) */
	const struct gpu_bins *bins; /* set before the first record, when known (the
				  same in every slice): each device's kernel and
				  copy unions are summed per bin as they stream
				  (gpu_dev.busy; the slices' bins add up in
				  gpu_activity_merge), so no interval is kept for a
				  busy-over-time chart (`gpuprof report`) */
};

/* The process `pid` describes its recording: settings_known (the PROCESS
 * record had a settings string) and windowed (it says --gpu-window or
 * --capture-range).  Only a process said to be neither unknown nor
 * windowed, before its first GPU record, is streamed. */
void gpu_activity_process(struct gpu_activity *g, uint32_t pid, int settings_known, int windowed);
void gpu_activity_add(struct gpu_activity *g, uint32_t pid, uint32_t dev, uint32_t stream,
		      uint64_t s, uint64_t e, enum gpu_work work);
/* Counts the kernels starting inside each window of win (win->v[i].kernels;
 * before gpu_activity_finish). */
void gpu_activity_count_windows(const struct gpu_activity *g, struct winset *win);
/* After winset_finish (and any clip): counts the kernels starting inside
 * each window (win->v[i].kernels), sorts devices by (pid, device) and
 * streams by (pid, device, stream), clips to the windows and merges every
 * set into its union (ksum, csum).  Nothing is added after this. */
void gpu_activity_finish(struct gpu_activity *g, struct winset *win);
/* Time shards: adds src, the same analysis over the next slice of time
 * (src->slice), to g; src is left emptied (free it).  0, or -1 when the
 * sums cannot be the same as one pass over both slices' records (a
 * device's interval of g runs past src's first cut, or a device is
 * streamed in one and not the other): g is then incomplete. */
int gpu_activity_merge(struct gpu_activity *g, struct gpu_activity *src);
/* Records that arrived too late to be counted in full, over all devices,
 * and their uncounted time. */
uint64_t gpu_activity_late(const struct gpu_activity *g, uint64_t *late_ns);
/* Whether g summed at GPU_ACTIVITY_LAG_BINS met a record later than that
 * (before gpu_activity_finish): its sums are to be made again at
 * GPU_ACTIVITY_LAG (lag set), as without bins. */
int gpu_activity_redo(const struct gpu_activity *g);
void gpu_activity_free(struct gpu_activity *g);

#endif
