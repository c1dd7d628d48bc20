/* tool.h — what every gpuprof subcommand shares: exit codes, opening a trace
 * with a proper error message, the end-of-read integrity verdict, string and
 * pid lookups, and progress on a tty. */
#ifndef GPUPROF_COMMON_TOOL_H
#define GPUPROF_COMMON_TOOL_H

#include <stdint.h>
#include <stdio.h>

#include "gp_trace.h"
#include "common/util.h"

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_BADINPUT = 2 };

/* "gpuprof CMD: " prefix for messages; set by main. */
extern const char *g_cmd;
/* One line on stderr: "gpuprof CMD: " KIND, then the message. */
void tool_msg(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define tool_err(...) tool_msg("", __VA_ARGS__)
#define tool_warn(...) tool_msg("warning: ", __VA_ARGS__)
/* An error's message (as tool_err) and code, for `return tool_fail(-1,
 * ...)`; a usage error: tool_usage (then, _see_help, tool_see_help's line),
 * returning EXIT_USAGE. */
int tool_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define tool_usage(...) tool_fail(EXIT_USAGE, __VA_ARGS__)
#define tool_usage_see_help(...) (tool_usage(__VA_ARGS__), tool_see_help(), EXIT_USAGE)

/* Threads that decode a trace (the reader's, gp_reader_opts.threads), set
 * by main from --threads, else gp_reader_threads_default() (online cores);
 * 0 outside main (tests): tool_open takes the default. */
extern int g_threads;
/* main: takes `--threads N` / `--threads=N` out of argv[1..argc) (before any
 * "--"), setting g_threads.  Returns the new argc, or -1 after the message
 * for a bad value. */
int tool_take_threads(int argc, char **argv);
/* The loop of both: each `NAME V` or `NAME=V` in argv[1..argc) (before any
 * "--") whose NAME is names[which] (a NULL-terminated list) is taken out
 * and given to take (V "" when missing), which returns 0, or -1 after its
 * message.  Returns the new argc, or -1. */
int tool_take_options(int argc, char **argv, const char *const *names, int (*take)(int which, const char *value));

/* Opens a trace; on failure prints "gpuprof CMD: cannot read PATH: cause"
 * and returns NULL.  Also loads metadata (strings, sources) so names resolve
 * even in time-ordered iteration. */
gp_reader *tool_open(const char *path);
/* The same with `threads` decoding threads (the caller's included) instead
 * of --threads'. */
gp_reader *tool_open_threads(const char *path, int threads);
/* After a usage error's message: one line on stderr that points to the
 * command's help (the help itself would bury the message). */
void tool_see_help(void);
/* The one-trace-file commands (info, dump, stats): argv must hold exactly one
 * operand after the options.  Sets *path and opens it; returns EXIT_OK, or
 * EXIT_USAGE (after a one-line message that says what to do) or
 * EXIT_BADINPUT. */
int tool_open_operand(int argc, char **argv, const char **path, gp_reader **r);

/* After iteration ended with status `rc` (0 or <0 from gp_reader_next*):
 * prints the error or the truncation warning, returns the exit code.
 * Policy (docs/CLI.md): a fatal read error or corrupt frames -> 2; a file
 * that is merely truncated (job killed) -> warning, 0, unless strict -> 2. */
int tool_finish(gp_reader *r, const char *path, int rc, int strict);

/* String by id: "" for id 0 or an unknown id. */
const char *tool_str(gp_reader *r, uint32_t id);
/* For text output (not JSON): control characters shown as \xNN, so a name in
 * a trace can neither break a line nor drive the terminal.  Returns s itself
 * when clean, else one of a few rotating buffers (several per printf). */
const char *tool_text(const char *s);
/* pid of the record's source (header pid when unknown) */
uint32_t tool_pid(gp_reader *r, const gp_record *rec);
/* The thread of an API call or NVTX range (the one that began it), else
 * of the record's source; 0 when unknown. */
uint32_t tool_rec_tid(gp_reader *r, const gp_record *rec);
/* An NVTX range's name, "domain:message" or the message in the default
 * domain (malloc'd). */
char *tool_range_name(gp_reader *r, const gp_rec_nvtx_range *n);
/* end timestamp of interval records, else the primary time */
uint64_t tool_rec_end(const gp_record *rec);
/* The field of a record type named so (libprof/common/gp_fields.h); a name
 * the table lacks is a bug in the caller's layout: says so and aborts. */
const struct gp_field *tool_field(uint32_t type, const char *name);

/* Progress on stderr, only when stderr is a terminal; cheap to call per record. */
void progress_tick(uint64_t nrec);
void progress_done(void);

#endif
