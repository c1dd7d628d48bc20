/* stats_kernels.c — `stats --report kernels`: GPU kernels by demangled name
 * (nsys cuda_gpu_kern_sum). */
#include <stdlib.h>

#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { KERN_NAME = TS_NCOLS, KERN_NCOLS };
static const struct col kern_cols[KERN_NCOLS] = {
	TIME_SUMMARY_COLS("Instances", "instances"),
	[KERN_NAME] = { "Name", "name", COL_STR },
};

struct kern_report {
	gp_reader *r;
	struct summary kernels;
	u64map name2g;   /* string id -> group */
};

static void *kern_new(const struct stats_ctx *ctx)
{
	struct kern_report *kr = xcalloc(1, sizeof(*kr));
	kr->r = ctx->r;
	return kr;
}

static void kern_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct kern_report *kr = self;
	const gp_rec_kernel *k = &r->rec->u.kernel;
	uint64_t *s = u64map_get(&kr->name2g, k->name_id, MAP_FIND);
	size_t g;
	if (s) {
		g = *s;
	} else {
		char *d = demangle(tool_str(kr->r, k->name_id));
		g = summary_group(&kr->kernels, d);
		free(d);
		*u64map_get(&kr->name2g, k->name_id, MAP_INSERT) = g;
	}
	sgroup_add(&kr->kernels.g[g], k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0);
}

static void kern_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct kern_report *kr = self;
	report_define(&tables[0], "CUDA GPU Kernel Summary", kern_cols, KERN_NCOLS);
	time_summary_fill(&tables[0], &kr->kernels, KERN_NAME);
}

static void kern_free(void *self)
{
	struct kern_report *kr = self;
	summary_free(&kr->kernels);
	u64map_free(&kr->name2g);
	free(kr);
}

static const struct stats_table kern_tables[] = {
	{ "kernels", "GPU kernels by demangled name (cuda_gpu_kern_sum)" },
};

const struct stats_report stats_report_kernels = {
	.tables = kern_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_KERNEL),
	.new = kern_new, .add = kern_add, .fill = kern_fill, .free = kern_free,
};
