/* cmd.h — the subcommands' entry points, called by the CLI's dispatch
 * (cli/main.c).  Each returns an exit code (common/tool.h: EXIT_*). */
#ifndef GPUPROF_TOOL_CMD_H
#define GPUPROF_TOOL_CMD_H

#include <stddef.h>

/* argv[0] is "gpuprof NAME": getopt's messages start with it. */
int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
int cmd_advise(int argc, char **argv);

/* The --report names of `gpuprof stats`, from its registry, separated by
 * ", " into buf (cut at n); for the main help. */
void cmd_stats_report_names(char *buf, size_t n);
/* export's line in `gpuprof --help`: "convert to " + the formats' titles. */
void cmd_export_what(char *buf, size_t n);

#endif
