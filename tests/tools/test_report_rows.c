/* test_report_rows.c — a table's rows as common/report.c stores them (all
 * but the last encoded: a tag byte and a varint, string or double a cell)
 * print exactly as the cells that were set: 70,000 rows (~2.2 MB encoded:
 * past REPORT_ROWS_MEM, so the later ones are read back from the spill's
 * file) of random and edge
 * values (0, -0, +-1, the varint byte boundaries, +-(2^53 - 1), 2^53,
 * 1e300, fractions, NaN, infinities, nulls, empty and quoted strings) in
 * CSV and JSON against each row printed alone (a one-row report keeps its
 * row as report_row handed it out, unencoded); hide_uniform on encoded
 * rows; a row cut off (a copy of the report with fewer rows, as
 * report_data.c makes); integer cells in CSV and the table as printf's
 * "%.0f" prints them (edges at 2^53 and 2^63, -0, halves; random int64);
 * then the memory: what malloc holds for 400,000 rows of a 12-column
 * table like comm_steps (~58 bytes of encoding a row, 23 MB) is at most
 * REPORT_ROWS_MEM and 1 MiB (the spill's cache).  Prints "ok" or the failed
 * checks; exit 1 on failure. */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/report.h"
#include "common/spill.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

enum { NCOLS = 7, NROWS = 70000 };
static const struct col cols[NCOLS] = {
	{ "Name", "name", COL_STR, COL_EVERYWHERE }, { "N", "n", COL_INT, COL_EVERYWHERE },
	{ "X", "x", COL_F3, COL_EVERYWHERE }, { "Id", "id", COL_ID, COL_EVERYWHERE },
	{ "Y (ns)", "y_ns", COL_F1, COL_EVERYWHERE }, { "P", "p", COL_G3, COL_EVERYWHERE },
	{ "Same", "same", COL_INT, COL_EVERYWHERE },
};

static uint64_t rng = 99;

static double value(void)
{
	static const double edge[] = { 0.0, -0.0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, 16383, 16384,
				       9007199254740991.0, -9007199254740991.0, 9007199254740992.0, 1e300, -1e300,
				       1.5, -2.25, 0.1, 1.0 / 3, 4.9e-324 };
	switch (sm_next(&rng) % 6) {
	case 0: return edge[sm_next(&rng) % (sizeof(edge) / sizeof(edge[0]))];
	case 1: return (double)(int64_t)(sm_next(&rng) >> (sm_next(&rng) % 64));
	case 2: return -(double)(sm_next(&rng) % 1000000007);
	case 3: return sm_normal(&rng) * 1e6;
	case 4: return sm_next(&rng) % 50 == 0 ? (sm_next(&rng) % 2 ? NAN : -INFINITY) : (double)(sm_next(&rng) % 1000);
	default: return sm_unif(&rng);
	}
}

static const char *const strs[] = { "train_step", "", "a,b", "q\"x", "layer_7_grad", "tab\there", "µs" };

static void fill(struct cell *c, int i)
{
	if (i == 6) { cell_num(c, 42); return; }   /* the same in every row */
	if (sm_next(&rng) % 9 == 0) return;   /* null */
	if (i == 0) cell_str(c, strs[sm_next(&rng) % (sizeof(strs) / sizeof(strs[0]))]);
	else cell_num(c, value());
}

/* f's text, malloc'd */
static char *text(FILE *f, size_t *n)
{
	fflush(f);
	long len = ftell(f);
	char *s = malloc((size_t)len + 1);
	rewind(f);
	*n = fread(s, 1, (size_t)len, f);
	s[*n] = 0;
	return s;
}

static char *print(const struct report *r, enum report_fmt fmt)
{
	FILE *f = tmpfile();
	struct report_style st = { .fmt = fmt, .width = 0, .unit = TU_NS };
	report_print(f, r, &st);
	size_t n;
	char *s = text(f, &n);
	fclose(f);
	return s;
}

/* The rows of a CSV or JSON table, one a line: CSV drops the heading line,
 * JSON the brackets and the separating commas. */
static char **row_lines(char *s, enum report_fmt fmt, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	int first = 1;
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		if (fmt == FMT_CSV && first) { first = 0; continue; }
		if (fmt == FMT_JSON) {
			if (!strcmp(line, "[") || !strcmp(line, "]") || !strcmp(line, "[]")) continue;
			if (*line == '[') line++;
			size_t l = strlen(line);
			if (l && line[l - 1] == ']') line[--l] = 0;
			if (l && line[l - 1] == ',') line[--l] = 0;
			while (*line == ' ') line++;
		}
		if (*n == cap) { cap = cap ? cap * 2 : 1024; v = realloc(v, cap * sizeof(*v)); }
		v[(*n)++] = line;
	}
	return v;
}

static size_t heap(void)
{
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

int main(void)
{
	struct report all;
	report_init(&all, "rows");
	report_define(&all, "Rows", cols, NCOLS);
	struct report *one = calloc(NROWS, sizeof(*one));
	for (int i = 0; i < NROWS; i++) {
		report_init(&one[i], "rows");
		report_define(&one[i], "Rows", cols, NCOLS);
		struct cell *a = report_row(&all), *b = report_row(&one[i]);
		for (int j = 0; j < NCOLS; j++) {
			fill(&a[j], j);
			b[j] = a[j];
			if (a[j].s) b[j].s = strdup(a[j].s);
		}
	}
	for (int fi = 0; fi < 2; fi++) {
		enum report_fmt fmt = fi ? FMT_JSON : FMT_CSV;
		char *s = print(&all, fmt);
		size_t n;
		char **lines = row_lines(s, fmt, &n);
		CHECK(n == NROWS, "%s: %zu rows printed", fi ? "json" : "csv", n);
		for (int i = 0; i < NROWS && (size_t)i < n; i++) {
			char *t = print(&one[i], fmt);
			size_t m;
			char **l1 = row_lines(t, fmt, &m);
			CHECK(m == 1 && !strcmp(l1[0], lines[i]), "%s row %d: '%s' alone, '%s' in the table",
			      fi ? "json" : "csv", i, m ? l1[0] : "", lines[i]);
			free(l1);
			free(t);
		}
		free(lines);
		free(s);
	}
	/* a copy with fewer rows (report_data.c's cut) prints those rows */
	struct report cut = all;
	cut.nrows = 3;
	char *c3 = print(&cut, FMT_CSV), *c0 = print(&one[0], FMT_CSV);
	size_t n3, n0;
	char **l3 = row_lines(c3, FMT_CSV, &n3), **l0 = row_lines(c0, FMT_CSV, &n0);
	CHECK(n3 == 3 && n0 == 1 && !strcmp(l3[0], l0[0]), "a cut copy: %zu rows", n3);
	free(l3); free(l0); free(c3); free(c0);
	/* hide_uniform over encoded rows: the constant column goes, the others stay */
	report_hide_uniform(&all, 6);
	CHECK(spill_count(all.rows) > REPORT_ROWS_MEM, "%zu bytes of rows: not past the memory cap", spill_count(all.rows));
	report_hide_uniform(&all, 1);
	CHECK(all.table_hidden == (1ull << 6), "hidden columns %llx, want 40", (unsigned long long)all.table_hidden);
	for (int i = 0; i < NROWS; i++) report_free(&one[i]);
	free(one);
	report_free(&all);

	/* integer cells print as printf's "%.0f" prints them (report.c renders
	 * whole numbers below 2^63 without printf): CSV as is, the table with
	 * thousands separators taken out */
	{
		static const struct col icol[1] = { { "N", "n", COL_INT, COL_EVERYWHERE } };
		static const double iv[] = { 0.0, -0.0, 1, -1, 9, 10, 999, 1000, -1000, 123456789,
					     9007199254740991.0, 9007199254740992.0, 9007199254740994.0,
					     9223372036854774784.0, 9223372036854775808.0, -9223372036854775808.0,
					     1e19, -1e19, 0.5, 1.5, 2.5, -2.5, 1e-300, 4.9e-324, 3.75 };
		enum { NI = sizeof(iv) / sizeof(iv[0]), NR = NI + 2000 };
		for (int k = 0; k < NR; k++) {
			double d = k < NI ? iv[k]
			      : k % 2 ? (double)(int64_t)sm_next(&rng)
				      : (double)(int64_t)(sm_next(&rng) >> (sm_next(&rng) % 64)) * (k % 4 ? 1 : -1);
			struct report r;
			report_init(&r, "ints");
			report_define(&r, "Ints", icol, 1);
			cell_num(&report_row(&r)[0], d);
			char want[400], *csv = print(&r, FMT_CSV), *tab = print(&r, FMT_TABLE);
			snprintf(want, sizeof(want), "%.0f", d);
			size_t nl;
			char **l = row_lines(csv, FMT_CSV, &nl);
			CHECK(nl == 1 && !strcmp(l[0], want), "csv of %a: '%s', want '%s'", d, nl ? l[0] : "", want);
			/* the table's last line holds the value */
			char *last = strrchr(tab, '\n'), *end = last;
			while (last > tab && last[-1] != '\n') last--;
			char got[400];
			size_t o = 0;
			for (char *q = last; q < end && o + 1 < sizeof(got); q++)
				if (*q != ' ' && *q != ',') got[o++] = *q;
			got[o] = 0;
			CHECK(!strcmp(got, want), "table of %a: '%s', want '%s'", d, got, want);
			free(l);
			free(csv);
			free(tab);
			report_free(&r);
		}
	}

	/* bytes per row of a comm_steps-like table */
	static const struct col wide[12] = {
		{ "Rank", "rank", COL_ID, 0 }, { "PID", "pid", COL_ID, 0 }, { "N", "n", COL_INT, 0 },
		{ "Start (ns)", "s", COL_INT, 0 }, { "Step (ns)", "l", COL_INT, 0 }, { "Kernels", "k", COL_INT, 0 },
		{ "Coll", "c", COL_INT, 0 }, { "Comm (ns)", "cm", COL_INT, 0 }, { "Compute (ns)", "cp", COL_INT, 0 },
		{ "Overlap (ns)", "o", COL_INT, 0 }, { "Wait (ns)", "w", COL_INT, 0 }, { "Range", "r", COL_STR, 0 },
	};
	size_t h0 = heap();
	struct report big;
	report_init(&big, "big");
	report_define(&big, "Big", wide, 12);
	enum { NBIG = 400000 };
	for (int i = 0; i < NBIG; i++) {
		struct cell *c = report_row(&big);
		cell_num(&c[1], 7000);
		cell_num(&c[2], i / 2 + 1);
		cell_num(&c[3], 40000000.0 * i);
		cell_num(&c[4], 40000000 + (double)(sm_next(&rng) % 4000000));
		cell_num(&c[5], 378);
		cell_num(&c[6], 2);
		for (int j = 7; j < 11; j++) cell_num(&c[j], (double)(sm_next(&rng) % 40000000));
		cell_str(&c[11], "train_step");
	}
	size_t held = heap() - h0;
	double b = (double)held / NBIG;
	report_free(&big);
	if (b == 0) /* an allocator without mallinfo2's figures (ASan's) */
		printf("bytes per row: not measurable with this allocator\n");
	else
		CHECK(held <= REPORT_ROWS_MEM + (1u << 20), "%zu bytes held for %d rows (~23 MB encoded; at most %u + 1 MiB)",
		      held, NBIG, REPORT_ROWS_MEM);
	printf("%d rows compared in CSV and JSON; %.1f bytes held per 12-cell row\n", NROWS, b);
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
