/* cmd.h — the subcommands' entry points, called by the CLI's dispatch
 * (cli/main.c).  Each returns an exit code (common/tool.h: EXIT_*). */
#ifndef GPUPROF_CMD_CMD_H
#define GPUPROF_CMD_CMD_H

#include <stddef.h>
#include <stdio.h>

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

/* Each command's reference: its usage block, what it does, every option
 * ("  -x, --name ARG   meaning", continuation lines indented deeper) and
 * notes; the one text the CLI's --help, `gpuprof help --full` and the man
 * pages are made from (cli/help.c). */
void cmd_run_help(FILE *f);
void cmd_info_help(FILE *f);
void cmd_dump_help(FILE *f);
void cmd_stats_help(FILE *f);
void cmd_export_help(FILE *f);
void cmd_merge_help(FILE *f);
void cmd_top_help(FILE *f);
void cmd_report_help(FILE *f);
void cmd_diff_help(FILE *f);
void cmd_trigger_help(FILE *f);
void cmd_advise_help(FILE *f);

/* The --report names of `gpuprof stats`, from its registry, separated by
 * ", " into buf (cut at n); for the main help. */
void cmd_stats_report_names(char *buf, size_t n);
/* export's line in `gpuprof --help`: "convert to " + the formats' titles. */
void cmd_export_what(char *buf, size_t n);

#endif
