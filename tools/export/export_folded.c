/* export_folded.c — folded stacks ("frame;frame;...;leaf WEIGHT" per line,
 * root first) for flamegraph.pl, speedscope and inferno: the stacks of the
 * launch calls weighted by the GPU time of the work they launched, or by the
 * number of launches.  One pass collects stacks and joins GPU work to its
 * launch call (analysis/join/opjoin.h, aggregated by stack in
 * analysis/stacks/stack_work.h: the rule every report uses).  --site layer with a
 * time weight attributes by analysis/layers/layer_attr.h instead, as stats
 * --report layers does (graph kernels to their capture, backward kernels by
 * emit_nvtx's sequence numbers), after a pre-pass for the NVTX ranges.  The
 * output is written at the end, sorted, so equal input gives equal output. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join/attribution.h"
#include "analysis/layers/graph_sites.h"
#include "analysis/layers/layer_attr.h"
#include "analysis/layers/layers.h"
#include "analysis/join/opjoin.h"
#include "analysis/stacks/site_rule.h"
#include "analysis/stacks/stack_work.h"
#include "analysis/stacks/stacks.h"
#include "analysis/steps/steps_pipe.h"
#include "common/gzout.h"
#include "common/tool.h"
#include "export/export.h"

struct line { char *stack; uint64_t w; };

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack, ((const struct line *)b)->stack);
}

static uint64_t weight_of(const struct stack_work_entry *l, enum folded_weight w)
{
	switch (w) {
	case FOLDED_GPU_TIME: return l->kernel_ns + l->memop_ns;
	case FOLDED_KERNEL_TIME: return l->kernel_ns;
	case FOLDED_LAUNCHES: return l->launches;
	}
	return 0;
}

/* Readers split "stack WEIGHT" at the last space; flamegraph.pl and inferno
 * then take a stack that still ends in " NUMBER" (their pattern:
 * \s+?\d+(\.\d*)?$) as the first column of a differential line.  The index
 * of the space before a frame name's trailing number, or n if there is none.
 * (';' and control characters never reach here: stack_view frames have
 * them as '_'.) */
static size_t number_space(const char *f, size_t n)
{
	size_t i = n;
	while (i && isdigit((unsigned char)f[i - 1])) i--;
	if (i && f[i - 1] == '.') {
		size_t dot = i - 1;
		i = dot;
		while (i && isdigit((unsigned char)f[i - 1])) i--;
		if (i == dot) return n;  /* ".5": no digit before the dot */
	} else if (i == n) {
		return n;
	}
	return i && f[i - 1] == ' ' ? i - 1 : n;
}

/* frames[0..n) as one folded stack, malloc'd.  Every frame (not only the
 * leaf) ending in " NUMBER" gets '_' for that space, so one name is drawn as
 * one frame wherever it is.  (Layer names are class names or the layer
 * rows: no ';' or control characters either.) */
static char *fold(const char *const *frames, uint32_t n)
{
	size_t len = 1;
	for (uint32_t i = 0; i < n; i++) len += strlen(frames[i]) + 1;
	char *s = xmalloc(len), *p = s;
	for (uint32_t i = 0; i < n; i++) {
		size_t k = strlen(frames[i]);
		if (i) *p++ = ';';
		memcpy(p, frames[i], k);
		size_t sp = number_space(frames[i], k);
		if (sp < k) p[sp] = '_';
		p += k;
	}
	*p = 0;
	return s;
}

/* The folded form of one launch's stack, malloc'd (the layer rule: the
 * call's own layer path, for --weight launches). */
static char *folded_stack(struct stacks *st, const struct stack_work_entry *l, const struct site_rule *site)
{
	const struct stack_view *v = l->stack_id ? stacks_view(st, l->stack_id, l->pid, l->tid) : NULL;
	if (site && site->kind == SITE_LAYER) {
		const char *path[LAYER_PATH_MAX];
		return fold(path, layers_path(v, LAYERS_LAUNCHED, path));
	}
	if (!l->stack_id) return xstrdup("(no stack)");
	if (!v) return xstrdup("(missing stack)");
	if (!v->nframes) return xstrdup("(empty stack)");
	uint32_t n = v->nframes;
	if (site && v->site_frame >= 0) n = (uint32_t)v->site_frame + 1;  /* root .. the site */
	return fold(v->frames, n);
}

/* The output's lines: one per distinct folded stack. */
struct lines {
	strmap idx;           /* stack -> index */
	struct line *v; size_t n, cap;
};

/* Adds w at stack (malloc'd; taken). */
static void lines_add(struct lines *ls, char *stack, uint64_t w)
{
	int is_new;
	size_t *slot = strmap_get(&ls->idx, stack, &is_new);
	if (is_new) {
		*slot = ls->n;
		struct line l = { stack, 0 };
		VEC_PUSH(ls->v, ls->n, ls->cap, l);
	} else {
		free(stack);
	}
	ls->v[*slot].w += w;
}

/* The join's receiver: by layer with a time weight, analysis/layers/layer_attr.h
 * (the graph and backward joins, as stats --report layers); else by the
 * launch call's stack (stack_work), a graph kernel of known capture by the
 * captured launch's (as stats --report launch_sites). */
struct folded_pass {
	struct layer_attr *la;       /* NULL: by stack */
	struct stack_work *sw;
	struct graph_sites *graphs;
	struct lines *out;
	enum folded_weight weight;
};

static void pass_op(void *arg, const struct gpu_op *op)
{
	struct folded_pass *b = arg;
	struct gpu_op at;
	if (b->la) layer_attr_op(b->la, op, b->graphs);
	else stack_work_op(b->sw, graph_sites_rebase(b->graphs, op, &at) ? &at : op);
}

static void pass_call(void *arg, const struct launch_call *c)
{
	struct folded_pass *b = arg;
	if (b->la) layer_attr_call(b->la, c);
	else stack_work_call(b->sw, c);
}

static void layer_line(void *arg, const char *const *path, uint32_t n, const struct layer_weight *w)
{
	struct folded_pass *b = arg;
	uint64_t x = w->kernel_ns + (b->weight == FOLDED_GPU_TIME ? w->memop_ns : 0);
	if (x) lines_add(b->out, fold(path, n), x);
}

/* By stack (each cut at its site by the rule), or by layer for launches:
 * the launch call's own stack. */
static void by_stack_lines(struct lines *out, struct stacks *st, const struct stack_work *sw,
			   const struct site_rule *site, enum folded_weight weight)
{
	size_t n;
	const struct stack_work_entry *ls = stack_work_all(sw, &n);
	for (size_t i = 0; i < n; i++) {
		uint64_t w = weight_of(&ls[i], weight);
		if (w) lines_add(out, folded_stack(st, &ls[i], site), w);
	}
}

/* The NVTX ranges of the whole trace (the pre-pass of stats' reports that
 * need them: steps_pipe.h pass 1), indexed; the reader rewound.  NULL when
 * the trace cannot be read again (the caller's pass reports read errors). */
static struct attribution *read_ranges(gp_reader *r)
{
	struct attribution *a = attribution_new(ATTR_ANY_THREAD);
	const gp_record *rec;
	uint64_t n = 0;
	while (gp_reader_next_ordered(r, &rec) > 0) {
		progress_tick(++n);
		step_pass1_add(r, rec, a, NULL, NULL);
	}
	attribution_index(a);
	if (gp_reader_rewind(r) < 0) {
		attribution_free(a);
		return NULL;
	}
	return a;
}

int export_folded(const char *in, const char *out, int strict, const struct export_opts *o)
{
	enum folded_weight weight = o->weight;
	const struct site_rule *site = o->site;
	gp_reader *r = tool_open(in);
	if (!r)
		return EXIT_BADINPUT;
	/* by layer, GPU or kernel time: the layers report's attribution; else
	 * the launch call's stack */
	int by_layer = site && site->kind == SITE_LAYER && weight != FOLDED_LAUNCHES;
	struct attribution *ranges = NULL;
	if (by_layer && !(ranges = read_ranges(r))) {
		tool_err("cannot read %s again", in);
		gp_reader_close(r);
		return EXIT_BADINPUT;
	}
	struct lines lines = { 0 };
	strmap_init(&lines.idx);
	struct stacks *st = stacks_new(r);
	struct folded_pass bl = { NULL, NULL, graph_sites_new(), &lines, weight };
	if (by_layer) {
		bl.la = layer_attr_new(st, ranges);
	} else {
		stacks_set_site_rule(st, site);
		bl.sw = stack_work_new();
	}
	struct opjoin_opts jo = { 0, pass_call, 0, 0 };
	struct opjoin *j = opjoin_new(r, &jo, pass_op, &bl);
	const gp_record *rec;
	int rc;
	uint64_t nrec = 0, now = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++nrec);
		stacks_add(st, rec);
		/* the capture sites first: a capture call's nodes before any
		 * launch of their graph */
		if (rec->type == GP_REC_GRAPH_NODE) graph_sites_node(bl.graphs, tool_pid(r, rec), &rec->u.graph_node);
		else if (rec->type == GP_REC_API) graph_sites_api(bl.graphs, tool_pid(r, rec), &rec->u.api);
		step_pass2_add(r, rec, j, NULL, NULL, &now);
	}
	opjoin_finish(j);
	int code = tool_finish(r, in, rc, strict);
	if (code != EXIT_OK && nrec == 0)
		goto out;
	if (!stacks_count(st)) {
		tool_err("%s: trace has no stacks (record with --stacks)", in);
		code = EXIT_USAGE;
		goto out;
	}

	if (by_layer) layer_attr_resolve(bl.la, layer_line, &bl);
	else by_stack_lines(&lines, st, bl.sw, site, weight);
	if (lines.n) qsort(lines.v, lines.n, sizeof(*lines.v), cmp_line);

	FILE *f = gzout_open(out, 0);
	for (size_t i = 0; f && i < lines.n; i++) fprintf(f, "%s %" PRIu64 "\n", lines.v[i].stack, lines.v[i].w);
	if (!f || gzout_close(f)) {
		tool_err("cannot write %s: %s", out, strerror(errno));
		code = EXIT_BADINPUT;
	}
	if (!lines.n)
		tool_warn("%s: no launch with %s; wrote an empty file", in,
			  weight == FOLDED_LAUNCHES ? "a recorded call" : "GPU time");
out:
	for (size_t i = 0; i < lines.n; i++) free(lines.v[i].stack);
	free(lines.v);
	strmap_free(&lines.idx);
	opjoin_free(j);
	stack_work_free(bl.sw);
	layer_attr_free(bl.la);
	stacks_free(st);
	graph_sites_free(bl.graphs);
	attribution_free(ranges);
	gp_reader_close(r);
	return code;
}
