/* tabopt.h — the table options every command that prints tables takes
 * (--width N, --names FORM: the help texts below, docs/CLI.md "Table
 * width").  main (cli/main.c) takes them out of the command line of the
 * commands the table of commands marks `tables`, once, before the command
 * parses its own; the commands read g_table_opts and tabopt_width(). */
#ifndef GPUPROF_COMMON_TABOPT_H
#define GPUPROF_COMMON_TABOPT_H

/* The forms of a kernel name `--names` chooses from. */
enum name_form { NAME_BASE, NAME_FULL, NAME_MANGLED };

struct table_opts {
	int width;             /* --width N; -1: not given */
	enum name_form names;  /* --names FORM (NAME_BASE when not given) */
};
extern struct table_opts g_table_opts;

/* main: takes `--width N`, `--names FORM` (and their `=` forms) out of
 * argv[1..argc) (before any "--") into g_table_opts.  Returns the new argc,
 * or -1 after the message for a bad value. */
int tabopt_take(int argc, char **argv);

/* The width tables and text fit (0: no limit): --width when given; else
 * none with --names full or mangled; else the terminal's columns when
 * stdout is a terminal, else $COLUMNS when it is a number > 0, else 120. */
int tabopt_width(void);

/* The --help lines (each starts with two spaces, 20 columns of option);
 * TABOPT_HELP both, for the commands whose tables have names. */
#define TABOPT_WIDTH_HELP \
	"  --width N         tables and text fit N columns: names shorten, prose columns\n" \
	"                    move under the table, numbers are never cut, a table too\n" \
	"                    wide for them goes on in a second block; 0: no limit\n" \
	"                    (default: the terminal's width, else $COLUMNS, else 120)\n"
#define TABOPT_NAMES_HELP \
	"  --names FORM      names in tables: base (default: kernels by their base name,\n" \
	"                    as nsys :base; names shortened to fit --width), full (whole\n" \
	"                    demangled names, never cut) or mangled (kernels as recorded).\n" \
	"                    CSV and JSON always carry the full names\n"
#define TABOPT_HELP TABOPT_WIDTH_HELP TABOPT_NAMES_HELP

#endif
