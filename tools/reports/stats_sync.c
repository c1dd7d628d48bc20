/* stats_sync.c — `stats --report sync`: the time the host spent in CUDA
 * synchronisation (GP_REC_SYNC records, `gpuprof run
 * --activity=default,sync`), by process and kind of synchronisation. */
#include "common/util.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { SYNC_TYPE = TS_NCOLS, SYNC_NCOLS };
static const struct col sync_cols[SYNC_NCOLS] = {
	TIME_SUMMARY_COLS("Count", "count", NULL),
	[SYNC_TYPE] = { "Type", "sync_type", COL_STR, COL_EVERYWHERE },
};

static void sync_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	const gp_rec_sync *s = &r->rec->u.sync;
	size_t g = summary_state_named(self, r->pid, sync_type_name(s->type));
	summary_add(&((struct summary_state *)self)->groups, g, s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0);
}

static int sync_in_default(void *self, const struct stats_ctx *ctx)
{
	return ((struct summary_state *)self)->groups.n > 0;
}

static void sync_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	report_define(&tables[0], "CUDA Synchronization Summary", sync_cols, SYNC_NCOLS);
	time_summary_fill(&tables[0], self, ctx, SYNC_TYPE, NULL, NULL);
}

static const struct stats_table sync_tables[] = {
	{ "sync",
	  "time in CUDA synchronisation (stream, event, context) by kind: a\n"
	  "trace recorded with --activity=default,sync; in the default set only\n"
	  "then" },
};

const struct stats_report stats_report_sync = {
	.tables = sync_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_SYNC),
	.new = summary_state_new, .add = sync_add, .merge = summary_state_merge_report, .in_default = sync_in_default, .fill = sync_fill,
	.free = summary_state_free,
};
