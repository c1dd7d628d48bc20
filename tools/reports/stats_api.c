/* stats_api.c — `stats --report api`: CUDA runtime and driver API calls by
 * name (nsys cuda_api_sum). */
#include <stdio.h>
#include <stdlib.h>

#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { API_NAME = TS_NCOLS, API_NCOLS };
static const struct col api_cols[API_NCOLS] = {
	TIME_SUMMARY_COLS("Num Calls", "num_calls"),
	[API_NAME] = { "Name", "name", COL_STR },
};

struct api_report {
	gp_reader *r;
	struct summary calls;
	u64map name2g;   /* string id -> group */
};

static void *api_new(const struct stats_ctx *ctx)
{
	struct api_report *a = xcalloc(1, sizeof(*a));
	a->r = ctx->r;
	return a;
}

static void api_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct api_report *ar = self;
	const gp_rec_api *a = &r->rec->u.api;
	const char *name = tool_str(ar->r, a->name_id);
	char unk[32];
	if (!*name) { snprintf(unk, sizeof(unk), "cbid_%u", a->cbid); name = unk; }
	size_t g;
	uint64_t *s = a->name_id ? u64map_get(&ar->name2g, a->name_id, MAP_FIND) : NULL;
	if (s) {
		g = *s;
	} else {
		g = summary_group(&ar->calls, name);
		if (a->name_id) *u64map_get(&ar->name2g, a->name_id, MAP_INSERT) = g;
	}
	sgroup_add(&ar->calls.g[g], a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0);
}

static void api_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct api_report *ar = self;
	report_define(&tables[0], "CUDA API Summary", api_cols, API_NCOLS);
	time_summary_fill(&tables[0], &ar->calls, API_NAME);
}

static void api_free(void *self)
{
	struct api_report *ar = self;
	summary_free(&ar->calls);
	u64map_free(&ar->name2g);
	free(ar);
}

static const struct stats_table api_tables[] = {
	{ "api", "CUDA runtime+driver API calls by name (cuda_api_sum)" },
};

const struct stats_report stats_report_api = {
	.tables = api_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_API),
	.new = api_new, .add = api_add, .fill = api_fill, .free = api_free,
};
