/* stats_launch_sites.c — `stats --report launch_sites`: call sites ranked
 * by the GPU time of the kernels launched from them.  The context's join
 * (GPU work to its launch call, analysis/opjoin.h) aggregated by the call's
 * stack (analysis/stack_work.h), then by site (analysis/stacks.h); a CUDA
 * graph's kernel whose node's capture is known by the captured launch's
 * stack instead (analysis/graph_sites.h, as the layers report).  A site's
 * "innermost frame" is the one under which most of its kernel time was
 * launched (ties: the first seen).  GPU work counts when it starts in the
 * selection, a launch call when it does. */
#include <stdlib.h>
#include <string.h>

#include "analysis/graph_sites.h"
#include "analysis/stack_work.h"
#include "analysis/stacks.h"
#include "common/util.h"
#include "reports/stats_report.h"

enum {
	SITE_TIME_PCT, SITE_KERNEL_NS, SITE_KERNELS, SITE_LAUNCHES, SITE_AVG_KERNEL, SITE_MEMOP_NS,
	SITE_MEMOPS, SITE_SITE, SITE_INNERMOST,
	SITE_NCOLS
};
static const struct col site_cols[SITE_NCOLS] = {
	[SITE_TIME_PCT] = { "Time (%)", "time_pct", COL_F1, COL_EVERYWHERE },
	[SITE_KERNEL_NS] = { "Kernel Time (ns)", "kernel_ns", COL_INT, COL_EVERYWHERE },
	[SITE_KERNELS] = { "Kernels", "kernels", COL_INT, COL_EVERYWHERE }, [SITE_LAUNCHES] = { "Launches", "launches", COL_INT, COL_EVERYWHERE },
	[SITE_AVG_KERNEL] = { "Avg Kernel (ns)", "avg_kernel_ns", COL_F1, COL_EVERYWHERE },
	[SITE_MEMOP_NS] = { "Memop Time (ns)", "memop_ns", COL_INT, COL_EVERYWHERE },
	[SITE_MEMOPS] = { "Memops", "memops", COL_INT, COL_EVERYWHERE }, [SITE_SITE] = { "Site", "site", COL_STR, COL_EVERYWHERE },
	[SITE_INNERMOST] = { "Innermost Frame", "innermost", COL_STR, COL_EVERYWHERE },
};

static const char site_note[] =
	" Time (%) = kernel time launched from the site / all kernel time.  Site = the innermost\n"
	"   Python frame outside the stdlib and site-/dist-packages, else the innermost Python\n"
	"   frame, else the innermost native frame outside libcudart/libcuda/libcupti.\n"
	"   Launches = launch calls (kernel, graph, memcpy, memset) recorded there.  A kernel\n"
	"   a CUDA graph replayed counts at the site of the launch captured into its graph\n"
	"   node, where the trace shows it (docs/STACKS.md \"CUDA graphs\"); else at the\n"
	"   graph launch's.  Backward kernels stay at their launch call's site.\n";

struct site {
	const char *key, *label;
	uint64_t kernel_ns, kernels, launches, memop_ns, memops;
	const char *inner; uint64_t inner_ns; /* best innermost frame so far */
};

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	if (x->kernel_ns != y->kernel_ns) return x->kernel_ns > y->kernel_ns ? -1 : 1;
	if (x->memop_ns != y->memop_ns) return x->memop_ns > y->memop_ns ? -1 : 1;
	if (x->launches != y->launches) return x->launches > y->launches ? -1 : 1;
	int c = strcmp(x->label, y->label);
	return c ? c : strcmp(x->key, y->key);
}

/* One row per site (see stacks.h), plus "(no stack)" for GPU work whose
 * launch call has no stack, so Time (%) adds up to 100. */
static void sites_rows(struct report *rep, struct stacks *st, const struct stack_work *sw)
{
	size_t n;
	const struct stack_work_entry *ls = stack_work_all(sw, &n);
	strmap idx, pair;   /* site key -> index; site key + innermost -> kernel ns */
	strmap_init(&idx);
	strmap_init(&pair);
	struct site *sites = NULL;
	size_t nsites = 0, csites = 0;
	uint64_t *pair_ns = NULL;
	size_t npair = 0, cpair = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		const struct stack_work_entry *l = &ls[i];
		if (!l->launches && !l->kernels && !l->memops) continue;
		const char *key, *label, *inner = "";
		const struct stack_view *v = l->stack_id ? stacks_view(st, l->stack_id, l->pid, l->tid) : NULL;
		if (v) { key = v->site_key; label = v->site; inner = v->innermost; }
		else if (l->stack_id) key = label = "(missing stack)";
		else key = label = "(no stack)";
		int is_new;
		size_t *slot = strmap_get(&idx, key, &is_new);
		if (is_new) {
			struct site s;
			memset(&s, 0, sizeof(s));
			s.key = key; s.label = label; s.inner = inner;
			*slot = nsites;
			VEC_PUSH(sites, nsites, csites, s);
		}
		struct site *s = &sites[*slot];
		s->kernel_ns += l->kernel_ns; s->kernels += l->kernels;
		s->memop_ns += l->memop_ns; s->memops += l->memops;
		s->launches += l->launches;
		total += l->kernel_ns;
		char *pk = xmalloc(strlen(key) + strlen(inner) + 2);
		sprintf(pk, "%s\x01%s", key, inner);
		size_t *ps = strmap_get(&pair, pk, &is_new);
		free(pk);
		if (is_new) { *ps = npair; VEC_PUSH(pair_ns, npair, cpair, 0); }
		pair_ns[*ps] += l->kernel_ns;
		if (pair_ns[*ps] > s->inner_ns) { s->inner_ns = pair_ns[*ps]; s->inner = inner; }
	}
	if (nsites) qsort(sites, nsites, sizeof(*sites), cmp_site);
	for (size_t i = 0; i < nsites; i++) {
		const struct site *s = &sites[i];
		struct cell *c = report_row(rep);
		cell_num(&c[SITE_TIME_PCT], total ? 100.0 * (double)s->kernel_ns / (double)total : 0);
		cell_num(&c[SITE_KERNEL_NS], (double)s->kernel_ns);
		cell_num(&c[SITE_KERNELS], (double)s->kernels);
		cell_num(&c[SITE_LAUNCHES], (double)s->launches);
		if (s->kernels) cell_num(&c[SITE_AVG_KERNEL], (double)s->kernel_ns / (double)s->kernels);
		cell_num(&c[SITE_MEMOP_NS], (double)s->memop_ns);
		cell_num(&c[SITE_MEMOPS], (double)s->memops);
		cell_str(&c[SITE_SITE], s->label);
		cell_str(&c[SITE_INNERMOST], s->inner);
	}
	free(sites);
	free(pair_ns);
	strmap_free(&idx);
	strmap_free(&pair);
}

/* The note of another rule than user (--site). */
static const char *const site_rule_note[] = {
	[SITE_INNER] = "   (--site inner) Site = the innermost Python frame, else as the default.\n",
	[SITE_GLOB] = "   (--site GLOB) Site = the innermost Python frame whose file path matches the\n"
		      "   pattern, else as the default.\n",
	[SITE_LAYER] = "   (--site layer) Site = the model layer: the classes of the launching thread's\n"
		       "   Python forward frames, outermost first; else as the default.\n",
};

/* The recorded stacks, and the GPU work and launch calls by stack. */
struct sites_report {
	struct stacks *stk;
	struct stack_work *sw;
	char *note;
};

static void *sites_new(const struct stats_ctx *ctx)
{
	struct sites_report *sr = xcalloc(1, sizeof(*sr));
	sr->stk = stacks_new(ctx->r);
	stacks_set_site_rule(sr->stk, &ctx->opts->site);
	sr->sw = stack_work_new();
	return sr;
}

static void sites_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct sites_report *sr = self;
	const gp_record *rec = r->rec;
	stacks_add(sr->stk, rec);
}

/* No stack so far: no site to give work to.  The stacks are metadata, all
 * delivered before the first timed record (time-ordered reading), so a
 * trace without them costs nothing here. */
static void sites_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	struct sites_report *sr = self;
	if (!stacks_count(sr->stk) || !stats_selected(ctx, op->s)) return;
	/* a graph's kernel: at the site of the launch captured into its node,
	 * when that is known (the context's capture sites) */
	struct gpu_op at;
	stack_work_op(sr->sw, graph_sites_rebase(ctx->graphs, op, &at) ? &at : op);
}

static void sites_call(void *self, const struct stats_ctx *ctx, const struct launch_call *c)
{
	struct sites_report *sr = self;
	if (stacks_count(sr->stk) && stats_selected(ctx, c->s)) stack_work_call(sr->sw, c);
}

/* Shards: the work of the next slice.  Every slice read every stack (they
 * are metadata, which every slice reads: stats_report.h), so self takes
 * src's when it has none (the driver's state, which read no records),
 * reading strings through its own reader from then on (src's closes). */
static int sites_merge(void *self, void *from, const struct stats_ctx *ctx)
{
	struct sites_report *sr = self, *src = from;
	if (!stacks_count(sr->stk) && stacks_count(src->stk)) {
		struct stacks *t = sr->stk;
		sr->stk = src->stk;
		src->stk = t;
		stacks_set_reader(sr->stk, ctx->r);
		stacks_set_site_rule(sr->stk, &ctx->opts->site);
	}
	stack_work_merge(sr->sw, src->sw);
	return 0;
}

static int sites_in_default(void *self, const struct stats_ctx *ctx)
{
	struct sites_report *sr = self;
	return stacks_count(sr->stk) > 0;
}

static void sites_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct sites_report *sr = self;
	int have = stacks_count(sr->stk) > 0;
	report_define(&tables[0], have ? "Launch Sites (by kernel time launched)"
				       : "Launch Sites: none, the trace has no stacks (record with --stacks)",
		      site_cols, SITE_NCOLS);
	tables[0].note = site_note;
	if (ctx->opts->site.kind != SITE_USER) {
		const char *extra = site_rule_note[ctx->opts->site.kind];
		sr->note = xmalloc(sizeof(site_note) + strlen(extra));
		strcpy(sr->note, site_note);
		strcat(sr->note, extra);
		tables[0].note = sr->note;
	}
	if (have) sites_rows(&tables[0], sr->stk, sr->sw);
}

static void sites_free(void *self)
{
	struct sites_report *sr = self;
	stack_work_free(sr->sw);
	stacks_free(sr->stk);
	free(sr->note);
	free(sr);
}

static const struct stats_table sites_tables[] = {
	{ "launch_sites",
	  "call sites of the launches (trace recorded with --stacks), by\n"
	  "the kernel time launched there: site = innermost Python frame of\n"
	  "the user's code (not stdlib/site-packages), else innermost Python\n"
	  "frame, else innermost native frame outside the CUDA libraries;\n"
	  "kernels, launch calls, memcpy/memset time, innermost frame.  Part\n"
	  "of the default set only when the trace has stacks" },
};

const struct stats_report stats_report_launch_sites = {
	.tables = sites_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_MODULE) | STATS_TYPE(GP_REC_STACK) | STATS_TYPE(GP_REC_THREAD) |
		 STATS_TYPE(GP_REC_SOURCE),
	.needs = STATS_NEED_OPS,
	.new = sites_new, .add = sites_add, .op = sites_op, .call = sites_call, .merge = sites_merge,
	.in_default = sites_in_default,
	.fill = sites_fill, .free = sites_free,
};
