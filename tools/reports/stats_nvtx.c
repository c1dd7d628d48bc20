/* stats_nvtx.c — `stats --report nvtx`: NVTX ranges by name, with the GPU
 * time of the kernels launched inside each range (nsys nvtx_sum, with
 * nvtx_gpu_proj_sum's GPU time).
 *
 * The GPU time of a range is that of the kernels attributed to it by the
 * one rule (analysis/attribution.h; the context's ranges and join): its
 * launch call started while the range was open, from any thread of the
 * process (or, --attribution same-thread, from the thread that began it).
 * A kernel inside several ranges of one name (nesting) counts once for the
 * name.  Ranges count when they start in the selection; their kernels
 * whenever those ran.
 *
 * Numbered names are one row: "step 0", "step 1", ... are "step *" (the
 * trailing number as step detection splits it, analysis/step_detect.h),
 * when at least two names share the pattern; --nvtx-instances gives each
 * name its own row.  Rows are per process (columns PID and Rank) when the
 * trace has ranges of more than one process, or with --by process; --by
 * none merges them.  Groups are kept per (process, name) either way.
 * Memory: a duration per range (exact medians, P90). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/step_detect.h"
#include "analysis/step_summary.h"
#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { NVTX_P90 = TS_NCOLS, NVTX_GPU_NS, NVTX_STYLE, NVTX_RANGE, NVTX_NCOLS };
static const struct col nvtx_cols[NVTX_NCOLS] = {
	TIME_SUMMARY_COLS("Instances", "instances"),
	[NVTX_P90] = { "P90 (ns)", "p90_ns", COL_F1 },
	[NVTX_GPU_NS] = { "GPU Kernel Time (ns)", "gpu_kernel_ns", COL_INT },
	[NVTX_STYLE] = { "Style", "style", COL_STR },
	[NVTX_RANGE] = { "Range", "range", COL_STR },
};
/* split by process: PID and Rank first, then nvtx_cols */
enum { NVTX_BY_PROC = 2 };
static struct col nvtx_cols_proc[NVTX_BY_PROC + NVTX_NCOLS] = {
	{ "PID", "pid", COL_ID }, { "Rank", "rank", COL_ID },
};

/* Range kinds seen under one name (bits). */
enum { STYLE_PUSHPOP = 1, STYLE_STARTEND = 2 };

/* Groups are keyed "PID\x01NAME"; the name starts after the separator. */
struct nvtx_report {
	gp_reader *r;
	struct summary ranges;
	uint32_t *pid; uint64_t *gpu_ns; int *style; size_t cx;  /* per group */
	u64map name2g;                            /* pid << 32 | attribution name id -> group + 1 */
	u64map pid2rank;                          /* rank + 2 (GP_REC_PROCESS) */
	u64map pids;                              /* processes with a selected range */
	uint32_t *ids; size_t cids;               /* attribution_op's buffer */
};

static const char *group_name(const struct sgroup *g)
{
	return strchr(g->name, '\x01') + 1;
}

static size_t group_of(struct nvtx_report *st, uint32_t pid, const char *name)
{
	char *key = xmalloc(strlen(name) + 16);
	sprintf(key, "%u\x01%s", pid, name);
	size_t g = summary_group(&st->ranges, key);
	free(key);
	if (g >= st->cx) {
		size_t old = st->cx;
		st->cx = st->ranges.cap;
		st->pid = xrealloc(st->pid, st->cx * sizeof(*st->pid));
		st->gpu_ns = xrealloc(st->gpu_ns, st->cx * sizeof(*st->gpu_ns));
		st->style = xrealloc(st->style, st->cx * sizeof(*st->style));
		memset(st->gpu_ns + old, 0, (st->cx - old) * sizeof(*st->gpu_ns));
		memset(st->style + old, 0, (st->cx - old) * sizeof(*st->style));
	}
	st->pid[g] = pid;
	return g;
}

static void *nvtx_new(const struct stats_ctx *ctx)
{
	struct nvtx_report *st = xcalloc(1, sizeof(*st));
	st->r = ctx->r;
	u64map_init(&st->name2g);
	u64map_init(&st->pid2rank);
	u64map_init(&st->pids);
	return st;
}

static void nvtx_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct nvtx_report *st = self;
	if (r->rec->type == GP_REC_PROCESS) {
		int32_t rank = r->rec->u.process.rank;
		*u64map_get(&st->pid2rank, r->pid, MAP_INSERT) = rank >= 0 ? (uint64_t)rank + 2 : 1;
		return;
	}
	const gp_rec_nvtx_range *n = &r->rec->u.nvtx_range;
	char *name = tool_range_name(st->r, n);
	size_t g = group_of(st, r->pid, name);
	free(name);
	*u64map_get(&st->pids, r->pid, MAP_INSERT) = 1;
	st->style[g] |= n->kind == GP_NVTX_STARTEND ? STYLE_STARTEND : STYLE_PUSHPOP;
	sgroup_add(&st->ranges.g[g], n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0);
}

/* A kernel: to the name of every selected range it belongs to, once. */
static void nvtx_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	struct nvtx_report *st = self;
	if (op->kind != OP_KERNEL) return;
	size_t n = attribution_op(ctx->attr, op, &st->ids, &st->cids);
	size_t seen[16], nseen = 0;
	for (size_t i = 0; i < n; i++) {
		const struct attr_range *x = attribution_range(ctx->attr, st->ids[i]);
		if (!stats_selected(ctx, x->s)) continue;
		uint64_t *slot = u64map_get(&st->name2g, ((uint64_t)x->pid << 32) | x->name, MAP_INSERT);
		if (!*slot) *slot = group_of(st, x->pid, attribution_name(ctx->attr, x->name)) + 1;
		size_t g = *slot - 1, k;
		for (k = 0; k < nseen && seen[k] != g; k++) ;
		if (k < nseen) continue;
		if (nseen < sizeof(seen) / sizeof(seen[0])) seen[nseen++] = g;
		st->gpu_ns[g] += op->e - op->s;
	}
}

/* The rows: the groups by (process when split, name), numbered names
 * merged by pattern when two or more share it (unless --nvtx-instances).
 * Fills out (keyed as the groups, pid 0 when not split) with each row's
 * GPU time and styles. */
static void rows_by_pattern(struct nvtx_report *st, int split, int instances, struct summary *out,
			    uint64_t **gpu_ns, int **style)
{
	struct summary *t = &st->ranges;
	char **pat = xcalloc(t->n ? t->n : 1, sizeof(*pat));
	strmap npat;   /* "pid\x01pattern" -> number of names with it */
	strmap_init(&npat);
	for (size_t i = 0; i < t->n && !instances; i++) {
		if (!t->g[i].n) continue;
		char *p = step_name_pattern(group_name(&t->g[i]));
		if (!p) continue;
		pat[i] = xmalloc(strlen(p) + 16);
		sprintf(pat[i], "%u\x01%s", split ? st->pid[i] : 0, p);
		free(p);
		int is_new;
		++*strmap_get(&npat, pat[i], &is_new);
	}
	*gpu_ns = xcalloc(t->n ? t->n : 1, sizeof(**gpu_ns));
	*style = xcalloc(t->n ? t->n : 1, sizeof(**style));
	for (size_t i = 0; i < t->n; i++) {
		struct sgroup *g = &t->g[i];
		if (!g->n) continue;   /* a name only of ranges outside the selection */
		int is_new;
		char *key = NULL;
		if (pat[i] && *strmap_get(&npat, pat[i], &is_new) > 1) {
			key = xstrdup(pat[i]);
		} else {
			key = xmalloc(strlen(g->name) + 16);
			sprintf(key, "%u\x01%s", split ? st->pid[i] : 0, group_name(g));
		}
		size_t o = summary_group(out, key);
		free(key);
		for (size_t k = 0; k < g->nv; k++) sgroup_add(&out->g[o], g->v[k]);
		(*gpu_ns)[o] += st->gpu_ns[i];
		(*style)[o] |= st->style[i];
	}
	for (size_t i = 0; i < t->n; i++) free(pat[i]);
	free(pat);
	strmap_free(&npat);
}

static void nvtx_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct nvtx_report *st = self;
	struct report *rep = &tables[0];
	int by = ctx->opts->by_process;
	int split = by == STATS_BY_PROCESS || (by == STATS_BY_AUTO && st->pids.n > 1);
	int off = split ? NVTX_BY_PROC : 0;
	memcpy(nvtx_cols_proc + NVTX_BY_PROC, nvtx_cols, sizeof(nvtx_cols));
	report_define(rep, split ? "NVTX Range Summary, per process" : "NVTX Range Summary",
		      split ? nvtx_cols_proc : nvtx_cols, NVTX_NCOLS + off);
	struct summary t = { 0 };
	uint64_t *gpu_ns;
	int *style;
	rows_by_pattern(st, split, ctx->opts->nvtx_instances, &t, &gpu_ns, &style);
	uint64_t sum = time_summary_sum(&t);
	size_t *ix = summary_by_total(&t);
	double *v = NULL;
	size_t cv = 0;
	const gp_header *h = gp_reader_header(st->r);
	for (size_t k = 0; k < t.n; k++) {
		struct sgroup *g = &t.g[ix[k]];
		int sty = style[ix[k]];
		struct cell *row = report_row(rep), *c = row + off;
		if (split) {
			uint32_t pid = (uint32_t)strtoul(g->name, NULL, 10);
			uint64_t *rk = u64map_get(&st->pid2rank, pid, MAP_FIND);
			int32_t rank = rk ? (int32_t)*rk - 2 : h && pid == h->pid ? h->rank : -1;
			cell_num(&row[0], pid);
			if (rank >= 0) cell_num(&row[1], rank);
		}
		time_summary_cells(c, g, sum);
		vec_reserve((void **)&v, &cv, g->nv, sizeof(*v));
		for (size_t i = 0; i < g->nv; i++) v[i] = (double)g->v[i];
		cell_num(&c[NVTX_P90], step_quantile(v, g->nv, 0.9));
		cell_num(&c[NVTX_GPU_NS], (double)gpu_ns[ix[k]]);
		cell_str(&c[NVTX_STYLE], sty == STYLE_PUSHPOP ? "PushPop" : sty == STYLE_STARTEND ? "StartEnd" : "Mixed");
		cell_str(&c[NVTX_RANGE], group_name(g));
	}
	rep->note = " Numbered names (step 0, step 1, ...) are one row, \"step *\" (--nvtx-instances: a row each).\n"
		    " P90: linear between the two nearest ranks.  GPU Kernel Time: kernels whose launch call started\n"
		    "   while the range was open (docs/STEPS.md \"Attribution\"; --attribution).\n";
	free(v);
	free(ix);
	free(gpu_ns);
	free(style);
	summary_free(&t);
}

static void nvtx_free(void *self)
{
	struct nvtx_report *st = self;
	summary_free(&st->ranges);
	free(st->pid); free(st->gpu_ns); free(st->style); free(st->ids);
	u64map_free(&st->name2g);
	u64map_free(&st->pid2rank);
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
	.types = STATS_TYPE(GP_REC_NVTX_RANGE) | STATS_TYPE(GP_REC_PROCESS),
	.needs = STATS_NEED_RANGES | STATS_NEED_OPS,
	.new = nvtx_new, .add = nvtx_add, .op = nvtx_op, .fill = nvtx_fill, .free = nvtx_free,
};
