/* cmd_report.c — `gpuprof report TRACE... -o FILE.html`: one self-contained
 * HTML page with the trace's header, steps, charts and top tables
 * (docs/REPORT.md).  Option parsing and the passes over each trace; the
 * page is export/report_html.c, its data export/report_data.c.
 *
 * Per trace, advise over stats' driver (reports/advise_drive.h: in slices
 * with --threads) with the reports `stats` runs by default and the steps
 * (the context's steps pipeline: the page's steps view); its pre-pass
 * also feeds the header (trace_info, whose span sets the busy-% bins) and
 * the memory timeline, its pass the busy % per bin; then advise's facts
 * pass over those steps, for the findings.  Each trace's part of the page
 * is written before the next trace is read. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_settings.h"
#include "analysis/advise/advise_report.h"
#include "analysis/memory/mem_timeline.h"
#include "analysis/steps/steps_report.h"
#include "analysis/gpu/trace_info.h"
#include "cmd/cmd.h"
#include "cmd/stepopt.h"
#include "common/tool.h"
#include "export/report_html.h"
#include "reports/advise_drive.h"

void cmd_report_help(FILE *f)
{
	fprintf(f, "usage: gpuprof report -o FILE.html [--title T] [--method auto|nvtx|trace]\n"
		   "                      [--step-range NAME] [--keep-warmup] [--rows N] [--steps-max N]\n"
		   "                      [--bins N] [--site RULE] [--strict] TRACE...\n\n"
		   "One self-contained HTML page (scripts, styles and data inlined: it opens with no\n"
		   "network access) per set of traces: the findings of `gpuprof advise` (ranked,\n"
		   "with what to change), each trace's header (command line, host,\n"
		   "GPU, settings, span, integrity), its steps (summary, step time over the run with\n"
		   "outliers marked, where each step's time goes), per process (one row per rank)\n"
		   "GPU busy %% over time beside NVML and PM-sampled utilisation, memory held and\n"
		   "other counters, and the top kernels, API calls and other `gpuprof stats`\n"
		   "tables.  Aggregates and a sample of the steps only: a few MB for any trace.\n"
		   "docs/REPORT.md has the definitions.\n\n"
		   "  -o, --output FILE  the page to write ('-': stdout); required\n"
		   "  --title T          the page's title (default: the first trace's file name)\n"
		   "  --method M         step detection, as `gpuprof steps` (auto, nvtx, trace)\n"
		   "  --step-range NAME  the steps are the NVTX ranges named NAME or NAME <number>\n"
		   "  --keep-warmup      count the warm-up steps in the step summaries\n"
		   "  --rows N           rows of each table (default %d; stats has them all)\n"
		   "  --steps-max N      steps drawn per process (default %d: a sample beyond)\n"
		   "  --bins N           bins of the time series (default %d)\n"
		   "  --site RULE        the launch_sites table's site and the site a finding names,\n"
		   "                     as in stats and advise (user, inner, layer, or a GLOB)\n"
		   "  --strict           exit 2 when a trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help         this text\n",
		REPORT_ROWS_MAX, REPORT_STEPS_MAX, REPORT_BINS);
}

struct report_opts {
	struct step_detect_opts detect;
	struct report_data_opts data;
	int keep_warmup, strict;
	struct site_rule site;  /* --site */
};

/* THE ADVISE HOOK: the page's "Findings" (docs/REPORT.md, "Findings").
 * `gpuprof advise` over the trace (reports/advise_drive.h, with the page's
 * step options and --site) judged on the drive's steps (err: why there are
 * none), as the JSON value that `gpuprof advise --format json` prints for
 * it (advise_report.h; its keys: docs/ADVISE.md "Output"), or
 * {"error": "why"} when advise could not judge the trace.  malloc'd. */
static char *advise_findings(struct advise_drive *ad, const char *err, const char *path)
{
	int read_rc = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m) return NULL;
	if (advise_drive_judge(ad, &read_rc) == 0) {
		advise_print_json(m, path, &ad->res);
	} else {
		/* a read error was reported by the first pass; the same file again */
		fputs("{\"error\":", m);
		json_str(m, err ? err : "the trace could not be read again");
		putc('}', m);
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int parse_count(const char *opt, const char *arg, size_t *out)
{
	uint64_t v;
	if (gp_parse_uint(arg, 1, 1000000, &v))
		return tool_fail(-1, "bad %s '%s' (a number from 1 to 1000000)", opt, arg);
	*out = (size_t)v;
	return 0;
}

/* "gpuprof report ARG..." as given */
/* argv[0] is already "gpuprof report" (cli/main.c sets it for getopt) */
static char *command_line(int argc, char **argv)
{
	size_t n = 1;
	for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
	char *s = xmalloc(n), *p = s;
	*p = 0;
	for (int i = 0; i < argc; i++) p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
	return s;
}


/* The page's consumers of the pre-pass (stats_pre_hook, in slices where
 * the trace allows; advise's inputs beside them: advise_drive.h): the
 * header (trace_info), whose span sets the bins the pass sums the busy %
 * in, and the memory timeline. */
struct page_pre {
	struct trace_info info;
	struct mem_timeline mem;
};

/* The hook's argument: after the pre-pass, the busy-% bins over the
 * trace's span, summed as the pass streams (in each slice: they add up),
 * not every device's union kept. */
struct page_bins { const struct report_data_opts *data; struct gpu_bins bins; };

static void *page_pre_new(void *arg, uint64_t from)
{
	struct page_pre *p = xcalloc(1, sizeof(*p));
	p->mem.slice = from > 0;
	return p;
}

static void page_pre_add(void *st, gp_reader *r, const gp_record *rec)
{
	struct page_pre *p = st;
	trace_info_add(&p->info, r, rec);
	if (rec->type == GP_REC_MEMORY) mem_timeline_add(&p->mem, tool_pid(r, rec), &rec->u.memory);
}

static int page_pre_merge(void *dst, void *src)
{
	struct page_pre *d = dst, *s = src;
	trace_info_merge(&d->info, &s->info);
	return mem_timeline_merge(&d->mem, &s->mem);
}

static void page_pre_free(void *st)
{
	struct page_pre *p = st;
	trace_info_free(&p->info);
	mem_timeline_free(&p->mem);
	free(p);
}

static void page_ready(void *arg, void *st, struct stats_ctx *ctx)
{
	struct page_bins *pb = arg;
	struct page_pre *p = st;
	trace_info_finish(&p->info);
	report_data_bins(&p->info, pb->data, &pb->bins);
	ctx->gpu.bins = &pb->bins;
}

/* Reads one trace and writes its part of the page.  The exit code; a
 * damaged trace (corrupt frames) gives 2 and still its part from the intact
 * frames, as every other command's output; *write_failed is set when the
 * page could not be written. */
static int one_trace(FILE *out, const char *path, size_t index, const struct report_opts *o, const char *command,
		     int *head_done, const char *title, int *write_failed)
{
	gp_reader *r = tool_open(path);
	if (!r) return EXIT_BADINPUT;
	/* the stats reports `stats` runs by default, over the whole trace
	 * (the page's charts and util cover it), with the page's step
	 * options and --site, and advise's findings on the same steps */
	size_t nreps = 0, ntabs = 0;
	for (; stats_reports[nreps]; nreps++) ntabs += (size_t)stats_reports[nreps]->ntables;
	int *run = xcalloc(nreps ? nreps : 1, sizeof(*run));
	for (size_t i = 0; i < nreps; i++) run[i] = !(stats_reports[i]->by_name & 1u);
	struct page_bins pb = { &o->data, { 0 } };
	const struct stats_pre_hook hook = { &pb, page_pre_new, page_pre_add, page_pre_merge, page_pre_free, page_ready };
	const struct advise_drive_opts aopts = { .detect = o->detect,
						 .site = o->site, .strict = o->strict, .keep_going = 1, .run = run,
						 .pre = &hook };
	struct advise_drive ad;
	advise_drive_plan(&ad, r, path, &aopts);
	r = ad.d.r;
	int code = EXIT_OK;
	struct steps_reports reps;
	int have_reps = 0;
	char *advise = NULL;
	struct report *tab = xcalloc(ntabs ? ntabs : 1, sizeof(*tab));
	int *want = xcalloc(ntabs ? ntabs : 1, sizeof(*want));
	if (stats_drive_run(&ad.d, &code)) goto out;
	struct page_pre *pp = advise_drive_pre(&ad);
	struct gp_integrity ig;
	memset(&ig, 0, sizeof(ig));
	gp_reader_integrity(r, &ig);
	/* with --threads the slices read the trace, r only part of it: where
	 * they met no damage (else r read it all again), every chunk of the
	 * footer's table is intact, as a whole read of r finds */
	struct gp_footer_info fi;
	if (!ig.frames_corrupt && !ig.truncated && gp_reader_footer(r, &fi) == 0 && fi.present) ig.frames_ok = fi.chunk_count;
	mem_timeline_finish(&pp->mem);
	/* the steps' rows as the pass left them, before the tables summarise
	 * them */
	struct stats_ctx *ctx = &ad.d.ctx;
	const char *err = ctx->pipe.steps ? NULL : ad.d.steps_err ? ad.d.steps_err : "no steps analysis";
	advise = advise_findings(&ad, err, path);
	stats_drive_fill(&ad.d, 0, tab, want);
	if (ctx->pipe.steps) {
		struct steps_reports_opts so = { gp_reader_header(r)->start_trace_ns, o->keep_warmup, NULL, NULL };
		steps_reports_fill(&reps, ctx->pipe.steps, &so);
		have_reps = 1;
	}
	struct report_run rr = {
		.path = path, .r = r, .info = &pp->info, .ig = &ig,
		.stats = tab, .stats_want = want, .nstats = ntabs,
		.steps = have_reps ? reps.rep : NULL, .nsteps = have_reps ? SR_ROWS : 0, /* not one row per step */
		.steps_error = err, .st = have_reps ? ctx->pipe.steps : NULL,
		.gpu = &ctx->gpu, .win = &ctx->pipe.win, .cnt = &ctx->cnt, .mem = &pp->mem, .advise_json = advise,
	};
	if (!*head_done) {
		if (report_html_head(out, title, command, &o->data)) goto write_error;
		*head_done = 1;
	}
	if (report_html_run(out, &rr, index, &o->data)) goto write_error;
	goto out;
write_error:
	tool_err("cannot write the page: %s", strerror(errno));
	code = EXIT_BADINPUT;
	*write_failed = 1;
out:
	free(advise);
	if (have_reps) steps_reports_free(&reps);
	for (size_t k = 0; k < ntabs; k++) report_free(&tab[k]);
	free(tab);
	free(want);
	advise_drive_free(&ad);
	free(run);
	gp_reader_close(r);
	return code;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "method", required_argument, NULL, 'm' },
		{ "step-range", required_argument, NULL, 'n' },
		{ "keep-warmup", no_argument, NULL, 'k' },
		{ "rows", required_argument, NULL, 'R' },
		{ "site", required_argument, NULL, 'L' },
		{ "steps-max", required_argument, NULL, 'S' },
		{ "bins", required_argument, NULL, 'B' },
		{ "strict", no_argument, NULL, 's' },
		{ 0 },
	};
	stats_drive_malloc();
	struct report_opts o;
	memset(&o, 0, sizeof(o));
	o.detect.want = STEP_WANT_AUTO;
	const char *output = NULL, *title = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		int taken = stepopt_parse(c, optarg, &o.detect, NULL);
		if (taken < 0) return EXIT_USAGE;
		if (taken) continue;
		switch (c) {
		case 'o': output = optarg; break;
		case 't': title = optarg; break;
		case 'k': o.keep_warmup = 1; break;
		case 'R': if (parse_count("--rows", optarg, &o.data.rows_max)) return EXIT_USAGE; break;
		case 'S': if (parse_count("--steps-max", optarg, &o.data.steps_max)) return EXIT_USAGE; break;
		case 'B': if (parse_count("--bins", optarg, &o.data.bins)) return EXIT_USAGE; break;
		case 's': o.strict = 1; break;
		case 'L':
			if (site_rule_parse(&o.site, optarg)) return EXIT_USAGE;
			break;
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	if (stepopt_check(&o.detect)) return EXIT_USAGE;
	if (optind >= argc) return tool_usage_see_help("no trace given");
	if (!output) return tool_usage("no output file: -o FILE.html ('-' for stdout)");
	if (!title) {
		title = strrchr(argv[optind], '/') ? strrchr(argv[optind], '/') + 1 : argv[optind];
	}
	/* written beside the target and renamed at the end: no half page is
	 * left under the name asked for.  A target that is there and is not a
	 * regular file (/dev/null, a FIFO) is written in place: the rename
	 * would put a file where the device node or FIFO was. */
	int to_stdout = !strcmp(output, "-");
	struct stat st;
	char *tmp = NULL;
	FILE *out = stdout;
	if (!to_stdout) {
		if (stat(output, &st) || S_ISREG(st.st_mode)) {
			tmp = xmalloc(strlen(output) + 16);
			sprintf(tmp, "%s.tmp%ld", output, (long)getpid());
		}
		out = fopen(tmp ? tmp : output, "w");
		if (!out) {
			tool_err("cannot write %s: %s", tmp ? tmp : output, strerror(errno));
			free(tmp);
			return EXIT_BADINPUT;
		}
	}
	if (!report_html_have_charts())
		tool_warn("built without uPlot (make deps, then make): the page has tables but no charts");
	char *command = command_line(argc, argv);
	/* A trace that cannot be read or has corrupt frames makes the exit
	 * status 2 (docs/CLI.md), but the page is written from what was read,
	 * as every command's output is; only a page with no trace in it, or
	 * one that could not be written, is not left under the name asked for. */
	int code = EXIT_OK, head_done = 0, write_failed = 0;
	for (int i = optind; i < argc && !write_failed; i++) {
		int rc = one_trace(out, argv[i], (size_t)(i - optind), &o, command, &head_done, title, &write_failed);
		if (rc != EXIT_OK) code = rc;
	}
	int page_ok = head_done && !write_failed;
	if (page_ok && report_html_tail(out)) {
		tool_err("cannot write the page: %s", strerror(errno));
		code = EXIT_BADINPUT;
		page_ok = 0;
	}
	if (!to_stdout) {
		if (fclose(out) && page_ok) {
			tool_err("cannot write %s: %s", output, strerror(errno));
			code = EXIT_BADINPUT;
			page_ok = 0;
		}
		if (page_ok && tmp && rename(tmp, output)) {
			tool_err("cannot write %s: %s", output, strerror(errno));
			code = EXIT_BADINPUT;
			page_ok = 0;
		}
		if (!page_ok && tmp) unlink(tmp);
		free(tmp);
	} else if (fflush(stdout) && code == EXIT_OK) {
		code = EXIT_BADINPUT;
	}
	free(command);
	return code;
}
