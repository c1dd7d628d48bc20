/* cmd_export.c — `gpuprof export --format FORMAT FILE -o OUT`: option
 * parsing and checks; the formats, their help and their entry points are
 * export/registry.c's list. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "gp_settings.h"
#include "analysis/steps/selection.h"
#include "analysis/stacks/site_rule.h"
#include "cmd/cmd.h"
#include "common/selopt.h"
#include "common/tool.h"
#include "export/export.h"
#include "reports/stats_selection.h"

void cmd_export_help(FILE *f)
{
	char no_stdout[128], sel[128];
	fputs("usage: gpuprof export --format ", f);
	for (const struct export_format *x = export_formats; x->name; x++)
		fprintf(f, "%s%s", x == export_formats ? "" : "|", x->name);
	fputs(" [--weight W] [--site RULE]\n"
	      "                      [--since T] [--until T] [--steps A:B] [--range NAME] [--abs-time]\n"
	      "                      [--summary] [--gzip] [--row-group N] [--table NAME] [--strict] FILE -o OUT\n\n",
	      f);
	for (const struct export_format *x = export_formats; x->name; x++) fputs(x->help, f);
	export_format_names(no_stdout, sizeof(no_stdout), EXPORT_TAKES_STDOUT, 0, " or ", 0);
	fprintf(f, "  -o, --output OUT   output file ('-' = stdout, not %s);\n"
		   "                     replaced if it exists\n"
		   "  FILE               the trace; '-' = stdin (copied to a temporary file first)\n"
		   "%s only:\n"
		   SELOPT_HELP
		   "  --strict           exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help         this text\n",
		no_stdout, export_format_names(sel, sizeof(sel), EXPORT_TAKES_SELECTION, EXPORT_TAKES_SELECTION, " and ", 0));
}

void cmd_export_what(char *buf, size_t n)
{
	char titles[256];
	snprintf(buf, n, "convert to %s", export_format_names(titles, sizeof(titles), 0, 0, " or ", 1));
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
		{ "table", required_argument, NULL, 'T' },
		SELOPT_LONG_OPTIONS,
		{ 0 },
	};
	const char *format = NULL, *out = NULL, *weight = NULL, *table = NULL;
	struct site_rule site;
	int have_site = 0;
	int strict = 0, summary = 0, gzip = 0, c;
	uint64_t row_group = 0;
	struct sel_opts so;
	sel_opts_init(&so);
	while ((c = getopt_long(argc, argv, "f:o:", opts, NULL)) != -1) {
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
		case 'T': table = optarg; break;
		case 'R':
			if (gp_parse_uint(optarg, 1, 1u << 30, &row_group))
				return tool_usage("bad --row-group '%s' (1 .. %u rows)", optarg, 1u << 30);
			break;
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) return tool_usage_see_help("expected one trace file");
	if (sel_opts_check(&so)) return EXIT_USAGE;
	char names[256];
	if (!format)
		return tool_usage("--format is required (%s)", export_format_names(names, sizeof(names), 0, 0, " or ", 0));
	if (!out) return tool_usage("-o OUT is required");
	/* an unknown format takes no option: those errors first, as for a known one */
	const struct export_format *fmt = export_format_find(format);
	unsigned takes = fmt ? fmt->takes : 0;
	const struct { int given; unsigned bit; const char *name; } own[] = {
		{ weight != NULL, EXPORT_TAKES_WEIGHT, "--weight" }, { have_site, EXPORT_TAKES_SITE, "--site" },
		{ summary, EXPORT_TAKES_SUMMARY, "--summary" }, { gzip, EXPORT_TAKES_GZIP, "--gzip" },
		{ row_group != 0, EXPORT_TAKES_ROW_GROUP, "--row-group" }, { table != NULL, EXPORT_TAKES_TABLE, "--table" },
	};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i].given && !(takes & own[i].bit))
			return tool_usage("%s applies to --format %s only", own[i].name,
					  export_format_names(names, sizeof(names), own[i].bit, own[i].bit, " and ", 0));
	if (!fmt)
		return tool_usage("unknown format '%s' (%s)", format, export_format_names(names, sizeof(names), 0, 0, ", ", 0));
	if ((sel_opts_any(&so) || so.abs_time) && !(takes & EXPORT_TAKES_SELECTION))
		return tool_usage("--since, --until, --steps, --range and --abs-time apply to %s",
				  export_format_names(names, sizeof(names), EXPORT_TAKES_SELECTION, EXPORT_TAKES_SELECTION,
						      " and ", 0));
	enum folded_weight w = FOLDED_GPU_TIME;
	if (!weight || !strcmp(weight, "gpu-time")) w = FOLDED_GPU_TIME;
	else if (!strcmp(weight, "kernel-time")) w = FOLDED_KERNEL_TIME;
	else if (!strcmp(weight, "launches")) w = FOLDED_LAUNCHES;
	else return tool_usage("unknown weight '%s' (gpu-time, kernel-time, launches)", weight);
	if (!(takes & EXPORT_TAKES_STDOUT) && !table && !strcmp(out, "-"))
		return tool_usage("%s output needs a %s name", format, fmt->out_is);
	/* the selection: resolved on the trace first (it may read it) */
	struct selection sel;
	memset(&sel, 0, sizeof(sel));
	if (sel_opts_any(&so)) {
		gp_reader *r = tool_open(argv[optind]);
		if (!r) return EXIT_BADINPUT;
		int resolved = stats_selection_resolve(&sel, r, argv[optind], &so, NULL);
		gp_reader_close(r);
		if (resolved != EXIT_OK) return resolved;
	}
	struct export_opts eo = { .sel = &sel, .abs_time = so.abs_time, .gzip = gzip,
				  .summary = summary, .row_group = (uint32_t)row_group, .weight = w,
				  .site = have_site ? &site : NULL, .table = table };
	int rc = fmt->run(argv[optind], out, strict, &eo);
	selection_free(&sel);
	return rc;
}
