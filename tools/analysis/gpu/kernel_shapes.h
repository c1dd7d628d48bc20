/* kernel_shapes.h — kernels grouped by process, device, name and launch
 * shape (threads per block, registers per thread, shared memory per block),
 * with their time per grid size; at the end, each group's theoretical
 * occupancy and SM coverage (occupancy.h), and per device the kernel time
 * weighted by coverage and by coverage x grid occupancy.  Feeds the stats
 * occupancy and util reports. */
#ifndef GPUPROF_ANALYSIS_GPU_KERNEL_SHAPES_H
#define GPUPROF_ANALYSIS_GPU_KERNEL_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/gpu/devprops.h"
#include "analysis/gpu/occupancy.h"
#include "common/util.h"

/* Kernels of one name and launch shape on one device; the grid may vary, so
 * kernel time is kept per grid size (blocks -> ns) for the coverage. */
struct kshape {
	uint32_t pid, dev, threads, regs, smem;
	char *name;
	uint32_t name_id;         /* string id of its first kernel record's name */
	uint64_t n, total, bmin, bmax;
	u64map blocks;
	/* set by kshapes_finish */
	const gp_rec_device *d;   /* NULL: no device record */
	struct occ o;
	int cov_known, occ_known; /* SM count known; and the occupancy too */
	double wcov, wocc;        /* kernel ns x coverage, x coverage x grid occupancy */
};

/* Per device, over all its kernels (set by kshapes_finish). */
struct kshape_dev {
	uint32_t pid, dev;
	double smw_ns, occw_ns;   /* SM-weighted and occupancy-weighted kernel time */
	int cov_known, occ_known; /* 1 every kernel's device properties known, -1 not */
};

/* Zero-initialised = empty. */
struct kshapes {
	strmap idx; struct kshape *v; size_t n, cap;
	u64map by_id;             /* hash of (pid, dev, shape, name id) -> v index + 1 (kshapes_add) */
	u64map dev_idx; struct kshape_dev *devs; size_t ndevs, cdevs;
};

/* A kernel record of process pid; name: its demangled name. */
void kshapes_add(struct kshapes *ks, uint32_t pid, const gp_rec_kernel *k, const char *name);
/* Adds the kernels of src (a later part of the same trace, before
 * kshapes_finish) to ks: a group's first name id stays ks's when it had
 * the group. */
void kshapes_merge(struct kshapes *ks, struct kshapes *src);
/* Sorts the groups (time, largest first, then name, pid, device, shape) and
 * computes the figures above; dp must outlive ks. */
void kshapes_finish(struct kshapes *ks, struct devprops *dp);
/* After kshapes_finish; NULL for a device without kernels. */
const struct kshape_dev *kshapes_device(struct kshapes *ks, uint32_t pid, uint32_t dev);
void kshapes_free(struct kshapes *ks);

#endif
