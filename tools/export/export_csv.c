/* export_csv.c — the CSV export: the tables of export_tables.h as RFC 4180
 * CSV, one file per table in a directory (DIR/TABLE.csv), or one table
 * (--table) to a file or stdout; how values are written: docs/CLI.md
 * ("--format csv"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/gzout.h"
#include "common/tool.h"
#include "export/export.h"
#include "export/export_tables.h"

struct cx {
	const char *out, *table; /* table: the one written to out; NULL: all, out a directory */
	const struct xt_table *tables;
	unsigned nt;
	struct xt_dir d;
	FILE **f; /* per table; NULL: not written */
};

/* The writes are unlocked and the integers formatted here: fprintf and
 * putc took half of an export's time (perf, a 1e6-event trace). */
static void put_int(FILE *f, int64_t v)
{
	char b[24], *p = b + sizeof(b);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do {
		*--p = (char)('0' + u % 10);
	} while (u /= 10);
	if (v < 0) *--p = '-';
	fwrite_unlocked(p, 1, (size_t)(b + sizeof(b) - p), f);
}

static void put_text(FILE *f, const char *s)
{
	int quote = !*s || strpbrk(s, ",\"\r\n");
	if (quote) putc_unlocked('"', f);
	while (*s) {
		size_t run = 0;
		int k;
		while (s[run] && s[run] != '"' && (k = utf8_seq_len(s + run)) > 0) run += (size_t)k;
		fwrite_unlocked(s, 1, run, f);
		if (!s[run]) break;
		fwrite_unlocked(s[run] == '"' ? "\"\"" : "\xef\xbf\xbd", 1, s[run] == '"' ? 2 : 3, f);
		s += run + 1;
	}
	if (quote) putc_unlocked('"', f);
}

static int cx_open(void *ctx, const struct xt_table *tables, unsigned nt)
{
	struct cx *c = ctx;
	c->tables = tables;
	c->nt = nt;
	c->f = xcalloc(nt, sizeof(*c->f));
	if (c->table) {
		unsigned t = 0;
		while (t < nt && strcmp(tables[t].name, c->table)) t++;
		if (t == nt) {
			char names[1024];
			size_t l = 0;
			for (unsigned i = 0; i < nt && l < sizeof(names); i++)
				l += (size_t)snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "", tables[i].name);
			return tool_fail(-1, "no table '%s' (%s)", c->table, names);
		}
		if (!(c->f[t] = gzout_open(c->out, 0)))
			return tool_fail(-1, "cannot write %s: %s", c->out, strerror(errno));
	} else {
		if (xt_dir_open(&c->d, c->out, ".csv", tables, nt)) return -1;
		for (unsigned t = 0; t < nt; t++)
			if (!(c->f[t] = fopen(c->d.tmp[t], "w")))
				return tool_fail(-1, "cannot write %s: %s", c->d.tmp[t], strerror(errno));
	}
	for (unsigned t = 0; t < nt; t++) {
		for (unsigned i = 0; c->f[t] && i < tables[t].ncols; i++)
			fprintf(c->f[t], "%s%s", i ? "," : "", tables[t].cols[i].name);
		if (c->f[t]) putc('\n', c->f[t]);
	}
	return 0;
}

static int cx_row(void *ctx, unsigned t, const struct xt_val *v)
{
	struct cx *c = ctx;
	FILE *f = c->f[t];
	char real[32];
	for (unsigned i = 0; f && i < c->tables[t].ncols; i++) {
		if (i) putc_unlocked(',', f);
		switch (v[i].kind) {
		case XV_INT: put_int(f, v[i].i); break;
		case XV_REAL:
			snprintf(real, sizeof(real), "%.15g", v[i].d);
			if (strtod(real, NULL) != v[i].d) snprintf(real, sizeof(real), "%.17g", v[i].d);
			fputs(real, f);
			break;
		case XV_TEXT: put_text(f, v[i].s); break;
		}
	}
	if (f) putc_unlocked('\n', f);
	return 0;
}

static int cx_close(void *ctx, int ok)
{
	struct cx *c = ctx;
	int rc = ok ? 0 : -1, made = 0;
	for (unsigned t = 0; t < c->nt; t++) {
		FILE *f = c->f[t];
		made |= f && f != stdout;
		if (f && gzout_close(f) && !rc) {
			tool_err("cannot write %s: %s", c->table ? c->out : c->d.tmp[t], strerror(errno));
			rc = -1;
		}
	}
	free(c->f);
	if (c->table && rc && made) unlink(c->out);
	return c->table ? rc : xt_dir_close(&c->d, rc == 0);
}

int export_csv(const char *in, const char *out, int strict, const struct export_opts *o)
{
	struct cx c = { .out = out, .table = o ? o->table : NULL };
	struct xt_sink sink = { &c, cx_open, cx_row, cx_close };
	return export_tables(in, strict, o, &sink);
}
