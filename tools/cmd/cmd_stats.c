/* cmd_stats.c — `gpuprof stats FILE`: summary reports modelled on nsys stats
 * (cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
 * cuda_gpu_mem_size_sum, nvtx_sum) plus GPU utilisation and more.
 *
 * The driver: options, one streaming pass in time order handing each record
 * to the reports that asked for its type, then fill and print.  The reports
 * are components (reports/stats_report.h), listed in reports/registry.c;
 * their memory is described in their files. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/report.h"
#include "common/tool.h"
#include "reports/stats_report.h"

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

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof stats [--report NAME[,NAME...]] [--format table|csv|json]\n"
		   "                     [--names base|full|mangled] [--time-unit ns|us|ms|s]\n"
		   "                     [--width N] [--csv-dir DIR] [--since T] [--until T]\n"
		   "                     [--strict] FILE\n\n"
		   "Summary reports (default: all), modelled on `nsys stats`:\n");
	help_reports(f);
	fprintf(f, "\n"
		   "  --report LIST    reports to print, comma separated\n"
		   "  --format FMT     table (default), csv or json\n"
		   "  --names FORM     kernel names in tables: base (default; as nsys :base, the\n"
		   "                   function name without return type, scope, template\n"
		   "                   arguments and parameters), full (demangled) or mangled.\n"
		   "                   CSV and JSON always carry the full and the mangled name\n"
		   "  --time-unit U    durations in tables in ns (default), us, ms or s\n"
		   "  --csv-dir DIR    one CSV file per report, DIR/NAME.csv (DIR is created;\n"
		   "                   files there are replaced), nothing on stdout\n"
		   "  --width N        tables: cut the last column (a name) so lines fit N\n"
		   "                   columns (0: never); default $COLUMNS, else the terminal's\n"
		   "                   width when stdout is one, else 200\n"
		   "  --since T        ignore records starting before T after the trace start\n"
		   "  --until T        ignore records starting at or after T (T: 10ms, 2s, 500us, ns)\n"
		   "  --strict         exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help       this text\n"
		   "  FILE             the trace; '-' = stdin (copied to a temporary file first)\n\n"
		   "Med is the median (mean of the two middle values for even counts), exact\n"
		   "unless a table holds more than 2^20 values: then its names with the most\n"
		   "values get an estimate within 0.5 %% (said under the table);\n"
		   "StdDev is the sample standard deviation (n-1), 0 for a single value.\n");
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
			for (size_t i = k + 1; i < ntabs && tabs[i].rep_ix == tabs[k].rep_ix; i++) want[i] = 1;
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

/* A --width value: a whole number of columns, 0 or more. */
static int parse_width(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 1000000) return -1;
	*out = (int)v;
	return 0;
}

/* The width tables are cut to: $COLUMNS when it is a number, else the
 * terminal's when stdout is one, else 200. */
static int table_width(void)
{
	const char *env = getenv("COLUMNS");
	int w;
	if (env && !parse_width(env, &w) && w > 0) return w;
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 200;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "report", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "strict", no_argument, NULL, 's' },
		{ "names", required_argument, NULL, 'N' },
		{ "time-unit", required_argument, NULL, 'T' },
		{ "width", required_argument, NULL, 'W' },
		{ "csv-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	size_t ntabs;
	struct table_ref *tabs = all_tables(&ntabs);
	int *want = xcalloc(ntabs ? ntabs : 1, sizeof(int));
	enum report_fmt fmt = FMT_TABLE;
	int any = 0, strict = 0, c, code = EXIT_USAGE;
	uint64_t since = 0, until = UINT64_MAX;
	int have_since = 0, have_until = 0;
	enum name_form names = NAME_BASE;
	const char *csv_dir = NULL;
	int have_fmt = 0;
	struct report_style style = { .fmt = FMT_TABLE, .width = -1, .unit = TU_NS };
	while ((c = getopt_long(argc, argv, "hr:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (!*optarg) { tool_err("empty --report (see --help for the names)"); goto out_opts; }
			if (parse_reports(optarg, tabs, ntabs, want)) goto out_opts;
			any = 1;
			break;
		case 'f':
			if (!strcmp(optarg, "table")) fmt = FMT_TABLE;
			else if (!strcmp(optarg, "csv")) fmt = FMT_CSV;
			else if (!strcmp(optarg, "json")) fmt = FMT_JSON;
			else { tool_err("unknown format '%s' (table, csv, json)", optarg); goto out_opts; }
			have_fmt = 1;
			break;
		case 'D':
			if (!*optarg) { tool_err("empty --csv-dir"); goto out_opts; }
			csv_dir = optarg;
			break;
		case 'S':
			if (parse_duration_ns(optarg, &since)) { tool_err("bad --since '%s'", optarg); goto out_opts; }
			have_since = 1;
			break;
		case 'U':
			if (parse_duration_ns(optarg, &until)) { tool_err("bad --until '%s'", optarg); goto out_opts; }
			have_until = 1;
			break;
		case 'N': {
			int nf = name_form_parse(optarg);
			if (nf < 0) { tool_err("unknown --names '%s' (base, full, mangled)", optarg); goto out_opts; }
			names = (enum name_form)nf;
			break;
		}
		case 'T': {
			int u = time_unit_parse(optarg);
			if (u < 0) { tool_err("unknown --time-unit '%s' (ns, us, ms, s)", optarg); goto out_opts; }
			style.unit = (enum time_unit)u;
			break;
		}
		case 'W':
			if (parse_width(optarg, &style.width)) {
				tool_err("--width needs a number of columns (0: no limit), not '%s'", optarg);
				goto out_opts;
			}
			break;
		case 's': strict = 1; break;
		case 'h': help(stdout); code = EXIT_OK; goto out_opts;
		default: help(stderr); goto out_opts;
		}
	}
	if (have_since && have_until && since >= until) {
		char a[32], b[32];
		fmt_dur(a, sizeof(a), since);
		fmt_dur(b, sizeof(b), until);
		tool_err("--since (%s) must be before --until (%s): no record would be left", a, b);
		goto out_opts;
	}
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
	code = tool_open_operand(argc, argv, help, &path, &r);
	if (code != EXIT_OK)
		goto out_opts;

	style.fmt = fmt;
	if (style.width < 0) style.width = table_width();
	struct stats_ctx ctx;
	stats_ctx_init(&ctx, r, since, have_since, until, have_until);
	ctx.names = fmt == FMT_TABLE ? names : NAME_FULL;
	size_t nreps = 0;
	while (stats_reports[nreps]) nreps++;
	/* the reports of the run: those asked for, else all (the default set is
	 * decided after the pass); only they, and the context's analyses they
	 * need, see the records */
	int *run = xcalloc(nreps ? nreps : 1, sizeof(*run));
	ctx.needs = 0;
	for (size_t k = 0; k < ntabs; k++)
		if (!any || want[k]) run[tabs[k].rep_ix] = 1;
	for (size_t i = 0; i < nreps; i++)
		if (run[i]) ctx.needs |= stats_reports[i]->needs;
	void **self = xcalloc(nreps ? nreps : 1, sizeof(*self));
	for (size_t i = 0; i < nreps; i++)
		if (run[i] && stats_reports[i]->new) self[i] = stats_reports[i]->new(&ctx);

	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		struct stats_rec sr;
		if (stats_ctx_add(&ctx, rec, &sr))
			for (size_t i = 0; i < nreps; i++)
				if (run[i] && (stats_reports[i]->types & STATS_TYPE(rec->type)))
					stats_reports[i]->add(self[i], &ctx, &sr);
		progress_tick(++n);
	}
	code = tool_finish(r, path, rc, strict);
	if (rc < 0 && rc != GP_ERR_TRUNCATED && rc != GP_ERR_CORRUPT && n == 0)
		goto out;
	stats_ctx_finish(&ctx);

	/* the default set: every table of the reports that say they belong */
	if (!any)
		for (size_t k = 0; k < ntabs; k++) {
			const struct stats_report *sr = tabs[k].rep;
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
out_reports:
	for (size_t k = 0; k < ntabs; k++) report_free(&out[k]);
	free(out);
out:
	for (size_t i = 0; i < nreps; i++)
		if (run[i] && stats_reports[i]->free) stats_reports[i]->free(self[i]);
	free(self);
	free(run);
	stats_ctx_free(&ctx);
	gp_reader_close(r);
out_opts:
	free(want);
	free(tabs);
	return code;
}
