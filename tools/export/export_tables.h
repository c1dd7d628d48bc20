/* export_tables.h — the tables of the SQLite, Parquet and CSV exports, defined
 * once: nsys-like tables (`nsys export --type sqlite` in spirit; docs/CLI.md
 * "gpuprof export"), their names, columns and SQL types, and the one pass
 * over a trace that makes their rows.  A format is a sink: it is told the
 * tables (in creation order), then given every row, then closed.  So the
 * same SQL runs on what each format writes. */
#ifndef GPUPROF_EXPORT_EXPORT_TABLES_H
#define GPUPROF_EXPORT_EXPORT_TABLES_H

#include <stdint.h>

#include "export/export.h"

/* What a column holds (SQLite's INTEGER, REAL, TEXT). */
enum xt_kind { XT_INT, XT_REAL, XT_TEXT };

struct xt_col {
	const char *name;
	const char *sqltype; /* as in the CREATE TABLE: "INTEGER NOT NULL", "TEXT PRIMARY KEY", ... */
	uint8_t kind;        /* enum xt_kind */
	uint8_t not_null;    /* never NULL: "NOT NULL" or "INTEGER PRIMARY KEY" */
};

struct xt_table {
	const char *name;
	unsigned ncols;
	const struct xt_col *cols;
};

/* One cell of a row.  TEXT is a NUL-terminated string that lives until
 * the sink's row() returns.  A REAL NaN is given as NULL (what SQLite
 * stores for it), so every format holds the same values. */
enum xt_val_kind { XV_NULL, XV_INT, XV_REAL, XV_TEXT };
struct xt_val {
	uint8_t kind; /* enum xt_val_kind; matches the column's kind, or NULL */
	int64_t i;
	double d;
	const char *s;
};

/* A format.  Each returns 0, or -1 with its message printed (the pass
 * then stops and close is called with ok = 0). */
struct xt_sink {
	void *ctx;
	/* the tables, in creation order; the indexes into this array name
	 * them in row().  On failure close is still called (ok = 0) to
	 * undo what was done. */
	int (*open)(void *ctx, const struct xt_table *tables, unsigned ntables);
	/* one row: one value per column of the table.  A key is given once
	 * (PROCESSES: the last record of a process, at the end, in globalPid
	 * order), so a format writes the rows as they come. */
	int (*row)(void *ctx, unsigned table, const struct xt_val *vals);
	/* ok: every row was given (the trace read to its end, or to the
	 * damage that stopped it): make the output whole; else abandon it.
	 * Called once whenever open was called. */
	int (*close)(void *ctx, int ok);
};

/* Reads the trace `in` (o's selection and time base) and gives its tables'
 * rows to the sink; a gpuprof exit code (tool_finish's verdict when all
 * went well: the rows read before a damaged or truncated part are
 * written). */
int export_tables(const char *in, int strict, const struct export_opts *o, const struct xt_sink *sink);

/* The output of the formats that write a file per table (Parquet, CSV):
 * DIR/TABLE.EXT, DIR made if missing.  Each is written under tmp[t]
 * (TABLE.EXT.tmp) and renamed to path[t] when the whole export succeeded;
 * other files in DIR are left alone. */
struct xt_dir {
	unsigned nt;
	char **path, **tmp;
};
/* Makes DIR and the names; 0, or -1 with its message printed. */
int xt_dir_open(struct xt_dir *d, const char *dir, const char *ext, const struct xt_table *tables, unsigned nt);
/* ok: renames the files (0, or -1 with a message); else removes them
 * (-1).  Frees the names. */
int xt_dir_close(struct xt_dir *d, int ok);

#endif
