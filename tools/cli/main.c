/* main.c — `gpuprof` entry point: picks the subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/tool.h"

/* `gpuprof steps ARGS` is `gpuprof stats --report steps ARGS`, `gpuprof
 * memory ARGS` is `gpuprof stats --report memory_steps ARGS`: those tables
 * unless ARGS name their own (--report), with the same options. */
static int stats_alias(int argc, char **argv, const char *report)
{
	int named = 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--report", 8) || !strncmp(argv[i], "-r", 2)) named = 1;
	if (named) return cmd_stats(argc, argv);
	char **av = malloc(((size_t)argc + 2) * sizeof(*av));
	if (!av) { tool_err("out of memory"); return EXIT_BADINPUT; }
	av[0] = argv[0];
	av[1] = (char *)report;
	for (int i = 1; i <= argc; i++) av[i + 1] = argv[i];  /* with argv[argc] == NULL */
	int rc = cmd_stats(argc + 1, av);
	free(av);
	return rc;
}

static int cmd_steps_alias(int argc, char **argv) { return stats_alias(argc, argv, "--report=steps"); }
static int cmd_memory_alias(int argc, char **argv) { return stats_alias(argc, argv, "--report=memory_steps"); }

/* stats' line in the help: its registry's report names */
static void stats_what(char *buf, size_t n)
{
	char names[900];
	cmd_stats_report_names(names, sizeof(names));
	snprintf(buf, n, "summary reports: %s", names);
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *what;
	int reads;   /* reads trace files: takes --threads */
	void (*what_of)(char *buf, size_t n); /* what, from a registry (what NULL) */
} cmds[] = {
	{ "run", cmd_run, "run a command with tracing (LD_PRELOAD=libgpuprof.so)", 0, NULL },
	{ "info", cmd_info, "header, processes, threads, devices, counts, integrity", 1, NULL },
	{ "dump", cmd_dump, "every record, time-ordered, as text or JSON lines", 1, NULL },
	{ "stats", cmd_stats, NULL, 1, stats_what },
	{ "export", cmd_export, NULL, 1, cmd_export_what },
	{ "merge", cmd_merge, "merge traces of several processes onto one time axis", 1, NULL },
	{ "steps", cmd_steps_alias, "training steps: where step time goes (= stats --report steps)", 1, NULL },
	{ "memory", cmd_memory_alias, "device memory per step, growth, leaking sites, out of memory (= stats --report memory_steps)", 1, NULL },
	{ "report", cmd_report, "one self-contained HTML page: header, steps, charts, top tables", 1, NULL },
	{ "diff", cmd_diff, "what changed between two runs: aligned steps, significance, deltas", 1, NULL },
	{ "advise", cmd_advise, "why the steps are slow: ranked findings, what to change, estimated saving", 1, NULL },
	{ "top", cmd_top, "one line per running job from GPUPROF_STATUS files (live)", 0, NULL },
	{ "trigger", cmd_trigger, "capture K steps of GPU activity in running jobs (flight recorder)", 0, NULL },
};

/* `text` after the 11 columns of a command's name, wrapped at spaces so lines
 * stay within 79 columns. */
static void print_wrapped(FILE *f, const char *text)
{
	const int indent = 11, width = 79;
	int col = indent;
	const char *p = text;
	while (*p) {
		size_t w = strcspn(p, " ");
		if (col > indent && col + 1 + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		while (*p == ' ') p++;
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gpuprof <command> [options] [args]\n"
		   "       gpuprof --version\n\n"
		   "Records and analyses CUDA activity of deep-learning jobs.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char what[1024];
		if (cmds[i].what) snprintf(what, sizeof(what), "%s", cmds[i].what);
		else cmds[i].what_of(what, sizeof(what));
		fprintf(f, "  %-8s ", cmds[i].name);
		print_wrapped(f, what);
	}
	fprintf(f, "\nThe commands that read traces also take --threads N: threads that decode\n"
		   "the trace, and in stats compute the reports that merge over slices of\n"
		   "time (default: the online processors; the output is the same).\n"
		   "\n'gpuprof <command> --help' describes a command.\n"
		   "exit status: 0 ok, 1 usage error, 2 unreadable or damaged input;\n"
		   "'run' exits with the job's status.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("gpuprof %s (trace format %d.%d)\n", GP_PRODUCER_VERSION,
		       GP_FORMAT_MAJOR, GP_FORMAT_MINOR);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			static char prefix[64];
			snprintf(prefix, sizeof(prefix), "gpuprof %s", cmds[i].name);
			g_cmd = prefix;
			if (cmds[i].reads && (argc = tool_take_threads(argc, argv)) < 0)
				return EXIT_USAGE;
			argv[1] = prefix; /* getopt's own messages start with argv[0] */
			return cmds[i].fn(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "gpuprof: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
