/* tabopt.c — see tabopt.h. */
#include "common/tabopt.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/tool.h"

/* Tables fit this many columns when stdout is not a terminal and $COLUMNS
 * says nothing (a pipe, a file, CI logs). */
#define TABOPT_DEFAULT_WIDTH 120

struct table_opts g_table_opts = { -1, NAME_BASE };

int name_form_parse(const char *s)
{
	if (!strcmp(s, "base")) return NAME_BASE;
	if (!strcmp(s, "full")) return NAME_FULL;
	if (!strcmp(s, "mangled")) return NAME_MANGLED;
	return -1;
}

/* A --width value or $COLUMNS: a whole number of columns, 0 or more. */
static int parse_columns(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 1000000) return -1;
	*out = (int)v;
	return 0;
}

/* Option `name` ("--width") at argv[*i], alone or as "--width=V": its value
 * (argv[*i] advanced past a separate one), "" when it has none, NULL when
 * argv[*i] is another word. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t l = strlen(name);
	if (strncmp(argv[*i], name, l)) return NULL;
	if (argv[*i][l] == '=') return argv[*i] + l + 1;
	if (argv[*i][l]) return NULL;
	return *i + 1 < argc ? argv[++*i] : "";
}

int tabopt_take(int argc, char **argv)
{
	int w = 1;
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (!strcmp(argv[i], "--")) {
			while (i < argc) argv[w++] = argv[i++];
			break;
		}
		if ((v = option_value(argc, argv, &i, "--width"))) {
			if (parse_columns(v, &g_table_opts.width)) {
				tool_err("--width needs a number of columns (0: no limit), not '%s'", v);
				return -1;
			}
		} else if ((v = option_value(argc, argv, &i, "--names"))) {
			int nf = name_form_parse(v);
			if (nf < 0) {
				tool_err("unknown --names '%s' (base, full, mangled)", v);
				return -1;
			}
			g_table_opts.names = (enum name_form)nf;
		} else {
			argv[w++] = argv[i];
		}
	}
	argv[w] = NULL;
	return w;
}

int tabopt_width(void)
{
	if (g_table_opts.width >= 0) return g_table_opts.width;
	if (g_table_opts.names != NAME_BASE) return 0;
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *env = getenv("COLUMNS");
	int cols;
	if (env && !parse_columns(env, &cols) && cols > 0) return cols;
	return TABOPT_DEFAULT_WIDTH;
}
