/* occupancy.c — see occupancy.h for the rules used. */
#include "analysis/gpu/occupancy.h"

static uint32_t round_up(uint32_t v, uint32_t g) { return (v + g - 1) / g * g; }

struct occ occ_compute(const gp_rec_device *d, uint32_t threads, uint32_t regs, uint32_t smem)
{
	struct occ o = { 0 };
	if (!d || !d->warp_size || !d->max_threads_per_sm || !d->max_blocks_per_sm || !threads)
		return o;
	if (regs && !d->max_regs_per_sm) return o;
	if (smem && !d->max_smem_per_sm) return o;
	o.known = 1;
	o.warps_per_block = (threads + d->warp_size - 1) / d->warp_size;
	o.max_warps = d->max_threads_per_sm / d->warp_size;
	if (!o.max_warps || (d->max_threads_per_block && threads > d->max_threads_per_block)) {
		o.limiter = OCC_LIM_BLOCKSIZE;
		return o;
	}
	uint32_t best = o.max_warps / o.warps_per_block;
	o.limiter = OCC_LIM_WARPS;
	if (d->max_blocks_per_sm < best) { best = d->max_blocks_per_sm; o.limiter = OCC_LIM_BLOCKS; }
	if (regs) {
		uint32_t per_warp = round_up(regs * d->warp_size, OCC_REG_ALLOC_UNIT);
		uint32_t warps = d->max_regs_per_sm / per_warp / OCC_WARP_ALLOC_GRAN * OCC_WARP_ALLOC_GRAN;
		uint32_t b = warps / o.warps_per_block;
		if (b < best) { best = b; o.limiter = OCC_LIM_REGS; }
	}
	if (smem) {
		uint32_t per_block = smem + (d->cc_major >= 8 ? OCC_SMEM_RESERVED_CC80 : 0);
		uint32_t b = d->max_smem_per_sm / round_up(per_block, OCC_SMEM_GRAN);
		if (b < best) { best = b; o.limiter = OCC_LIM_SMEM; }
	}
	o.blocks_per_sm = best;
	o.theoretical = (double)best * o.warps_per_block / o.max_warps;
	if (o.theoretical > 1) o.theoretical = 1;
	return o;
}

const char *occ_limiter_name(enum occ_limiter limiter)
{
	switch (limiter) {
	case OCC_LIM_WARPS: return "warps";
	case OCC_LIM_BLOCKS: return "blocks";
	case OCC_LIM_REGS: return "registers";
	case OCC_LIM_SMEM: return "shared mem";
	case OCC_LIM_BLOCKSIZE: return "block too large";
	default: return "-";
	}
}

double occ_coverage(const gp_rec_device *d, uint64_t blocks)
{
	if (!d || !d->sm_count) return -1;
	return blocks >= d->sm_count ? 1.0 : (double)blocks / d->sm_count;
}

double occ_grid(const gp_rec_device *d, const struct occ *o, uint64_t blocks)
{
	if (!d || !d->sm_count || !o->known || !o->max_warps) return -1;
	uint64_t per_sm = (blocks + d->sm_count - 1) / d->sm_count;
	if (per_sm > o->blocks_per_sm) per_sm = o->blocks_per_sm;
	double v = (double)per_sm * o->warps_per_block / o->max_warps;
	return v > 1 ? 1 : v;
}
