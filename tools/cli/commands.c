/* commands.c — the table of subcommands (commands.h).  Adding a command: its
 * file cmd/cmd_NAME.c with cmd_NAME() and cmd_NAME_help() (declared in
 * cmd/cmd.h), one line here; its --help, man page gpuprof-NAME(1), line in
 * `gpuprof --help`, install and shell completion follow from this table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cmd/cmd.h"
#include "common/tool.h"

/* `gpuprof steps ARGS` is `gpuprof stats --report steps ARGS`, `gpuprof
 * memory ARGS` is `gpuprof stats --report memory_steps ARGS`: those tables
 * (alias_report) unless ARGS name their own (--report), with the same
 * options. */
int cli_command_run(const struct cli_command *c, int argc, char **argv)
{
	int named = !c->alias_report;
	for (int i = 1; !named && i < argc && strcmp(argv[i], "--"); i++)
		named = !strncmp(argv[i], "--report", 8) || !strncmp(argv[i], "-r", 2);
	if (named) return c->fn(argc, argv);
	char report[64];
	snprintf(report, sizeof(report), "--report=%s", c->alias_report);
	char **av = malloc(((size_t)argc + 2) * sizeof(*av));
	if (!av) return tool_fail(EXIT_BADINPUT, "out of memory");
	av[0] = argv[0];
	av[1] = report;
	for (int i = 1; i <= argc; i++) av[i + 1] = argv[i];  /* with argv[argc] == NULL */
	int rc = c->fn(argc + 1, av);
	free(av);
	return rc;
}

/* stats' summary: its registry's report names */
static void stats_what(char *buf, size_t n)
{
	char names[900];
	cmd_stats_report_names(names, sizeof(names));
	snprintf(buf, n, "summary reports: %s", names);
}

#define SEL "--since --until --steps --range"

const struct cli_command cli_commands[] = {
	{ "run", cmd_run, "run a command with tracing (LD_PRELOAD=libgpuprof.so)", NULL, cmd_run_help,
	  "--output --api --activity --stacks --gpu-window --flight-recorder --status", NULL, NULL, 0, NULL, 0 },
	{ "info", cmd_info, "header, processes, threads, devices, counts, integrity", NULL, cmd_info_help,
	  "--json --strict", NULL, NULL, 1, NULL, 1 },
	{ "dump", cmd_dump, "every record, time-ordered, as text or JSON lines", NULL, cmd_dump_help,
	  "--json --type " SEL, NULL, NULL, 1, NULL, 0 },
	{ "stats", cmd_stats, NULL, stats_what, cmd_stats_help,
	  "--report --format --names --time-unit --width --rows " SEL " --per-step", NULL, NULL, 1, NULL, 1 },
	{ "export", cmd_export, NULL, cmd_export_what, cmd_export_help,
	  "--format --output", NULL, NULL, 1, NULL, 0 },
	{ "merge", cmd_merge, "merge traces of several processes onto one time axis", NULL, cmd_merge_help,
	  "--output", NULL, NULL, 1, NULL, 0 },
	{ "steps", cmd_stats, "training steps: where step time goes (= stats --report steps)", NULL,
	  cmd_stats_help, "--method --step-range --keep-warmup --per-step --format --steps", "stats",
	  "gpuprof steps [--method auto|nvtx|trace] [--per-step] [stats options] FILE", 1, "steps", 1 },
	{ "memory", cmd_stats,
	  "device memory per step, growth, leaking sites, out of memory (= stats --report memory_steps)", NULL,
	  cmd_stats_help, "--site --format --steps", "stats", "gpuprof memory [--site user|layer] [stats options] FILE", 1,
	  "memory_steps", 1 },
	{ "report", cmd_report, "one self-contained HTML page: header, steps, charts, top tables", NULL,
	  cmd_report_help, "--output --title --method", NULL, NULL, 1, NULL, 0 },
	{ "diff", cmd_diff, "what changed between two runs: aligned steps, significance, deltas", NULL,
	  cmd_diff_help, "--vs --report --top --format --width", NULL, NULL, 1, NULL, 1 },
	{ "advise", cmd_advise, "why the steps are slow: ranked findings, what to change, estimated saving", NULL,
	  cmd_advise_help, "--format --method --all --width", NULL, NULL, 1, NULL, 1 },
	{ "top", cmd_top, "one line per running job from GPUPROF_STATUS files (live)", NULL, cmd_top_help,
	  "--once --interval --width", NULL, NULL, 0, NULL, 1 },
	{ "trigger", cmd_trigger, "capture K steps of GPU activity in running jobs (flight recorder)", NULL,
	  cmd_trigger_help, "--steps --seconds --all --wait", NULL, NULL, 0, NULL, 0 },
};
const size_t cli_ncommands = sizeof(cli_commands) / sizeof(cli_commands[0]);

const struct cli_command *cli_command_find(const char *name)
{
	for (size_t i = 0; i < cli_ncommands; i++)
		if (!strcmp(name, cli_commands[i].name)) return &cli_commands[i];
	return NULL;
}

void cli_command_summary(const struct cli_command *c, char *buf, size_t n)
{
	if (c->summary) snprintf(buf, n, "%s", c->summary);
	else c->summary_of(buf, n);
}
