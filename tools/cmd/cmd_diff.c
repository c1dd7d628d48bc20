/* cmd_diff.c — `gpuprof diff A B`: what changed between two runs
 * (docs/REPORT.md, "gpuprof diff"; analysis/diff.h).  Option parsing, the
 * passes over the two traces and printing.
 *
 * Per trace: the two passes of the steps analysis (analysis/steps_run.h),
 * then, once the steps of both runs are aligned, one pass that profiles the
 * aligned steps (analysis/step_profile.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/step_profile.h"
#include "analysis/step_summary.h"
#include "analysis/steps_run.h"
#include "cmd/cmd.h"
#include "common/report.h"
#include "common/tool.h"

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof diff [--format table|csv|json] [--report LIST] [--top N] [--alpha P]\n"
		   "                    [--method auto|nvtx|trace] [--step-range NAME] [--keep-warmup]\n"
		   "                    [--strict] A B\n\n"
		   "What changed from run A to run B.  The steady-state steps of the two runs are\n"
		   "aligned (by step number when both number them) and compared: step time A vs B\n"
		   "(median, spread, a Mann-Whitney U test and a bootstrap interval of the change of\n"
		   "the median: is it larger than the run-to-run noise?), then per step the buckets\n"
		   "of the step time, the kernels, NVTX ranges, API calls and copies, each ranked by\n"
		   "how much its time per step moved.  The first line says what changed most.\n"
		   "Merged multi-rank traces are compared rank by rank.  docs/REPORT.md defines it all.\n\n"
		   "Tables (--report, comma separated; default all): diff (one line per rank),\n"
		   "diff_steps, diff_buckets, diff_kernels, diff_nvtx, diff_api, diff_copies.\n\n"
		   "  --top N            rows per rank in the kernel, NVTX and API tables (default %d;\n"
		   "                     0: all)\n"
		   "  --alpha P          significance level of the test (default %g)\n"
		   "  --method M         step detection, as `gpuprof steps` (auto, nvtx, trace)\n"
		   "  --step-range NAME  the steps are the NVTX ranges named NAME or NAME <number>\n"
		   "  --keep-warmup      compare the warm-up steps too\n"
		   "  --format FMT       table (default), csv or json\n"
		   "  --strict           exit 2 when a trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help         this text\n",
		DIFF_TOP, DIFF_ALPHA);
}

struct side {
	const char *path;
	gp_reader *r;
	struct steps_run sr;
	int ran;
	struct step_profile *prof;
};

/* Opens a trace and runs the steps analysis; summarises its processes.
 * The exit code. */
static int analyse(struct side *s, const struct steps_run_opts *o, int keep, int strict)
{
	s->r = tool_open(s->path);
	if (!s->r) return EXIT_BADINPUT;
	int read_rc = 0;
	const char *err = NULL;
	if (steps_run(s->r, o, &s->sr, &read_rc, &err) < 0) {
		if (err) {
			tool_err("%s: %s", s->path, err);
			return EXIT_BADINPUT;
		}
		return tool_finish(s->r, s->path, read_rc, strict);
	}
	s->ran = 1;
	int code = tool_finish(s->r, s->path, read_rc, strict);
	for (size_t i = 0; i < steps_nprocs(s->sr.st); i++) {
		struct step_summary sm;
		struct steps_proc *p = steps_proc(s->sr.st, i);
		step_summarize(p, keep, &sm);
		step_summary_free(&sm, p->nrows);
	}
	return code;
}

/* the processes of a side that have steps */
static size_t with_steps(struct side *s, struct steps_proc **out)
{
	size_t n = 0;
	for (size_t i = 0; i < steps_nprocs(s->sr.st); i++) {
		struct steps_proc *p = steps_proc(s->sr.st, i);
		if (p->nrows) out[n++] = p;
	}
	return n;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct steps_proc *x = *(struct steps_proc *const *)a, *y = *(struct steps_proc *const *)b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Pairs the processes: by rank when every one has a distinct rank, else in
 * pid order.  Returns the number of pairs. */
static size_t pair_up(struct side *a, struct side *b, struct diff_pair **out)
{
	size_t na = steps_nprocs(a->sr.st), nb = steps_nprocs(b->sr.st);
	struct steps_proc **pa = xcalloc(na + 1, sizeof(*pa)), **pb = xcalloc(nb + 1, sizeof(*pb));
	na = with_steps(a, pa);
	nb = with_steps(b, pb);
	qsort(pa, na, sizeof(*pa), cmp_proc);
	qsort(pb, nb, sizeof(*pb), cmp_proc);
	int by_rank = 1;
	for (size_t i = 0; i < na && by_rank; i++) {
		int32_t r = steps_run_rank(&a->sr, pa[i]->pid);
		by_rank = r >= 0;
		for (size_t j = 0; j < i && by_rank; j++) by_rank = steps_run_rank(&a->sr, pa[j]->pid) != r;
	}
	for (size_t i = 0; i < nb && by_rank; i++) {
		int32_t r = steps_run_rank(&b->sr, pb[i]->pid);
		by_rank = r >= 0;
		for (size_t j = 0; j < i && by_rank; j++) by_rank = steps_run_rank(&b->sr, pb[j]->pid) != r;
	}
	struct diff_pair *d = xcalloc(na + 1, sizeof(*d));
	size_t n = 0;
	for (size_t i = 0; i < na; i++) {
		struct steps_proc *q = NULL;
		if (by_rank) {
			for (size_t j = 0; j < nb && !q; j++)
				if (steps_run_rank(&b->sr, pb[j]->pid) == steps_run_rank(&a->sr, pa[i]->pid)) q = pb[j];
		} else if (i < nb) {
			q = pb[i];
		}
		if (!q) {
			tool_warn("%s: pid %u has no counterpart in %s; left out", a->path, pa[i]->pid, b->path);
			continue;
		}
		d[n].a = (struct diff_side){ pa[i]->pid, steps_run_rank(&a->sr, pa[i]->pid), pa[i], NULL, 0, NULL };
		d[n].b = (struct diff_side){ q->pid, steps_run_rank(&b->sr, q->pid), q, NULL, 0, NULL };
		n++;
	}
	if (nb > na) tool_warn("%s has %zu processes with steps, %s %zu; the extra ones are left out", b->path, nb,
			       a->path, na);
	free(pa);
	free(pb);
	*out = d;
	return n;
}

/* The pass that profiles the aligned steps of one side. */
static int profile(struct side *s, struct diff_pair *d, size_t n, int is_b, int strict)
{
	s->prof = step_profile_new(s->r, &s->sr);
	for (size_t i = 0; i < n; i++) {
		struct diff_side *x = is_b ? &d[i].b : &d[i].a;
		for (size_t k = 0; k < x->n; k++) step_profile_choose(s->prof, x->pid, x->rows[k]->s, x->rows[k]->e);
	}
	int rc = step_profile_run(s->prof);
	int code = rc < 0 && rc != GP_ERR_TRUNCATED && rc != GP_ERR_CORRUPT ? tool_finish(s->r, s->path, rc, strict)
									   : EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		struct diff_side *x = is_b ? &d[i].b : &d[i].a;
		x->prof = step_profile_proc(s->prof, x->pid);
	}
	return code;
}

static int parse_tables(const char *arg, int *want)
{
	char *list = xstrdup(arg), *save = NULL;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;
		for (k = 0; k < DT_COUNT && strcmp(tok, diff_table_names[k]); k++) ;
		if (k == DT_COUNT) {
			tool_err("unknown table '%s' (diff, diff_steps, diff_buckets, diff_kernels, diff_nvtx, "
				 "diff_api, diff_copies)", tok);
			free(list);
			return -1;
		}
		want[k] = 1;
	}
	free(list);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "report", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'T' },
		{ "alpha", required_argument, NULL, 'a' },
		{ "method", required_argument, NULL, 'm' },
		{ "step-range", required_argument, NULL, 'n' },
		{ "keep-warmup", no_argument, NULL, 'k' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct steps_run_opts so;
	memset(&so, 0, sizeof(so));
	so.sz = sizeof(so);
	so.detect.sz = sizeof(so.detect);
	struct diff_opts dopts = { sizeof(dopts), DIFF_ALPHA, DIFF_TOP };
	enum report_fmt fmt = FMT_TABLE;
	int keep = 0, strict = 0, any = 0, c;
	int want[DT_COUNT] = { 0 };
	char *end;
	while ((c = getopt_long(argc, argv, "hf:r:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "table")) fmt = FMT_TABLE;
			else if (!strcmp(optarg, "csv")) fmt = FMT_CSV;
			else if (!strcmp(optarg, "json")) fmt = FMT_JSON;
			else { tool_err("unknown format '%s' (table, csv, json)", optarg); return EXIT_USAGE; }
			break;
		case 'r':
			if (parse_tables(optarg, want)) return EXIT_USAGE;
			any = 1;
			break;
		case 'T': {
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || v > 1000000) { tool_err("bad --top '%s' (0: all)", optarg); return EXIT_USAGE; }
			dopts.top = (size_t)v;
			break;
		}
		case 'a':
			dopts.alpha = strtod(optarg, &end);
			if (!*optarg || *end || !(dopts.alpha > 0 && dopts.alpha < 1)) {
				tool_err("bad --alpha '%s' (a probability between 0 and 1)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'm':
			if (step_want_parse(optarg, &so.detect.want)) {
				tool_err("unknown --method '%s' (auto, nvtx, trace)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (!*optarg) { tool_err("--step-range needs a name"); return EXIT_USAGE; }
			so.detect.range_name = optarg;
			break;
		case 'k': keep = 1; break;
		case 's': strict = 1; break;
		case 'h': help(stdout); return EXIT_OK;
		default: help(stderr); return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		tool_err("two traces needed: gpuprof diff A B");
		help(stderr);
		return EXIT_USAGE;
	}
	if (!any)
		for (int k = 0; k < DT_COUNT; k++) want[k] = 1;
	struct side s[2];
	memset(s, 0, sizeof(s));
	s[0].path = argv[optind];
	s[1].path = argv[optind + 1];
	struct diff_pair *pairs = NULL;
	size_t npairs = 0;
	int code = EXIT_OK;
	for (int i = 0; i < 2 && code != EXIT_BADINPUT; i++) {
		int rc = analyse(&s[i], &so, keep, strict);
		if (rc != EXIT_OK) code = rc;
	}
	if (code == EXIT_BADINPUT || !s[0].ran || !s[1].ran) {
		if (code == EXIT_OK) code = EXIT_BADINPUT;
		goto out;
	}
	npairs = pair_up(&s[0], &s[1], &pairs);
	if (!npairs) {
		tool_err("no steps to compare: %s", steps_nprocs(s[0].sr.st) && steps_proc(s[0].sr.st, 0)->nrows ?
			 "the second trace has none" : "the first trace has none");
		code = EXIT_BADINPUT;
		goto out;
	}
	for (size_t i = 0; i < npairs; i++) diff_align(&pairs[i], keep);
	for (int i = 0; i < 2 && code != EXIT_BADINPUT; i++) {
		int rc = profile(&s[i], pairs, npairs, i, strict);
		if (rc != EXIT_OK) code = rc;
	}
	if (code == EXIT_BADINPUT) goto out;

	struct diff_tables t;
	diff_tables_fill(&t, pairs, npairs, &dopts);
	if (fmt == FMT_TABLE) {
		/* the first line says what changed; the diff table is these lines */
		for (size_t i = 0; i < t.nheadline; i++) printf("%s\n", tool_text(t.headline[i]));
		printf("(A: %s, B: %s)\n\n", tool_text(s[0].path), tool_text(s[1].path));
		want[DT_SUMMARY] = 0;
	}
	const struct report_style style = { .fmt = fmt, .width = 0, .unit = TU_NS };
	report_print_tables(stdout, t.rep, want, DT_COUNT, &style);
	diff_tables_free(&t);
out:
	for (size_t i = 0; i < npairs; i++) diff_pair_free(&pairs[i]);
	free(pairs);
	for (int i = 0; i < 2; i++) {
		step_profile_free(s[i].prof);
		steps_run_free(&s[i].sr);
		gp_reader_close(s[i].r);
	}
	return code;
}
