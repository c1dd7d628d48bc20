/* stats_launch_sites.c — `stats --report launch_sites`: call sites ranked
 * by the GPU time of the kernels launched from them.  The context's join
 * (GPU work to its launch call, analysis/join/opjoin.h) aggregated by the call's
 * stack (analysis/stacks/stack_work.h), then by site (analysis/stacks/stacks.h); a CUDA
 * graph's kernel whose node's capture is known by the captured launch's
 * stack instead (analysis/layers/graph_sites.h, as the layers report).  A site's
 * "innermost frame" is the one under which most of its kernel time was
 * launched (ties: the first seen).  GPU work counts when it starts in the
 * selection, a launch call when it does. */
#include <stdlib.h>
#include <string.h>

#include "analysis/layers/graph_sites.h"
#include "analysis/stacks/stack_work.h"
#include "analysis/stacks/stacks.h"
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
 * launch call has no stack, so Time (%) adds up to 100.  *top_key and
 * *top_ns: the first row's site key (NULL: no row) and kernel time;
 * *all_ns: all kernel time. */
static void sites_rows(struct report *rep, struct stacks *st, const struct stack_work *sw, const char **top_key,
		       uint64_t *top_ns, uint64_t *all_ns)
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
			struct site s = { .key = key, .label = label, .inner = inner };
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
	*top_key = nsites ? sites[0].key : NULL;
	*top_ns = nsites ? sites[0].kernel_ns : 0;
	*all_ns = total;
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

/* A default site that holds most of the kernel time says little (a Hugging
 * Face Trainer's whole job is its `trainer.train()` line): the note says
 * where its time splits and which --site shows that code, by the rule of
 * docs/STACKS.md "When one site holds most of the time". */
#define SPLIT_SITE_PCT 50
#define SPLIT_KEEP_PCT 90
#define SPLIT_SHOW 4

struct split_entry { const char *const *frames; uint32_t n; uint64_t ns; int on; };
struct split_child { const char *frame; uint64_t ns; };

static int cmp_child(const void *a, const void *b)
{
	const struct split_child *x = a, *y = b;
	if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
	return strcmp(x->frame, y->frame);
}

/* The top folder of a Python display frame's file, "func (DIR/file.py:LINE)"
 * -> "DIR", into out; 0 when the frame is not that (native, a file with no
 * folder: the user's own). */
static int frame_package(const char *frame, char *out, size_t n)
{
	const char *open = strrchr(frame, '(');
	size_t len = strlen(frame);
	if (!open || open == frame || open[-1] != ' ' || frame[len - 1] != ')') return 0;
	const char *colon = strrchr(open, ':'), *slash = strchr(open, '/');
	if (!colon || !slash || slash > colon || slash == open + 1) return 0;
	size_t k = (size_t)(slash - open - 1);
	if (k + 1 > n) return 0;
	memcpy(out, open + 1, k);
	out[k] = 0;
	return 1;
}

/* The note's lines for the top site (key, ns of all_ns), appended to *note
 * (xmalloc'd or NULL). */
static void split_note(char **note, struct stacks *st, const struct stack_work *sw, const char *key, uint64_t ns,
		       uint64_t all_ns)
{
	if (!key || !all_ns || ns * 100 < (uint64_t)SPLIT_SITE_PCT * all_ns) return;
	size_t n, ne = 0, ce = 0, nc = 0, cc = 0;
	const struct stack_work_entry *ls = stack_work_all(sw, &n);
	struct split_entry *es = NULL;
	const char *label = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct stack_view *v = ls[i].stack_id ? stacks_view(st, ls[i].stack_id, ls[i].pid, ls[i].tid) : NULL;
		if (!v || !ls[i].kernel_ns || strcmp(v->site_key, key) || v->site_frame < 0) continue;
		label = v->site;
		uint32_t from = (uint32_t)v->site_frame + 1;
		struct split_entry e = { v->frames + from, v->nframes - from, ls[i].kernel_ns, 1 };
		VEC_PUSH(es, ne, ce, e);
	}
	if (!ne) return;
	struct split_child *ch = NULL;
	const char *at = label;
	char pkg[256] = "";
	for (uint32_t d = 0;; d++) {
		nc = 0;
		uint64_t here = 0;
		for (size_t i = 0; i < ne; i++) {
			if (!es[i].on) continue;
			if (d >= es[i].n) { here += es[i].ns; continue; }
			size_t j = 0;
			while (j < nc && ch[j].frame != es[i].frames[d]) j++; /* interned: one pointer a string */
			if (j == nc) { struct split_child c = { es[i].frames[d], 0 }; VEC_PUSH(ch, nc, cc, c); }
			ch[j].ns += es[i].ns;
		}
		if (nc) qsort(ch, nc, sizeof(*ch), cmp_child);
		if (!nc || ch[0].ns * 100 < (uint64_t)SPLIT_KEEP_PCT * ns) {
			if (here) { struct split_child c = { "(launched here)", here }; VEC_PUSH(ch, nc, cc, c); }
			if (nc) qsort(ch, nc, sizeof(*ch), cmp_child);
			break;
		}
		at = ch[0].frame;
		if (!*pkg) frame_package(at, pkg, sizeof(pkg));
		for (size_t i = 0; i < ne; i++)
			if (es[i].on) es[i].on = d < es[i].n && es[i].frames[d] == at;
	}
	/* the GLOB: on the path followed, else in the heaviest frame below it */
	for (size_t j = 0; j < nc && !*pkg; j++)
		frame_package(ch[j].frame, pkg, sizeof(pkg));
	size_t cap = 1024 + strlen(label) + strlen(at) + 2 * sizeof(pkg);
	for (size_t j = 0; j < nc && j < SPLIT_SHOW; j++) cap += strlen(ch[j].frame) + 32;
	size_t old = *note ? strlen(*note) : 0;
	*note = xrealloc(*note, old + cap);
	char *p = *note + old;
	p += sprintf(p, " One site holds %.1f %% of all kernel time: %s.\n", 100.0 * (double)ns / (double)all_ns, label);
	if (nc > 1 || (nc == 1 && at != label)) {
		p += sprintf(p, "   Its time splits %s %s into (%% of the site's):\n", at == label ? "at" : "below it, at", at);
		uint64_t rest = 0;
		for (size_t j = 0; j < nc; j++) {
			if (j < SPLIT_SHOW) p += sprintf(p, "   %7.1f %%  %s\n", 100.0 * (double)ch[j].ns / (double)ns, ch[j].frame);
			else rest += ch[j].ns;
		}
		if (rest) p += sprintf(p, "   %7.1f %%  (%zu more)\n", 100.0 * (double)rest / (double)ns, nc - SPLIT_SHOW);
	}
	if (*pkg) sprintf(p, "   Sites inside the library code it calls: --site '%s/*'\n", pkg);
	free(ch);
	free(es);
}

/* The note of another rule than user (--site). */
static const char *const site_rule_note[] = {
	[SITE_INNER] = "   (--site inner) Site = the innermost Python frame, else as the default.\n",
	[SITE_GLOB] = "   (--site GLOB) Site = the innermost Python frame whose file path matches the\n"
		      "   pattern, else as the default.\n",
	[SITE_LAYER] = "   (--site layer) Site = the model layer: the classes of the launching thread's\n"
		       "   Python forward frames, outermost first; else as the default.\n",
};

/* The GPU work and launch calls by stack (the stacks: the context's). */
struct sites_report {
	struct stack_work *sw;
	char *note;
};

static void *sites_new(const struct stats_ctx *ctx)
{
	struct sites_report *sr = xcalloc(1, sizeof(*sr));
	sr->sw = stack_work_new();
	return sr;
}

/* No stack so far: no site to give work to.  The stacks are metadata, all
 * delivered before the first timed record (time-ordered reading), so a
 * trace without them costs nothing here. */
static void sites_op(void *self, const struct stats_ctx *ctx, const struct gpu_op *op)
{
	struct sites_report *sr = self;
	if (!stacks_count(ctx->stacks) || !stats_selected(ctx, op->s)) return;
	/* a graph's kernel: at the site of the launch captured into its node,
	 * when that is known (the context's capture sites) */
	struct gpu_op at;
	stack_work_op(sr->sw, graph_sites_rebase(ctx->graphs, op, &at) ? &at : op);
}

static void sites_call(void *self, const struct stats_ctx *ctx, const struct launch_call *c)
{
	struct sites_report *sr = self;
	if (stacks_count(ctx->stacks) && stats_selected(ctx, c->s)) stack_work_call(sr->sw, c);
}

/* Shards: the work of the next slice. */
static int sites_merge(void *self, void *from, const struct stats_ctx *ctx)
{
	struct sites_report *sr = self, *src = from;
	stack_work_merge(sr->sw, src->sw);
	return 0;
}

static int sites_in_default(void *self, const struct stats_ctx *ctx)
{
	return stacks_count(ctx->stacks) > 0;
}

static void sites_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct sites_report *sr = self;
	int have = stacks_count(ctx->stacks) > 0;
	report_define(&tables[0], have ? "Launch Sites (by kernel time launched)"
				       : "Launch Sites: none, the trace has no stacks (record with --stacks)",
		      site_cols, SITE_NCOLS);
	/* the note: site_note, then the --site rule's, or where the top site's time splits */
	sr->note = xstrdup(site_note);
	if (ctx->opts->site.kind != SITE_USER) {
		sr->note = xrealloc(sr->note, sizeof(site_note) + strlen(site_rule_note[ctx->opts->site.kind]));
		strcat(sr->note, site_rule_note[ctx->opts->site.kind]);
	}
	tables[0].note = sr->note;
	if (!have) return;
	const char *top_key;
	uint64_t top_ns, all_ns;
	sites_rows(&tables[0], ctx->stacks, sr->sw, &top_key, &top_ns, &all_ns);
	if (ctx->opts->site.kind == SITE_USER) split_note(&sr->note, ctx->stacks, sr->sw, top_key, top_ns, all_ns);
	tables[0].note = sr->note;
}

static void sites_free(void *self)
{
	struct sites_report *sr = self;
	stack_work_free(sr->sw);
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
	.needs = STATS_NEED_OPS | STATS_NEED_STACKS,
	.new = sites_new, .op = sites_op, .call = sites_call, .merge = sites_merge,
	.in_default = sites_in_default,
	.fill = sites_fill, .free = sites_free,
};
