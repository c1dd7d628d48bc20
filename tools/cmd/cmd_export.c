/* cmd_export.c — `gpuprof export --format perfetto|sqlite|parquet|folded
 * FILE -o OUT`: option parsing; the formats live in export_perfetto.c /
 * export_sqlite.c / export_parquet.c / export_folded.c. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/selection.h"
#include "analysis/site_rule.h"
#include "cmd/cmd.h"
#include "common/selopt.h"
#include "common/tool.h"
#include "export/export.h"

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof export --format perfetto|sqlite|parquet|folded [--weight W] [--site RULE]\n"
		   "                      [--since T] [--until T] [--steps A:B] [--range NAME] [--abs-time]\n"
		   "                      [--summary] [--gzip] [--row-group N] [--strict] FILE -o OUT\n\n"
		   "  --format perfetto  Chrome trace-event JSON for ui.perfetto.dev and\n"
		   "                     chrome://tracing: CPU threads with API calls and NVTX\n"
		   "                     ranges, one track per GPU stream (process \"GPU N\"), flow\n"
		   "                     arrows launch -> kernel/memcpy/memset, counters.\n"
		   "                     Timestamps: us since the trace start, ns precision.\n"
		   "                     --format chrome and --format json are the same.\n"
		   "  --summary          perfetto only: a timeline of a whole run that opens in the\n"
		   "                     UI: steps (outermost NVTX push/pop ranges) as slices and,\n"
		   "                     per GPU, kernel/copy time (%%) and kernels/s in ~2000 time\n"
		   "                     buckets, API calls/s per process; no single calls or kernels\n"
		   "  --gzip             perfetto only: gzip the output (also when OUT ends in .gz)\n"
		   "  --format sqlite    SQLite database with nsys-like tables\n"
		   "                     (CUPTI_ACTIVITY_KIND_KERNEL, ..._RUNTIME, NVTX_EVENTS, ...);\n"
		   "                     times in ns since the trace start.\n"
		   "  --format parquet   the same tables, one Parquet file each in the directory\n"
		   "                     OUT (OUT/TABLE.parquet, made if missing; ZSTD) for DuckDB\n"
		   "                     and other Parquet readers: the same SQL runs on both\n"
		   "  --row-group N      parquet only: rows per row group (default %d)\n"
		   "  --format folded    folded stacks of the launch calls (\"root;...;leaf WEIGHT\"\n"
		   "                     per line) for flamegraph.pl and speedscope; needs a trace\n"
		   "                     recorded with --stacks.  Python frames \"func (file:line)\".\n"
		   "  --weight W         folded only: gpu-time (default: ns of kernels, memcpys\n"
		   "                     and memsets launched), kernel-time (ns of kernels), or\n"
		   "                     launches (number of launch calls)\n"
		   "  --site RULE        folded only: each stack up to its launch site's frame\n"
		   "                     (user, inner, or a file-path GLOB as in stats), or\n"
		   "                     `layer`: the model-layer path, as stats --report layers\n"
		   "  -o, --output OUT   output file ('-' = stdout, not sqlite or parquet); replaced\n"
		   "                     if it exists\n"
		   "  FILE               the trace; '-' = stdin (copied to a temporary file first)\n"
		   "perfetto, sqlite and parquet only:\n"
		   SELOPT_HELP
		   "  --strict           exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help         this text\n",
		EXPORT_PARQUET_ROW_GROUP);
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "strict", no_argument, NULL, 's' },
		{ "weight", required_argument, NULL, 'w' },
		{ "site", required_argument, NULL, 'S' },
		{ "summary", no_argument, NULL, 'U' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "row-group", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		SELOPT_LONG_OPTIONS,
		{ 0 },
	};
	const char *format = NULL, *out = NULL, *weight = NULL;
	struct site_rule site;
	int have_site = 0;
	int strict = 0, summary = 0, gzip = 0, c;
	uint32_t row_group = 0;
	struct sel_opts so;
	sel_opts_init(&so);
	while ((c = getopt_long(argc, argv, "hf:o:", opts, NULL)) != -1) {
		int taken = sel_opts_parse(&so, c, optarg);
		if (taken < 0) return EXIT_USAGE;
		if (taken) continue;
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': out = optarg; break;
		case 's': strict = 1; break;
		case 'w': weight = optarg; break;
		case 'S':
			if (site_rule_parse(&site, optarg)) return EXIT_USAGE;
			have_site = 1;
			break;
		case 'U': summary = 1; break;
		case 'z': gzip = 1; break;
		case 'R': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 1u << 30 || optarg[0] == '-') {
				tool_err("bad --row-group '%s' (1 .. %u rows)", optarg, 1u << 30);
				return EXIT_USAGE;
			}
			row_group = (uint32_t)v;
			break;
		}
		case 'h': help(stdout); return EXIT_OK;
		default: help(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		tool_err("expected one trace file");
		help(stderr);
		return EXIT_USAGE;
	}
	if (!format) {
		tool_err("--format is required (perfetto, sqlite, parquet or folded)");
		return EXIT_USAGE;
	}
	if (!out) {
		tool_err("-o OUT is required");
		return EXIT_USAGE;
	}
	if ((weight || have_site) && strcmp(format, "folded")) {
		tool_err("%s applies to --format folded only", weight ? "--weight" : "--site");
		return EXIT_USAGE;
	}
	if (sel_opts_check(&so)) return EXIT_USAGE;
	int perfetto = !strcmp(format, "perfetto") || !strcmp(format, "chrome") || !strcmp(format, "json");
	int parquet = !strcmp(format, "parquet");
	if ((summary || gzip) && !perfetto) {
		tool_err("%s applies to --format perfetto only", summary ? "--summary" : "--gzip");
		return EXIT_USAGE;
	}
	if (row_group && !parquet) {
		tool_err("--row-group applies to --format parquet only");
		return EXIT_USAGE;
	}
	if (!strcmp(format, "folded")) {
		if (sel_opts_any(&so) || so.abs_time) {
			tool_err("--since, --until, --steps, --range and --abs-time apply to perfetto, sqlite and parquet");
			return EXIT_USAGE;
		}
		enum folded_weight w = FOLDED_GPU_TIME;
		if (!weight || !strcmp(weight, "gpu-time")) w = FOLDED_GPU_TIME;
		else if (!strcmp(weight, "kernel-time")) w = FOLDED_KERNEL_TIME;
		else if (!strcmp(weight, "launches")) w = FOLDED_LAUNCHES;
		else {
			tool_err("unknown weight '%s' (gpu-time, kernel-time, launches)", weight);
			return EXIT_USAGE;
		}
		return export_folded(argv[optind], out, strict, w, have_site ? &site : NULL);
	}
	if (!perfetto && !parquet && strcmp(format, "sqlite")) {
		tool_err("unknown format '%s' (perfetto, sqlite, parquet, folded)", format);
		return EXIT_USAGE;
	}
	if (!perfetto && !strcmp(out, "-")) {
		tool_err("%s output needs a %s name", format, parquet ? "directory" : "file");
		return EXIT_USAGE;
	}
	/* the selection: resolved on the trace first (it may read it) */
	struct selection sel;
	memset(&sel, 0, sizeof(sel));
	if (sel_opts_any(&so)) {
		gp_reader *r = tool_open(argv[optind]);
		if (!r) return EXIT_BADINPUT;
		char err[512];
		int bad = selection_resolve(&sel, r, &so, NULL, err, sizeof(err)) < 0;
		gp_reader_close(r);
		if (bad) {
			tool_err("%s", err);
			selection_free(&sel);
			return EXIT_BADINPUT;
		}
	}
	struct export_opts eo = { sizeof(eo), &sel, so.abs_time, gzip, summary, row_group };
	int rc = perfetto  ? export_perfetto(argv[optind], out, strict, &eo)
		 : parquet ? export_parquet(argv[optind], out, strict, &eo)
			   : export_sqlite(argv[optind], out, strict, &eo);
	selection_free(&sel);
	return rc;
}
