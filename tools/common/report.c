/* report.c — see report.h. */
#include "common/report.h"

#include <stdlib.h>
#include <string.h>

#include "common/tool.h"
#include "common/util.h"

void report_init(struct report *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
}

void report_define(struct report *r, const char *title, const struct col *cols, int ncols)
{
	r->title = title; r->cols = cols; r->ncols = ncols;
}

struct cell *report_row(struct report *r)
{
	size_t need = (r->nrows + 1) * r->ncols;
	vec_reserve((void **)&r->cells, &r->cap, need, sizeof(struct cell));
	struct cell *c = &r->cells[r->nrows * r->ncols];
	for (int i = 0; i < r->ncols; i++) {
		c[i].null = 1; c[i].d = 0; c[i].s = NULL;
	}
	r->nrows++;
	return c;
}

void cell_num(struct cell *c, double v) { c->null = 0; c->d = v; }
void cell_str(struct cell *c, const char *s) { c->null = 0; c->s = xstrdup(s ? s : ""); }

/* Plain rendering (CSV/JSON); table adds thousands separators. */
static void render(char *buf, size_t n, const struct cell *c, enum col_kind kind)
{
	if (c->null) { snprintf(buf, n, "-"); return; }
	switch (kind) {
	case COL_STR: snprintf(buf, n, "%s", tool_text(c->s)); break;
	case COL_INT: case COL_ID: snprintf(buf, n, "%.0f", c->d); break;
	case COL_F1: snprintf(buf, n, "%.1f", c->d); break;
	case COL_G3: snprintf(buf, n, "%.3g", c->d); break;
	default: snprintf(buf, n, "%.3f", c->d); break;
	}
}

static void add_commas(char *buf, size_t n)
{
	char tmp[96];
	const char *p = buf;
	size_t o = 0;
	if (*p == '-') tmp[o++] = *p++;
	size_t digits = strspn(p, "0123456789");
	for (size_t i = 0; i < digits && o + 2 < sizeof(tmp); i++) {
		if (i && (digits - i) % 3 == 0) tmp[o++] = ',';
		tmp[o++] = p[i];
	}
	snprintf(tmp + o, sizeof(tmp) - o, "%s", p + digits);
	snprintf(buf, n, "%s", tmp);
}

static void render_table(char *buf, size_t n, const struct cell *c, enum col_kind kind)
{
	render(buf, n, c, kind);
	if (kind != COL_STR && kind != COL_ID && kind != COL_G3 && !c->null)
		add_commas(buf, n);
}

void report_print(FILE *f, const struct report *r, enum report_fmt fmt)
{
	char buf[96];
	if (fmt == FMT_CSV) {
		for (int j = 0; j < r->ncols; j++) {
			if (j) putc(',', f);
			csv_str(f, r->cols[j].head);
		}
		putc('\n', f);
		for (size_t i = 0; i < r->nrows; i++) {
			for (int j = 0; j < r->ncols; j++) {
				const struct cell *c = &r->cells[i * r->ncols + j];
				if (j) putc(',', f);
				if (r->cols[j].kind == COL_STR) csv_str(f, c->null ? "" : tool_text(c->s));
				else if (!c->null) { render(buf, sizeof(buf), c, r->cols[j].kind); fputs(buf, f); }
			}
			putc('\n', f);
		}
		return;
	}
	if (fmt == FMT_JSON) {
		putc('[', f);
		for (size_t i = 0; i < r->nrows; i++) {
			fputs(i ? ",\n  {" : "\n  {", f);
			for (int j = 0; j < r->ncols; j++) {
				const struct cell *c = &r->cells[i * r->ncols + j];
				fprintf(f, "%s\"%s\":", j ? "," : "", r->cols[j].key);
				if (c->null) fputs("null", f);
				else if (r->cols[j].kind == COL_STR) json_str(f, c->s);
				else { render(buf, sizeof(buf), c, r->cols[j].kind); fputs(buf, f); }
			}
			putc('}', f);
		}
		fputs(r->nrows ? "\n]" : "]", f);
		return;
	}
	/* table */
	fprintf(f, " ** %s (%s):\n\n", r->title, r->name);
	if (!r->nrows) {
		fprintf(f, " (no data)\n");
		return;
	}
	int *w = xcalloc(r->ncols, sizeof(int));
	for (int j = 0; j < r->ncols; j++) {
		w[j] = (int)strlen(r->cols[j].head);
		for (size_t i = 0; i < r->nrows; i++) {
			render_table(buf, sizeof(buf), &r->cells[i * r->ncols + j], r->cols[j].kind);
			int l = r->cols[j].kind == COL_STR && !r->cells[i * r->ncols + j].null
				? (int)strlen(tool_text(r->cells[i * r->ncols + j].s)) : (int)strlen(buf);
			if (l > w[j]) w[j] = l;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int j = 0; j < r->ncols; j++) {
			int last = j == r->ncols - 1;
			if (pass == 0) {
				if (r->cols[j].kind == COL_STR && last) fprintf(f, " %s", r->cols[j].head);
				else if (r->cols[j].kind == COL_STR) fprintf(f, " %-*s ", w[j], r->cols[j].head);
				else fprintf(f, last ? " %*s" : " %*s ", w[j], r->cols[j].head);
			} else {
				putc(' ', f);
				for (int k = 0; k < w[j]; k++) putc('-', f);
				if (!last) putc(' ', f);
			}
		}
		putc('\n', f);
	}
	for (size_t i = 0; i < r->nrows; i++) {
		for (int j = 0; j < r->ncols; j++) {
			const struct cell *c = &r->cells[i * r->ncols + j];
			int last = j == r->ncols - 1;
			if (r->cols[j].kind == COL_STR) {
				const char *s = c->null ? "-" : tool_text(c->s);
				if (last) fprintf(f, " %s", s);
				else fprintf(f, " %-*s ", w[j], s);
			} else {
				render_table(buf, sizeof(buf), c, r->cols[j].kind);
				fprintf(f, last ? " %*s" : " %*s ", w[j], buf);
			}
		}
		putc('\n', f);
	}
	free(w);
	if (r->note) fprintf(f, "\n%s", r->note);
}

void report_print_tables(FILE *f, const struct report *t, const int *want, size_t n, enum report_fmt fmt)
{
	int printed = 0;
	if (fmt == FMT_JSON) putc('{', f);
	for (size_t k = 0; k < n; k++) {
		if (want && !want[k]) continue;
		if (fmt == FMT_JSON) fprintf(f, "%s\"%s\":", printed ? ",\n" : "", t[k].name);
		else if (printed) putc('\n', f);
		if (fmt == FMT_CSV) fprintf(f, "# %s\n", t[k].name);
		report_print(f, &t[k], fmt);
		printed++;
	}
	if (fmt == FMT_JSON) fputs("}\n", f);
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nrows * (size_t)r->ncols; i++)
		free(r->cells[i].s);
	free(r->cells);
	memset(r, 0, sizeof(*r));
}
