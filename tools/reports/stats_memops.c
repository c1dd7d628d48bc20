/* stats_memops.c — `stats --report memops`: memcpy/memset time by kind
 * (nsys cuda_gpu_mem_time_sum). */
#include <stdlib.h>

#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { MEMT_OPERATION = TS_NCOLS, MEMT_NCOLS };
static const struct col memt_cols[MEMT_NCOLS] = {
	TIME_SUMMARY_COLS("Count", "count"),
	[MEMT_OPERATION] = { "Operation", "operation", COL_STR },
};

static void *memt_new(const struct stats_ctx *ctx)
{
	return xcalloc(1, sizeof(struct summary));
}

static void memt_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct summary *ops = self;
	char buf[64];
	uint64_t dur, bytes;
	size_t g = summary_group(ops, memop_group(r->rec, buf, sizeof(buf), &dur, &bytes));
	sgroup_add(&ops->g[g], dur);
}

static void memt_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	report_define(&tables[0], "CUDA GPU MemOps Summary (by Time)", memt_cols, MEMT_NCOLS);
	time_summary_fill(&tables[0], self, MEMT_OPERATION);
}

static void memt_free(void *self)
{
	summary_free(self);
	free(self);
}

static const struct stats_table memt_tables[] = {
	{ "memops", "memcpy/memset time by kind (cuda_gpu_mem_time_sum)" },
};

const struct stats_report stats_report_memops = {
	.tables = memt_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MEMCPY) | STATS_TYPE(GP_REC_MEMSET),
	.new = memt_new, .add = memt_add, .fill = memt_fill, .free = memt_free,
};
