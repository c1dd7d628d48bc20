/* stats_kernels.c — `stats --report kernels`: GPU kernels by demangled name
 * (nsys cuda_gpu_kern_sum). */
#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { KERN_NAME = TS_NCOLS, KERN_NCOLS };
static const struct col kern_cols[KERN_NCOLS] = {
	TIME_SUMMARY_COLS("Instances", "instances"),
	[KERN_NAME] = { "Name", "name", COL_STR },
};

static char *kern_name(gp_reader *r, uint32_t id)
{
	return demangle(tool_str(r, id));
}

static void kern_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct summary_state *s = self;
	const gp_rec_kernel *k = &r->rec->u.kernel;
	size_t g = summary_state_group(s, k->name_id, kern_name);
	summary_add(&s->groups, g, k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0);
}

static void kern_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct summary_state *s = self;
	report_define(&tables[0], "CUDA GPU Kernel Summary", kern_cols, KERN_NCOLS);
	time_summary_fill(&tables[0], &s->groups, KERN_NAME);
}

static const struct stats_table kern_tables[] = {
	{ "kernels", "GPU kernels by demangled name (cuda_gpu_kern_sum)" },
};

const struct stats_report stats_report_kernels = {
	.tables = kern_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_KERNEL),
	.new = summary_state_new, .add = kern_add, .fill = kern_fill, .free = summary_state_free,
};
