/* stats_memsize.c — `stats --report memsize`: memcpy/memset sizes by kind
 * (nsys cuda_gpu_mem_size_sum): tables in MB = 10^6 bytes, CSV and JSON in
 * bytes. */
#include <stdlib.h>

#include "reports/stats_report.h"
#include "reports/time_summary.h"

/* Each size twice: in MB for the table, in bytes for CSV and JSON. */
enum {
	MEMS_TOTAL_MB, MEMS_TOTAL, MEMS_COUNT, MEMS_AVG_MB, MEMS_AVG, MEMS_MED_MB, MEMS_MED,
	MEMS_MIN_MB, MEMS_MIN, MEMS_MAX_MB, MEMS_MAX, MEMS_STDDEV_MB, MEMS_STDDEV, MEMS_PID, MEMS_RANK, MEMS_DEVICE, MEMS_SRC,
	MEMS_DST, MEMS_OPERATION,
	MEMS_NCOLS
};
static const struct col mems_cols[MEMS_NCOLS] = {
	[MEMS_TOTAL_MB] = { "Total (MB)", "total_mb", COL_F3, COL_TABLE_ONLY },
	[MEMS_TOTAL] = { "Total (B)", "total_bytes", COL_INT, COL_MACHINE_ONLY },
	[MEMS_COUNT] = { "Count", "count", COL_INT, COL_EVERYWHERE },
	[MEMS_AVG_MB] = { "Avg (MB)", "avg_mb", COL_F3, COL_TABLE_ONLY },
	[MEMS_AVG] = { "Avg (B)", "avg_bytes", COL_F3, COL_MACHINE_ONLY },
	[MEMS_MED_MB] = { "Med (MB)", "med_mb", COL_F3, COL_TABLE_ONLY },
	[MEMS_MED] = { "Med (B)", "med_bytes", COL_F3, COL_MACHINE_ONLY },
	[MEMS_MIN_MB] = { "Min (MB)", "min_mb", COL_F3, COL_TABLE_ONLY },
	[MEMS_MIN] = { "Min (B)", "min_bytes", COL_INT, COL_MACHINE_ONLY },
	[MEMS_MAX_MB] = { "Max (MB)", "max_mb", COL_F3, COL_TABLE_ONLY },
	[MEMS_MAX] = { "Max (B)", "max_bytes", COL_INT, COL_MACHINE_ONLY },
	[MEMS_STDDEV_MB] = { "StdDev (MB)", "stddev_mb", COL_F3, COL_TABLE_ONLY },
	[MEMS_STDDEV] = { "StdDev (B)", "stddev_bytes", COL_F3, COL_MACHINE_ONLY },
	[MEMS_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [MEMS_RANK] = { "Rank", "rank", COL_ID, COL_EVERYWHERE },
	[MEMS_DEVICE] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[MEMS_SRC] = { "Src Mem", "src_kind", COL_STR, COL_EVERYWHERE },
	[MEMS_DST] = { "Dst Mem", "dst_kind", COL_STR, COL_EVERYWHERE },
	[MEMS_OPERATION] = { "Operation", "operation", COL_STR, COL_EVERYWHERE },
};

static void mems_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct summary_state *s = self;
	uint64_t dur, bytes;
	size_t g = memop_group(s, r->pid, r->rec, &dur, &bytes);
	summary_add(&s->groups, g, bytes);
}

/* A size in bytes and in MB. */
static void size_cells(struct cell *c, int mb_col, double bytes)
{
	cell_num(&c[mb_col], bytes / 1e6);
	cell_num(&c[mb_col + 1], bytes);
}

static void mems_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct summary_state *s = self;
	struct report *rep = &tables[0];
	report_define(rep, "CUDA GPU MemOps Summary (by Size)", mems_cols, MEMS_NCOLS);
	summary_settle(&s->groups);
	rep->note = time_summary_note(&s->groups);
	size_t *ix = summary_state_order(s, ctx);
	for (size_t k = 0; k < s->groups.n; k++) {
		struct sgroup *g = &s->groups.g[ix[k]];
		struct cell *c = report_row(rep);
		size_cells(c, MEMS_TOTAL_MB, (double)g->total);
		cell_num(&c[MEMS_COUNT], (double)g->n);
		size_cells(c, MEMS_AVG_MB, (double)g->total / (double)g->n);
		size_cells(c, MEMS_MED_MB, sgroup_median(g));
		size_cells(c, MEMS_MIN_MB, (double)g->min);
		size_cells(c, MEMS_MAX_MB, (double)g->max);
		size_cells(c, MEMS_STDDEV_MB, sgroup_stddev(g));
		struct memop_parts p;
		memop_group_parts(s, ix[k], &p);
		int rank = stats_ctx_rank(ctx, s->meta[ix[k]].pid);
		cell_num(&c[MEMS_PID], s->meta[ix[k]].pid);
		if (rank >= 0) cell_num(&c[MEMS_RANK], rank);
		cell_num(&c[MEMS_DEVICE], s->meta[ix[k]].dev);
		if (p.src) cell_str(&c[MEMS_SRC], p.src);
		cell_str(&c[MEMS_DST], p.dst);
		cell_str(&c[MEMS_OPERATION], p.op);
	}
	free(ix);
	report_hide_uniform(rep, MEMS_PID);
	report_hide_uniform(rep, MEMS_RANK);
	report_hide_uniform(rep, MEMS_DEVICE);
}

static const struct stats_table mems_tables[] = {
	{ "memsize", "memcpy/memset sizes by operation and memory kinds, MB = 10^6\n"
		     "bytes; CSV/JSON in bytes (cuda_gpu_mem_size_sum)" },
};

const struct stats_report stats_report_memsize = {
	.tables = mems_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MEMCPY) | STATS_TYPE(GP_REC_MEMSET),
	.new = summary_state_new, .add = mems_add, .merge = summary_state_merge_report, .fill = mems_fill, .free = summary_state_free,
};
