/* cmd_advise.c — `gpuprof advise TRACE...`: why the GPU idles, what to
 * change, and what it would save (docs/ADVISE.md).  Option parsing and the
 * output of each trace; the passes over it and the judging are
 * reports/advise_drive.h (stats' driver: the steps; what advise measures:
 * advise_facts.h; the rules: advise.h; the output: advise_report.h). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise/advise.h"
#include "analysis/advise/advise_facts.h"
#include "analysis/advise/advise_report.h"
#include "analysis/stacks/site_rule.h"
#include "cmd/stepopt.h"
#include "common/report.h"
#include "common/tabopt.h"
#include "common/tool.h"
#include "reports/advise_drive.h"

void cmd_advise_help(FILE *f)
{
	fprintf(f, "usage: gpuprof advise [--format table|json|csv] [--method auto|nvtx|trace]\n"
		   "                      [--step-range NAME] [--kernel-wait T] [--site RULE]\n"
		   "                      [--all] [--width N] [--names base|full|mangled] [--strict] [--verbose]\n"
		   "                      TRACE...\n\n"
		   "Why the training steps are slow, from the trace (docs/ADVISE.md): a ranked list of\n"
		   "findings, each with what happens, where (step phase, NVTX range; the Python\n"
		   "file:line and native frames when the trace has stacks; else the API call or\n"
		   "kernel), its cost per step (ms and %% of the step time), what to change, an\n"
		   "estimated saving per step with how it was estimated, and the records to look at.\n"
		   "Severity: high >= 20 %% of the step time saved, medium >= 5 %%, low >= 1 %%, info\n");
	/* the rules from their table: the paragraph's end flowed to the width of the lines above */
	char para[1024];
	size_t l = (size_t)snprintf(para, sizeof(para), "below.  Rules: ");
	l += fmt_list(para + l, sizeof(para) - l, adv_rule_names, AR_COUNT);
	snprintf(para + l, sizeof(para) - l, ".  Steps are found as by `gpuprof steps` (docs/STEPS.md); warm-up "
					     "steps are left out.  Several traces: each is judged on its own.");
	report_flow(f, para, strlen(para), 0, 0, 84);
	fprintf(f, "\n"
		   "  --format FMT      table (default), json or csv (one row per finding)\n"
		   "  --method M        how steps are found: auto (default), nvtx or trace\n"
		   "  --step-range NAME the steps are the NVTX ranges named NAME, or NAME <number>\n"
		   "  --kernel-wait T   idle gaps up to T before work already launched count as launch\n"
		   "                    latency (default 10us)\n"
		   SITE_RULE_HELP
		   TABOPT_HELP
		   "  --all             also the findings whose estimated saving is 0.000 ms per step\n"
		   "                    (hidden by default)\n"
		   "  --strict          exit 2 when a trace is truncated (default: warn, exit 0)\n"
		   "  --verbose         on stderr: per process, the most records held at once (the\n"
		   "                    memory bound)\n"
		   "  -h, --help        this text\n");
}

struct advise_opts {
	struct step_detect_opts detect;
	uint64_t kernel_wait_ns;
	struct site_rule site;  /* --site: the call site a finding names */
	int strict, verbose, all;
	enum report_fmt fmt;
	int printed;            /* traces printed so far */
	struct report flat;     /* csv: the rows of every trace */
};

/* The findings of one trace in the chosen format. */
static void print_result(struct advise_opts *o, const char *path, const struct adv_result *res)
{
	if (o->fmt == FMT_JSON) {
		fputs(o->printed ? ",\n" : "\n", stdout);
		advise_print_json(stdout, path, res);
	} else if (o->fmt == FMT_CSV) {
		advise_findings_rows(&o->flat, path, res);
	} else {
		if (o->printed) putchar('\n');
		advise_print_text(stdout, path, res, tabopt_width());
	}
	o->printed++;
}

/* Judges one trace and prints its findings.  Returns an exit code. */
static int advise_file(const char *path, struct advise_opts *o)
{
	gp_reader *r = tool_open(path);
	if (!r) return EXIT_BADINPUT;
	const struct advise_drive_opts dopts = { .detect = o->detect, .kernel_wait_ns = o->kernel_wait_ns,
						 .site = o->site, .all = o->all, .strict = o->strict,
						 .verbose = o->verbose };
	struct advise_drive ad;
	advise_drive_plan(&ad, r, path, &dopts);
	int code = EXIT_OK, read_rc = 0;
	if (stats_drive_run(&ad.d, &code) == 0 && advise_drive_judge(&ad, &read_rc) == 0) {
		if (o->verbose && ad.d.pt.pre.k)
			fprintf(stderr, "%s: %s: the pre-pass in %d slices\n", g_cmd, path, ad.d.pt.pre.k);
		if (o->verbose && ad.facts_sliced)
			fprintf(stderr, "%s: %s: the facts %s in %d slices: %s\n", g_cmd, path,
				ad.beside ? "in the steps' pass" : "in a pass of their own", ad.facts_sliced,
				ad.facts_how.crossed ? "a source out of time order across a cut: read again on one thread" :
				ad.facts_how.again ? "some read again on one thread (a lead-in short of one pass's state)" :
				"each went on from the state the one before it ended in");
		for (size_t i = 0; o->verbose && i < adv_facts_nprocs(ad.facts); i++) {
			const struct adv_proc *p = adv_facts_proc(ad.facts, i);
			fprintf(stderr, "%s: %s: pid %u: held at most %" PRIu64 " GPU operations, calls and "
				"busy-stretch entries at once; %" PRIu64 " operations came after the sweep had "
				"passed them\n", g_cmd, path, p->pid, p->held_max, p->late_ops);
		}
		print_result(o, path, &ad.res);
	}
	r = ad.d.r;
	advise_drive_free(&ad);
	gp_reader_close(r);
	return code;
}

int cmd_advise(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "method", required_argument, NULL, 'm' },
		{ "step-range", required_argument, NULL, 'n' },
		{ "kernel-wait", required_argument, NULL, 'w' },
		{ "site", required_argument, NULL, 'S' },
		{ "strict", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "all", no_argument, NULL, 'a' },
		{ 0 },
	};
	stats_drive_malloc();
	struct advise_opts o;
	memset(&o, 0, sizeof(o));
	o.detect.want = STEP_WANT_AUTO;
	o.fmt = FMT_TABLE;
	int c;
	while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		int taken = stepopt_parse(c, optarg, &o.detect, &o.kernel_wait_ns);
		if (taken < 0) return EXIT_USAGE;
		if (taken) continue;
		switch (c) {
		case 'f':
			if (report_fmt_parse(optarg, &o.fmt)) return EXIT_USAGE;
			break;
		case 'S':
			if (site_rule_parse(&o.site, optarg)) return EXIT_USAGE;
			break;
		case 's': o.strict = 1; break;
		case 'v': o.verbose = 1; break;
		case 'a': o.all = 1; break;
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	if (stepopt_check(&o.detect)) return EXIT_USAGE;
	if (optind >= argc) return tool_usage_see_help("no trace file given");
	int worst = EXIT_OK;
	if (o.fmt == FMT_JSON) fputs("{\"advise\":[", stdout);
	for (int i = optind; i < argc; i++) {
		int code = advise_file(argv[i], &o);
		if (code > worst) worst = code;
	}
	if (o.fmt == FMT_JSON) fputs(o.printed ? "\n]}\n" : "]}\n", stdout);
	if (o.fmt == FMT_CSV) {
		struct adv_result none;
		memset(&none, 0, sizeof(none));
		if (!o.flat.cols) advise_findings_rows(&o.flat, "", &none);
		const struct report_style csv = { .fmt = FMT_CSV, .width = 0, .unit = TU_NS };
		report_print(stdout, &o.flat, &csv);
		report_free(&o.flat);
	}
	return worst;
}
