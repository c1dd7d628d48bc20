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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_settings.h"
#include "cmd/cmd.h"
#include "cmd/stepopt.h"
#include "common/gzout.h"
#include "common/report.h"
#include "common/selopt.h"
#include "common/tabopt.h"
#include "common/tool.h"
#include "reports/stats_drive.h"
#include "reports/stats_selection.h"

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
			char names[900];
			cmd_stats_report_names(names, sizeof(names));
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

/* --csv-dir: the table as DIR/NAME.csv; 0, or -1 after the message. */
static int write_csv_file(const char *dir, const struct report *rep, const struct report_style *style)
{
	char *p = xmalloc(strlen(dir) + strlen(rep->name) + 6);
	sprintf(p, "%s/%s.csv", dir, rep->name);
	FILE *f = fopen(p, "w");
	if (f) report_print(f, rep, style);
	int rc = !f || gzout_close(f) ? -1 : 0;
	if (rc) tool_err("cannot write %s: %s", p, strerror(errno));
	free(p);
	return rc;
}

/* The rows a table shows by default (--rows): a trace of a compiler-heavy
 * job had ~9,700 NVTX rows, one of 1e7 events 22,074 comm_steps rows. */
#define STATS_ROWS 50

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
		{ 0 },
	};
	stats_drive_malloc();
	size_t ntabs;
	struct table_ref *tabs = all_tables(&ntabs);
	int *want = xcalloc(ntabs ? ntabs : 1, sizeof(int));
	enum report_fmt fmt = FMT_TABLE;
	int any = 0, strict = 0, per_step = 0, c, code = EXIT_USAGE;
	struct sel_opts sel;
	sel_opts_init(&sel);
	struct stats_opts so = { .rule = ATTR_ANY_THREAD, .detect.want = STEP_WANT_AUTO };
	enum name_form names = g_table_opts.names;
	const char *csv_dir = NULL;
	int have_fmt = 0;
	struct report_style style = { .fmt = FMT_TABLE, .width = 0, .unit = TU_NS, .max_rows = STATS_ROWS,
				     .csv_heads_from = 2 };
	while ((c = getopt_long(argc, argv, "r:f:", opts, NULL)) != -1) {
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
			uint64_t n = 0;
			if (strcmp(optarg, "all") && gp_parse_uint(optarg, 1, 1000000, &n)) {
				tool_err("--rows needs a number of rows (1 or more) or 'all', not '%s'", optarg);
				goto out_opts;
			}
			style.max_rows = (size_t)n;
			break;
		}
		case 's': strict = 1; break;
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
	struct stats_drive d;
	memset(&d, 0, sizeof(d));
	if ((code = stats_selection_resolve(&selection, r, path, &sel, &so.detect)) != EXIT_OK) goto out;
	d = (struct stats_drive){ .r = r, .path = path, .strict = strict, .so = &so, .sel = &selection,
				  .abs_time = sel.abs_time, .names = fmt == FMT_TABLE ? names : NAME_FULL,
				  .run = run, .threads = g_threads };
	stats_drive_plan(&d);
	r = d.r;
	if (stats_drive_run(&d, &code)) goto out;
	const struct stats_phase_times *pt = &d.pt;
	double t_fill = mono_s();

	struct report *out = xcalloc(ntabs ? ntabs : 1, sizeof(*out));
	stats_drive_fill(&d, any, out, want);

	if (csv_dir) {
		for (size_t k = 0; k < ntabs && code != EXIT_BADINPUT; k++)
			if (want[k] && write_csv_file(csv_dir, &out[k], &style))
				code = EXIT_BADINPUT;
		goto out_reports;
	}
	report_print_tables(stdout, out, want, ntabs, &style);
	if (so.verbose) {
		fflush(stdout);
		char gpu[160] = "", pre[128];
		if (pt->pre.k)
			snprintf(pre, sizeof(pre), " (in %d slices: CPU sum %.2f s, largest %.2f s; here %.2f s CPU)",
				 pt->pre.k, pt->pre.sum, pt->pre.max, pt->pre.here);
		else
			snprintf(pre, sizeof(pre), " (%.2f s CPU)", pt->pre.here);
		if (pt->gpu.cpu_sum > 0)
			snprintf(gpu, sizeof(gpu), " (the pass over the GPU operations in %d slices: CPU sum %.2f s, largest %.2f s)",
				 pt->gpu.k, pt->gpu.cpu_sum, pt->gpu.cpu_max);
		fprintf(stderr, "%s: phases: pre-pass %.2f s%s, pass %.2f s (here: %s), shards %.2f s "
			"(%d threads, %" PRIu64 " records; merge here %.2f s; slices' CPU: sum %.2f s, largest %.2f s), "
			"finish %.2f s%s, fill and print %.2f s\n",
			g_cmd, pt->prepass, pre, pt->pass, pt->serial ? "the other reports" : "none", pt->shards, pt->nshards,
			pt->sh.records, pt->sh.merge, pt->sh.cpu_sum, pt->sh.cpu_max, pt->finish, gpu, mono_s() - t_fill);
	}
out_reports:
	for (size_t k = 0; k < ntabs; k++) report_free(&out[k]);
	free(out);
out:
	stats_drive_free(&d);
	free(run);
	selection_free(&selection);
	gp_reader_close(r);
out_opts:
	free(want);
	free(tabs);
	return code;
}
