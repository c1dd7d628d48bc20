/* help.c — help texts and man pages from the table of commands (help.h).
 * A command's reference (cmd_NAME_help) is the one text: its first block is
 * the usage, an option is a line "  -x, --name ARG   meaning" (or "  --name")
 * whose continuation lines are indented deeper, an item "  name   meaning"
 * the same; other lines are prose. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/help.h"
#include "cmd/cmd.h"
#include "common/report.h"
#include "common/tool.h"

/* ---------------------------------------------------------------- text */

/* A command's reference as lines, in place in text (its newlines made
 * NULs); ue: the end of its usage block (its first empty line). */
struct lines { char *text; char **v; size_t n, ue; };

static struct lines reference_lines(const struct cli_command *c)
{
	struct lines l = { NULL, NULL, 0, 0 };
	size_t len = 0, cap = 0;
	FILE *m = open_memstream(&l.text, &len);
	if (!m) return l;
	c->reference(m);
	fclose(m);
	for (char *p = l.text; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl) *nl = 0;
		VEC_PUSH(l.v, l.n, cap, p);
		p = nl ? nl + 1 : NULL;
	}
	while (l.ue < l.n && l.v[l.ue][0]) l.ue++;
	return l;
}

static void lines_free(struct lines *l)
{
	free(l->v);
	free(l->text);
}

static int indent_of(const char *s) { return (int)strspn(s, " "); }

/* An option or item line: indented 1-4 and a word, as opposed to a
 * continuation (deeper) or prose (not indented). */
static int is_item(const char *s)
{
	int in = indent_of(s);
	return in >= 1 && in <= 4 && s[in] && s[in] != ' ';
}

/* The lines after item i that continue it. */
static size_t item_end(const struct lines *l, size_t i)
{
	int in = indent_of(l->v[i]);
	size_t j = i + 1;
	while (j < l->n && l->v[j][0] && indent_of(l->v[j]) > in + 2) j++;
	return j;
}

/* Whether an item line names option `opt` ("--name") in its tag: the text
 * before the meaning, "-x, --name ARG" or "--name=A|B". */
static int item_names(const char *line, const char *opt)
{
	const char *s = line + indent_of(line);
	if (*s != '-') return 0;
	const char *tag_end = strstr(s, "  ");
	size_t k = strlen(opt);
	for (const char *p = s; (p = strstr(p, opt)) && (!tag_end || p < tag_end); p++) {
		char after = p[k];
		if ((p == s || p[-1] == ' ') && (!after || strchr(" =[", after))) return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- help */

/* The command whose reference c shows: its alias's target, else c. */
static const struct cli_command *ref_of(const struct cli_command *c)
{
	return c->alias_of ? cli_command_find(c->alias_of) : c;
}

/* What --threads does, for the general help and gpuprof(1). */
#define THREADS_HELP                                                                                              \
	"threads that decode the trace, and in stats compute the reports that merge over slices of time (default: " \
	"the online processors; the output is the same)."

/* "The commands that print tables (info, stats, ...) also take ...": the
 * commands from the table. */
static void table_commands(char *buf, size_t n)
{
	size_t l = (size_t)snprintf(buf, n, "The commands that print tables (");
	for (size_t i = 0, k = 0; i < cli_ncommands && l < n; i++)
		if (cli_commands[i].tables)
			l += (size_t)snprintf(buf + l, n - l, "%s%s", k++ ? ", " : "", cli_commands[i].name);
	if (l < n)
		snprintf(buf + l, n - l, ") also take --width N (lines fit N columns; default: the terminal's, "
					 "else $COLUMNS, else 120; 0: no limit) and --names base|full|mangled.");
}

void cli_usage(FILE *f)
{
	fprintf(f, "usage: gpuprof <command> [options] [args]\n"
		   "       gpuprof help [--full] <command>\n"
		   "       gpuprof --version\n\n"
		   "Records and analyses CUDA activity of deep-learning jobs.\n\ncommands:\n");
	for (size_t i = 0; i < cli_ncommands; i++) {
		char what[1024], line[1100];
		cli_command_summary(&cli_commands[i], what, sizeof(what));
		snprintf(line, sizeof(line), "  %-8s %s", cli_commands[i].name, what);
		report_flow(f, line, strlen(line), 0, 11, 79);
	}
	static const char threads[] = "The commands that read traces also take --threads N: " THREADS_HELP;
	fputc('\n', f);
	report_flow(f, threads, strlen(threads), 0, 0, 73); /* 73: its line breaks are the output's */
	char tables[256];
	table_commands(tables, sizeof(tables));
	report_flow(f, tables, strlen(tables), 0, 0, 79);
	fprintf(f, "\n'gpuprof <command> --help' (or 'gpuprof help <command>') shows a command's\n"
		   "usage and main options; 'gpuprof help --full <command>' or\n"
		   "'man gpuprof-<command>' every option.\n"
		   "exit status: 0 ok, 1 usage error, 2 unreadable or damaged input;\n"
		   "'run' exits with the job's status.\n");
}

void cli_help_short(FILE *f, const struct cli_command *c)
{
	const struct cli_command *ref = ref_of(c);
	struct lines l = reference_lines(ref);
	if (c->alias_usage) fprintf(f, "usage: %s\n", c->alias_usage);
	else
		for (size_t i = 0; i < l.ue; i++) fprintf(f, "%s\n", l.v[i]);
	char what[1024];
	cli_command_summary(c, what, sizeof(what));
	if (what[0] >= 'a' && what[0] <= 'z') what[0] = (char)(what[0] - 'a' + 'A');
	fputc('\n', f);
	report_flow(f, what, strlen(what), 0, 0, 79);
	fputc('\n', f);
	fprintf(f, "main options:\n");
	const char *k = c->key_options;
	while (k && *k) {
		size_t w = strcspn(k, " ");
		char opt[64];
		snprintf(opt, sizeof(opt), "%.*s", (int)w, k);
		for (size_t i = l.ue; i < l.n; i++) {
			if (!is_item(l.v[i]) || !item_names(l.v[i], opt)) continue;
			size_t e = item_end(&l, i);
			for (size_t j = i; j < e; j++) fprintf(f, "%s\n", l.v[j]);
			i = e - 1;
		}
		k += w;
		while (*k == ' ') k++;
	}
	if (c->alias_of) fprintf(f, "\n%s takes every option of %s.", c->name, ref->name);
	fprintf(f, "\nEvery option: 'gpuprof help --full %s' or 'man gpuprof-%s'.\n", ref->name, ref->name);
	lines_free(&l);
}

/* `gpuprof help --full CMD`: the command's whole reference. */
static void cli_help_full(FILE *f, const struct cli_command *c)
{
	if (c->alias_of) fprintf(f, "gpuprof %s is the same as gpuprof %s, with its options:\n\n", c->name,
				 c->alias_of);
	ref_of(c)->reference(f);
}

/* ---------------------------------------------------------------- roff */

/* Text as roff: backslashes and dashes escaped, a leading dot or quote
 * guarded. */
static void roff_text(FILE *f, const char *s, size_t n)
{
	if (n && (s[0] == '.' || s[0] == '\'')) fputs("\\&", f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') fputs("\\e", f);
		else if (s[i] == '-') fputs("\\-", f);
		else fputc(s[i], f);
	}
}

static void roff_line(FILE *f, const char *s)
{
	roff_text(f, s, strlen(s));
	fputc('\n', f);
}

static void roff_head(FILE *f, const char *title, const char *name, const char *what)
{
	fprintf(f, ".TH %s 1 \"\" \"gpuprof %s\" \"gpuprof manual\"\n.SH NAME\n%s \\- ", title, GP_PRODUCER_VERSION,
		name);
	roff_line(f, what);
}

/* The reference after its usage block: items as .TP (tag in bold, the
 * meaning and its continuation lines as one paragraph), prose as
 * paragraphs, an empty line a paragraph break. */
static void roff_body(FILE *f, const struct lines *l, size_t from)
{
	for (size_t i = from; i < l->n; i++) {
		const char *s = l->v[i];
		if (!s[0]) {
			fputs(".PP\n", f);
			continue;
		}
		if (!is_item(s)) {
			roff_line(f, s + indent_of(s));
			continue;
		}
		const char *t = s + indent_of(s), *gap = strstr(t, "  ");
		size_t tl = gap ? (size_t)(gap - t) : strcspn(t, " ");
		if (!gap && t[tl] && t[tl + 1] == '-') tl = strlen(t); /* one word, e.g. "--vs" */
		fputs(".TP\n\\fB", f);
		roff_text(f, t, tl);
		fputs("\\fR\n", f);
		const char *m = t + tl;
		m += strspn(m, " ");
		if (*m) roff_line(f, m);
		size_t e = item_end(l, i);
		for (size_t j = i + 1; j < e; j++) roff_line(f, l->v[j] + indent_of(l->v[j]));
		i = e - 1;
		if (e < l->n && l->v[e][0] && !is_item(l->v[e])) fputs(".PP\n", f);
	}
}

/* The man page of c (NULL: gpuprof(1)) in roff. */
static void cli_man(FILE *f, const struct cli_command *c)
{
	if (!c) {
		roff_head(f, "GPUPROF", "gpuprof", "records and analyses CUDA activity of deep-learning jobs");
		fputs(".SH SYNOPSIS\n.B gpuprof\n\\fIcommand\\fR [\\fIoptions\\fR] [\\fIargs\\fR]\n.br\n"
		      ".B gpuprof help\n[\\fB\\-\\-full\\fR] \\fIcommand\\fR\n.SH COMMANDS\n", f);
		for (size_t i = 0; i < cli_ncommands; i++) {
			char what[1024];
			cli_command_summary(&cli_commands[i], what, sizeof(what));
			fprintf(f, ".TP\n\\fB%s\\fR\n", cli_commands[i].name);
			roff_text(f, what, strlen(what));
			fprintf(f, ".\nSee \\fBgpuprof\\-%s\\fR(1).\n", cli_commands[i].name);
		}
		fputs(".SH OPTIONS\n.TP\n\\fB\\-\\-threads\\fR \\fIN\\fR\nThe commands that read traces: " THREADS_HELP
		      "\n.TP\n\\fB\\-\\-width\\fR \\fIN\\fR, \\fB\\-\\-names\\fR \\fIFORM\\fR\n", f);
		char tables[256];
		table_commands(tables, sizeof(tables));
		roff_line(f, tables);
		fputs(".TP\n\\fB\\-\\-version\\fR\nThe version and the trace format.\n"
		      ".SH EXIT STATUS\n0 ok, 1 usage error, 2 unreadable or damaged input; \\fBrun\\fR exits "
		      "with the job's status.\n.SH SEE ALSO\n",
		      f);
		for (size_t i = 0; i < cli_ncommands; i++)
			fprintf(f, "\\fBgpuprof\\-%s\\fR(1)%s\n", cli_commands[i].name, i + 1 < cli_ncommands ? "," : "");
		return;
	}
	const struct cli_command *ref = ref_of(c);
	char title[64], name[64], what[1024];
	snprintf(name, sizeof(name), "gpuprof-%s", c->name);
	snprintf(title, sizeof(title), "GPUPROF-%s", c->name);
	for (char *p = title; *p; p++)
		if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
	cli_command_summary(c, what, sizeof(what));
	roff_head(f, title, name, what);
	struct lines l = reference_lines(ref);
	fputs(".SH SYNOPSIS\n.nf\n", f);
	if (c->alias_usage) roff_line(f, c->alias_usage);
	else
		for (size_t i = 0; i < l.ue; i++)
			roff_line(f, !strncmp(l.v[i], "usage: ", 7) ? l.v[i] + 7 : l.v[i] + (indent_of(l.v[i]) >= 7 ? 7 : 0));
	fputs(".fi\n.SH DESCRIPTION\n", f);
	if (c->alias_of)
		fprintf(f, "\\fBgpuprof %s\\fR is \\fBgpuprof %s \\-\\-report %s\\fR: it takes the options "
			   "of \\fBgpuprof\\-%s\\fR(1), given here.\n.PP\n", c->name, c->alias_of,
			   c->alias_report ? c->alias_report : c->name, c->alias_of);
	roff_body(f, &l, l.ue);
	fputs(".SH SEE ALSO\n\\fBgpuprof\\fR(1)", f);
	if (c->alias_of) fprintf(f, ", \\fBgpuprof\\-%s\\fR(1)", c->alias_of);
	fputs(", docs/CLI.md\n", f);
	lines_free(&l);
}

/* ---------------------------------------------------------------- completion words */

/* Prints each "--name" of the text s[0..n) not in seen yet, a line each. */
static void long_options_of(FILE *f, const char *s, size_t n, strmap *seen)
{
	for (size_t i = 0; i + 2 < n; i++) {
		if (s[i] != '-' || s[i + 1] != '-' || (i && s[i - 1] != ' ' && s[i - 1] != '[' && s[i - 1] != '|')) continue;
		size_t k = i + 2;
		while (k < n && ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= '0' && s[k] <= '9') || s[k] == '-')) k++;
		if (k == i + 2) continue;
		char word[64];
		int is_new;
		snprintf(word, sizeof(word), "%.*s", (int)(k - i), s + i);
		strmap_get(seen, word, &is_new);
		if (!is_new) continue;
		fprintf(f, "%s\n", word);
		i = k;
	}
}

/* The words the shell completions offer (shell/): no command: the commands;
 * a command: its long options (those of its usage block and option lines);
 * a command and an option: the option's values (the usage block's
 * "--opt A|B|C", stats' report names for --report). */
static void completion_words(FILE *f, const struct cli_command *c, const char *opt)
{
	if (!c) {
		for (size_t i = 0; i < cli_ncommands; i++) fprintf(f, "%s\n", cli_commands[i].name);
		return;
	}
	const struct cli_command *ref = ref_of(c);
	if (opt && !strcmp(opt, "--report") && !strcmp(ref->name, "stats")) {
		char names[900];
		cmd_stats_report_names(names, sizeof(names));
		for (char *p = strtok(names, ", "); p; p = strtok(NULL, ", ")) fprintf(f, "%s\n", p);
		return;
	}
	struct lines l = reference_lines(ref);
	strmap seen;
	strmap_init(&seen);
	for (size_t i = 0; i < l.n; i++) {
		const char *s = l.v[i];
		if (opt) {
			/* "--opt A|B|C" in the usage block */
			const char *p = i < l.ue ? strstr(s, opt) : NULL;
			size_t k = strlen(opt);
			if (!p || (p[k] != ' ' && p[k] != '=')) continue;
			p += k + 1;
			size_t w = strcspn(p, " ]");
			if (!memchr(p, '|', w)) continue;
			for (const char *q = p; q < p + w;) {
				size_t v = strcspn(q, "|] ");
				if (v > (size_t)(p + w - q)) v = (size_t)(p + w - q);
				fprintf(f, "%.*s\n", (int)v, q);
				q += v + 1;
			}
			break;
		}
		if (i < l.ue) long_options_of(f, s, strlen(s), &seen);
		else if (is_item(s)) {
			const char *t = s + indent_of(s), *gap = strstr(t, "  ");
			long_options_of(f, t, gap ? (size_t)(gap - t) : strlen(t), &seen);
		}
	}
	if (!opt && !strmap_find(&seen, "--help")) fputs("--help\n", f);
	strmap_free(&seen);
	lines_free(&l);
}

/* ---------------------------------------------------------------- gpuprof help */

int cli_help_main(int argc, char **argv)
{
	int full = 0, man = 0, words = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--full")) full = 1;
		else if (!strcmp(argv[i], "--man")) man = 1;
		else if (!strcmp(argv[i], "--words")) words = 1;
		else return tool_usage("unknown option '%s' (gpuprof help [--full] [COMMAND])", argv[i]);
	}
	if (words) { /* --words [COMMAND [OPTION]]: for the shell completions */
		const struct cli_command *c = i < argc ? cli_command_find(argv[i]) : NULL;
		if (i < argc && !c) return EXIT_USAGE;
		completion_words(stdout, c, i + 1 < argc ? argv[i + 1] : NULL);
		return EXIT_OK;
	}
	if (i + 1 < argc) return tool_usage("one command at a time (gpuprof help [--full] [COMMAND])");
	const struct cli_command *c = NULL;
	if (i < argc && !(c = cli_command_find(argv[i])))
		return tool_usage("unknown command '%s' ('gpuprof --help' lists them)", argv[i]);
	if (man) cli_man(stdout, c);
	else if (!c) cli_usage(stdout);
	else if (full) cli_help_full(stdout, c);
	else cli_help_short(stdout, c);
	return EXIT_OK;
}
