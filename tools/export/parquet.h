/* parquet.h — a Parquet file writer (apache/parquet-format: README.md and
 * src/main/thrift/parquet.thrift), enough for flat tables: the columns of
 * export_tables.h, XT_INT as INT64, XT_REAL as DOUBLE and XT_TEXT as UTF-8
 * strings, each required (not_null) or optional (NULLs).
 *
 * Rows are appended one at a time and written in row groups of a fixed
 * number of rows; memory holds one row group's column chunks, compressed
 * (plus one open page per column), whatever the number of rows.  Each
 * column chunk is a run of version-1 data pages of at most PQ_PAGE_ROWS
 * values (or ~1 MiB of values), PLAIN-encoded and ZSTD-compressed, their
 * definition levels RLE/bit-packed; the chunk's statistics give its null
 * count and, for INT64, its min and max (so readers skip row groups by
 * them).  The footer (FileMetaData, Thrift compact protocol) is written by
 * pq_close.  String values that are not valid UTF-8 are written with
 * U+FFFD for each byte that does not begin a valid sequence (the STRING
 * logical type requires UTF-8; the same rule as json_str). */
#ifndef GPUPROF_EXPORT_PARQUET_H
#define GPUPROF_EXPORT_PARQUET_H

#include <stdint.h>

#include "export/export_tables.h"

enum { PQ_PAGE_ROWS = 8192 };

typedef struct pq_writer pq_writer;

/* Creates path (replaced if it exists) for the columns of table t (kept by
 * pointer until pq_close); rows_per_group rows per row group.  NULL with
 * errno set when the file cannot be created. */
pq_writer *pq_open(const char *path, const struct xt_table *t, uint32_t rows_per_group);

/* Appends a row, v: one value per column (NULL, or of the column's kind; a
 * NULL in a required column is a bug of the caller: aborts); a full row
 * group goes to the file.  0, or -1 when writing failed (errno set; every
 * later call fails too). */
int pq_row(pq_writer *w, const struct xt_val *v);

/* Writes the last row group and the footer, closes and frees; 0, or -1
 * when anything failed to be written (errno set).  abandon: free without
 * finishing the file (it is then not a Parquet file). */
int pq_close(pq_writer *w, int abandon);

#endif
