/* stats_nvtx.c — `stats --report nvtx`: NVTX ranges by name, with the GPU
 * time of the kernels launched inside each range (nsys nvtx_sum, with
 * nvtx_gpu_proj_sum's GPU time); the rows and figures: docs/CLI.md's table
 * of reports.  The kernels of a range by the one rule (the context's
 * ranges and join, analysis/join/attribution.h).  Ranges count when they
 * start in the selection; their kernels whenever those ran.  Groups are
 * kept per (process, name), whatever --by; numbered names become one row
 * by step detection's split (analysis/steps/step_detect.h).  Memory: a
 * duration per range while the table holds at most 2^20 (exact medians
 * and P90), then a histogram for the names with the most
 * (analysis/core/summary.h: within 0.5 %). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps/step_detect.h"
#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { NVTX_P90 = TS_NCOLS, NVTX_GPU_NS, NVTX_STYLE, NVTX_RANGE, NVTX_NCOLS };
static const struct col nvtx_cols[NVTX_NCOLS] = {
	TIME_SUMMARY_COLS("Instances", "instances", NULL),
	[NVTX_P90] = { "P90 (ns)", "p90_ns", COL_F1, COL_EVERYWHERE },
	[NVTX_GPU_NS] = { "GPU Kernel Time (ns)", "gpu_kernel_ns", COL_INT, COL_EVERYWHERE },
	[NVTX_STYLE] = { "Style", "style", COL_STR, COL_EVERYWHERE },
	[NVTX_RANGE] = { "Range", "range", COL_STR, COL_EVERYWHERE },
};

/* Range kinds seen under one name (bits). */
enum { STYLE_PUSHPOP = 1, STYLE_STARTEND = 2 };

/* Groups by (process, name); a group's meta: the GPU time of its kernels
 * (sum), its range styles (bits). */
struct nvtx_report {
	struct summary_state ranges;
	u64map name2g;                            /* pid << 32 | attribution name id -> group + 1 */
	u64map pids;                              /* processes with a selected range */
	uint32_t *ids; size_t cids;               /* attribution_op's buffer */
};

static void *nvtx_new(const struct stats_ctx *ctx)
{
	struct nvtx_report *st = xcalloc(1, sizeof(*st));
	summary_state_init(&st->ranges, ctx);
	u64map_init(&st->name2g);
	u64map_init(&st->pids);
	return st;
}

static void nvtx_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct nvtx_report *st = self;
	const gp_rec_nvtx_range *n = &r->rec->u.nvtx_range;
	char *name = tool_range_name(st->ranges.r, n);
	size_t g = summary_state_named(&st->ranges, r->pid, name);
	free(name);
	*u64map_get(&st->pids, r->pid, MAP_INSERT) = 1;
	st->ranges.meta[g].bits |= n->kind == GP_NVTX_STARTEND ? STYLE_STARTEND : STYLE_PUSHPOP;
	summary_add(&st->ranges.groups, g, n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0);
}

/* A kernel: to the name of every selected range it belongs to, once. */
static void nvtx_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	struct nvtx_report *st = self;
	if (op->kind != OP_KERNEL) return;
	size_t n = attribution_op(ctx->pipe.attr, op, &st->ids, &st->cids);
	size_t seen[16], nseen = 0;
	for (size_t i = 0; i < n; i++) {
		const struct attr_range x = attribution_range(ctx->pipe.attr, st->ids[i]);
		if (!stats_selected(ctx, x.s)) continue;
		uint64_t *slot = u64map_get(&st->name2g, ((uint64_t)x.pid << 32) | x.name, MAP_INSERT);
		if (!*slot) *slot = summary_state_named(&st->ranges, x.pid, attribution_name(ctx->pipe.attr, x.name)) + 1;
		size_t g = *slot - 1, k;
		for (k = 0; k < nseen && seen[k] != g; k++) ;
		if (k < nseen) continue;
		if (nseen < sizeof(seen) / sizeof(seen[0])) seen[nseen++] = g;
		st->ranges.meta[g].sum += op->e - op->s;
	}
}

/* Shards: the groups of the next slice into self's (name2g keeps self's
 * groups: a cache the next op fills for src's names). */
static int nvtx_merge(void *self, void *from, const struct stats_ctx *ctx)
{
	struct nvtx_report *st = self, *src = from;
	summary_state_merge(&st->ranges, &src->ranges);
	for (size_t i = 0; i < src->pids.cap; i++)
		if (src->pids.used[i]) *u64map_get(&st->pids, src->pids.slot[i].key, MAP_INSERT) = 1;
	return 0;
}

/* The rows: the groups by (process when split, name), numbered names
 * merged by pattern when two or more share it (unless --nvtx-instances),
 * into out (process 0 when not split over several) with each row's GPU time and styles. */
static void rows_by_pattern(struct nvtx_report *st, int split, int instances, struct summary_state *out)
{
	struct summary *t = &st->ranges.groups;
	summary_settle(t);   /* the rows merge the groups as the rule leaves them */
	int one_pid = st->pids.n == 1;   /* not split: the PID column still says which */
	char **pat = xcalloc(t->n ? t->n : 1, sizeof(*pat));
	strmap npat;   /* "pid\x01pattern" -> number of names with it */
	strmap_init(&npat);
	for (size_t i = 0; i < t->n && !instances; i++) {
		if (!t->g[i].n) continue;
		char *p = step_name_pattern(summary_state_name(&st->ranges, i));
		if (!p) continue;
		pat[i] = xmalloc(strlen(p) + 16);
		sprintf(pat[i], "%u\x01%s", split ? st->ranges.meta[i].pid : 0, p);
		free(p);
		int is_new;
		++*strmap_get(&npat, pat[i], &is_new);
	}
	for (size_t i = 0; i < t->n; i++) {
		struct sgroup *g = &t->g[i];
		if (!g->n) continue;   /* a name only of ranges outside the selection */
		int is_new;
		const char *name = summary_state_name(&st->ranges, i);
		if (pat[i] && *strmap_get(&npat, pat[i], &is_new) > 1) name = strchr(pat[i], '\x01') + 1;
		size_t o = summary_state_named(out, split || one_pid ? st->ranges.meta[i].pid : 0, name);
		summary_merge(&out->groups, o, g);
		out->meta[o].sum += st->ranges.meta[i].sum;
		out->meta[o].bits |= st->ranges.meta[i].bits;
	}
	for (size_t i = 0; i < t->n; i++) free(pat[i]);
	free(pat);
	strmap_free(&npat);
}

/* A row's own cells: P90, the GPU time of its kernels, the range style. */
static void nvtx_row(void *arg, struct cell *c, size_t g)
{
	struct summary_state *rows = arg;
	uint32_t sty = rows->meta[g].bits;
	cell_num(&c[NVTX_P90], sgroup_quantile(&rows->groups.g[g], 0.9));
	cell_num(&c[NVTX_GPU_NS], (double)rows->meta[g].sum);
	cell_str(&c[NVTX_STYLE], sty == STYLE_PUSHPOP ? "PushPop" : sty == STYLE_STARTEND ? "StartEnd" : "Mixed");
}

#define NVTX_NOTE                                                                                       \
	" Numbered names (step 0, step 1, ...) are one row, \"step *\" (--nvtx-instances: a row each).\n"   \
	" P90: linear between the two nearest ranks.  GPU Kernel Time: kernels whose launch call started\n" \
	"   while the range was open (docs/STEPS.md \"Attribution\"; --attribution).\n"
static const char nvtx_note[] = NVTX_NOTE;
/* the same with a line as time_summary_note's, when some medians are estimated */
static const char nvtx_note_approx[] =
	NVTX_NOTE " Med, P90: for the names with the most values, estimated from a log-bucketed histogram\n"
		  "   (more than 2^20 values in the table): within 0.5 % of the exact ones.\n";

static void nvtx_fill(void *self, struct stats_ctx *ctx, struct report *rep)
{
	struct nvtx_report *st = self;
	int by = ctx->opts->by_process;
	int split = by == STATS_BY_PROCESS || (by == STATS_BY_AUTO && st->pids.n > 1);
	report_define(rep, split ? "NVTX Range Summary, per process" : "NVTX Range Summary", nvtx_cols, NVTX_NCOLS);
	struct summary_state rows;
	summary_state_init(&rows, ctx);
	rows_by_pattern(st, split, ctx->opts->nvtx_instances, &rows);
	time_summary_fill(rep, &rows, ctx, NVTX_RANGE, nvtx_row, &rows);
	rep->note = rows.groups.approx ? nvtx_note_approx : nvtx_note;
	summary_state_release(&rows);
}

static void nvtx_free(void *self)
{
	struct nvtx_report *st = self;
	summary_state_release(&st->ranges);
	free(st->ids);
	u64map_free(&st->name2g);
	u64map_free(&st->pids);
	free(st);
}

static const struct stats_table nvtx_tables[] = {
	{ "nvtx",
	  "NVTX ranges by name, with P90 and the GPU time of the kernels\n"
	  "launched while each range was open, from any thread (nvtx_sum;\n"
	  "see --attribution); numbered names (step 0, step 1, ...) one row\n"
	  "'step *' (see --nvtx-instances); per process (PID, Rank) when the\n"
	  "trace has ranges of several (see --by)" },
};

const struct stats_report stats_report_nvtx = {
	.tables = nvtx_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_NVTX_RANGE),
	.needs = STATS_NEED_RANGES | STATS_NEED_OPS,
	.new = nvtx_new, .add = nvtx_add, .op = nvtx_op, .merge = nvtx_merge, .fill = nvtx_fill, .free = nvtx_free,
};
