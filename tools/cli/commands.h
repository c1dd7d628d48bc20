/* commands.h — the table of gpuprof's subcommands, the one place a command is
 * added: its name, entry point, one-line summary, reference text (the
 * command's cmd_NAME_help: usage, options, notes) and the options its short
 * --help shows.  main.c dispatches from it; help.c makes `gpuprof --help`,
 * `gpuprof CMD --help`, `gpuprof help [--full] CMD` and the man pages
 * (gpuprof(1), gpuprof-CMD(1)) from it, so each text is written once. */
#ifndef GPUPROF_CLI_COMMANDS_H
#define GPUPROF_CLI_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);          /* argv[0] is "gpuprof NAME" */
	const char *summary;                       /* one line */
	void (*summary_of)(char *buf, size_t n);   /* the summary from a registry, when summary is NULL */
	void (*reference)(FILE *f);                /* usage block, description, every option, notes */
	/* the options the short --help shows, by their long names
	 * ("--report --format"), each with every line the reference gives it */
	const char *key_options;
	/* an alias of another command (steps = stats --report steps): its own
	 * usage line; the reference and every other option are the target's */
	const char *alias_of, *alias_usage;
	int reads;                                 /* reads trace files: takes --threads */
	const char *alias_report;                  /* an alias of stats: the --report it names */
	int tables;                                /* prints tables: takes --width and --names (tabopt.h) */
};

extern const struct cli_command cli_commands[];
extern const size_t cli_ncommands;

/* The command named so, or NULL. */
const struct cli_command *cli_command_find(const char *name);
/* Its summary into buf (from the registry when it has one). */
void cli_command_summary(const struct cli_command *c, char *buf, size_t n);
/* Runs c with argv[0] "gpuprof NAME"; an alias of stats with its report. */
int cli_command_run(const struct cli_command *c, int argc, char **argv);

#endif
