/* help.h — every help text of the CLI and the man pages, made from the table
 * of commands (commands.h): the general help, a command's short --help (its
 * usage, summary and key options, taken from its reference), its full
 * reference, and roff for gpuprof(1) and gpuprof-CMD(1). */
#ifndef GPUPROF_CLI_HELP_H
#define GPUPROF_CLI_HELP_H

#include <stdio.h>

#include "cli/commands.h"

/* `gpuprof --help`: the commands and their summaries. */
void cli_usage(FILE *f);
/* `gpuprof CMD --help`, `gpuprof help CMD`: usage, summary, the key options
 * and where the rest is. */
void cli_help_short(FILE *f, const struct cli_command *c);
/* `gpuprof help [--full|--man] [CMD]`; an exit code. */
int cli_help_main(int argc, char **argv);

#endif
