/* stats_nvtx.c — `stats --report nvtx`: NVTX ranges by name, with the GPU
 * time of the kernels launched inside each push/pop range (nsys nvtx_sum).
 *
 * The GPU time of a range is that of the kernels attributed to it by
 * analysis/range_attr.h, rule RANGE_RULE_THREAD: launched on the range's own
 * thread while it was open.  Memory: a duration per range (exact medians),
 * and what range_attr holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/range_attr.h"
#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { NVTX_GPU_NS = TS_NCOLS, NVTX_STYLE, NVTX_RANGE, NVTX_NCOLS };
static const struct col nvtx_cols[NVTX_NCOLS] = {
	TIME_SUMMARY_COLS("Instances", "instances", NULL),
	[NVTX_GPU_NS] = { "GPU Kernel Time (ns)", "gpu_kernel_ns", COL_INT, COL_EVERYWHERE },
	[NVTX_STYLE] = { "Style", "style", COL_STR, COL_EVERYWHERE },
	[NVTX_RANGE] = { "Range", "range", COL_STR, COL_EVERYWHERE },
};

/* Range kinds seen under one name (bits). */
enum { STYLE_PUSHPOP = 1, STYLE_STARTEND = 2 };

struct nvtx_report {
	gp_reader *r;
	struct summary_state ranges;              /* by process and domain:message */
	uint64_t *gpu_ns; int *style; size_t cx;  /* per group */
	struct range_attr *attr;
};

static void add_gpu_ns(void *arg, uint32_t group, uint64_t ref, uint64_t ns)
{
	struct nvtx_report *st = arg;
	st->gpu_ns[group] += ns;
}

static void on_range(struct nvtx_report *st, const gp_rec_nvtx_range *n, uint32_t pid, uint32_t tid)
{
	const char *dom = tool_str(st->r, n->domain_id), *msg = tool_str(st->r, n->message_id);
	char *name = xmalloc(strlen(dom) + strlen(msg) + 2);
	if (*dom) sprintf(name, "%s:%s", dom, msg);
	else strcpy(name, msg);
	size_t g = summary_state_named(&st->ranges, pid, 0, name);
	free(name);
	if (g >= st->cx) {
		size_t old = st->cx;
		st->cx = st->ranges.groups.cap;
		st->gpu_ns = xrealloc(st->gpu_ns, st->cx * sizeof(*st->gpu_ns));
		st->style = xrealloc(st->style, st->cx * sizeof(*st->style));
		memset(st->gpu_ns + old, 0, (st->cx - old) * sizeof(*st->gpu_ns));
		memset(st->style + old, 0, (st->cx - old) * sizeof(*st->style));
	}
	st->style[g] |= n->kind == GP_NVTX_STARTEND ? STYLE_STARTEND : STYLE_PUSHPOP;
	summary_add(&st->ranges.groups, g, n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0);
	if (n->kind == GP_NVTX_PUSHPOP)
		range_attr_range(st->attr, pid, n->tid ? n->tid : tid, n->start_ns, n->end_ns, n->depth, (uint32_t)g);
}

static void *nvtx_new(const struct stats_ctx *ctx)
{
	struct nvtx_report *st = xcalloc(1, sizeof(*st));
	st->r = ctx->r;
	summary_state_init(&st->ranges, ctx);
	st->attr = range_attr_new(RANGE_RULE_THREAD, add_gpu_ns, st);
	return st;
}

static void nvtx_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct nvtx_report *st = self;
	const gp_record *rec = r->rec;
	switch (rec->type) {
	case GP_REC_API:
		range_attr_call(st->attr, r->pid, rec->u.api.tid ? rec->u.api.tid : r->tid, &rec->u.api);
		break;
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		range_attr_kernel(st->attr, r->pid, k->correlation_id, k->start_ns,
				  k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0, 0);
		break;
	}
	case GP_REC_NVTX_RANGE:
		on_range(st, &rec->u.nvtx_range, r->pid, r->tid);
		break;
	}
}

/* A row's own cells: the GPU time of its kernels, the range style. */
static void nvtx_row(void *arg, struct cell *c, size_t g)
{
	struct nvtx_report *st = arg;
	int style = st->style[g];
	if (style & STYLE_PUSHPOP) cell_num(&c[NVTX_GPU_NS], (double)st->gpu_ns[g]);
	cell_str(&c[NVTX_STYLE], style == STYLE_PUSHPOP ? "PushPop" : style == STYLE_STARTEND ? "StartEnd" : "Mixed");
}

static void nvtx_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct nvtx_report *st = self;
	range_attr_finish(st->attr);
	struct report *rep = &tables[0];
	report_define(rep, "NVTX Range Summary", nvtx_cols, NVTX_NCOLS);
	time_summary_fill(rep, &st->ranges, ctx, NVTX_RANGE, nvtx_row, st);
}

static void nvtx_free(void *self)
{
	struct nvtx_report *st = self;
	summary_state_release(&st->ranges);
	free(st->gpu_ns); free(st->style);
	range_attr_free(st->attr);
	free(st);
}

static const struct stats_table nvtx_tables[] = {
	{ "nvtx",
	  "NVTX ranges by name, with GPU time of the kernels launched inside\n"
	  "each push/pop range (nvtx_sum)" },
};

const struct stats_report stats_report_nvtx = {
	.tables = nvtx_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_API) | STATS_TYPE(GP_REC_KERNEL) | STATS_TYPE(GP_REC_NVTX_RANGE),
	.new = nvtx_new, .add = nvtx_add, .fill = nvtx_fill, .free = nvtx_free,
};
