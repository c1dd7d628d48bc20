/* stats_occupancy.c — `stats --report occupancy`: kernels by name and
 * launch shape with their theoretical occupancy and SM coverage (the
 * context's kernel shapes, analysis/gpu/kernel_shapes.h). */
#include "reports/stats_report.h"

enum {
	OCC_TIME_PCT, OCC_TOTAL, OCC_INSTANCES, OCC_PID, OCC_DEVICE, OCC_BLOCKS_MIN, OCC_BLOCKS_MAX,
	OCC_THREADS, OCC_REGS, OCC_SMEM, OCC_THEORETICAL, OCC_LIMITER, OCC_COV_MIN, OCC_COV_MAX,
	OCC_EST_SM_ACT, OCC_EST_OCC, OCC_NAME, OCC_MANGLED,
	OCC_NCOLS
};
static const struct col occ_cols[OCC_NCOLS] = {
	[OCC_TIME_PCT] = { "Time (%)", "time_pct", COL_F1, COL_EVERYWHERE }, [OCC_TOTAL] = { "Total Time (ns)", "total_ns", COL_INT, COL_EVERYWHERE },
	[OCC_INSTANCES] = { "Instances", "instances", COL_INT, COL_EVERYWHERE }, [OCC_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE },
	[OCC_DEVICE] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[OCC_BLOCKS_MIN] = { "Blocks Min", "blocks_min", COL_INT, COL_EVERYWHERE },
	[OCC_BLOCKS_MAX] = { "Blocks Max", "blocks_max", COL_INT, COL_EVERYWHERE },
	[OCC_THREADS] = { "Threads/Block", "threads_per_block", COL_INT, COL_EVERYWHERE },
	[OCC_REGS] = { "Regs/Thread", "registers_per_thread", COL_INT, COL_EVERYWHERE },
	[OCC_SMEM] = { "Smem/Block (B)", "smem_per_block", COL_INT, COL_EVERYWHERE },
	[OCC_THEORETICAL] = { "Theor Occ (%)", "theoretical_occupancy_pct", COL_F3, COL_EVERYWHERE },
	[OCC_LIMITER] = { "Limiter", "limiter", COL_STR, COL_EVERYWHERE },
	[OCC_COV_MIN] = { "SM Cov Min (%)", "sm_coverage_min_pct", COL_F3, COL_EVERYWHERE },
	[OCC_COV_MAX] = { "SM Cov Max (%)", "sm_coverage_max_pct", COL_F3, COL_EVERYWHERE },
	[OCC_EST_SM_ACT] = { "Est SM Act (%)", "est_sm_activity_pct", COL_F3, COL_EVERYWHERE },
	[OCC_EST_OCC] = { "Est Occ (%)", "est_occupancy_pct", COL_F3, COL_EVERYWHERE },
	[OCC_NAME] = { "Name", "name", COL_STR, COL_EVERYWHERE },
	[OCC_MANGLED] = { "Mangled Name", "mangled", COL_STR, COL_MACHINE_ONLY },
};

static const char occ_note[] =
	" Theor Occ = resident warps per SM / max warps per SM by the CUDA occupancy rules\n"
	"   (threads, blocks, registers, shared memory per SM; the limiter named), for a grid\n"
	"   large enough to fill the SMs.  SM Cov = min(1, blocks / SM count): the share of\n"
	"   SMs the grid can occupy at all.  Est SM Act = SM Cov weighted by kernel time;\n"
	"   Est Occ = SM Cov x the occupancy the grid reaches on an occupied SM, weighted by\n"
	"   kernel time.  Estimates from the launch shape, not measured ('-': a device\n"
	"   property is missing in the trace).\n";

/* One row per name and launch shape, in kshapes_finish's order. */
static void occ_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct report *rep = &tables[0];
	report_define(rep, "CUDA Kernel Occupancy (theoretical, from launch shape and device limits)",
		      occ_cols, OCC_NCOLS);
	rep->note = occ_note;
	const struct kshapes *ks = &ctx->shapes;
	uint64_t sum = 0;
	for (size_t i = 0; i < ks->n; i++) sum += ks->v[i].total;
	for (size_t i = 0; i < ks->n; i++) {
		const struct kshape *g = &ks->v[i];
		struct cell *c = report_row(rep);
		cell_num(&c[OCC_TIME_PCT], sum ? 100.0 * (double)g->total / (double)sum : 0);
		cell_num(&c[OCC_TOTAL], (double)g->total);
		cell_num(&c[OCC_INSTANCES], (double)g->n);
		cell_num(&c[OCC_PID], g->pid);
		cell_num(&c[OCC_DEVICE], g->dev);
		cell_num(&c[OCC_BLOCKS_MIN], (double)g->bmin);
		cell_num(&c[OCC_BLOCKS_MAX], (double)g->bmax);
		cell_num(&c[OCC_THREADS], g->threads);
		cell_num(&c[OCC_REGS], g->regs);
		cell_num(&c[OCC_SMEM], g->smem);
		if (g->o.known) {
			cell_num(&c[OCC_THEORETICAL], 100.0 * g->o.theoretical);
			cell_str(&c[OCC_LIMITER], occ_limiter_name(g->o.limiter));
		}
		if (g->cov_known) {
			cell_num(&c[OCC_COV_MIN], 100.0 * occ_coverage(g->d, g->bmin));
			cell_num(&c[OCC_COV_MAX], 100.0 * occ_coverage(g->d, g->bmax));
			if (g->total) cell_num(&c[OCC_EST_SM_ACT], 100.0 * g->wcov / (double)g->total);
		}
		if (g->occ_known && g->total) cell_num(&c[OCC_EST_OCC], 100.0 * g->wocc / (double)g->total);
		cell_str(&c[OCC_NAME], kernel_name_form(&ctx->kn, g->name_id, ctx->names));
		cell_str(&c[OCC_MANGLED], kernel_name_form(&ctx->kn, g->name_id, NAME_MANGLED));
	}
}

static const struct stats_table occ_tables[] = {
	{ "occupancy",
	  "kernels by name and launch shape (threads/block, registers,\n"
	  "shared memory): grid blocks, theoretical occupancy (resident warps\n"
	  "per SM / max warps per SM by the CUDA occupancy rules) and its\n"
	  "limiter, SM coverage = min(1, blocks / SMs), and time-weighted\n"
	  "estimates: Est SM Act = coverage, Est Occ = coverage x occupancy\n"
	  "the grid reaches on an occupied SM ('-': device property missing)" },
};

const struct stats_report stats_report_occupancy = {
	.tables = occ_tables, .ntables = 1,
	.needs = STATS_NEED_SHAPES,
	.fill = occ_fill,
};
