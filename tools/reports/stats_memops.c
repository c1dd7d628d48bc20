/* stats_memops.c — `stats --report memops`: memcpy/memset time by kind
 * (nsys cuda_gpu_mem_time_sum). */
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { MEMT_OPERATION = TS_NCOLS, MEMT_NCOLS };
static const struct col memt_cols[MEMT_NCOLS] = {
	TIME_SUMMARY_COLS("Count", "count", NULL, NULL),
	[MEMT_OPERATION] = { "Operation", "operation", COL_STR },
};

static void memt_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	memop_summary_add(self, r->rec, MEMOP_TIME);
}

static void memt_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct summary_state *s = self;
	report_define(&tables[0], "CUDA GPU MemOps Summary (by Time)", memt_cols, MEMT_NCOLS);
	time_summary_fill(&tables[0], s, MEMT_OPERATION, NULL, NULL);
}

static const struct stats_table memt_tables[] = {
	{ "memops", "memcpy/memset time by kind (cuda_gpu_mem_time_sum)" },
};

const struct stats_report stats_report_memops = {
	.tables = memt_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MEMCPY) | STATS_TYPE(GP_REC_MEMSET),
	.new = summary_state_new, .add = memt_add, .fill = memt_fill, .free = summary_state_free,
};
