/* export_parquet.c — the Parquet export: the tables of export_tables.h, one
 * Parquet file per table in a directory (DIR/TABLE.parquet), with the SQLite
 * export's table and column names; INTEGER columns are INT64, REAL DOUBLE,
 * TEXT UTF-8 strings, NOT NULL ones required.  DuckDB, Spark and other
 * engines read the files directly, so the queries written for the SQLite
 * database run on them as they are (docs/CLI.md).  Each file is written
 * under a temporary name and renamed when complete. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/tool.h"
#include "export/export.h"
#include "export/export_tables.h"
#include "export/parquet.h"

/* A table whose later rows replace earlier ones with the same key (its
 * first column): kept until the end, then written in key order, as SQLite
 * returns its INTEGER PRIMARY KEY table.  Few rows (PROCESSES). */
struct keyed {
	u64map at; /* key -> index into rows */
	struct xt_val *rows; /* nrows x ncols, strings owned */
	size_t nrows, crows;
};

struct px {
	const char *dir;
	uint32_t group_rows;
	const struct xt_table *tables;
	unsigned nt;
	pq_writer **w;
	char **path, **tmp;
	struct keyed *keyed; /* per table; used where the verb replaces */
};

static char *join(const char *dir, const char *name, const char *ext)
{
	char *s = xmalloc(strlen(dir) + strlen(name) + strlen(ext) + 2);
	sprintf(s, "%s/%s%s", dir, name, ext);
	return s;
}

static int replaces(const struct xt_table *t) { return strcmp(t->verb, "INSERT") != 0; }

static int px_open(void *ctx, const struct xt_table *tables, unsigned nt)
{
	struct px *p = ctx;
	struct stat st;
	if (mkdir(p->dir, 0777) != 0 && (errno != EEXIST || stat(p->dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
		tool_err("cannot create directory %s: %s", p->dir, errno == EEXIST ? "a file has that name" : strerror(errno));
		return -1;
	}
	p->tables = tables;
	p->nt = nt;
	p->w = xcalloc(nt, sizeof(*p->w));
	p->path = xcalloc(nt, sizeof(*p->path));
	p->tmp = xcalloc(nt, sizeof(*p->tmp));
	p->keyed = xcalloc(nt, sizeof(*p->keyed));
	for (unsigned t = 0; t < nt; t++) {
		const struct xt_table *tb = &tables[t];
		struct pq_column *cols = xcalloc(tb->ncols ? tb->ncols : 1, sizeof(*cols));
		for (unsigned i = 0; i < tb->ncols; i++) {
			const struct xt_col *c = &tb->cols[i];
			cols[i].name = c->name;
			cols[i].type = c->kind == XT_INT ? PQ_INT64 : c->kind == XT_REAL ? PQ_DOUBLE : PQ_STRING;
			cols[i].required = c->not_null;
		}
		p->path[t] = join(p->dir, tb->name, ".parquet");
		p->tmp[t] = join(p->dir, tb->name, ".parquet.tmp");
		p->w[t] = pq_open(p->tmp[t], cols, tb->ncols, p->group_rows);
		free(cols);
		if (!p->w[t]) {
			tool_err("cannot write %s: %s", p->tmp[t], strerror(errno));
			return -1;
		}
		if (replaces(tb)) u64map_init(&p->keyed[t].at);
	}
	return 0;
}

static int put_row(struct px *p, unsigned t, const struct xt_val *v)
{
	pq_writer *w = p->w[t];
	for (unsigned i = 0; i < p->tables[t].ncols; i++) {
		switch (v[i].kind) {
		case XV_INT: pq_int64(w, i, v[i].i); break;
		case XV_REAL: pq_double(w, i, v[i].d); break;
		case XV_TEXT: pq_string(w, i, v[i].s); break;
		default: pq_null(w, i);
		}
	}
	if (pq_end_row(w)) {
		tool_err("cannot write %s: %s", p->tmp[t], strerror(errno));
		return -1;
	}
	return 0;
}

static void keyed_put(struct keyed *k, unsigned ncols, const struct xt_val *v)
{
	uint64_t *slot = u64map_get(&k->at, (uint64_t)v[0].i, MAP_FIND);
	struct xt_val *row;
	if (slot) {
		row = &k->rows[*slot * ncols];
		for (unsigned i = 0; i < ncols; i++)
			if (row[i].kind == XV_TEXT) free((char *)row[i].s);
	} else {
		*u64map_get(&k->at, (uint64_t)v[0].i, MAP_INSERT) = k->nrows;
		vec_reserve((void **)&k->rows, &k->crows, (k->nrows + 1) * ncols, sizeof(*k->rows));
		row = &k->rows[k->nrows++ * ncols];
	}
	for (unsigned i = 0; i < ncols; i++) {
		row[i] = v[i];
		if (v[i].kind == XV_TEXT) row[i].s = xstrdup(v[i].s);
	}
}

static int px_row(void *ctx, unsigned t, const struct xt_val *v)
{
	struct px *p = ctx;
	if (replaces(&p->tables[t])) {
		keyed_put(&p->keyed[t], p->tables[t].ncols, v);
		return 0;
	}
	return put_row(p, t, v);
}

/* rows by their first value (qsort's element is a whole row) */
static int by_key(const void *a, const void *b)
{
	int64_t x = ((const struct xt_val *)a)->i, y = ((const struct xt_val *)b)->i;
	return x < y ? -1 : x > y;
}

/* A keyed table's rows, in key order. */
static int keyed_flush(struct px *p, unsigned t)
{
	struct keyed *k = &p->keyed[t];
	unsigned n = p->tables[t].ncols;
	int rc = 0;
	if (k->nrows) qsort(k->rows, k->nrows, n * sizeof(*k->rows), by_key);
	for (size_t r = 0; r < k->nrows && !rc; r++) rc = put_row(p, t, &k->rows[r * n]);
	return rc;
}

static void keyed_free(struct keyed *k, unsigned ncols)
{
	for (size_t i = 0; i < k->nrows * ncols; i++)
		if (k->rows[i].kind == XV_TEXT) free((char *)k->rows[i].s);
	free(k->rows);
	u64map_free(&k->at);
}

static int px_close(void *ctx, int ok)
{
	struct px *p = ctx;
	int rc = ok ? 0 : -1;
	for (unsigned t = 0; t < p->nt && p->w; t++) {
		if (!p->w[t]) continue;
		if (replaces(&p->tables[t])) {
			if (!rc) rc = keyed_flush(p, t);
			keyed_free(&p->keyed[t], p->tables[t].ncols);
		}
		if (pq_close(p->w[t], rc != 0) && !rc) {
			tool_err("cannot write %s: %s", p->tmp[t], strerror(errno));
			rc = -1;
		}
	}
	/* every file complete: give them their names; else none */
	for (unsigned t = 0; t < p->nt && p->w; t++) {
		if (!p->w[t]) continue;
		if (!rc && rename(p->tmp[t], p->path[t]) != 0) {
			tool_err("cannot write %s: %s", p->path[t], strerror(errno));
			rc = -1;
		}
		if (rc) unlink(p->tmp[t]);
	}
	for (unsigned t = 0; t < p->nt && p->w; t++) {
		free(p->path[t]);
		free(p->tmp[t]);
	}
	free(p->w);
	free(p->path);
	free(p->tmp);
	free(p->keyed);
	p->w = NULL;
	return rc;
}

int export_parquet(const char *in, const char *dir, int strict, const struct export_opts *o)
{
	struct px p;
	memset(&p, 0, sizeof(p));
	p.dir = dir;
	p.group_rows = o && o->row_group ? o->row_group : EXPORT_PARQUET_ROW_GROUP;
	struct xt_sink sink = { &p, px_open, px_row, px_close };
	return export_tables(in, strict, o, &sink);
}
