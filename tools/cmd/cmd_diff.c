/* cmd_diff.c — `gpuprof diff A B` and `gpuprof diff A1 A2 ... --vs B1 B2
 * ...`: what changed between two runs, or two sets of runs (docs/REPORT.md,
 * "gpuprof diff"; analysis/diff/diff.h).  Option parsing, the passes over the
 * traces and printing.
 *
 * Per trace: the steps as `gpuprof steps` finds them, through stats' driver
 * (reports/stats_drive.h: the pre-pass and the steps' pass, in slices with
 * --threads), its pre-pass also noting the processes and threads
 * (analysis/gpu/trace_info.h); then, once the steps of all runs are
 * aligned, one pass that profiles the aligned steps
 * (analysis/steps/step_profile.h).  Every trace's analysis is held until
 * the tables are made: memory grows with the number of runs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_settings.h"
#include "analysis/diff/diff.h"
#include "analysis/steps/step_profile.h"
#include "analysis/steps/step_summary.h"
#include "analysis/gpu/trace_info.h"
#include "cmd/cmd.h"
#include "cmd/stepopt.h"
#include "common/report.h"
#include "common/tabopt.h"
#include "common/tool.h"
#include "reports/stats_drive.h"

void cmd_diff_help(FILE *f)
{
	fprintf(f, "usage: gpuprof diff [--format table|csv|json] [--report LIST] [--top N] [--alpha P]\n"
		   "                    [--noise PCT] [--method auto|nvtx|trace] [--step-range NAME]\n"
		   "                    [--keep-warmup] [--width N] [--names base|full|mangled] [--strict]\n"
		   "                    [--verbose] A B\n"
		   "       gpuprof diff [options] A1 A2 ... --vs B1 B2 ...\n\n"
		   "What changed from run A to run B, or from the runs A1 A2 ... to the runs B1 B2 ...\n"
		   "The first line names what differs between them (command line, settings,\n"
		   "processes, threads, the kernels only one side runs) and its effect on the step\n"
		   "time.  The steady-state steps of the runs are aligned (by step number when all\n"
		   "number them) and compared: step time A vs B and whether the change is larger than\n"
		   "the run-to-run noise (2+ runs a side: Welch's t test on the runs' median step\n"
		   "times; one run on a side: a Mann-Whitney U test over the steps and the --noise\n"
		   "floor), then per step the buckets of the step time, the kernels, NVTX ranges, API\n"
		   "calls and copies, each ranked by how much its time per step moved.  Merged\n"
		   "multi-rank traces are compared rank by rank.  docs/REPORT.md defines it all.\n\n"
		   "Tables (--report, comma separated; default all): diff (one line per rank),\n"
		   "diff_setup, diff_steps, diff_runs, diff_buckets, diff_kernels, diff_nvtx,\n"
		   "diff_api, diff_copies.\n\n"
		   "  --vs               the traces before it are side A's runs, those after it B's\n"
		   "  --top N            rows per rank in the kernel, NVTX and API tables (default %d;\n"
		   "                     0: all)\n"
		   "  --alpha P          significance level of the test (default %g)\n"
		   "  --noise PCT        one run on a side: a change of the median step time below PCT\n"
		   "                     %% is within the run-to-run noise (default %g; 0: none)\n"
		   "  --method M         step detection, as `gpuprof steps` (auto, nvtx, trace)\n"
		   "  --step-range NAME  the steps are the NVTX ranges named NAME or NAME <number>\n"
		   "  --keep-warmup      compare the warm-up steps too\n"
		   "  --format FMT       table (default), csv or json\n"
		   TABOPT_HELP
		   "  --strict           exit 2 when a trace is truncated (default: warn, exit 0)\n"
		   "  --verbose          on stderr: per trace, the slices its steps' passes ran in\n"
		   "  -h, --help         this text\n",
		DIFF_TOP, DIFF_ALPHA, DIFF_NOISE_PCT);
}

/* What every trace's drive shares: the steps as `gpuprof steps` finds them
 * (stats' steps report alone, over the whole trace), and the pre-pass's
 * consumer that notes the processes and threads. */
struct view {
	struct stats_opts so;
	struct stats_pre_hook hook;
	int strict, verbose;
};

struct side {                  /* one trace */
	const char *path;
	struct stats_drive d;  /* d.r reads it; d.ctx.pipe: its steps; d.pre_st: its struct trace_info */
	struct steps *st;      /* d.ctx.pipe.steps once it ran */
	struct step_profile *prof;
};

static void *info_new(void *arg, uint64_t from)
{
	return xcalloc(1, sizeof(struct trace_info));
}

static void info_add(void *st, gp_reader *r, const gp_record *rec)
{
	trace_info_add(st, r, rec);
}

static int info_merge(void *dst, void *src)
{
	trace_info_merge(dst, src);
	return 0;
}

static void info_free(void *st)
{
	trace_info_free(st);
	free(st);
}

/* Opens a trace and runs its drive; summarises its processes.  The exit
 * code. */
static int analyse(struct side *s, const struct view *v, int keep)
{
	gp_reader *r = tool_open(s->path);
	if (!r) return EXIT_BADINPUT;
	s->d = (struct stats_drive){ .r = r, .path = s->path, .strict = v->strict, .so = &v->so, .names = NAME_FULL,
				     .threads = g_threads, .pre = &v->hook, .keep_going = 2 };
	stats_drive_plan(&s->d);
	int code = EXIT_OK;
	if (stats_drive_run(&s->d, &code))
		return s->d.steps_err ? tool_fail(EXIT_BADINPUT, "%s: %s", s->path, s->d.steps_err) : code;
	if (v->verbose)
		fprintf(stderr, "%s: %s: the pre-pass in %d slices, the steps' pass in %d (1: one thread's read)\n",
			g_cmd, s->path, s->d.pt.pre.k ? s->d.pt.pre.k : 1, s->d.pt.nshards ? s->d.pt.nshards : 1);
	trace_info_finish(s->d.pre_st);
	s->st = s->d.ctx.pipe.steps;
	for (size_t i = 0; i < steps_nprocs(s->st); i++) {
		struct step_summary sm;
		struct steps_proc *p = steps_proc(s->st, i);
		step_summarize(p, keep, &sm);
		step_summary_free(&sm, p->nrows);
	}
	return code;
}

/* The process record of pid in trace s; NULL when none. */
static const gp_rec_process *process_of(const struct side *s, uint32_t pid)
{
	const struct trace_info *in = s->d.pre_st;
	for (size_t k = 0; k < in->nprocs; k++)
		if (in->procs[k].pid == pid) return &in->procs[k];
	return NULL;
}

/* The rank of pid from its PROCESS record; -1 when none or unknown. */
static int32_t rank_of(const struct side *s, uint32_t pid)
{
	const gp_rec_process *p = process_of(s, pid);
	return p ? p->rank : -1;
}

/* The number of threads of pid that recorded something (their SOURCE records). */
static size_t threads_of(const struct side *s, uint32_t pid)
{
	const struct trace_info *in = s->d.pre_st;
	uint64_t *tid = xcalloc(in->nsrcs + 1, sizeof(*tid));
	size_t n = 0, distinct = 0;
	for (size_t k = 0; k < in->nsrcs; k++)
		if (in->srcs[k].kind == GP_SOURCE_THREAD && in->srcs[k].pid == pid) tid[n++] = in->srcs[k].tid;
	qsort(tid, n, sizeof(*tid), cmp_u64);
	for (size_t k = 0; k < n; k++) distinct += !k || tid[k] != tid[k - 1];
	free(tid);
	return distinct;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct steps_proc *x = *(struct steps_proc *const *)a, *y = *(struct steps_proc *const *)b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* a trace's processes with steps, by pid; 1 when each has a rank of its own */
static size_t procs_of(struct side *s, struct steps_proc ***out, int *distinct)
{
	struct steps_proc **p = xcalloc(steps_nprocs(s->st) + 1, sizeof(*p));
	size_t n = 0;
	for (size_t i = 0; i < steps_nprocs(s->st); i++)
		if (steps_proc(s->st, i)->nrows) p[n++] = steps_proc(s->st, i);
	qsort(p, n, sizeof(*p), cmp_proc);
	for (size_t i = 0; i < n && *distinct; i++) {
		int32_t r = rank_of(s, p[i]->pid);
		*distinct = r >= 0;
		for (size_t j = 0; j < i && *distinct; j++) *distinct = rank_of(s, p[j]->pid) != r;
	}
	*out = p;
	return n;
}

static struct diff_run run_of(struct side *s, size_t trace, const struct steps_proc *p)
{
	const gp_rec_process *pr = process_of(s, p->pid);
	gp_reader *r = s->d.r;
	return (struct diff_run){ .path = s->path, .trace = trace, .pid = p->pid, .p = p,
				  .cmd = pr ? gp_reader_string(r, pr->name_id) : NULL,
				  .settings = pr && pr->settings_id ? gp_reader_string(r, pr->settings_id) : NULL,
				  .nthreads = threads_of(s, p->pid),
				  .nprocs = ((const struct trace_info *)s->d.pre_st)->nprocs };
}

/* Pairs the processes of the traces t[0..na) (side A) and t[na..nt) (B):
 * by rank when every process of every trace has a distinct rank in its
 * trace, else by place in pid order.  A pair is the process of each trace
 * with that rank (place); those of the first trace of A set the pairs.
 * Returns the number of pairs. */
static size_t pair_up(struct side *t, size_t na, size_t nt, struct diff_pair **out)
{
	struct steps_proc ***p = xcalloc(nt, sizeof(*p));
	size_t *n = xcalloc(nt, sizeof(*n));
	int by_rank = 1;
	for (size_t i = 0; i < nt; i++) n[i] = procs_of(&t[i], &p[i], &by_rank);
	struct diff_pair *d = xcalloc(n[0] + 1, sizeof(*d));
	size_t np = 0;
	for (size_t k = 0; k < n[0]; k++) {
		struct diff_pair *x = &d[np];
		int32_t rank = rank_of(&t[0], p[0][k]->pid);
		x->rank = rank;
		x->a.run = xcalloc(na, sizeof(*x->a.run));
		x->b.run = xcalloc(nt - na, sizeof(*x->b.run));
		for (size_t i = 0; i < nt; i++) {
			const struct steps_proc *q = NULL;
			if (by_rank) {
				for (size_t j = 0; j < n[i] && !q; j++)
					if (rank_of(&t[i], p[i][j]->pid) == rank) q = p[i][j];
			} else if (k < n[i]) {
				q = p[i][k];
			}
			if (!q) {
				tool_warn("%s: pid %u has no counterpart in %s; left out", t[0].path, p[0][k]->pid, t[i].path);
				continue;
			}
			struct diff_side *sd = i < na ? &x->a : &x->b;
			sd->run[sd->nrun++] = run_of(&t[i], i, q);
		}
		if (x->a.nrun && x->b.nrun) np++;
		else diff_pair_free(x);
	}
	for (size_t i = 1; i < nt; i++)
		if (n[i] > n[0])
			tool_warn("%s has %zu processes with steps, %s %zu; the extra ones are left out", t[i].path, n[i],
				  t[0].path, n[0]);
	for (size_t i = 0; i < nt; i++) free(p[i]);
	free(p);
	free(n);
	*out = d;
	return np;
}

/* The pass that profiles the aligned steps of trace number `trace`. */
static int profile(struct side *s, size_t trace, struct diff_pair *d, size_t n, int strict)
{
	struct diff_run **runs = NULL; /* those of this trace */
	size_t nruns = 0, cap = 0;
	for (size_t i = 0; i < n; i++)
		for (int sd = 0; sd < 2; sd++) {
			struct diff_side *x = sd ? &d[i].b : &d[i].a;
			for (size_t r = 0; r < x->nrun; r++)
				if (x->run[r].trace == trace) VEC_PUSH(runs, nruns, cap, &x->run[r]);
		}
	s->prof = step_profile_new(s->d.r, &s->d.ctx.pipe);
	for (size_t i = 0; i < nruns; i++)
		for (size_t k = 0; k < runs[i]->n; k++)
			step_profile_choose(s->prof, runs[i]->pid, runs[i]->rows[k].s, runs[i]->rows[k].e);
	int rc = step_profile_run(s->prof);
	int code = !gp_reader_recoverable(rc) ? tool_finish(s->d.r, s->path, rc, strict) : EXIT_OK;
	for (size_t i = 0; i < nruns; i++) runs[i]->prof = step_profile_proc(s->prof, runs[i]->pid);
	free(runs);
	return code;
}

static int parse_tables(const char *arg, int *want)
{
	char *list = xstrdup(arg), *save = NULL;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;
		for (k = 0; k < DT_COUNT && strcmp(tok, diff_table_names[k]); k++) ;
		if (k == DT_COUNT) {
			char names[256];
			fmt_list(names, sizeof(names), diff_table_names, DT_COUNT);
			tool_err("unknown table '%s' (%s)", tok, names);
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
		{ "noise", required_argument, NULL, 'N' },
		{ "vs", no_argument, NULL, 'V' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 },
	};
	/* the steps as `gpuprof steps` finds them, over the whole trace */
	struct view v = { .so = { .rule = ATTR_ANY_THREAD, .whole_trace = 1 },
			  .hook = { NULL, info_new, info_add, info_merge, info_free, NULL } };
	struct diff_opts dopts = { DIFF_ALPHA, DIFF_TOP, DIFF_NOISE_PCT };
	enum report_fmt fmt = FMT_TABLE;
	int keep = 0, any = 0, vs = 0, c;
	int want[DT_COUNT] = { 0 };
	char *end;
	uint64_t top;
	/* the traces in order, and how many come before --vs ("-": every
	 * non-option is returned in place, as option 1) */
	const char **paths = xcalloc((size_t)argc + 1, sizeof(*paths));
	size_t npaths = 0, na = 0;
	int code = EXIT_OK;
	while ((c = getopt_long(argc, argv, "-f:r:", opts, NULL)) != -1) {
		int taken = stepopt_parse(c, optarg, &v.so.detect, NULL);
		if (taken < 0) goto bad;
		if (taken) continue;
		switch (c) {
		case 1: paths[npaths++] = optarg; break;
		case 'V':
			if (vs) { tool_err("--vs given twice"); goto bad; }
			vs = 1;
			na = npaths;
			break;
		case 'N':
			dopts.noise_pct = strtod(optarg, &end);
			if (!*optarg || *end || !(dopts.noise_pct >= 0 && dopts.noise_pct < 1000)) {
				tool_err("bad --noise '%s' (a percentage, 0 or more)", optarg);
				goto bad;
			}
			break;
		case 'f':
			if (report_fmt_parse(optarg, &fmt)) goto bad;
			break;
		case 'r':
			if (parse_tables(optarg, want)) goto bad;
			any = 1;
			break;
		case 'T':
			if (gp_parse_uint(optarg, 0, 1000000, &top)) { tool_err("bad --top '%s' (0: all)", optarg); goto bad; }
			dopts.top = (size_t)top;
			break;
		case 'a':
			dopts.alpha = strtod(optarg, &end);
			if (!*optarg || *end || !(dopts.alpha > 0 && dopts.alpha < 1)) {
				tool_err("bad --alpha '%s' (a probability between 0 and 1)", optarg);
				goto bad;
			}
			break;
		case 'k': keep = 1; break;
		case 's': v.strict = 1; break;
		case 'v': v.verbose = 1; break;
		default: tool_see_help(); goto bad;
		}
	}
	if (stepopt_check(&v.so.detect)) goto bad;
	while (optind < argc) paths[npaths++] = argv[optind++]; /* after "--" */
	if (!vs) na = npaths == 2 ? 1 : 0;
	if (vs ? !na || na == npaths : npaths != 2) {
		tool_err(vs ? "traces needed on both sides of --vs: gpuprof diff A1 A2 ... --vs B1 B2 ..."
			    : "two traces needed: gpuprof diff A B (or A1 A2 ... --vs B1 B2 ...)");
		tool_see_help();
		goto bad;
	}
	if (!any)
		for (int k = 0; k < DT_COUNT; k++) want[k] = 1;
	stats_drive_malloc();
	struct side *s = xcalloc(npaths, sizeof(*s));
	for (size_t i = 0; i < npaths; i++) s[i].path = paths[i];
	struct diff_pair *pairs = NULL;
	size_t npairs = 0;
	int ran = 1;
	for (size_t i = 0; i < npaths && code != EXIT_BADINPUT; i++) {
		int rc = analyse(&s[i], &v, keep);
		if (rc != EXIT_OK) code = rc;
		ran = ran && s[i].st;
	}
	if (code == EXIT_BADINPUT || !ran) {
		if (code == EXIT_OK) code = EXIT_BADINPUT;
		goto out;
	}
	npairs = pair_up(s, na, npaths, &pairs);
	if (!npairs) {
		size_t none = 0; /* the first trace without steps */
		for (size_t i = 0; i < npaths; i++) {
			size_t k, n = steps_nprocs(s[i].st);
			for (k = 0; k < n && !steps_proc(s[i].st, k)->nrows; k++) ;
			if (k == n) { none = i; break; }
		}
		tool_err("no steps to compare: %s has none", tool_text(s[none].path));
		code = EXIT_BADINPUT;
		goto out;
	}
	for (size_t i = 0; i < npairs; i++) diff_align(&pairs[i], keep);
	for (size_t i = 0; i < npaths && code != EXIT_BADINPUT; i++) {
		int rc = profile(&s[i], i, pairs, npairs, v.strict);
		if (rc != EXIT_OK) code = rc;
	}
	if (code == EXIT_BADINPUT) goto out;

	struct diff_tables t;
	diff_tables_fill(&t, pairs, npairs, &dopts);
	int width = tabopt_width();
	if (fmt == FMT_TABLE) {
		/* the first line says what changed; the diff table is these lines */
		char *head = NULL;
		size_t headlen = 0;
		FILE *hf = open_memstream(&head, &headlen);
		if (!hf) hf = stdout;
		for (size_t i = 0; i < t.nheadline; i++) fprintf(hf, "%s\n", tool_text(t.headline[i]));
		if (npaths == 2) {
			fprintf(hf, "(A: %s, B: %s)\n", tool_text(s[0].path), tool_text(s[1].path));
		} else {
			for (size_t i = 0; i < npaths; i++)
				fprintf(hf, "%s%s%s", !i ? "(A: " : i == na ? "; B: " : ", ", tool_text(s[i].path),
					i + 1 == npaths ? ")\n" : "");
		}
		if (hf != stdout && fclose(hf) == 0) report_text(stdout, head, width);
		free(head);
		putchar('\n');
		want[DT_SUMMARY] = 0;
	}
	const struct report_style style = { .fmt = fmt, .width = width, .unit = TU_NS };
	report_print_tables(stdout, t.rep, want, DT_COUNT, &style);
	diff_tables_free(&t);
out:
	for (size_t i = 0; i < npairs; i++) diff_pair_free(&pairs[i]);
	free(pairs);
	for (size_t i = 0; i < npaths; i++) {
		step_profile_free(s[i].prof);
		gp_reader *r = s[i].d.r;
		stats_drive_free(&s[i].d);
		gp_reader_close(r);
	}
	free(s);
	free(paths);
	return code;
bad:
	free(paths);
	return EXIT_USAGE;
}
