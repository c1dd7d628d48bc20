/* occupancy.h — theoretical occupancy of a kernel launch from the device's
 * per-SM limits (CUDA occupancy calculator rules), and how many of the SMs
 * its grid can occupy at all.  Pure arithmetic on trace records. */
#ifndef GPUPROF_ANALYSIS_GPU_OCCUPANCY_H
#define GPUPROF_ANALYSIS_GPU_OCCUPANCY_H

#include <stdint.h>

#include "gp_trace.h"

/* Allocation rules used (CUDA occupancy calculator, cc 5.0-9.0):
 *  registers: per warp, regs/thread x warp size rounded up to 256; the warps
 *    a SM can hold by registers rounded down to a multiple of 4 (warp
 *    allocation granularity);
 *  shared memory: static + dynamic + 1 KiB reserved per block on cc >= 8.0,
 *    rounded up to 128 bytes, against the device's max shared memory per SM
 *    (the largest carveout: an upper bound); a kernel with no shared memory
 *    is not limited by it (the 1 KiB reserve alone cannot bind: >= 100 KiB
 *    per SM and <= 32 blocks per SM on cc >= 8.0). */
#define OCC_REG_ALLOC_UNIT 256
#define OCC_WARP_ALLOC_GRAN 4
#define OCC_SMEM_GRAN 128
#define OCC_SMEM_RESERVED_CC80 1024

enum occ_limiter { OCC_LIM_NONE, OCC_LIM_WARPS, OCC_LIM_BLOCKS, OCC_LIM_REGS, OCC_LIM_SMEM, OCC_LIM_BLOCKSIZE };

struct occ {
	int known;          /* 0: a device property needed was 0/missing */
	uint32_t warps_per_block, max_warps;
	uint32_t blocks_per_sm; /* resident blocks per SM by the per-SM limits (0: cannot launch) */
	enum occ_limiter limiter;
	double theoretical;     /* blocks_per_sm x warps_per_block / max_warps, in [0,1] */
};

/* Per-SM limits for a block of `threads` threads, `regs` registers per
 * thread and `smem` bytes of static+dynamic shared memory per block. */
struct occ occ_compute(const gp_rec_device *d, uint32_t threads, uint32_t regs, uint32_t smem);
const char *occ_limiter_name(enum occ_limiter limiter);

/* min(1, blocks / SMs): the share of SMs the grid can occupy at all; -1 when
 * the SM count is unknown. */
double occ_coverage(const gp_rec_device *d, uint64_t blocks);
/* Occupancy of an occupied SM when the grid has `blocks` blocks: resident
 * blocks = min(blocks_per_sm, ceil(blocks / SMs)); -1 when unknown. */
double occ_grid(const gp_rec_device *d, const struct occ *o, uint64_t blocks);

#endif
