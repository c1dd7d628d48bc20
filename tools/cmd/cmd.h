/* cmd.h — the subcommands' entry points, called by the CLI's dispatch
 * (cli/main.c).  Each returns an exit code (common/tool.h: EXIT_*). */
#ifndef GPUPROF_TOOL_CMD_H
#define GPUPROF_TOOL_CMD_H

/* argv[0] is the subcommand name. */
int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_steps(int argc, char **argv); /* temporary: to become stats --report steps */

#endif
