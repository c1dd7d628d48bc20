/* report.c — see report.h. */
#include "common/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/spill.h"
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
 * A row is its length in bytes (a varint) and its cells one after the
 * other, each a tag byte then its value: CELL_NULL; CELL_STR and the
 * string with its NUL; CELL_INT and a zigzag varint (a whole number below
 * 2^53 in magnitude, not -0: the double reads back exactly); CELL_DBL and
 * the double's 8 bytes. */
enum { CELL_NULL, CELL_STR, CELL_INT, CELL_DBL };

static void enc_cell(struct bytes *b, const struct cell *c)
{
	unsigned char t[16];
	if (c->null) {
		t[0] = CELL_NULL;
		bytes_put(b, t, 1);
	} else if (c->s) {
		t[0] = CELL_STR;
		bytes_put(b, t, 1);
		bytes_put(b, c->s, strlen(c->s) + 1);
	} else if (c->d == floor(c->d) && fabs(c->d) < 9007199254740992.0 && !(c->d == 0 && signbit(c->d))) {
		t[0] = CELL_INT;
		bytes_put(b, t, 1 + varint_enc(t + 1, zigzag_enc((int64_t)c->d)));
	} else {
		t[0] = CELL_DBL;
		memcpy(t + 1, &c->d, sizeof(c->d));
		bytes_put(b, t, 1 + sizeof(c->d));
	}
}

/* The last row into the encoded rows. */
static void commit_row(struct report *r)
{
	if (r->nrows <= r->nenc) return;
	r->enc.n = 0;
	for (int j = 0; j < r->ncols; j++) {
		enc_cell(&r->enc, &r->cells[j]);
		free(r->cells[j].s);
	}
	if (!r->rows) r->rows = spill_new(1, REPORT_ROWS_MEM);
	unsigned char len[10];
	spill_write(r->rows, len, varint_enc(len, r->enc.n));
	spill_write(r->rows, r->enc.v, r->enc.n);
	r->nenc++;
}

/* Reads rows 0, 1, ... of a report in order: report's cells, strings
 * pointing into buf (valid until the next row). */
struct row_reader {
	const struct report *r;
	size_t i, off;
	struct cell *c;   /* ncols */
	struct bytes buf; /* the row's bytes */
};

static void rows_begin(struct row_reader *rd, const struct report *r)
{
	memset(rd, 0, sizeof(*rd));
	rd->r = r;
	rd->c = xcalloc(r->ncols ? r->ncols : 1, sizeof(*rd->c));
}

static void rows_end(struct row_reader *rd)
{
	free(rd->c);
	bytes_free(&rd->buf);
}

/* Row rd->i (then the next), or NULL past the last. */
static const struct cell *rows_next(struct row_reader *rd)
{
	const struct report *r = rd->r;
	if (rd->i >= r->nrows) return NULL;
	if (rd->i++ >= r->nenc) return r->cells;
	unsigned char len[10];
	const unsigned char *p = len;
	spill_read(r->rows, rd->off, len, sizeof(len));
	size_t n = varint_dec(&p);
	rd->off += (size_t)(p - len);
	vec_reserve((void **)&rd->buf.v, &rd->buf.cap, n, 1);
	spill_read(r->rows, rd->off, rd->buf.v, n);
	rd->off += n;
	p = rd->buf.v;
	for (int j = 0; j < r->ncols; j++) {
		struct cell *c = &rd->c[j];
		c->null = 0; c->d = 0; c->s = NULL;
		switch (*p++) {
		case CELL_NULL: c->null = 1; break;
		case CELL_STR: c->s = (char *)p; p += strlen((const char *)p) + 1; break;
		case CELL_INT: c->d = (double)zigzag_dec(varint_dec(&p)); break;
		default: memcpy(&c->d, p, sizeof(c->d)); p += sizeof(c->d); break;
		}
	}
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

static const char *const time_unit_names[] = { "ns", "us", "ms", "s" };

int time_unit_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, time_unit_names[i])) return i;
	return -1;
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

/* A number's "%.0f" text, a whole one below 2^63 in magnitude without
 * printf's floating-point path (a per-step table of a day's trace has
 * millions of cells, each rendered twice: for the widths, then printed). */
static void render_whole(char *buf, size_t n, double d)
{
	if (!(d == floor(d) && fabs(d) < 9223372036854775808.0) || n < 22) {
		snprintf(buf, n, "%.0f", d);
		return;
	}
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
}

/* A number for CSV/JSON, lossless: integer columns as integers, others as
 * the shortest %g text that reads back as the same double.  0 when it is not
 * a finite number (the caller prints null / an empty field).  A whole
 * number is printed without a fraction ("3250", not "3250.0" or "3.25e+03"). */
static int render_machine(char *buf, size_t n, const struct cell *c, enum col_kind kind)
{
	if (!isfinite(c->d)) return 0;
	if (kind == COL_INT || kind == COL_ID || (c->d == floor(c->d) && fabs(c->d) < 9007199254740992.0)) {
		render_whole(buf, n, c->d);
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
	case COL_INT: case COL_ID: render_whole(buf, n, c->d); break;
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
	snprintf(buf, n, "%.*s(%s)", (int)strlen(c->head) - 4, c->head, time_unit_names[unit]);
	return buf;
}

/* CSV (a line of headings, then a line a row) or JSON (an array of
 * objects, a row each); a null cell: an empty field / null. */
static void print_machine(FILE *f, const struct report *r, int json)
{
	char buf[96];
	int first = 1;
	for (int j = 0; j < r->ncols && !json; j++) {
		if (!in_machine(r, j)) continue;
		if (!first) putc(',', f);
		first = 0;
		csv_str(f, r->cols[j].head);
	}
	putc(json ? '[' : '\n', f);
	struct row_reader rd;
	rows_begin(&rd, r);
	for (const struct cell *row; (row = rows_next(&rd));) {
		if (json) fputs(rd.i > 1 ? ",\n  {" : "\n  {", f);
		first = 1;
		for (int j = 0; j < r->ncols; j++) {
			if (!in_machine(r, j)) continue;
			const struct cell *c = &row[j];
			if (json) fprintf(f, "%s\"%s\":", first ? "" : ",", r->cols[j].key);
			else if (!first) putc(',', f);
			first = 0;
			if (c->null) {
				if (json) fputs("null", f);
			} else if (r->cols[j].kind == COL_STR) {
				if (json) json_str(f, c->s);
				else csv_str(f, tool_text(c->s));
			} else if (render_machine(buf, sizeof(buf), c, r->cols[j].kind)) {
				fputs(buf, f);
			} else if (json) {
				fputs("null", f);
			}
		}
		putc(json ? '}' : '\n', f);
	}
	rows_end(&rd);
	if (json) fputs(r->nrows ? "\n]" : "]", f);
}

/* ------------------------------------------------------------ text to a width */

void report_flow(FILE *f, const char *s, size_t n, size_t first, size_t cont, int width)
{
	if (width > 0 && cont > (size_t)width / 2) cont = (size_t)width / 2;
	size_t lead = first;
	for (;;) {
		size_t room = width > 0 && (size_t)width > lead ? (size_t)width - lead : n + 1;
		if (width <= 0 || n <= room) {
			fprintf(f, "%*s%.*s\n", (int)lead, "", (int)n, s);
			return;
		}
		size_t br = room;
		while (br > 0 && s[br] != ' ') br--;
		size_t end = br;
		while (end > 0 && s[end - 1] == ' ') end--;
		if (!end) { /* no space to break at: the word is cut */
			br = room;
			while (br > 0 && ((unsigned char)s[br] & 0xC0) == 0x80) br--;
			end = br;
		}
		fprintf(f, "%*s%.*s\n", (int)lead, "", (int)end, s);
		while (br < n && s[br] == ' ') br++;
		s += br;
		n -= br;
		lead = cont;
		if (!n) return;
	}
}

/* Lines of text[0..len) each in lines of at most `width` bytes: the
 * lines after a line's first indented two more than it. */
static void report_text_n(FILE *f, const char *text, size_t len, int width)
{
	const char *stop = text + len;
	while (text < stop) {
		size_t n = strcspn(text, "\n"), ind = strspn(text, " ");
		if (n > (size_t)(stop - text)) n = (size_t)(stop - text);
		if (ind > n) ind = n;
		report_flow(f, text + ind, n - ind, ind, ind + 2, width);
		text += n;
		if (text < stop && *text == '\n') text++;
	}
}

/* A note under a table: paragraphs (a line and the lines after it indented
 * more) as they are when they fit, else their words flowed again into lines
 * of the width, indented as the paragraph's first and second lines. */
static void put_note(FILE *f, const char *text, int width)
{
	while (*text) {
		size_t n = strcspn(text, "\n"), ind = strspn(text, " "), cont = 0, end = n, widest = n;
		/* the paragraph's further lines */
		while (text[end] == '\n' && text[end + 1]) {
			const char *next = text + end + 1;
			size_t m = strcspn(next, "\n"), k = strspn(next, " ");
			if (k <= ind || k >= m) break;
			if (!cont) cont = k;
			if (m > widest) widest = m;
			end = (size_t)(next - text) + m;
		}
		if (width <= 0 || widest <= (size_t)width) {
			report_text_n(f, text, end, width);
		} else {
			char *flow = xmalloc(end + 1);
			size_t o = 0;
			for (size_t i = 0; i < end;) { /* the words, one space apart */
				while (i < end && (text[i] == ' ' || text[i] == '\n')) i++;
				size_t w = i;
				while (w < end && text[w] != ' ' && text[w] != '\n') w++;
				if (w > i) {
					if (o) flow[o++] = ' ';
					memcpy(flow + o, text + i, w - i);
					o += w - i;
				}
				i = w;
			}
			flow[o] = 0;
			report_flow(f, flow, o, ind, cont ? cont : ind + 2, width);
			free(flow);
		}
		text += end;
		if (*text == '\n') text++;
	}
}

void report_text(FILE *f, const char *text, int width)
{
	report_text_n(f, text, strlen(text), width);
}

/* ------------------------------------------------------------ the table */

/* A table's layout in the style's width (report.h).  A line of columns J
 * is sum over J of (w + 2) - 1 bytes. */
struct layout {
	int *head;    /* the heading's width (its longer line when split) */
	int *cells;   /* the widest cell shown */
	int *w;       /* the width the column is printed in */
	int *split;   /* a heading on two lines: where its second line starts */
	int *moved;   /* a prose column: its cells are references to notes */
	int *block;   /* the block of lines it is in; -1: every block (a name) */
	int nblocks;
};

static int max_int(int a, int b) { return a > b ? a : b; }

/* A name column: text that shortens (not prose, not a number). */
static int is_name(const struct report *r, const struct layout *lo, int j)
{
	return in_table(r, j) && r->cols[j].kind == COL_STR && !lo->moved[j];
}

/* Whether column j is in the lines of block b (-1: of any block). */
static int in_block(const struct report *r, const struct layout *lo, int j, int b)
{
	return in_table(r, j) && (b < 0 || lo->block[j] < 0 || lo->block[j] == b);
}

static int line_of(const struct report *r, const struct layout *lo, int block)
{
	int line = -1;
	for (int j = 0; j < r->ncols; j++)
		if (in_block(r, lo, j, block)) line += lo->w[j] + 2;
	return line;
}

/* The columns of `mask` (NULL: every name column) narrowed, the widest
 * first, down to `floor`, until their widths add up to at most `total`. */
static void shrink_names(const struct report *r, struct layout *lo, const int *floor, const int *mask, int total)
{
	for (;;) {
		int sum = 0, widest = -1;
		for (int j = 0; j < r->ncols; j++) {
			if (!is_name(r, lo, j) || (mask && !mask[j])) continue;
			sum += lo->w[j];
			if (lo->w[j] > floor[j] && (widest < 0 || lo->w[j] > lo->w[widest])) widest = j;
		}
		if (sum <= total || widest < 0) return;
		lo->w[widest]--;
	}
}

/* Where heading h splits into two lines of the least width (the later
 * space of two as good); 0 when it has no space. */
static int split_at(const char *h)
{
	int n = (int)strlen(h), best = 0, bestw = n;
	for (int i = 1; i < n; i++)
		if (h[i] == ' ' && max_int(i, n - i - 1) <= bestw) {
			bestw = max_int(i, n - i - 1);
			best = i + 1;
		}
	return best;
}

/* The columns every block repeats: the identifiers the table starts with
 * (Rank, PID) and the row's name when it ends with one (a kernel's). */
static void mark_keys(const struct report *r, const struct layout *lo, int *key)
{
	for (int j = 0; j < r->ncols; j++) {
		if (!in_table(r, j)) continue;
		if (r->cols[j].kind != COL_ID) break;
		key[j] = 1;
	}
	for (int j = r->ncols - 1; j >= 0; j--) {
		if (!in_table(r, j)) continue;
		if (is_name(r, lo, j)) key[j] = 1;
		break;
	}
}

/* Fits the table in `width`, each step only when the one before left a
 * line too wide: (1) prose columns become references to notes under the
 * table; (2) headings go on two lines; (3) names shorten, down to
 * REPORT_MIN_NAME (or their heading); (4) the other columns go into
 * blocks of lines, each with the row's name, as many as fit a line.
 * Numbers are never cut: a line is wider only when the name and one
 * column alone are. */
static void fit(const struct report *r, struct layout *lo, const char *const *heads, int width, int ref_w)
{
	int n = r->ncols;
	lo->nblocks = 1;
	for (int j = 0; j < n; j++) {
		lo->w[j] = max_int(lo->head[j], lo->cells[j]);
		lo->block[j] = 0;
		lo->moved[j] = 0;
		lo->split[j] = 0;
	}
	if (width <= 0 || line_of(r, lo, -1) <= width) return;
	for (int j = 0; j < n; j++)
		if (in_table(r, j) && r->cols[j].where == COL_PROSE) {
			lo->moved[j] = 1;
			lo->cells[j] = ref_w;
			lo->w[j] = max_int(ref_w, lo->head[j]);
		}
	if (line_of(r, lo, -1) <= width) return;
	for (int j = 0; j < n; j++) {
		if (!in_table(r, j) || lo->head[j] <= lo->cells[j]) continue;
		int at = split_at(heads[j]), l = (int)strlen(heads[j]);
		if (!at) continue;
		int hw = max_int(at - 1, l - at);
		if (hw >= lo->head[j]) continue;
		lo->split[j] = at;
		lo->head[j] = hw;
		lo->w[j] = max_int(hw, lo->cells[j]);
	}
	if (line_of(r, lo, -1) <= width) return;
	int *floor = xcalloc((size_t)n, sizeof(int)), *key = xcalloc((size_t)n, sizeof(int));
	int fixed = -1, min_names = 0;
	for (int j = 0; j < n; j++) {
		if (!in_table(r, j)) continue;
		fixed += 2;
		if (!is_name(r, lo, j)) { fixed += lo->w[j]; continue; }
		int m = max_int(lo->head[j], REPORT_MIN_NAME);
		floor[j] = lo->w[j] < m ? lo->w[j] : m;
		min_names += floor[j];
	}
	if (fixed + min_names <= width) {
		shrink_names(r, lo, floor, NULL, width - fixed);
		goto out;
	}
	/* blocks: the other names no wider than a third of a line, the row's
	 * name counted at a quarter of one (or its floor) while they are
	 * packed, then as wide as the widest block leaves room for */
	mark_keys(r, lo, key);
	int keys = 0, nkeys = 0, cur = 0, widest = 0, b = 0;
	for (int j = 0; j < n; j++) {
		if (!in_table(r, j)) continue;
		if (key[j]) {
			lo->block[j] = -1;
			keys += (is_name(r, lo, j) ? max_int(floor[j], lo->w[j] < width / 4 ? lo->w[j] : width / 4)
						   : lo->w[j]) + 2;
			nkeys++;
		} else if (is_name(r, lo, j) && lo->w[j] > max_int(floor[j], width / 3)) {
			lo->w[j] = max_int(floor[j], width / 3);
		}
	}
	for (int j = 0; j < n; j++) {
		if (!in_table(r, j) || key[j]) continue;
		if (cur && keys + cur + lo->w[j] + 2 - 1 > width) {
			b++;
			cur = 0;
		}
		lo->block[j] = b;
		cur += lo->w[j] + 2;
		widest = max_int(widest, cur);
	}
	lo->nblocks = b + 1;
	int room = width + 1 - widest;
	for (int j = 0; j < n; j++)
		if (key[j]) room -= 2 + (is_name(r, lo, j) ? 0 : lo->w[j]);
	shrink_names(r, lo, floor, key, room);
out:
	free(floor);
	free(key);
}

/* The notes prose columns move to: each distinct text once, numbered in
 * the order the rows show them. */
struct notes { strmap index; char **text; size_t n, cap; };

static size_t note_ref(struct notes *nt, const char *s)
{
	int is_new = 0;
	size_t *v = strmap_get(&nt->index, s, &is_new);
	if (is_new) {
		VEC_PUSH(nt->text, nt->n, nt->cap, xstrdup(s));
		*v = nt->n;
	}
	return *v;
}

/* A heading line or a cell of the table's column j in its width, a name
 * fitted to it; `last`: the line's last column (no padding after it). */
static void put_cell(FILE *f, const struct layout *lo, int j, int last, const char *s, int numeric)
{
	int w = lo->w[j];
	if (numeric) {
		put_right(f, s, w, last);
		return;
	}
	char *fitted = (int)strlen(s) > w ? name_fit(s, (size_t)w) : NULL;
	if (last) fprintf(f, " %s", fitted ? fitted : s);
	else fprintf(f, " %-*s ", w, fitted ? fitted : s);
	free(fitted);
}

/* The heading lines and the dashes of block b. */
static void put_heads(FILE *f, const struct report *r, const struct layout *lo, char *const *heads, int b, int last)
{
	int two = 0;
	for (int j = 0; j < r->ncols; j++)
		two |= in_block(r, lo, j, b) && lo->split[j];
	for (int line = two ? 0 : 1; line < 3; line++) {
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);
		if (!m) return;
		for (int j = 0; j < r->ncols; j++) {
			if (!in_block(r, lo, j, b)) continue;
			const char *h = heads[j];
			char part[96];
			if (line == 2) {
				putc(' ', m);
				for (int q = 0; q < lo->w[j]; q++) putc('-', m);
				if (j != last) putc(' ', m);
				continue;
			}
			if (lo->split[j]) /* line 0: the words before the split */
				snprintf(part, sizeof(part), "%.*s", line ? (int)sizeof(part) - 1 : lo->split[j] - 1,
					 h + (line ? lo->split[j] : 0));
			else
				snprintf(part, sizeof(part), "%s", line ? h : "");
			put_cell(m, lo, j, j == last, part, r->cols[j].kind != COL_STR);
		}
		if (fclose(m) == 0) {
			while (len && text[len - 1] == ' ') len--; /* a blank first line's padding */
			fprintf(f, "%.*s\n", (int)len, text);
		}
		free(text);
	}
}

static void print_table(FILE *f, const struct report *r, const struct report_style *st)
{
	char buf[96];
	int n = r->ncols, width = st->width;
	{
		char *title = xmalloc(strlen(r->title) + strlen(r->name) + 16);
		sprintf(title, " ** %s (%s):", r->title, r->name);
		report_text(f, title, width);
		free(title);
		putc('\n', f);
	}
	if (!r->nrows) {
		fprintf(f, " (no data)\n");
		return;
	}
	struct layout lo;
	int *ints[] = { lo.head = xcalloc((size_t)n, sizeof(int)), lo.cells = xcalloc((size_t)n, sizeof(int)),
			lo.w = xcalloc((size_t)n, sizeof(int)), lo.split = xcalloc((size_t)n, sizeof(int)),
			lo.moved = xcalloc((size_t)n, sizeof(int)), lo.block = xcalloc((size_t)n, sizeof(int)) };
	char **heads = xcalloc((size_t)n, sizeof(char *));
	int any = 0, prose = 0;
	for (int j = 0; j < n; j++)
		if (in_table(r, j)) {
			heads[j] = xstrdup(table_head(&r->cols[j], st->unit, buf, sizeof(buf)));
			lo.head[j] = (int)strlen(heads[j]);
			any = 1;
			prose |= r->cols[j].where == COL_PROSE;
		}
	struct notes nt = { 0 };
	strmap_init(&nt.index);
	if (!any) goto out;
	/* the rows shown: the first max_rows; the widths are theirs */
	size_t shown = st->max_rows && r->nrows > st->max_rows ? st->max_rows : r->nrows, k = 0;
	struct row_reader rd;
	rows_begin(&rd, r);
	for (const struct cell *row; k++ < shown && (row = rows_next(&rd));)
		for (int j = 0; j < n; j++) {
			if (!in_table(r, j)) continue;
			const struct cell *c = &row[j];
			render_table(buf, sizeof(buf), c, &r->cols[j], st->unit);
			int l = r->cols[j].kind == COL_STR && !c->null ? (int)strlen(tool_text(c->s)) : (int)strlen(buf);
			if (l > lo.cells[j]) lo.cells[j] = l;
			if (prose && width > 0 && r->cols[j].where == COL_PROSE && !c->null) note_ref(&nt, tool_text(c->s));
		}
	rows_end(&rd);
	snprintf(buf, sizeof(buf), "[%zu]", nt.n);
	fit(r, &lo, (const char *const *)heads, width, (int)strlen(buf));
	for (int b = 0; b < lo.nblocks; b++) {
		int last = -1;
		for (int j = 0; j < n; j++)
			if (in_block(r, &lo, j, b)) last = j;
		if (b) putc('\n', f);
		put_heads(f, r, &lo, heads, b, last);
		rows_begin(&rd, r);
		k = 0;
		for (const struct cell *row; k++ < shown && (row = rows_next(&rd));) {
			for (int j = 0; j < n; j++) {
				if (!in_block(r, &lo, j, b)) continue;
				const struct cell *c = &row[j];
				if (r->cols[j].kind == COL_STR) {
					const char *s = c->null ? "-" : tool_text(c->s);
					if (lo.moved[j] && !c->null) {
						snprintf(buf, sizeof(buf), "[%zu]", *strmap_find(&nt.index, s));
						s = buf;
					}
					put_cell(f, &lo, j, j == last, s, 0);
				} else {
					render_table(buf, sizeof(buf), c, &r->cols[j], st->unit);
					put_cell(f, &lo, j, j == last, buf, 1);
				}
			}
			putc('\n', f);
		}
		rows_end(&rd);
		if (shown < r->nrows) fprintf(f, " ... %zu more rows (--rows all)\n", r->nrows - shown);
	}
	int moved = 0;
	for (int j = 0; j < n; j++) moved |= lo.moved[j];
	if (moved) {
		putc('\n', f);
		for (size_t i = 0; i < nt.n; i++) {
			char *line = xmalloc(strlen(nt.text[i]) + 32);
			sprintf(line, " [%zu] %s", i + 1, nt.text[i]);
			report_text(f, line, width);
			free(line);
		}
	}
	if (r->note) {
		putc('\n', f);
		put_note(f, r->note, width);
	}
out:
	for (size_t i = 0; i < nt.n; i++) free(nt.text[i]);
	free(nt.text);
	strmap_free(&nt.index);
	for (int j = 0; j < n; j++) free(heads[j]);
	free(heads);
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) free(ints[i]);
}

void report_print(FILE *f, const struct report *r, const struct report_style *style)
{
	if (style->fmt != FMT_TABLE) print_machine(f, r, style->fmt == FMT_JSON);
	else print_table(f, r, style);
}

void report_print_tables(FILE *f, const struct report *t, const int *want, size_t n, const struct report_style *style)
{
	int printed = 0, nwant = 0;
	for (size_t k = 0; k < n; k++) nwant += !want || want[k];
	if (style->fmt == FMT_JSON) putc('{', f);
	for (size_t k = 0; k < n; k++) {
		if (want && !want[k]) continue;
		if (style->fmt == FMT_JSON) fprintf(f, "%s\"%s\":", printed ? ",\n" : "", t[k].name);
		else if (printed) putc('\n', f);
		if (style->fmt == FMT_CSV && nwant >= style->csv_heads_from) fprintf(f, "# %s\n", t[k].name);
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
	spill_free(r->rows);
	bytes_free(&r->enc);
	memset(r, 0, sizeof(*r));
}
