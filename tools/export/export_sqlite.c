/* export_sqlite.c — the SQLite export: the tables of export_tables.h in one
 * database, so queries written for nsys databases mostly carry over.  One
 * transaction, prepared statements, indexes created after the bulk
 * insert. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tool.h"
#include "export/export.h"
#include "export/export_tables.h"

static const char indexes[] =
	"CREATE INDEX idx_kernel_corr ON CUPTI_ACTIVITY_KIND_KERNEL(correlationId);"
	"CREATE INDEX idx_memcpy_corr ON CUPTI_ACTIVITY_KIND_MEMCPY(correlationId);"
	"CREATE INDEX idx_memset_corr ON CUPTI_ACTIVITY_KIND_MEMSET(correlationId);"
	"CREATE INDEX idx_runtime_corr ON CUPTI_ACTIVITY_KIND_RUNTIME(correlationId);"
	"CREATE INDEX idx_driver_corr ON CUPTI_ACTIVITY_KIND_DRIVER(correlationId);"
	"CREATE INDEX idx_nvtx_start ON NVTX_EVENTS(start);"
	"CREATE INDEX idx_callchains_id ON CUDA_CALLCHAINS(id);";

struct sq {
	const char *out;
	sqlite3 *db;
	sqlite3_stmt **st; /* one INSERT per table */
	unsigned nt;
};

static int exec(struct sq *q, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(q->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		tool_err("sqlite: %s", msg ? msg : sqlite3_errmsg(q->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* The CREATE TABLE statement of a table, or (insert) its INSERT statement. */
static char *table_sql(const struct xt_table *t, int insert)
{
	size_t cap = 64 + strlen(t->name), len;
	for (unsigned i = 0; i < t->ncols; i++) cap += strlen(t->cols[i].name) + strlen(t->cols[i].sqltype) + 4;
	char *s = xmalloc(cap);
	len = (size_t)sprintf(s, insert ? "INSERT INTO %s VALUES(" : "CREATE TABLE %s(", t->name);
	for (unsigned i = 0; i < t->ncols; i++)
		len += (size_t)(insert ? sprintf(s + len, i ? ",?" : "?")
				       : sprintf(s + len, "%s%s %s", i ? ", " : "", t->cols[i].name, t->cols[i].sqltype));
	strcpy(s + len, insert ? ")" : ");");
	return s;
}

static int sq_open(void *ctx, const struct xt_table *tables, unsigned nt)
{
	struct sq *q = ctx;
	if (unlink(q->out) != 0 && errno != ENOENT)
		return tool_fail(-1, "cannot replace %s: %s", q->out, strerror(errno));
	if (sqlite3_open(q->out, &q->db) != SQLITE_OK)
		return tool_fail(-1, "cannot write %s: %s", q->out,
				 q->db ? sqlite3_errmsg(q->db) : "sqlite3_open failed");
	if (exec(q, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"))
		return -1;
	q->st = xcalloc(nt, sizeof(*q->st));
	q->nt = nt;
	for (unsigned t = 0; t < nt; t++) {
		char *sql = table_sql(&tables[t], 0);
		int bad = exec(q, sql);
		free(sql);
		if (bad) return -1;
		sql = table_sql(&tables[t], 1);
		bad = sqlite3_prepare_v2(q->db, sql, -1, &q->st[t], NULL) != SQLITE_OK;
		free(sql);
		if (bad) return tool_fail(-1, "sqlite: %s", sqlite3_errmsg(q->db));
	}
	return exec(q, "BEGIN");
}

static int sq_row(void *ctx, unsigned t, const struct xt_val *v)
{
	struct sq *q = ctx;
	sqlite3_stmt *st = q->st[t];
	int n = sqlite3_bind_parameter_count(st);
	for (int i = 0; i < n; i++) {
		switch (v[i].kind) {
		case XV_INT: sqlite3_bind_int64(st, i + 1, v[i].i); break;
		case XV_REAL: sqlite3_bind_double(st, i + 1, v[i].d); break;
		case XV_TEXT: sqlite3_bind_text(st, i + 1, v[i].s, -1, SQLITE_TRANSIENT); break;
		default: sqlite3_bind_null(st, i + 1);
		}
	}
	int ok = sqlite3_step(st) == SQLITE_DONE;
	sqlite3_reset(st);
	if (!ok) tool_err("cannot write %s: %s", q->out, sqlite3_errmsg(q->db));
	return ok ? 0 : -1;
}

static int sq_close(void *ctx, int ok)
{
	struct sq *q = ctx;
	int rc = ok && !exec(q, indexes) && !exec(q, "COMMIT") ? 0 : -1;
	for (unsigned t = 0; t < q->nt; t++)
		sqlite3_finalize(q->st[t]);
	free(q->st);
	q->st = NULL;
	if (q->db && sqlite3_close(q->db) != SQLITE_OK && rc == 0) {
		tool_err("cannot write %s", q->out);
		rc = -1;
	}
	q->db = NULL;
	return rc;
}

int export_sqlite(const char *in, const char *out, int strict, const struct export_opts *o)
{
	struct sq q = { out, NULL, NULL, 0 };
	struct xt_sink sink = { &q, sq_open, sq_row, sq_close };
	return export_tables(in, strict, o, &sink);
}
