/* cmd_steps.c — `gpuprof steps FILE`: the training-step report
 * (tools/analysis/, docs/STEPS.md).  A thin, temporary entry point: the
 * analysis is meant to become `gpuprof stats --report steps`; only option
 * parsing and printing are here.  The two passes over the trace are
 * analysis/steps_run.c: pass 1 reads the NVTX ranges (attribution index) and
 * a sample of the GPU operations (step detection): push/pop ranges are
 * written when popped, after the calls inside them, so every range must be
 * known before a call can be attributed.  Pass 2 streams the API calls and
 * GPU operations through the launch join into the per-step component, which
 * finalizes each step as soon as all its GPU work has been seen. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attribution.h"
#include "analysis/opjoin.h"
#include "analysis/step_detect.h"
#include "analysis/steps.h"
#include "analysis/steps_report.h"
#include "analysis/steps_run.h"
#include "common/report.h"
#include "common/tool.h"

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof steps [--method auto|nvtx|trace] [--step-range NAME]\n"
		   "                     [--attribution any-thread|same-thread] [--keep-warmup]\n"
		   "                     [--kernel-wait T] [--per-step] [--report LIST]\n"
		   "                     [--format table|csv|json] [--strict] [--verbose] FILE\n\n"
		   "The training step as the unit (docs/STEPS.md): where each step's wall time goes\n"
		   "(GPU compute, communication and memory operations not hidden under compute, and\n"
		   "GPU idle time by why: host wait, synchronising call, launch latency, other; they\n"
		   "add up to the step time), the GPU work launched in it, HTA's kernel launch\n"
		   "statistics, step-time statistics, warm-up and outlier steps.  Temporary command:\n"
		   "it will become `gpuprof stats --report steps`.\n\n"
		   "  --method M        nvtx: NVTX ranges named like steps ('step 12', 'iteration 3',\n"
		   "                    'ProfilerStep#7', 'train_step'), the outermost repeating group;\n"
		   "                    trace: the periodic sequence of GPU operations; auto (default):\n"
		   "                    nvtx when there are such ranges, else trace\n"
		   "  --step-range NAME the steps are the ranges named NAME, or NAME <number>\n"
		   "  --attribution R   any-thread (default): GPU work belongs to the ranges open when\n"
		   "                    its launch call started, on any thread of the process;\n"
		   "                    same-thread: only calls on the thread that began the range\n"
		   "  --keep-warmup     count the warm-up steps in the summaries (default: left out)\n"
		   "  --kernel-wait T   idle gaps up to T before work already launched count as launch\n"
		   "                    latency (default 10us; HTA's consecutive_kernel_delay)\n"
		   "  --per-step        also print one row per step (step_rows)\n"
		   "  --report LIST     tables, comma separated: steps, step_buckets, step_launch,\n"
		   "                    step_outliers, step_phases, step_rows (default: all but step_rows)\n"
		   "  --format FMT      table (default), csv or json\n"
		   "  --strict          exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  --verbose         on stderr: per process, the most records held at once (the\n"
		   "                    memory bound) and the operations the join could not pair\n"
		   "  -h, --help        this text\n");
}

int cmd_steps(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "method", required_argument, NULL, 'm' },
		{ "step-range", required_argument, NULL, 'n' },
		{ "attribution", required_argument, NULL, 'a' },
		{ "keep-warmup", no_argument, NULL, 'k' },
		{ "kernel-wait", required_argument, NULL, 'w' },
		{ "per-step", no_argument, NULL, 'p' },
		{ "report", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "strict", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct steps_run_opts ro = { sizeof(ro), { sizeof(struct step_detect_opts), STEP_WANT_AUTO, NULL, 0 },
				     ATTR_ANY_THREAD, 0 };
	struct step_detect_opts *dopts = &ro.detect;
	int keep = 0, per_step = 0, fmt = FMT_TABLE, strict = 0, any = 0, verbose = 0, c;
	int want[SR_COUNT] = { 0 };
	while ((c = getopt_long(argc, argv, "hr:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (step_want_parse(optarg, &dopts->want)) {
				tool_err("unknown --method '%s' (auto, nvtx, trace)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (!*optarg) { tool_err("--step-range needs a name"); return EXIT_USAGE; }
			dopts->range_name = optarg;
			break;
		case 'a':
			if (attr_rule_parse(optarg, &ro.rule)) {
				tool_err("unknown --attribution '%s' (any-thread, same-thread)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'k': keep = 1; break;
		case 'w':
			if (parse_duration_ns(optarg, &ro.kernel_wait_ns) || !ro.kernel_wait_ns) {
				tool_err("bad --kernel-wait '%s' (a duration > 0: 30ns, 10us)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'p': per_step = 1; break;
		case 'r': {
			char *list = xstrdup(optarg), *save = NULL;
			for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int k;
				for (k = 0; k < SR_COUNT && strcmp(tok, steps_report_names[k]); k++) ;
				if (k == SR_COUNT) {
					tool_err("unknown report '%s' (steps, step_buckets, step_launch, step_outliers, step_phases, step_rows)",
						 tok);
					free(list);
					return EXIT_USAGE;
				}
				want[k] = 1; any = 1;
			}
			free(list);
			break;
		}
		case 'f':
			if (!strcmp(optarg, "table")) fmt = FMT_TABLE;
			else if (!strcmp(optarg, "csv")) fmt = FMT_CSV;
			else if (!strcmp(optarg, "json")) fmt = FMT_JSON;
			else { tool_err("unknown format '%s' (table, csv, json)", optarg); return EXIT_USAGE; }
			break;
		case 's': strict = 1; break;
		case 'v': verbose = 1; break;
		case 'h': help(stdout); return EXIT_OK;
		default: help(stderr); return EXIT_USAGE;
		}
	}
	if (dopts->range_name && dopts->want == STEP_WANT_TRACE) {
		tool_err("--step-range names NVTX ranges: it does not go with --method trace");
		return EXIT_USAGE;
	}
	if (!any)
		for (int k = 0; k < SR_COUNT; k++) want[k] = k != SR_ROWS || per_step;
	const char *path;
	gp_reader *r;
	int code = tool_open_operand(argc, argv, help, &path, &r);
	if (code != EXIT_OK) return code;

	struct steps_run sr;
	int read_rc = 0;
	const char *err = NULL;
	if (steps_run(r, &ro, &sr, &read_rc, &err) < 0) {
		if (err) {
			tool_err("%s", err);
			code = EXIT_BADINPUT;
		} else {
			code = tool_finish(r, path, read_rc, strict);
		}
		goto out;
	}
	code = tool_finish(r, path, read_rc, strict);
	struct steps *st = sr.st;
	if (verbose) {
		struct opjoin_counts oc;
		opjoin_counts(sr.j, &oc);
		fprintf(stderr, "%s: %" PRIu64 " GPU operations, %" PRIu64 " without a launch call; %" PRIu64
			" launch calls without an operation\n", g_cmd, oc.ops, oc.ops_no_call, oc.calls_no_op);
		for (size_t i = 0; i < steps_nprocs(st); i++) {
			const struct steps_proc *p = steps_proc(st, i);
			fprintf(stderr, "%s: pid %u: %zu steps; held at most %" PRIu64
				" GPU operations and API calls at once; %" PRIu64 " came after their step\n",
				g_cmd, p->pid, p->nrows, p->pending_max, p->late_ops);
		}
	}

	struct steps_reports reps;
	steps_reports_fill(&reps, st, gp_reader_header(r)->start_trace_ns, keep);
	const struct report_style style = { .fmt = fmt, .width = 0, .unit = TU_NS };
	report_print_tables(stdout, reps.rep, want, SR_COUNT, &style);
	steps_reports_free(&reps);
out:
	steps_run_free(&sr);
	gp_reader_close(r);
	return code;
}
