/* stats_api.c — `stats --report api`: CUDA runtime and driver API calls by
 * name (nsys cuda_api_sum). */
#include <stdio.h>

#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { API_NAME = TS_NCOLS, API_NCOLS };
static const struct col api_cols[API_NCOLS] = {
	TIME_SUMMARY_COLS("Num Calls", "num_calls", NULL),
	[API_NAME] = { "Name", "name", COL_STR, COL_EVERYWHERE },
};

static char *api_name(gp_reader *r, uint32_t id)
{
	return xstrdup(tool_str(r, id));
}

static void api_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct summary_state *s = self;
	const gp_rec_api *a = &r->rec->u.api;
	const char *name = tool_str(s->r, a->name_id);
	size_t g;
	if (*name) {
		g = summary_state_group(s, r->pid, 0, a->name_id, api_name);
	} else { /* no name recorded: by callback id */
		char unk[32];
		snprintf(unk, sizeof(unk), "cbid_%u", a->cbid);
		g = summary_state_named(s, r->pid, unk);
	}
	summary_add(&s->groups, g, a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0);
}

static void api_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct summary_state *s = self;
	report_define(&tables[0], "CUDA API Summary", api_cols, API_NCOLS);
	time_summary_fill(&tables[0], s, ctx, API_NAME, NULL, NULL);
}

static const struct stats_table api_tables[] = {
	{ "api", "CUDA runtime+driver API calls by name (cuda_api_sum)" },
};

const struct stats_report stats_report_api = {
	.tables = api_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_API),
	.new = summary_state_new, .add = api_add, .merge = summary_state_merge_report, .fill = api_fill, .free = summary_state_free,
};
