/* cmd_stats.c — `gpuprof stats FILE`: summary reports modelled on nsys stats
 * (cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
 * cuda_gpu_mem_size_sum, nvtx_sum) plus GPU utilisation and more.
 *
 * The driver: options, the pre-pass when a report run needs the NVTX ranges
 * or the steps, one streaming pass in time order handing each record to the
 * reports that asked for its type (and each joined GPU operation to those
 * that asked for them), then fill and print.  The reports are components
 * (reports/stats_report.h), listed in reports/registry.c; their memory is
 * described in their files. */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/steps/steps_run.h"
#include "cmd/cmd.h"
#include "cmd/stepopt.h"
#include "common/report.h"
#include "common/selopt.h"
#include "common/tabopt.h"
#include "common/tool.h"
#include "reports/stats_prepass_shards.h"
#include "reports/stats_report.h"
#include "reports/stats_selection.h"
#include "reports/stats_shards.h"

/* A table of a report: its position in the list and among its tables. */
struct table_ref { const struct stats_report *rep; int rep_ix, tab_ix; };

/* Every table of every report, in output order; *n the count. */
static struct table_ref *all_tables(size_t *n)
{
	size_t cnt = 0;
	for (int i = 0; stats_reports[i]; i++) cnt += (size_t)stats_reports[i]->ntables;
	struct table_ref *t = xmalloc((cnt ? cnt : 1) * sizeof(*t));
	size_t k = 0;
	for (int i = 0; stats_reports[i]; i++)
		for (int j = 0; j < stats_reports[i]->ntables; j++)
			t[k++] = (struct table_ref){ stats_reports[i], i, j };
	*n = cnt;
	return t;
}

void cmd_stats_report_names(char *buf, size_t n)
{
	size_t l = 0;
	if (n) buf[0] = 0;
	for (int i = 0; stats_reports[i]; i++)
		for (int j = 0; j < stats_reports[i]->ntables && l < n; j++)
			l += (size_t)snprintf(buf + l, n - l, "%s%s", l ? ", " : "", stats_reports[i]->tables[j].name);
}

/* "  NAME     first line\n           next line\n..." for each table. */
static void help_reports(FILE *f)
{
	for (int i = 0; stats_reports[i]; i++)
		for (int j = 0; j < stats_reports[i]->ntables; j++) {
			const struct stats_table *t = &stats_reports[i]->tables[j];
			if (strlen(t->name) <= 8) fprintf(f, "  %-8s ", t->name);
			else fprintf(f, "  %s  ", t->name);
			for (const char *p = t->help; *p; p++) {
				fputc(*p, f);
				if (*p == '\n') fputs("           ", f);
			}
			fputc('\n', f);
		}
}

void cmd_stats_help(FILE *f)
{
	fprintf(f, "usage: gpuprof stats [--report NAME[,NAME...]] [--format table|csv|json]\n"
		   "                     [--since T] [--until T] [--steps A:B] [--range NAME] [--abs-time]\n"
		   "                     [--names base|full|mangled] [--time-unit ns|us|ms|s]\n"
		   "                     [--width N] [--rows N|all] [--csv-dir DIR]\n"
		   "                     [--attribution any-thread|same-thread]\n"
		   "                     [--method auto|nvtx|trace] [--step-range NAME] [--keep-warmup]\n"
		   "                     [--kernel-wait T] [--per-step] [--verbose] [--nvtx-instances]\n"
		   "                     [--whole-trace] [--by process|none] [--strict] FILE\n\n"
		   "Summary reports (default: all that apply), modelled on `nsys stats`:\n");
	help_reports(f);
	fprintf(f, "\n"
		   "  --report LIST     reports to print, comma separated\n"
		   "  --format FMT      table (default), csv or json\n"
		   "  --time-unit U     durations in tables in ns (default), us, ms or s\n"
		   "  --rows N|all      tables: the first N rows of each, then how many more\n"
		   "                    (default 50; CSV and JSON have every row)\n"
		   "  --csv-dir DIR     one CSV file per report, DIR/NAME.csv (DIR is created;\n"
		   "                    files there are replaced), nothing on stdout\n"
		   TABOPT_HELP
		   SELOPT_HELP
		   SITE_RULE_HELP
		   "  --attribution R   which NVTX ranges and steps GPU work belongs to (nvtx, comm_steps,\n"
		   "                    steps): any-thread (default): those open when its launch call\n"
		   "                    started, on any thread of the process; same-thread: only calls\n"
		   "                    on the thread that began the range\n"
		   "  --method M        steps: nvtx (NVTX ranges named like steps: 'step 12',\n"
		   "                    'iteration 3', 'ProfilerStep#7', 'train_step'), trace (the\n"
		   "                    periodic sequence of GPU operations), auto (default: nvtx when\n"
		   "                    there are such ranges, else trace)\n"
		   "  --step-range NAME steps are the ranges named NAME, or NAME <number>\n"
		   "  --keep-warmup     count the warm-up steps in the summaries (default: left out)\n"
		   "  --kernel-wait T   steps: idle gaps up to T before work already launched count as\n"
		   "                    launch latency (default 10us; HTA's consecutive_kernel_delay)\n"
		   "  --per-step        also print step_rows (one row per step)\n"
		   "  --verbose         steps: on stderr, per process, the most records held at once\n"
		   "                    and the GPU operations the join could not pair\n"
		   "  --whole-trace     util: over the whole trace, not the steps' span (the default\n"
		   "                    when the trace has steps: warm-up left out)\n"
		   "  --by process      nvtx: rows per process (PID, Rank); the default when the trace\n"
		   "                    has ranges of several processes; --by none: merged\n"
		   "  --nvtx-instances  nvtx: a row for each numbered name (step 0, step 1, ...)\n"
		   "                    instead of one row 'step *'\n"
		   "  --strict          exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help        this text\n"
		   "  FILE              the trace; '-' = stdin (copied to a temporary file first)\n\n"
		   "Med is the median (mean of the two middle values for even counts), exact\n"
		   "unless a table holds more than 2^20 values: then its names with the most\n"
		   "values get an estimate within 0.5 %% (said under the table);\n"
		   "StdDev is the sample standard deviation (n-1), 0 for a single value.\n"
		   "docs/CLI.md defines every figure; docs/STEPS.md the steps.\n");
}

/* --report LIST: marks want[] (one per table of all_tables); naming a
 * report's first table selects all of its tables.  0, or -1 after the
 * message for an unknown name. */
static int parse_reports(const char *arg, const struct table_ref *tabs, size_t ntabs, int *want)
{
	char *list = xstrdup(arg), *save = NULL;
	int rc = 0;
	size_t l = strlen(list);
	if (list[0] == ',' || (l && list[l - 1] == ',') || strstr(list, ",,")) {
		tool_err("empty name in --report '%s'", arg);
		free(list);
		return -1;
	}
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t k;
		for (k = 0; k < ntabs && strcmp(tok, tabs[k].rep->tables[tabs[k].tab_ix].name); k++) ;
		if (k == ntabs) {
			char names[512] = "";
			for (size_t i = 0; i < ntabs; i++) {
				size_t l = strlen(names);
				snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "",
					 tabs[i].rep->tables[tabs[i].tab_ix].name);
			}
			tool_err("unknown report '%s' (reports: %s)", tok, names);
			rc = -1;
			break;
		}
		want[k] = 1;
		if (tabs[k].tab_ix == 0)
			for (size_t i = k + 1; i < ntabs && tabs[i].rep_ix == tabs[k].rep_ix; i++)
				if (!(tabs[i].rep->by_name & (1u << tabs[i].tab_ix))) want[i] = 1;
	}
	free(list);
	return rc;
}

/* The pre-pass (stats_report.h), in k slices when k > 1 and the trace
 * allows (stats_prepass_shards.h; cpu: their CPU seconds), else on this
 * thread; EXIT_OK, or the exit code after the message. */
static int prepass(struct stats_ctx *ctx, gp_reader *r, const char *path, int strict, int k,
		   struct stats_prepass_cpu *cpu)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	const char *err = NULL;
	/* GPUPROF_PREPASS_ONE_THREAD=1 (tests): on this thread whatever k, for
	 * the steps' prefix of one pass's read to compare with the slices' */
	if (k > 1 && !getenv("GPUPROF_PREPASS_ONE_THREAD") && (rc = stats_prepass_shards(ctx, path, k, cpu, &err)) <= 0) {
		if (rc == 0) return EXIT_OK;
		tool_err("%s", err);
		return EXIT_BADINPUT;
	}
	cpu->k = 0;
	double c0 = thread_cpu_s();
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		stats_ctx_pre_add(ctx, rec);
		progress_tick(++n);
	}
	/* a truncated or corrupt trace is read again and judged after the main pass */
	if (!gp_reader_recoverable(rc))
		return tool_finish(r, path, rc, strict);
	if (stats_ctx_pre_finish(ctx, &err) < 0) {
		tool_err("%s", err);
		return EXIT_BADINPUT;
	}
	if (gp_reader_rewind(r) < 0) {
		tool_err("cannot read %s again", path);
		return EXIT_BADINPUT;
	}
	cpu->here = thread_cpu_s() - c0;
	return EXIT_OK;
}

/* What one run over the trace needs, and what it ran on which thread. */
struct stats_pass {
	gp_reader *r;
	const char *path;
	int strict;
	const struct stats_opts *so;
	const struct selection *sel;
	int abs_time;
	enum name_form names;
	const int *run;      /* per report: in the run */
	const int *sharded;  /* per report: in shards (stats_shards.h), not here */
	size_t nreps;
	int nshards;         /* the shards' threads (0: none) */
	uint32_t shard_needs;/* what the shards' contexts can compute (stats_shard_needs) */
	int gpu_threads;     /* the deferred pass over the GPU operations in slices: k (0: one thread) */
};

/* Where the time went (--verbose). */
struct phase_times {
	double prepass, pass, shards, merge, finish;
	struct stats_prepass_cpu pre;  /* the pre-pass's slices (k 0: none) */
	double slice_sum, slice_max; /* the slices' CPU seconds (stats_shards_cpu) */
	int gpu_slices;              /* finish's pass over the GPU operations: its slices (0: none) */
	double gpu_sum, gpu_max;     /* and their CPU seconds */
	int serial, nshards;
	uint64_t shard_records;
};

/* stats_pass's verdicts besides an exit code */
enum { PASS_GO, PASS_STOP, PASS_DAMAGED };

/* The context (ctx), the report states (self) of every report run: the
 * pre-pass and the pass here for the reports not in shards, beside the
 * shards' threads, then their merge, then stats_ctx_finish.  *code: the
 * exit code so far.  PASS_GO: fill and print; PASS_STOP: nothing to print
 * (message given); PASS_DAMAGED: a shard met damage (nothing said yet:
 * the caller reads the trace again on one thread). */
static int stats_pass(const struct stats_pass *p, struct stats_ctx *ctx, void **self, struct phase_times *pt,
		      int *code)
{
	uint32_t needs = 0, shard_needs = 0;
	/* made here at the end from what the shards merged: the span; the
	 * steps (their plans from the pre-pass here) and the busy intervals
	 * clipped to their span (stats_shard_end_needs) */
	uint32_t end_needs = STATS_NEED_SPAN | (p->nshards ? stats_shard_end_needs(p->shard_needs) : 0);
	int *here = xcalloc(p->nreps ? p->nreps : 1, sizeof(*here));
	for (size_t i = 0; i < p->nreps; i++) {
		if (!p->run[i]) continue;
		shard_needs |= stats_reports[i]->needs & p->shard_needs;
		if (!p->nshards || !p->sharded[i]) {
			here[i] = 1;
			needs |= stats_reports[i]->needs;
			pt->serial++;
		} else {
			shard_needs |= stats_reports[i]->needs & STATS_SHARD_JOIN_NEEDS;
			needs |= stats_reports[i]->needs & end_needs;
		}
	}
	/* with shards, they compute the analyses they can for every report
	 * (the reports here read them only in fill); what their joins need of
	 * the pre-pass is made here first: the ranges, the windows */
	if (p->nshards) needs &= ~(p->shard_needs & ~(uint32_t)STATS_NEED_SPAN);
	/* the steps run in the shards when every report that needs them does
	 * (all can, with shards: stats_shard_end_needs) */
	int steps_here = (needs & STATS_NEED_STEPS) ||
			 ((needs & STATS_NEED_SPAN) && !p->sel->active && !p->so->whole_trace);
	int sliced = p->nshards && steps_here && (p->shard_needs & STATS_NEED_STEPS_SLICED);
	for (size_t i = 0; sliced && i < p->nreps; i++)
		if (here[i] && (stats_reports[i]->needs & (STATS_NEED_STEPS | STATS_NEED_SPAN))) sliced = 0;
	if (sliced) {
		needs |= STATS_NEED_STEPS | STATS_NEED_STEPS_SLICED;
		shard_needs |= STATS_NEED_STEPS_SLICED;
	}
	if (shard_needs & STATS_NEED_RANGES) needs |= STATS_NEED_RANGES;
	if (shard_needs & STATS_NEED_OPS) needs |= STATS_NEED_PREJOIN;
	int pre_first = (shard_needs & STATS_SHARD_JOIN_NEEDS) || sliced;
	stats_ctx_init(ctx, p->r, p->so, needs, p->sel, p->abs_time);
	ctx->names = p->names;
	/* the steps' engines start from what one pass has read by their cuts */
	if (sliced) ctx->steps_prefix = stats_shards_steps_prefix(p->r, p->nshards);
	struct stats_gpu_pass gpu_pass = { p->path, p->gpu_threads, 0, 0 };
	if (p->gpu_threads) {
		ctx->gpu_pass = stats_shards_gpu_pass;
		ctx->gpu_pass_arg = &gpu_pass;
	}
	struct stats_shards *sh = NULL;
	int rc = 0, verdict = PASS_GO;
	uint64_t n = 0;
	double t0 = mono_s(), t1 = t0, ts = t0;
	/* the shards start beside the pre-pass, or after it when they need it */
	for (int pre = 0; pre < 2; pre++) {
		if (pre == pre_first && p->nshards) {
			ts = mono_s();
			sh = stats_shards_start(ctx, p->path, p->nshards, p->sharded, p->nreps, shard_needs);
			if (!sh) {
				verdict = PASS_DAMAGED;
				goto out;
			}
			pt->nshards = p->nshards;
		}
		if (pre == 0 && stats_ctx_prepass(ctx) && (pt->serial || pre_first)) {
			if ((*code = prepass(ctx, p->r, p->path, p->strict, p->gpu_threads, &pt->pre)) != EXIT_OK) {
				verdict = PASS_STOP;
				goto out;
			}
			t1 = mono_s();
			pt->prepass = t1 - t0;
			if (getenv("GPUPROF_PREPASS_DUMP")) stats_prepass_dump(ctx, stderr);
		}
	}
	struct stats_fanout fan;
	if (pt->serial) {
		for (size_t i = 0; i < p->nreps; i++)
			if (here[i] && stats_reports[i]->new) self[i] = stats_reports[i]->new(ctx);
		stats_fanout_attach(&fan, ctx, self, here);
		const gp_record *rec;
		while ((rc = gp_reader_next_ordered(p->r, &rec)) > 0) {
			stats_fanout_add(&fan, rec);
			progress_tick(++n);
		}
		pt->pass = mono_s() - t1;
	}
	if (sh) {
		int ok = stats_shards_finish(sh, ctx, !pt->serial, self, &pt->merge) == 0;
		pt->shards = mono_s() - ts;
		pt->shard_records = stats_shards_records(sh);
		stats_shards_cpu(sh, &pt->slice_sum, &pt->slice_max);
		stats_shards_free(sh);
		sh = NULL;
		if (!ok) {
			verdict = PASS_DAMAGED;
			goto out;
		}
	}
	*code = tool_finish(p->r, p->path, rc, p->strict);
	if (!gp_reader_recoverable(rc) && n == 0 && pt->serial) {
		verdict = PASS_STOP;
		goto out;
	}
	double t2 = mono_s();
	stats_ctx_finish(ctx);
	pt->finish = mono_s() - t2;
	if (gpu_pass.cpu_sum > 0) {
		pt->gpu_slices = gpu_pass.k;
		pt->gpu_sum = gpu_pass.cpu_sum;
		pt->gpu_max = gpu_pass.cpu_max;
	}
out:
	steps_prefix_free(ctx->steps_prefix);
	ctx->steps_prefix = NULL;
	ctx->gpu_pass = NULL;
	ctx->gpu_pass_arg = NULL;
	/* the fan-out lives here: nothing joins operations after finish */
	ctx->on_op = NULL;
	ctx->on_call = NULL;
	ctx->on_arg = NULL;
	stats_shards_free(sh);
	free(here);
	return verdict;
}

/* --csv-dir: the table as DIR/NAME.csv; 0, or -1 after the message. */
static int write_csv_file(const char *dir, const struct report *rep, const struct report_style *style)
{
	char *p = xmalloc(strlen(dir) + strlen(rep->name) + 6);
	sprintf(p, "%s/%s.csv", dir, rep->name);
	FILE *f = fopen(p, "w");
	int rc = 0;
	if (!f) {
		tool_err("cannot write %s: %s", p, strerror(errno));
		rc = -1;
	} else {
		report_print(f, rep, style);
		if (ferror(f) | fclose(f)) {
			tool_err("cannot write %s: %s", p, strerror(errno));
			rc = -1;
		}
	}
	free(p);
	return rc;
}

/* The rows a table shows by default (--rows): a trace of a compiler-heavy
 * job had ~9,700 NVTX rows, one of 1e7 events 22,074 comm_steps rows. */
#define STATS_ROWS 50

/* A --rows value: a whole number, 0 or more. */
static int parse_count(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 1000000) return -1;
	*out = (int)v;
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "report", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		SELOPT_LONG_OPTIONS,
		{ "attribution", required_argument, NULL, 'a' },
		{ "method", required_argument, NULL, 'm' },
		{ "step-range", required_argument, NULL, 'n' },
		{ "keep-warmup", no_argument, NULL, 'k' },
		{ "kernel-wait", required_argument, NULL, 'w' },
		{ "per-step", no_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "nvtx-instances", no_argument, NULL, 'I' },
		{ "whole-trace", no_argument, NULL, 'W' },
		{ "by", required_argument, NULL, 'B' },
		{ "site", required_argument, NULL, 'S' },
		{ "strict", no_argument, NULL, 's' },
		{ "time-unit", required_argument, NULL, 'T' },
		{ "rows", required_argument, NULL, 'R' },
		{ "csv-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
#ifdef M_MMAP_THRESHOLD
	/* Blocks of 1 MiB or more (the readers' chunks, the unions' pending
	 * intervals, the tables' values) are mapped and go back to the system
	 * when freed.  glibc raises its threshold after the first such free,
	 * and then the arenas of the slices' threads keep what the slices
	 * freed: at 1e8 events on 16 threads, 643 MiB peak RSS against 410
	 * (docs/PERFORMANCE.md). */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
	size_t ntabs;
	struct table_ref *tabs = all_tables(&ntabs);
	int *want = xcalloc(ntabs ? ntabs : 1, sizeof(int));
	enum report_fmt fmt = FMT_TABLE;
	int any = 0, strict = 0, per_step = 0, c, code = EXIT_USAGE;
	struct sel_opts sel;
	sel_opts_init(&sel);
	struct stats_opts so;
	memset(&so, 0, sizeof(so));
	so.rule = ATTR_ANY_THREAD;
	so.detect.want = STEP_WANT_AUTO;
	enum name_form names = g_table_opts.names;
	const char *csv_dir = NULL;
	int have_fmt = 0;
	struct report_style style = { .fmt = FMT_TABLE, .width = 0, .unit = TU_NS, .max_rows = STATS_ROWS };
	while ((c = getopt_long(argc, argv, "hr:f:", opts, NULL)) != -1) {
		int taken = sel_opts_parse(&sel, c, optarg);
		if (!taken) taken = stepopt_parse(c, optarg, &so.detect, &so.kernel_wait_ns);
		if (taken < 0) goto out_opts;
		if (taken) continue;
		switch (c) {
		case 'r':
			if (!*optarg) { tool_err("empty --report (see --help for the names)"); goto out_opts; }
			if (parse_reports(optarg, tabs, ntabs, want)) goto out_opts;
			any = 1;
			break;
		case 'f':
			if (report_fmt_parse(optarg, &fmt)) goto out_opts;
			have_fmt = 1;
			break;
		case 'D':
			if (!*optarg) { tool_err("empty --csv-dir"); goto out_opts; }
			csv_dir = optarg;
			break;
		case 'a':
			if (attr_rule_parse(optarg, &so.rule)) {
				tool_err("unknown --attribution '%s' (any-thread, same-thread)", optarg);
				goto out_opts;
			}
			break;
		case 'k': so.keep_warmup = 1; break;
		case 'p': per_step = 1; break;
		case 'v': so.verbose = 1; break;
		case 'I': so.nvtx_instances = 1; break;
		case 'W': so.whole_trace = 1; break;
		case 'B':
			if (!strcmp(optarg, "process") || !strcmp(optarg, "rank")) so.by_process = STATS_BY_PROCESS;
			else if (!strcmp(optarg, "none")) so.by_process = STATS_BY_NONE;
			else { tool_err("unknown --by '%s' (process, none)", optarg); goto out_opts; }
			break;
		case 'S':
			if (site_rule_parse(&so.site, optarg)) goto out_opts;
			break;
		case 'T': {
			int u = time_unit_parse(optarg);
			if (u < 0) { tool_err("unknown --time-unit '%s' (ns, us, ms, s)", optarg); goto out_opts; }
			style.unit = (enum time_unit)u;
			break;
		}
		case 'R': {
			int n = 0;
			if (!strcmp(optarg, "all")) style.max_rows = 0;
			else if (parse_count(optarg, &n) || n < 1) {
				tool_err("--rows needs a number of rows (1 or more) or 'all', not '%s'", optarg);
				goto out_opts;
			} else
				style.max_rows = (size_t)n;
			break;
		}
		case 's': strict = 1; break;
		case 'h': cmd_stats_help(stdout); code = EXIT_OK; goto out_opts;
		default: tool_see_help(); goto out_opts;
		}
	}
	if (sel_opts_check(&sel)) goto out_opts;
	if (stepopt_check(&so.detect)) goto out_opts;
	/* --per-step: step_rows, with the steps tables (the default set, or
	 * --report steps) */
	for (size_t k = 0; per_step && k < ntabs; k++)
		if (!strcmp(tabs[k].rep->tables[tabs[k].tab_ix].name, "step_rows") &&
		    (!any || want[k - (size_t)tabs[k].tab_ix]))
			want[k] = 1;
	if (csv_dir) {
		if (have_fmt && fmt != FMT_CSV) {
			tool_err("--csv-dir writes CSV; it cannot be combined with --format %s",
				 fmt == FMT_JSON ? "json" : "table");
			goto out_opts;
		}
		fmt = FMT_CSV;
		struct stat sb;
		if (mkdir(csv_dir, 0777) != 0 && (errno != EEXIST || stat(csv_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
			tool_err("cannot create directory %s: %s", csv_dir, strerror(errno == EEXIST ? ENOTDIR : errno));
			code = EXIT_BADINPUT;
			goto out_opts;
		}
	}
	const char *path;
	gp_reader *r;
	code = tool_open_operand(argc, argv, &path, &r);
	if (code != EXIT_OK)
		goto out_opts;

	/* the reports run: those with a table to print (all, for the default set) */
	style.fmt = fmt;
	style.width = tabopt_width();
	size_t nreps = 0;
	while (stats_reports[nreps]) nreps++;
	/* the reports of the run: those asked for, else all but those whose
	 * first table is printed only when named (the default set is decided
	 * after the pass); only they, and the context's analyses they need,
	 * see the records */
	int *run = xcalloc(nreps ? nreps : 1, sizeof(*run));
	for (size_t k = 0; k < ntabs; k++)
		if (any ? want[k] : !(tabs[k].rep->by_name & 1u)) run[tabs[k].rep_ix] = 1;
	struct selection selection;
	char err[512];
	struct stats_ctx ctx;
	void **self = xcalloc(nreps ? nreps : 1, sizeof(*self));
	int resolved = stats_selection_resolve(&selection, r, path, &sel, &so.detect,
					       g_threads ? g_threads : gp_reader_threads_default(), err, sizeof(err));
	if (resolved < 0) {
		tool_err("%s", err);
		code = resolved == SELECTION_NONE ? EXIT_USAGE : EXIT_BADINPUT;
		stats_ctx_init(&ctx, r, &so, 0, &selection, sel.abs_time);
		goto out;
	}
	/* --threads N > 1: the reports that can run in shards do, on N threads
	 * (N - 1 when some report runs here, beside them) */
	int threads = g_threads ? g_threads : gp_reader_threads_default();
	int *sharded = xcalloc(nreps ? nreps : 1, sizeof(*sharded)), nserial = 0, nsharded = 0;
	uint32_t shard_needs = 0, run_needs = 0;
	for (size_t i = 0; i < nreps; i++)
		if (run[i]) run_needs |= stats_reports[i]->needs;
	uint32_t sn = stats_shard_needs(r, &so, &selection, run_needs);
	for (size_t i = 0; i < nreps; i++) {
		if (!run[i]) continue;
		sharded[i] = threads > 1 && stats_report_shardable(stats_reports[i], r, sn);
		nsharded += sharded[i];
		nserial += !sharded[i];
		shard_needs |= stats_reports[i]->needs & sn & ~(uint32_t)STATS_NEED_SPAN;
	}
	/* shards also compute the analyses that merge (kernel shapes,
	 * counters) for the reports that run here */
	int nshards = threads > 1 && (nsharded || shard_needs) ?
		slices_count(r, path, nserial ? threads - 1 : threads) : 0;
	if (!nshards) memset(sharded, 0, (nreps ? nreps : 1) * sizeof(*sharded));
	/* the shards decode their slices themselves: the driver's reader (its
	 * pre-pass, the pass beside them) keeps a few decoding threads, not N
	 * (each holds ~3 chunks of records: ~65 MiB more at 16) */
	if (nshards && gp_reader_threads(r) > STATS_DRIVER_THREADS) {
		gp_reader *few = tool_open_threads(path, STATS_DRIVER_THREADS);
		if (few) {
			gp_reader_close(r);
			r = few;
		}
	}
	struct phase_times pt = { 0 };
	/* the pass over the GPU operations that util's span of the steps
	 * defers to the end: in slices too, on every thread */
	int gpu_threads = threads > 1 ? slices_count(r, path, threads) : 0;
	struct stats_pass pass = { r, path, strict, &so, &selection, sel.abs_time, fmt == FMT_TABLE ? names : NAME_FULL,
				   run, sharded, nreps, nshards, sn, gpu_threads };
	int verdict = stats_pass(&pass, &ctx, self, &pt, &code);
	if (verdict == PASS_DAMAGED) {
		/* a damaged trace is read on one thread, for the messages and
		 * exit status of --threads 1; so is one whose merge at a cut
		 * could not be exact (stats_ctx.merge_lost) */
		if (so.verbose && ctx.merge_lost)
			fprintf(stderr, "%s: a merge of two slices could not give the figures of one pass: "
				"read again on one thread\n", g_cmd);
		for (size_t i = 0; i < nreps; i++)
			if (self[i] && stats_reports[i]->free) stats_reports[i]->free(self[i]);
		memset(self, 0, (nreps ? nreps : 1) * sizeof(*self));
		stats_ctx_free(&ctx);
		gp_reader_rewind(r);
		memset(&pt, 0, sizeof(pt));
		pass.nshards = 0;
		pass.gpu_threads = 0;
		verdict = stats_pass(&pass, &ctx, self, &pt, &code);
	}
	free(sharded);
	if (verdict != PASS_GO) goto out;
	double t_fill = mono_s();

	/* the default set: every table of the reports that say they belong
	 * (by-name tables only when an option asked for them) */
	if (!any)
		for (size_t k = 0; k < ntabs; k++) {
			const struct stats_report *sr = tabs[k].rep;
			if (!run[tabs[k].rep_ix]) continue;
			if ((sr->by_name & (1u << tabs[k].tab_ix)) && !want[k]) continue;
			want[k] = !sr->in_default || sr->in_default(self[tabs[k].rep_ix], &ctx);
		}

	struct report *out = xcalloc(ntabs ? ntabs : 1, sizeof(*out));
	for (size_t k = 0; k < ntabs; k++)
		report_init(&out[k], tabs[k].rep->tables[tabs[k].tab_ix].name);
	/* fill each report that has a table to print (its tables are adjacent) */
	for (size_t k = 0; k < ntabs; k++) {
		if (tabs[k].tab_ix != 0) continue;
		int needed = 0;
		for (int j = 0; j < tabs[k].rep->ntables; j++) needed |= want[k + (size_t)j];
		if (needed) tabs[k].rep->fill(self[tabs[k].rep_ix], &ctx, &out[k]);
	}

	if (csv_dir) {
		for (size_t k = 0; k < ntabs && code != EXIT_BADINPUT; k++)
			if (want[k] && write_csv_file(csv_dir, &out[k], &style))
				code = EXIT_BADINPUT;
		goto out_reports;
	}
	int nwant = 0, printed = 0;
	for (size_t k = 0; k < ntabs; k++) nwant += want[k];
	if (fmt == FMT_JSON) putchar('{');
	for (size_t k = 0; k < ntabs; k++) {
		if (!want[k]) continue;
		if (fmt == FMT_JSON) printf("%s\"%s\":", printed ? ",\n" : "", out[k].name);
		else if (printed) putchar('\n');
		if (fmt == FMT_CSV && nwant > 1) printf("# %s\n", out[k].name);
		report_print(stdout, &out[k], &style);
		printed++;
	}
	if (fmt == FMT_JSON) printf("}\n");
	if (so.verbose) {
		fflush(stdout);
		char gpu[160] = "", pre[128];
		if (pt.pre.k)
			snprintf(pre, sizeof(pre), " (in %d slices: CPU sum %.2f s, largest %.2f s; here %.2f s CPU)",
				 pt.pre.k, pt.pre.sum, pt.pre.max, pt.pre.here);
		else
			snprintf(pre, sizeof(pre), " (%.2f s CPU)", pt.pre.here);
		if (pt.gpu_slices)
			snprintf(gpu, sizeof(gpu), " (the pass over the GPU operations in %d slices: CPU sum %.2f s, largest %.2f s)",
				 pt.gpu_slices, pt.gpu_sum, pt.gpu_max);
		fprintf(stderr, "%s: phases: pre-pass %.2f s%s, pass %.2f s (here: %s), shards %.2f s "
			"(%d threads, %" PRIu64 " records; merge here %.2f s; slices' CPU: sum %.2f s, largest %.2f s), "
			"finish %.2f s%s, fill and print %.2f s\n",
			g_cmd, pt.prepass, pre, pt.pass, pt.serial ? "the other reports" : "none", pt.shards, pt.nshards,
			pt.shard_records, pt.merge, pt.slice_sum, pt.slice_max, pt.finish, gpu, mono_s() - t_fill);
	}
out_reports:
	for (size_t k = 0; k < ntabs; k++) report_free(&out[k]);
	free(out);
out:
	for (size_t i = 0; i < nreps; i++)
		if (self[i] && stats_reports[i]->free) stats_reports[i]->free(self[i]);
	free(self);
	free(run);
	stats_ctx_free(&ctx);
	selection_free(&selection);
	gp_reader_close(r);
out_opts:
	free(want);
	free(tabs);
	return code;
}
