/* report.h — a table of cells printed as an aligned text table (nsys style,
 * thousands separators), CSV or JSON.  Used by `gpuprof stats`.
 *
 * Machine output (CSV, JSON) is lossless: integers as integers, other
 * numbers unrounded (the shortest text that reads back as the same double),
 * every column; the text table rounds, shows durations in the unit asked
 * for, hides the columns marked for it and fits a width: prose columns
 * become numbered notes under the table, names shorten (common/util.h
 * name_fit), and what the numbers alone cannot fit goes on in another block
 * of lines with the names again; numbers are never cut. */
#ifndef GPUPROF_COMMON_REPORT_H
#define GPUPROF_COMMON_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/util.h"

enum col_kind { COL_STR, COL_INT, COL_F1, COL_F3, COL_ID /* integer, no separators */,
		COL_G3 /* 3 significant digits, exponent when small (a p-value) */ };
/* Where a column is printed (struct col .where); 0: everywhere.
 * COL_PROSE: everywhere, a sentence in each cell ("Meaning"): in a table
 * too wide for its width, the cells are references "[N]" to the texts,
 * printed once each under the table, not cut. */
enum col_where { COL_EVERYWHERE = 0, COL_TABLE_ONLY = 1, COL_MACHINE_ONLY = 2, COL_PROSE = 3 };
/* A column whose heading ends in "(ns)" holds durations in ns: the table
 * shows them in the unit of struct report_style.  A column with a NULL
 * heading does not exist (a shared column set a report does not have). */
struct col { const char *head; const char *key; enum col_kind kind; enum col_where where; };
struct cell { int null; double d; char *s; };

#define REPORT_MAX_COLS 64
/* A table's encoded rows held in memory; the rest go to a file. */
#define REPORT_ROWS_MEM (2u << 20)

struct report {
	const char *name;   /* --report name, JSON key */
	const char *title;  /* table heading */
	const char *note;   /* table format: footnote lines after the rows (NULL: none) */
	const struct col *cols;
	int ncols;
	uint64_t table_hidden; /* bit j: column j not in the table (report_hide_uniform) */
	/* The rows (report.c): all but the last one encoded in rows (a few
	 * bytes a cell: a table of many rows costs what its text costs, not 24
	 * bytes a cell and a malloc a string; past REPORT_ROWS_MEM bytes in a
	 * file, common/spill.h), the last one in cells (ncols), as report_row
	 * handed it out.  Read them only through report_print. */
	struct spill *rows;
	struct bytes enc;   /* the row being encoded */
	size_t nenc;        /* rows encoded in rows */
	struct cell *cells; /* row nenc (the last), when nrows > nenc */
	size_t nrows;
};

enum report_fmt { FMT_TABLE, FMT_CSV, FMT_JSON };
/* Unit of the duration columns in a table. */
enum time_unit { TU_NS, TU_US, TU_MS, TU_S };

/* How report_print prints. */
struct report_style {
	enum report_fmt fmt;
	/* table: the width its lines fit (see the top; names never below
	 * REPORT_MIN_NAME characters or their heading); 0: no limit */
	int width;
	enum time_unit unit; /* table: unit of the "(ns)" columns */
	/* table: at most this many rows, then a line " ... N more rows (--rows
	 * all)"; 0: every row (CSV and JSON always have every row) */
	size_t max_rows;
	/* report_print_tables' CSV: a "# NAME" line before each table when
	 * it prints at least this many (0: always) */
	int csv_heads_from;
};
#define REPORT_MIN_NAME 16

/* An empty report named `name` (the --report name and JSON key). */
void report_init(struct report *r, const char *name);
/* Its title and columns, before the first row; cols must outlive r. */
void report_define(struct report *r, const char *title, const struct col *cols, int ncols);
/* Number of columns of a column array: REPORT_NCOLS(my_cols). */
#define REPORT_NCOLS(cols) ((int)(sizeof(cols) / sizeof((cols)[0])))
/* Appends a row and returns its cells (all null); set .d or .s (s is
 * copied).  The cells are valid until the next report_row of r. */
struct cell *report_row(struct report *r);
void cell_num(struct cell *c, double v);
void cell_str(struct cell *c, const char *s);
/* After the rows: column `col` leaves the table (not CSV/JSON) when every
 * row holds the same value in it (a PID column of a one-process trace). */
void report_hide_uniform(struct report *r, int col);
void report_print(FILE *f, const struct report *r, const struct report_style *style);
/* Tables t[0..n) with want[i] set (want NULL: all): JSON as one object
 * {"NAME": rows, ...} and a newline, CSV each after a "# NAME" line
 * (csv_heads_from), text separated by blank lines. */
void report_print_tables(FILE *f, const struct report *t, const int *want, size_t n,
			 const struct report_style *style);
void report_free(struct report *r);
/* Text (lines ending in newlines) in lines of at most `width` bytes (0: as
 * it is): a longer line breaks at its last space that fits, the rest
 * indented two more than it; a word longer than a line is cut.  The prose
 * around a command's tables (notes, headlines, summaries). */
void report_text(FILE *f, const char *text, int width);
/* Words s[0..n) (no newline) in lines of at most `width` bytes (0: one
 * line), the first indented `first`, the others `cont` (at most half the
 * width): broken at the last space that fits, a word longer than a line cut
 * at the width. */
void report_flow(FILE *f, const char *s, size_t n, size_t first, size_t cont, int width);

/* --format's "table", "csv", "json" -> *fmt: 0, or -1 with the message
 * printed. */
int report_fmt_parse(const char *name, enum report_fmt *fmt);
/* "ns", "us", "ms", "s" -> enum time_unit; -1 for an unknown name. */
int time_unit_parse(const char *name);

#endif
