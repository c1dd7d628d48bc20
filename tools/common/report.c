/* report.c — see report.h. */
#include "common/report.h"

#include <math.h>
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

/* ------------------------------------------------------------ row storage
 * A row is its cells one after the other, each a tag byte then its value:
 * CELL_NULL; CELL_STR and the string with its NUL; CELL_INT and a zigzag
 * varint (a whole number below 2^53 in magnitude, not -0: the double reads
 * back exactly); CELL_DBL and the double's 8 bytes. */
enum { CELL_NULL, CELL_STR, CELL_INT, CELL_DBL };

static void enc_put(struct report *r, const void *p, size_t n)
{
	vec_reserve((void **)&r->rows, &r->crows, r->nrows_bytes + n, 1);
	memcpy(r->rows + r->nrows_bytes, p, n);
	r->nrows_bytes += n;
}

static void enc_cell(struct report *r, const struct cell *c)
{
	unsigned char b[16];
	if (c->null) {
		b[0] = CELL_NULL;
		enc_put(r, b, 1);
	} else if (c->s) {
		b[0] = CELL_STR;
		enc_put(r, b, 1);
		enc_put(r, c->s, strlen(c->s) + 1);
	} else if (c->d == floor(c->d) && fabs(c->d) < 9007199254740992.0 && !(c->d == 0 && signbit(c->d))) {
		int64_t v = (int64_t)c->d;
		uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
		size_t n = 0;
		b[n++] = CELL_INT;
		do {
			b[n++] = (unsigned char)((z & 0x7f) | (z >= 0x80 ? 0x80 : 0));
			z >>= 7;
		} while (z);
		enc_put(r, b, n);
	} else {
		b[0] = CELL_DBL;
		memcpy(b + 1, &c->d, sizeof(c->d));
		enc_put(r, b, 1 + sizeof(c->d));
	}
}

/* The last row into the encoded rows. */
static void commit_row(struct report *r)
{
	if (r->nrows <= r->nenc) return;
	for (int j = 0; j < r->ncols; j++) {
		enc_cell(r, &r->cells[j]);
		free(r->cells[j].s);
	}
	r->nenc++;
}

/* Reads rows 0, 1, ... of a report in order: report's cells, strings
 * pointing into its storage. */
struct row_reader {
	const struct report *r;
	size_t i, off;
	struct cell *c;   /* ncols */
};

static void rows_begin(struct row_reader *rd, const struct report *r)
{
	rd->r = r; rd->i = 0; rd->off = 0;
	rd->c = xcalloc(r->ncols ? r->ncols : 1, sizeof(*rd->c));
}

static void rows_end(struct row_reader *rd) { free(rd->c); }

/* Row rd->i (then the next), or NULL past the last. */
static const struct cell *rows_next(struct row_reader *rd)
{
	const struct report *r = rd->r;
	if (rd->i >= r->nrows) return NULL;
	if (rd->i++ >= r->nenc) return r->cells;
	const unsigned char *p = r->rows + rd->off;
	for (int j = 0; j < r->ncols; j++) {
		struct cell *c = &rd->c[j];
		c->null = 0; c->d = 0; c->s = NULL;
		switch (*p++) {
		case CELL_NULL: c->null = 1; break;
		case CELL_STR: c->s = (char *)p; p += strlen((const char *)p) + 1; break;
		case CELL_INT: {
			uint64_t z = 0;
			for (int sh = 0;; sh += 7) {
				z |= (uint64_t)(*p & 0x7f) << sh;
				if (!(*p++ & 0x80)) break;
			}
			c->d = (double)(int64_t)((z >> 1) ^ (~(z & 1) + 1));
			break;
		}
		default: memcpy(&c->d, p, sizeof(c->d)); p += sizeof(c->d); break;
		}
	}
	rd->off = (size_t)(p - r->rows);
	return rd->c;
}

struct cell *report_row(struct report *r)
{
	commit_row(r);
	if (!r->cells) r->cells = xcalloc(r->ncols ? r->ncols : 1, sizeof(*r->cells));
	struct cell *c = r->cells;
	for (int i = 0; i < r->ncols; i++) {
		c[i].null = 1; c[i].d = 0; c[i].s = NULL;
	}
	r->nrows++;
	return c;
}

void cell_num(struct cell *c, double v) { c->null = 0; c->d = v; }
void cell_str(struct cell *c, const char *s) { c->null = 0; c->s = xstrdup(s ? s : ""); }

static int cell_eq(const struct cell *a, const struct cell *b)
{
	if (a->null || b->null) return a->null == b->null;
	if (a->s || b->s) return a->s && b->s && !strcmp(a->s, b->s);
	return a->d == b->d;
}

void report_hide_uniform(struct report *r, int col)
{
	struct row_reader rd;
	rows_begin(&rd, r);
	const struct cell *c = rows_next(&rd);
	struct cell first = c ? c[col] : (struct cell){ 1, 0, NULL };
	char *s0 = first.s ? xstrdup(first.s) : NULL;
	first.s = s0;
	int uniform = 1;
	while (uniform && (c = rows_next(&rd)))
		uniform = cell_eq(&c[col], &first);
	rows_end(&rd);
	free(s0);
	if (uniform && col < REPORT_MAX_COLS) r->table_hidden |= 1ull << col;
}

int report_fmt_parse(const char *name, enum report_fmt *fmt)
{
	static const char *const names[] = { "table", "csv", "json" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, names[i])) return *fmt = (enum report_fmt)i, 0;
	tool_err("unknown format '%s' (table, csv, json)", name);
	return -1;
}

int time_unit_parse(const char *name)
{
	static const char *const names[] = { "ns", "us", "ms", "s" };
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, names[i])) return i;
	return -1;
}

const char *time_unit_name(enum time_unit u)
{
	static const char *const names[] = { "ns", "us", "ms", "s" };
	return names[u];
}

/* A duration column: its heading ends in "(ns)". */
static int is_ns_col(const struct col *c)
{
	size_t l = strlen(c->head);
	return l >= 4 && !strcmp(c->head + l - 4, "(ns)");
}

static int in_table(const struct report *r, int j)
{
	return r->cols[j].head && r->cols[j].where != COL_MACHINE_ONLY &&
	       !(j < REPORT_MAX_COLS && (r->table_hidden >> j & 1));
}

static int in_machine(const struct report *r, int j)
{
	return r->cols[j].head && r->cols[j].where != COL_TABLE_ONLY;
}

/* A whole number's "%.0f" text without printf's floating-point path (a
 * per-step table of a day's trace has millions of cells, each rendered
 * twice: for the widths, then printed); 0 when d is not a whole number
 * below 2^63 in magnitude, which "%.0f" handles. */
static int render_whole(char *buf, size_t n, double d)
{
	if (!(d == floor(d) && fabs(d) < 9223372036854775808.0) || n < 22) return 0;
	char tmp[24];
	int o = (int)sizeof(tmp);
	int neg = d < 0 || (d == 0 && signbit(d));
	uint64_t v = (uint64_t)(neg ? -d : d);
	do {
		tmp[--o] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (neg) tmp[--o] = '-';
	memcpy(buf, tmp + o, sizeof(tmp) - (size_t)o);
	buf[sizeof(tmp) - (size_t)o] = 0;
	return 1;
}

/* A number for CSV/JSON, lossless: integer columns as integers, others as
 * the shortest %g text that reads back as the same double.  0 when it is not
 * a finite number (the caller prints null / an empty field).  A whole
 * number is printed without a fraction ("3250", not "3250.0" or "3.25e+03"). */
static int render_machine(char *buf, size_t n, const struct cell *c, enum col_kind kind)
{
	if (!isfinite(c->d)) return 0;
	if (kind == COL_INT || kind == COL_ID || (c->d == floor(c->d) && fabs(c->d) < 9007199254740992.0)) {
		if (!render_whole(buf, n, c->d)) snprintf(buf, n, "%.0f", c->d);
		return 1;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, c->d);
		if (strtod(buf, NULL) == c->d) break;
	}
	return 1;
}

/* Plain rendering; the table adds thousands separators. */
static void render(char *buf, size_t n, const struct cell *c, enum col_kind kind)
{
	if (c->null) { snprintf(buf, n, "-"); return; }
	switch (kind) {
	case COL_STR: snprintf(buf, n, "%s", tool_text(c->s)); break;
	case COL_INT: case COL_ID: if (!render_whole(buf, n, c->d)) snprintf(buf, n, "%.0f", c->d); break;
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
	/* the rest (a fraction), then back into buf, both cut to fit as
	 * snprintf would (no printf: every number cell of a table passes here) */
	size_t rest = strlen(p + digits);
	if (rest > sizeof(tmp) - 1 - o) rest = sizeof(tmp) - 1 - o;
	memcpy(tmp + o, p + digits, rest);
	o += rest;
	if (!n) return;
	if (o > n - 1) o = n - 1;
	memcpy(buf, tmp, o);
	buf[o] = 0;
}

/* s right-aligned in w columns, then a space unless it is the last
 * column (fprintf's " %*s " without its format parsing) */
static void put_right(FILE *f, const char *s, int w, int last)
{
	int l = (int)strlen(s);
	putc(' ', f);
	for (int k = l; k < w; k++) putc(' ', f);
	fwrite(s, 1, (size_t)l, f);
	if (!last) putc(' ', f);
}

/* A table cell: thousands separators; a duration in the style's unit (3
 * decimals for any unit but ns). */
static void render_table(char *buf, size_t n, const struct cell *c, const struct col *col,
			 enum time_unit unit)
{
	static const double div[] = { 1, 1e3, 1e6, 1e9 };
	if (!c->null && unit != TU_NS && col->kind != COL_STR && is_ns_col(col)) {
		struct cell v = *c;
		v.d /= div[unit];
		render(buf, n, &v, COL_F3);
	} else {
		render(buf, n, c, col->kind);
	}
	if (col->kind != COL_STR && col->kind != COL_ID && col->kind != COL_G3 && !c->null)
		add_commas(buf, n);
}

/* A column heading in the table: "(ns)" becomes the unit's. */
static const char *table_head(const struct col *c, enum time_unit unit, char *buf, size_t n)
{
	if (unit == TU_NS || !is_ns_col(c)) return c->head;
	snprintf(buf, n, "%.*s(%s)", (int)strlen(c->head) - 4, c->head, time_unit_name(unit));
	return buf;
}

/* The text of a string cell cut to `w` bytes with "..." (at a UTF-8
 * character boundary); s itself when it fits. */
static const char *cut(const char *s, int w, char **buf)
{
	if ((int)strlen(s) <= w) return s;
	int keep = w > 3 ? w - 3 : 0;
	while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80) keep--;
	free(*buf);
	*buf = xmalloc((size_t)keep + 4);
	memcpy(*buf, s, (size_t)keep);
	memcpy(*buf + keep, "...", 4);
	return *buf;
}

static void print_csv(FILE *f, const struct report *r)
{
	char buf[96];
	int first = 1;
	for (int j = 0; j < r->ncols; j++) {
		if (!in_machine(r, j)) continue;
		if (!first) putc(',', f);
		first = 0;
		csv_str(f, r->cols[j].head);
	}
	putc('\n', f);
	struct row_reader rd;
	rows_begin(&rd, r);
	for (const struct cell *row; (row = rows_next(&rd));) {
		first = 1;
		for (int j = 0; j < r->ncols; j++) {
			if (!in_machine(r, j)) continue;
			const struct cell *c = &row[j];
			if (!first) putc(',', f);
			first = 0;
			if (r->cols[j].kind == COL_STR) csv_str(f, c->null ? "" : tool_text(c->s));
			else if (!c->null && render_machine(buf, sizeof(buf), c, r->cols[j].kind)) fputs(buf, f);
		}
		putc('\n', f);
	}
	rows_end(&rd);
}

static void print_json(FILE *f, const struct report *r)
{
	char buf[96];
	putc('[', f);
	struct row_reader rd;
	rows_begin(&rd, r);
	for (const struct cell *row; (row = rows_next(&rd));) {
		fputs(rd.i > 1 ? ",\n  {" : "\n  {", f);
		int first = 1;
		for (int j = 0; j < r->ncols; j++) {
			if (!in_machine(r, j)) continue;
			const struct cell *c = &row[j];
			fprintf(f, "%s\"%s\":", first ? "" : ",", r->cols[j].key);
			first = 0;
			if (r->cols[j].kind == COL_STR && !c->null) json_str(f, c->s);
			else if (!c->null && render_machine(buf, sizeof(buf), c, r->cols[j].kind)) fputs(buf, f);
			else fputs("null", f);
		}
		putc('}', f);
	}
	rows_end(&rd);
	fputs(r->nrows ? "\n]" : "]", f);
}

static void print_table(FILE *f, const struct report *r, const struct report_style *st)
{
	char buf[96], hb[96];
	fprintf(f, " ** %s (%s):\n\n", r->title, r->name);
	if (!r->nrows) {
		fprintf(f, " (no data)\n");
		return;
	}
	int *w = xcalloc(r->ncols, sizeof(int));
	int last = -1, line = 0;
	for (int j = 0; j < r->ncols; j++)
		if (in_table(r, j)) w[j] = (int)strlen(table_head(&r->cols[j], st->unit, hb, sizeof(hb)));
	/* the rows shown: the first max_rows; the widths are theirs */
	size_t shown = st->max_rows && r->nrows > st->max_rows ? st->max_rows : r->nrows, k = 0;
	struct row_reader rd;
	rows_begin(&rd, r);
	for (const struct cell *row; k++ < shown && (row = rows_next(&rd));)
		for (int j = 0; j < r->ncols; j++) {
			if (!in_table(r, j)) continue;
			const struct cell *c = &row[j];
			render_table(buf, sizeof(buf), c, &r->cols[j], st->unit);
			int l = r->cols[j].kind == COL_STR && !c->null ? (int)strlen(tool_text(c->s)) : (int)strlen(buf);
			if (l > w[j]) w[j] = l;
		}
	rows_end(&rd);
	for (int j = 0; j < r->ncols; j++) {
		if (!in_table(r, j)) continue;
		last = j;
		line += w[j] + 2;
	}
	if (last < 0) { free(w); return; }
	line -= 1; /* no space after the last column */
	/* the last column, a name, is cut so that lines fit the width */
	if (st->width > 0 && line > st->width && r->cols[last].kind == COL_STR) {
		int room = st->width - (line - w[last]);
		int minw = REPORT_MIN_NAME > (int)strlen(r->cols[last].head) ? REPORT_MIN_NAME
									    : (int)strlen(r->cols[last].head);
		if (room < minw) room = minw;
		if (room < w[last]) w[last] = room;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int j = 0; j < r->ncols; j++) {
			if (!in_table(r, j)) continue;
			const char *h = table_head(&r->cols[j], st->unit, hb, sizeof(hb));
			if (pass == 0) {
				if (r->cols[j].kind == COL_STR && j == last) fprintf(f, " %s", h);
				else if (r->cols[j].kind == COL_STR) fprintf(f, " %-*s ", w[j], h);
				else fprintf(f, j == last ? " %*s" : " %*s ", w[j], h);
			} else {
				putc(' ', f);
				for (int k = 0; k < w[j]; k++) putc('-', f);
				if (j != last) putc(' ', f);
			}
		}
		putc('\n', f);
	}
	char *cutbuf = NULL;
	rows_begin(&rd, r);
	k = 0;
	for (const struct cell *row; k++ < shown && (row = rows_next(&rd));) {
		for (int j = 0; j < r->ncols; j++) {
			if (!in_table(r, j)) continue;
			const struct cell *c = &row[j];
			if (r->cols[j].kind == COL_STR) {
				const char *s = c->null ? "-" : tool_text(c->s);
				if (j == last) fprintf(f, " %s", cut(s, w[j], &cutbuf));
				else fprintf(f, " %-*s ", w[j], s);
			} else {
				render_table(buf, sizeof(buf), c, &r->cols[j], st->unit);
				put_right(f, buf, w[j], j == last);
			}
		}
		putc('\n', f);
	}
	rows_end(&rd);
	if (shown < r->nrows) fprintf(f, " ... %zu more rows (--rows all)\n", r->nrows - shown);
	free(cutbuf);
	free(w);
	if (r->note) fprintf(f, "\n%s", r->note);
}

void report_print(FILE *f, const struct report *r, const struct report_style *style)
{
	if (style->fmt == FMT_CSV) print_csv(f, r);
	else if (style->fmt == FMT_JSON) print_json(f, r);
	else print_table(f, r, style);
}

void report_print_tables(FILE *f, const struct report *t, const int *want, size_t n, const struct report_style *style)
{
	int printed = 0;
	if (style->fmt == FMT_JSON) putc('{', f);
	for (size_t k = 0; k < n; k++) {
		if (want && !want[k]) continue;
		if (style->fmt == FMT_JSON) fprintf(f, "%s\"%s\":", printed ? ",\n" : "", t[k].name);
		else if (printed) putc('\n', f);
		if (style->fmt == FMT_CSV) fprintf(f, "# %s\n", t[k].name);
		report_print(f, &t[k], style);
		printed++;
	}
	if (style->fmt == FMT_JSON) fputs("}\n", f);
}

void report_free(struct report *r)
{
	if (r->nrows > r->nenc)
		for (int j = 0; j < r->ncols; j++) free(r->cells[j].s);
	free(r->cells);
	free(r->rows);
	memset(r, 0, sizeof(*r));
}
