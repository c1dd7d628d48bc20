/* report.h — a table of cells printed as an aligned text table (nsys style,
 * thousands separators), CSV or JSON.  Used by `gpuprof stats`. */
#ifndef GPUPROF_TOOL_REPORT_H
#define GPUPROF_TOOL_REPORT_H

#include <stddef.h>
#include <stdio.h>

enum col_kind { COL_STR, COL_INT, COL_F1, COL_F3, COL_ID /* integer, no separators */,
		COL_G3 /* 3 significant digits, exponent when small (a p-value) */ };
struct col { const char *head; const char *key; enum col_kind kind; };
struct cell { int null; double d; char *s; };

struct report {
	const char *name;   /* --report name, JSON key */
	const char *title;  /* table heading */
	const char *note;   /* table format: footnote lines after the rows (NULL: none) */
	const struct col *cols;
	int ncols;
	struct cell *cells; /* nrows x ncols */
	size_t nrows, cap;
};

enum report_fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

/* An empty report named `name` (the --report name and JSON key). */
void report_init(struct report *r, const char *name);
/* Its title and columns, before the first row; cols must outlive r. */
void report_define(struct report *r, const char *title, const struct col *cols, int ncols);
/* Number of columns of a column array: REPORT_NCOLS(my_cols). */
#define REPORT_NCOLS(cols) ((int)(sizeof(cols) / sizeof((cols)[0])))
/* Appends a row and returns its cells (all null); set .d or .s (s is copied). */
struct cell *report_row(struct report *r);
void cell_num(struct cell *c, double v);
void cell_str(struct cell *c, const char *s);
void report_print(FILE *f, const struct report *r, enum report_fmt fmt);
/* Tables t[0..n) with want[i] set (want NULL: all): JSON as one object
 * {"NAME": rows, ...} and a newline, CSV each after a "# NAME" line, text
 * separated by blank lines. */
void report_print_tables(FILE *f, const struct report *t, const int *want, size_t n, enum report_fmt fmt);
void report_free(struct report *r);

#endif
