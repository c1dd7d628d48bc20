/* tabopt.c — see tabopt.h. */
#include "common/tabopt.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gp_settings.h"
#include "common/tool.h"

/* Tables fit this many columns when stdout is not a terminal and $COLUMNS
 * says nothing (a pipe, a file, CI logs). */
#define TABOPT_DEFAULT_WIDTH 120

struct table_opts g_table_opts = { -1, NAME_BASE };

/* "base", "full", "mangled" -> enum name_form; -1 for an unknown name. */
static int name_form_parse(const char *s)
{
	if (!strcmp(s, "base")) return NAME_BASE;
	if (!strcmp(s, "full")) return NAME_FULL;
	if (!strcmp(s, "mangled")) return NAME_MANGLED;
	return -1;
}

/* --width (which 0) or --names (1). */
static int take_table_opt(int which, const char *v)
{
	uint64_t cols;
	int nf = name_form_parse(v);
	if (which == 0 && gp_parse_uint(v, 0, 1000000, &cols))
		return tool_fail(-1, "--width needs a number of columns (0: no limit), not '%s'", v);
	if (which == 1 && nf < 0) return tool_fail(-1, "unknown --names '%s' (base, full, mangled)", v);
	if (which == 0) g_table_opts.width = (int)cols;
	else g_table_opts.names = (enum name_form)nf;
	return 0;
}

int tabopt_take(int argc, char **argv)
{
	static const char *const names[] = { "--width", "--names", NULL };
	return tool_take_options(argc, argv, names, take_table_opt);
}

int tabopt_width(void)
{
	if (g_table_opts.width >= 0) return g_table_opts.width;
	if (g_table_opts.names != NAME_BASE) return 0;
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	uint64_t cols;
	if (!gp_parse_uint(getenv("COLUMNS"), 1, 1000000, &cols)) return (int)cols;
	return TABOPT_DEFAULT_WIDTH;
}
