/* export_folded.c — folded stacks ("frame;frame;...;leaf WEIGHT" per line,
 * root first) for flamegraph.pl, speedscope and inferno: the stacks of the
 * launch calls weighted by the GPU time of the work they launched, or by the
 * number of launches.  One pass collects stacks and joins GPU work to its
 * launch call (analysis/opjoin.h, aggregated by stack in
 * analysis/stack_work.h: the rule every report uses); the output is written
 * at the end, sorted, so equal input gives equal output. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/layers.h"
#include "analysis/opjoin.h"
#include "analysis/site_rule.h"
#include "analysis/stack_work.h"
#include "analysis/stacks.h"
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

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
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
	while (i && is_digit(f[i - 1])) i--;
	if (i && f[i - 1] == '.') {
		size_t dot = i - 1;
		i = dot;
		while (i && is_digit(f[i - 1])) i--;
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

/* The folded form of one launch's stack (graph: the part of its work a
 * graph launch ran, for the layer rule), malloc'd. */
static char *folded_stack(struct stacks *st, const struct stack_work_entry *l, const struct site_rule *site,
			  int graph)
{
	const struct stack_view *v = l->stack_id ? stacks_view(st, l->stack_id, l->pid, l->tid) : NULL;
	if (site && site->kind == SITE_LAYER) {
		const char *path[LAYER_PATH_MAX];
		uint32_t n = layers_path(v, graph ? LAYERS_GRAPH_REPLAY : LAYERS_LAUNCHED, path);
		return fold(path, n);
	}
	if (!l->stack_id) return xstrdup("(no stack)");
	if (!v) return xstrdup("(missing stack)");
	if (!v->nframes) return xstrdup("(empty stack)");
	uint32_t n = v->nframes;
	if (site && v->site_frame >= 0) n = (uint32_t)v->site_frame + 1;  /* root .. the site */
	return fold(v->frames, n);
}

int export_folded(const char *in, const char *out, int strict, enum folded_weight weight,
		  const struct site_rule *site)
{
	gp_reader *r = tool_open(in);
	if (!r)
		return EXIT_BADINPUT;
	struct stacks *st = stacks_new(r);
	stacks_set_site_rule(st, site);
	struct stack_work *sw = stack_work_new();
	struct opjoin_opts jo = { sizeof(jo), 0, 0, stack_work_call };
	struct opjoin *j = opjoin_new(r, &jo, stack_work_op, sw);
	const gp_record *rec;
	int rc;
	uint64_t nrec = 0, now = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++nrec);
		switch (rec->type) {
		case GP_REC_MODULE: case GP_REC_STACK: case GP_REC_THREAD: case GP_REC_SOURCE:
			stacks_add(st, rec);
			continue;
		case GP_REC_API:
			opjoin_api(j, tool_pid(r, rec), tool_rec_tid(r, rec), &rec->u.api, 1);
			break;
		case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
			opjoin_gpu(j, tool_pid(r, rec), rec);
			break;
		default:
			continue;
		}
		if (gp_record_time(rec) > now) opjoin_advance(j, now = gp_record_time(rec));
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

	size_t n;
	const struct stack_work_entry *ls = stack_work_all(sw, &n);
	strmap idx;
	strmap_init(&idx);
	struct line *lines = NULL;
	size_t nlines = 0, clines = 0;
	int by_layer = site && site->kind == SITE_LAYER;
	for (size_t i = 0; i < n; i++) {
		uint64_t w = weight_of(&ls[i], weight);
		if (!w) continue;
		/* by layer: a graph launch's kernels have a path of their own */
		uint64_t wg = by_layer && weight != FOLDED_LAUNCHES ? ls[i].graph_kernel_ns : 0;
		for (int graph = 0; graph < 2; graph++) {
			uint64_t part = graph ? wg : w - wg;
			if (!part) continue;
			char *stack = folded_stack(st, &ls[i], site, graph);
			int is_new;
			size_t *slot = strmap_get(&idx, stack, &is_new);
			if (is_new) {
				*slot = nlines;
				struct line l = { stack, 0 };
				VEC_PUSH(lines, nlines, clines, l);
			} else {
				free(stack);
			}
			lines[*slot].w += part;
		}
	}
	if (nlines) qsort(lines, nlines, sizeof(*lines), cmp_line);

	int to_stdout = !strcmp(out, "-");
	FILE *f = to_stdout ? stdout : fopen(out, "w");
	if (!f) {
		tool_err("cannot write %s: %s", out, strerror(errno));
		code = EXIT_BADINPUT;
	} else {
		for (size_t i = 0; i < nlines; i++) fprintf(f, "%s %" PRIu64 "\n", lines[i].stack, lines[i].w);
		int werr = ferror(f);
		if (to_stdout) werr |= fflush(f) != 0;
		else werr |= fclose(f) != 0;
		if (werr) {
			tool_err("cannot write %s: %s", out, strerror(errno));
			code = EXIT_BADINPUT;
		}
	}
	if (!nlines)
		tool_warn("%s: no launch with %s; wrote an empty file", in,
			  weight == FOLDED_LAUNCHES ? "a recorded call" : "GPU time");
	for (size_t i = 0; i < nlines; i++) free(lines[i].stack);
	free(lines);
	strmap_free(&idx);
out:
	opjoin_free(j);
	stack_work_free(sw);
	stacks_free(st);
	gp_reader_close(r);
	return code;
}
