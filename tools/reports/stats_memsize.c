/* stats_memsize.c — `stats --report memsize`: memcpy/memset sizes by kind,
 * MB = 10^6 bytes (nsys cuda_gpu_mem_size_sum). */
#include <stdlib.h>

#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum {
	MEMS_TOTAL, MEMS_COUNT, MEMS_AVG, MEMS_MED, MEMS_MIN, MEMS_MAX, MEMS_STDDEV, MEMS_OPERATION,
	MEMS_NCOLS
};
static const struct col mems_cols[MEMS_NCOLS] = {
	[MEMS_TOTAL] = { "Total (MB)", "total_mb", COL_F3 }, [MEMS_COUNT] = { "Count", "count", COL_INT },
	[MEMS_AVG] = { "Avg (MB)", "avg_mb", COL_F3 }, [MEMS_MED] = { "Med (MB)", "med_mb", COL_F3 },
	[MEMS_MIN] = { "Min (MB)", "min_mb", COL_F3 }, [MEMS_MAX] = { "Max (MB)", "max_mb", COL_F3 },
	[MEMS_STDDEV] = { "StdDev (MB)", "stddev_mb", COL_F3 },
	[MEMS_OPERATION] = { "Operation", "operation", COL_STR },
};

static void mems_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	memop_summary_add(self, r->rec, MEMOP_BYTES);
}

static void mems_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct summary *t = &((struct summary_state *)self)->groups;
	struct report *rep = &tables[0];
	report_define(rep, "CUDA GPU MemOps Summary (by Size)", mems_cols, MEMS_NCOLS);
	rep->note = time_summary_note(t);
	size_t *ix = summary_by_total(t);
	for (size_t k = 0; k < t->n; k++) {
		struct sgroup *g = &t->g[ix[k]];
		struct cell *c = report_row(rep);
		cell_num(&c[MEMS_TOTAL], (double)g->total / 1e6);
		cell_num(&c[MEMS_COUNT], (double)g->n);
		cell_num(&c[MEMS_AVG], (double)g->total / (double)g->n / 1e6);
		cell_num(&c[MEMS_MED], sgroup_median(g) / 1e6);
		cell_num(&c[MEMS_MIN], (double)g->min / 1e6);
		cell_num(&c[MEMS_MAX], (double)g->max / 1e6);
		cell_num(&c[MEMS_STDDEV], sgroup_stddev(g) / 1e6);
		cell_str(&c[MEMS_OPERATION], g->name);
	}
	free(ix);
}

static const struct stats_table mems_tables[] = {
	{ "memsize", "memcpy/memset sizes by kind, MB = 10^6 bytes (cuda_gpu_mem_size_sum)" },
};

const struct stats_report stats_report_memsize = {
	.tables = mems_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MEMCPY) | STATS_TYPE(GP_REC_MEMSET),
	.new = summary_state_new, .add = mems_add, .fill = mems_fill, .free = summary_state_free,
};
