/* export_folded.c — folded stacks ("frame;frame;...;leaf WEIGHT" per line,
 * root first) for flamegraph.pl, speedscope and inferno: the stacks of the
 * launch calls weighted by the GPU time of the work they launched, or by the
 * number of launches.  One pass collects stacks and launches; the output is
 * written at the end, sorted, so equal input gives equal output. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/launch_join.h"
#include "analysis/stacks.h"
#include "common/tool.h"
#include "export/export.h"

struct line { char *stack; uint64_t w; };

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack, ((const struct line *)b)->stack);
}

static uint64_t weight_of(const struct joined_launch *l, enum folded_weight w)
{
	switch (w) {
	case FOLDED_GPU_TIME: return l->kernel_ns + l->memop_ns;
	case FOLDED_KERNEL_TIME: return l->kernel_ns;
	case FOLDED_LAUNCHES: return l->has_api && (l->launch_call || l->kernels || l->memops);
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

/* The folded form of one launch's stack, malloc'd.  Every frame (not only
 * the leaf) ending in " NUMBER" gets '_' for that space, so one name is
 * drawn as one frame wherever it is. */
static char *folded_stack(struct stacks *st, const struct joined_launch *l)
{
	if (!l->stack_id) return xstrdup("(no stack)");
	const struct stack_view *v = stacks_view(st, l->stack_id, l->pid, l->tid);
	if (!v) return xstrdup("(missing stack)");
	if (!v->nframes) return xstrdup("(empty stack)");
	size_t len = 1;
	for (uint32_t i = 0; i < v->nframes; i++) len += strlen(v->frames[i]) + 1;
	char *s = xmalloc(len), *p = s;
	for (uint32_t i = 0; i < v->nframes; i++) {
		size_t n = strlen(v->frames[i]);
		if (i) *p++ = ';';
		memcpy(p, v->frames[i], n);
		size_t sp = number_space(v->frames[i], n);
		if (sp < n) p[sp] = '_';
		p += n;
	}
	*p = 0;
	return s;
}

int export_folded(const char *in, const char *out, int strict, enum folded_weight weight)
{
	gp_reader *r = tool_open(in);
	if (!r)
		return EXIT_BADINPUT;
	struct stacks *st = stacks_new(r);
	struct launch_join *lj = launch_join_new();
	const gp_record *rec;
	int rc;
	uint64_t nrec = 0;
	while ((rc = gp_reader_next(r, &rec)) > 0) {
		progress_tick(++nrec);
		uint32_t pid = tool_pid(r, rec);
		switch (rec->type) {
		case GP_REC_MODULE: case GP_REC_STACK: case GP_REC_THREAD: case GP_REC_SOURCE:
			stacks_add(st, rec);
			break;
		case GP_REC_API: {
			const gp_rec_source *src = gp_reader_source(r, rec->source_id);
			uint32_t tid = rec->u.api.tid ? rec->u.api.tid : src ? src->tid : 0;
			launch_join_api(lj, pid, tid, &rec->u.api);
			break;
		}
		case GP_REC_KERNEL:
			launch_join_gpu(lj, pid, rec->u.kernel.correlation_id, GPU_WORK_KERNEL,
					tool_rec_end(rec) > rec->u.kernel.start_ns ? tool_rec_end(rec) - rec->u.kernel.start_ns : 0);
			break;
		case GP_REC_MEMCPY: case GP_REC_MEMSET: {
			uint64_t s = gp_record_time(rec), e = tool_rec_end(rec);
			uint64_t corr = rec->type == GP_REC_MEMCPY ? rec->u.memcpy.correlation_id : rec->u.memset.correlation_id;
			launch_join_gpu(lj, pid, corr, GPU_WORK_COPY, e > s ? e - s : 0);
			break;
		}
		}
	}
	int code = tool_finish(r, in, rc, strict);
	if (code != EXIT_OK && nrec == 0)
		goto out;
	if (!stacks_count(st)) {
		tool_err("%s: trace has no stacks (record with --stacks)", in);
		code = EXIT_USAGE;
		goto out;
	}

	size_t n;
	const struct joined_launch *ls = launch_join_all(lj, &n);
	strmap idx;
	strmap_init(&idx);
	struct line *lines = NULL;
	size_t nlines = 0, clines = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t w = weight_of(&ls[i], weight);
		if (!w) continue;
		char *stack = folded_stack(st, &ls[i]);
		int is_new;
		size_t *slot = strmap_get(&idx, stack, &is_new);
		if (is_new) {
			*slot = nlines;
			struct line l = { stack, 0 };
			VEC_PUSH(lines, nlines, clines, l);
		} else {
			free(stack);
		}
		lines[*slot].w += w;
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
	launch_join_free(lj);
	stacks_free(st);
	gp_reader_close(r);
	return code;
}
