/* main.c — `gpuprof` entry point: picks the subcommand from the table of
 * commands (commands.h); the help is help.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/help.h"
#include "common/tabopt.h"
#include "common/tool.h"

/* Whether args ask for the help: -h or --help before "--" (for run, before
 * the job's command too: its words are the job's).  The one place a
 * command's help is asked for, but run's: an option's value ends this scan
 * (`run --flush-ms 10 --help`), so run's own options take -h too. */
static int asks_help(const struct cli_command *c, int argc, char **argv)
{
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
		if (!strcmp(c->name, "run") && argv[i][0] != '-') return 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		g_cmd = "gpuprof help";
		return cli_help_main(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("gpuprof %s (trace format %d.%d)\n", GP_PRODUCER_VERSION,
		       GP_FORMAT_MAJOR, GP_FORMAT_MINOR);
		return EXIT_OK;
	}
	const struct cli_command *c = cli_command_find(argv[1]);
	if (!c) {
		fprintf(stderr, "gpuprof: unknown command '%s'\n", argv[1]);
		cli_usage(stderr);
		return EXIT_USAGE;
	}
	if (asks_help(c, argc, argv)) {
		cli_help_short(stdout, c);
		return EXIT_OK;
	}
	static char prefix[64];
	snprintf(prefix, sizeof(prefix), "gpuprof %s", c->name);
	g_cmd = prefix;
	if (c->reads && (argc = tool_take_threads(argc, argv)) < 0) return EXIT_USAGE;
	if (c->tables && (argc = tabopt_take(argc, argv)) < 0) return EXIT_USAGE;
	argv[1] = prefix; /* getopt's own messages start with argv[0] */
	return cli_command_run(c, argc - 1, argv + 1);
}
