/* export_parquet.c — the Parquet export: the tables of export_tables.h, one
 * Parquet file per table in a directory (DIR/TABLE.parquet), with the SQLite
 * export's table and column names; INTEGER columns are INT64, REAL DOUBLE,
 * TEXT UTF-8 strings, NOT NULL ones required.  DuckDB, Spark and other
 * engines read the files directly, so the queries written for the SQLite
 * database run on them as they are (docs/CLI.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/tool.h"
#include "export/export.h"
#include "export/export_tables.h"
#include "export/parquet.h"

struct px {
	const char *dir;
	uint32_t group_rows;
	struct xt_dir d;
	pq_writer **w;
};

static int px_open(void *ctx, const struct xt_table *tables, unsigned nt)
{
	struct px *p = ctx;
	if (xt_dir_open(&p->d, p->dir, ".parquet", tables, nt)) return -1;
	p->w = xcalloc(nt, sizeof(*p->w));
	for (unsigned t = 0; t < nt; t++)
		if (!(p->w[t] = pq_open(p->d.tmp[t], &tables[t], p->group_rows)))
			return tool_fail(-1, "cannot write %s: %s", p->d.tmp[t], strerror(errno));
	return 0;
}

static int px_row(void *ctx, unsigned t, const struct xt_val *v)
{
	struct px *p = ctx;
	if (pq_row(p->w[t], v)) return tool_fail(-1, "cannot write %s: %s", p->d.tmp[t], strerror(errno));
	return 0;
}

static int px_close(void *ctx, int ok)
{
	struct px *p = ctx;
	int rc = ok ? 0 : -1;
	for (unsigned t = 0; t < p->d.nt && p->w; t++) {
		if (p->w[t] && pq_close(p->w[t], rc != 0) && !rc) {
			tool_err("cannot write %s: %s", p->d.tmp[t], strerror(errno));
			rc = -1;
		}
	}
	free(p->w);
	p->w = NULL;
	return xt_dir_close(&p->d, rc == 0);
}

int export_parquet(const char *in, const char *dir, int strict, const struct export_opts *o)
{
	struct px p = { .dir = dir, .group_rows = o && o->row_group ? o->row_group : EXPORT_PARQUET_ROW_GROUP };
	struct xt_sink sink = { &p, px_open, px_row, px_close };
	return export_tables(in, strict, o, &sink);
}
