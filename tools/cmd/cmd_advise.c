/* cmd_advise.c — `gpuprof advise TRACE...`: why the GPU idles, what to
 * change, and what it would save (docs/ADVISE.md).  Option parsing and the
 * three passes over each trace; the analyses are in tools/analysis/
 * (the steps: steps.h; what advise measures: advise_facts.h; the rules:
 * advise.h; the output: advise_report.h).
 *
 * Pass 1 reads the NVTX ranges (attribution index), a sample of the GPU
 * operations (step detection), the GPU-activity windows and what advise
 * needs up front (device properties, PM counters, call stacks, pinned copy
 * bandwidth).  Pass 2 is the steps analysis: API calls and GPU operations
 * through the launch join into the per-step component.  Pass 3 sweeps each
 * process's GPU timeline once the steps and their warm-up are known. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/advise_facts.h"
#include "analysis/advise_report.h"
#include "analysis/attribution.h"
#include "analysis/opjoin.h"
#include "analysis/site_rule.h"
#include "analysis/stacks.h"
#include "analysis/step_detect.h"
#include "analysis/step_passes.h"
#include "analysis/steps.h"
#include "analysis/windows.h"
#include "common/report.h"
#include "common/tool.h"

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof advise [--format table|json|csv] [--method auto|nvtx|trace]\n"
		   "                      [--step-range NAME] [--kernel-wait T] [--site RULE]\n"
		   "                      [--strict] [--verbose]\n"
		   "                      TRACE...\n\n"
		   "Why the training steps are slow, from the trace (docs/ADVISE.md): a ranked list of\n"
		   "findings, each with what happens, where (step phase, NVTX range; the Python\n"
		   "file:line and native frames when the trace has stacks; else the API call or\n"
		   "kernel), its cost per step (ms and %% of the step time), what to change, an\n"
		   "estimated saving per step with how it was estimated, and the records to look at.\n"
		   "Severity: high >= 20 %% of the step time saved, medium >= 5 %%, low >= 1 %%, info\n"
		   "below.  Rules: input-bound, sync, pageable-copy, sync-copy, alloc-churn,\n"
		   "launch-bound, host-gaps, fp32-matmul, under-parallel, low-occupancy, exposed-comm,\n"
		   "outlier-steps.  Steps are found as by `gpuprof steps` (docs/STEPS.md); warm-up\n"
		   "steps are left out.  Several traces: each is judged on its own.\n\n"
		   "  --format FMT      table (default), json or csv (one row per finding)\n"
		   "  --method M        how steps are found: auto (default), nvtx or trace\n"
		   "  --step-range NAME the steps are the NVTX ranges named NAME, or NAME <number>\n"
		   "  --kernel-wait T   idle gaps up to T before work already launched count as launch\n"
		   "                    latency (default 10us)\n"
		   SITE_RULE_HELP
		   "  --strict          exit 2 when a trace is truncated (default: warn, exit 0)\n"
		   "  --verbose         on stderr: per process, the most records held at once (the\n"
		   "                    memory bound)\n"
		   "  -h, --help        this text\n");
}

static int fatal(int rc) { return rc < 0 && rc != GP_ERR_TRUNCATED && rc != GP_ERR_CORRUPT; }

/* Pass 1: the steps analysis' pass 1 (analysis/step_passes.h) and
 * advise's own inputs. */
static int pass_first(gp_reader *r, struct attribution *a, struct step_detect *d, struct winset *win,
		      struct adv_pre *pre)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		adv_pre_add(pre, tool_pid(r, rec), rec);
		step_pass1_add(r, rec, a, d, win);
	}
	return rc;
}

/* Pass 2: the steps analysis' pass 2 as is. */
static int pass_steps(gp_reader *r, struct opjoin *j, struct steps *st, const struct winset *win)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0, now = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		step_pass2_add(r, rec, j, st, win, &now);
	}
	return rc;
}

/* Pass 3: the same launch join (its callback feeds the facts), with the API
 * calls and GPU operations also into advise's facts, advanced with the
 * join's frontier. */
static int pass_facts(gp_reader *r, struct opjoin *j, struct adv_facts *facts, const struct winset *win)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0, now = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		if (rec->type == GP_REC_API)
			adv_facts_api(facts, tool_pid(r, rec), tool_rec_tid(r, rec), &rec->u.api);
		else if (rec->type == GP_REC_KERNEL || rec->type == GP_REC_MEMCPY || rec->type == GP_REC_MEMSET)
			adv_facts_gpu(facts, tool_pid(r, rec), rec);
		uint64_t before = now;
		step_pass2_add(r, rec, j, NULL, win, &now);
		if (now > before)
			adv_facts_advance(facts, now, opjoin_frontier(j));
	}
	return rc;
}

struct advise_opts {
	struct step_detect_opts detect;
	uint64_t kernel_wait_ns;
	struct site_rule site;  /* --site: the call site a finding names */
	int strict, verbose;
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
		advise_print_text(stdout, path, res);
	}
	o->printed++;
}

/* Judges one trace and prints its findings.  Returns an exit code. */
static int advise_file(const char *path, struct advise_opts *o)
{
	gp_reader *r = tool_open(path);
	if (!r) return EXIT_BADINPUT;
	uint64_t base = gp_reader_header(r)->start_trace_ns;
	struct winset win = { 0 };
	struct adv_pre pre;
	adv_pre_init(&pre, r);
	stacks_set_site_rule(pre.stk, &o->site);
	struct attribution *a = attribution_new(ATTR_ANY_THREAD);
	struct step_detect *d = step_detect_new(r, &o->detect);
	struct steps *st = NULL;
	struct opjoin *j = NULL, *j3 = NULL;
	struct adv_facts *facts = NULL;
	int code = EXIT_OK;
	int rc = pass_first(r, a, d, &win, &pre);
	if (fatal(rc)) { code = tool_finish(r, path, rc, o->strict); goto out; }
	attribution_index(a);
	winset_finish(&win);
	adv_pre_finish(&pre);
	const char *err = NULL;
	if (step_detect_finish(d, a, &err) < 0) {
		tool_err("%s", err);
		code = EXIT_BADINPUT;
		goto out;
	}
	struct steps_opts sopts = { sizeof(sopts), o->kernel_wait_ns, &win };
	st = steps_new(r, a, d, &sopts);
	j = opjoin_new(r, NULL, steps_op, st);
	if ((rc = gp_reader_rewind(r)) < 0) { code = tool_finish(r, path, rc, o->strict); goto out; }
	rc = pass_steps(r, j, st, &win);
	if (fatal(rc)) { code = tool_finish(r, path, rc, o->strict); goto out; }
	opjoin_finish(j);
	steps_finish(st);
	struct adv_facts_opts fopts = { sizeof(fopts), o->kernel_wait_ns };
	facts = adv_facts_new(r, st, &pre, &fopts);
	j3 = opjoin_new(r, NULL, adv_facts_op, facts);
	if ((rc = gp_reader_rewind(r)) < 0) { code = tool_finish(r, path, rc, o->strict); goto out; }
	rc = pass_facts(r, j3, facts, &win);
	code = tool_finish(r, path, rc, o->strict);
	if (fatal(rc)) goto out;
	opjoin_finish(j3);
	adv_facts_finish(facts);
	for (size_t i = 0; o->verbose && i < adv_facts_nprocs(facts); i++) {
		const struct adv_proc *p = adv_facts_proc(facts, i);
		fprintf(stderr, "%s: %s: pid %u: held at most %" PRIu64 " GPU operations, calls and busy-stretch "
			"entries at once; %" PRIu64 " operations came after the sweep had passed them\n", g_cmd, path,
			p->pid, p->held_max, p->late_ops);
	}
	struct adv_result res;
	advise_judge(facts, base, &res);
	/* the findings point into the facts (labels, stacks): printed before they go */
	print_result(o, path, &res);
	advise_result_free(&res);
out:
	adv_facts_free(facts);
	opjoin_free(j3);
	opjoin_free(j);
	steps_free(st);
	step_detect_free(d);
	attribution_free(a);
	winset_free(&win);
	adv_pre_free(&pre);
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct advise_opts o;
	memset(&o, 0, sizeof(o));
	o.detect.sz = sizeof(o.detect);
	o.detect.want = STEP_WANT_AUTO;
	o.fmt = FMT_TABLE;
	int c;
	while ((c = getopt_long(argc, argv, "hf:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "table")) o.fmt = FMT_TABLE;
			else if (!strcmp(optarg, "json")) o.fmt = FMT_JSON;
			else if (!strcmp(optarg, "csv")) o.fmt = FMT_CSV;
			else { tool_err("unknown format '%s' (table, json, csv)", optarg); return EXIT_USAGE; }
			break;
		case 'm':
			if (!strcmp(optarg, "auto")) o.detect.want = STEP_WANT_AUTO;
			else if (!strcmp(optarg, "nvtx")) o.detect.want = STEP_WANT_NVTX;
			else if (!strcmp(optarg, "trace")) o.detect.want = STEP_WANT_TRACE;
			else { tool_err("unknown --method '%s' (auto, nvtx, trace)", optarg); return EXIT_USAGE; }
			break;
		case 'n':
			if (!*optarg) { tool_err("--step-range needs a name"); return EXIT_USAGE; }
			o.detect.range_name = optarg;
			break;
		case 'w':
			if (parse_duration_ns(optarg, &o.kernel_wait_ns) || !o.kernel_wait_ns) {
				tool_err("bad --kernel-wait '%s' (a duration > 0: 30ns, 10us)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S':
			if (site_rule_parse(&o.site, optarg)) return EXIT_USAGE;
			break;
		case 's': o.strict = 1; break;
		case 'v': o.verbose = 1; break;
		case 'h': help(stdout); return EXIT_OK;
		default: help(stderr); return EXIT_USAGE;
		}
	}
	if (o.detect.range_name && o.detect.want == STEP_WANT_TRACE) {
		tool_err("--step-range names NVTX ranges: it does not go with --method trace");
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		tool_err("no trace file given");
		help(stderr);
		return EXIT_USAGE;
	}
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
