/* stats_kernels.c — `stats --report kernels`: GPU kernels by process,
 * device and demangled name (nsys cuda_gpu_kern_sum); the Name column in the
 * form --names asks for, CSV and JSON also the mangled name. */
#include <stdlib.h>

#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { KERN_NAME = TS_NCOLS, KERN_MANGLED, KERN_NCOLS };
static const struct col kern_cols[KERN_NCOLS] = {
	TIME_SUMMARY_COLS("Instances", "instances", "Device"),
	[KERN_NAME] = { "Name", "name", COL_STR, COL_EVERYWHERE },
	[KERN_MANGLED] = { "Mangled Name", "mangled", COL_STR, COL_MACHINE_ONLY },
};

static char *kern_name(gp_reader *r, uint32_t id)
{
	return name_full(tool_str(r, id));
}

static void kern_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct summary_state *s = self;
	const gp_rec_kernel *k = &r->rec->u.kernel;
	size_t g = summary_state_group(s, r->pid, k->device_id, k->name_id, kern_name);
	summary_add(&s->groups, g, k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0);
}

struct kern_fill_arg { struct summary_state *s; struct stats_ctx *ctx; };

/* The name in the form asked for, and the mangled name. */
static void kern_names(void *arg, struct cell *c, size_t g)
{
	struct kern_fill_arg *a = arg;
	uint32_t id = a->s->meta[g].id;
	free(c[KERN_NAME].s);
	cell_str(&c[KERN_NAME], kernel_name_form(&a->ctx->kn, id, a->ctx->names));
	cell_str(&c[KERN_MANGLED], tool_str(a->s->r, id));
}

static void kern_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct kern_fill_arg a = { self, ctx };
	report_define(&tables[0], "CUDA GPU Kernel Summary", kern_cols, KERN_NCOLS);
	time_summary_fill(&tables[0], a.s, ctx, KERN_NAME, kern_names, &a);
}

static const struct stats_table kern_tables[] = {
	{ "kernels", "GPU kernels by demangled name (cuda_gpu_kern_sum)" },
};

const struct stats_report stats_report_kernels = {
	.tables = kern_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_KERNEL),
	.new = summary_state_new, .add = kern_add, .merge = summary_state_merge_report, .fill = kern_fill, .free = summary_state_free,
};
