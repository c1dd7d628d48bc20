/* export_sqlite.c — SQLite export with tables in the spirit of `nsys export
 * --type sqlite`, so queries written for nsys databases mostly carry over.
 * Strings live in StringIds and are referenced by id; globalTid = pid<<24|tid
 * and globalPid = pid<<24 (nsys packs them similarly).  One transaction,
 * prepared statements, indexes created after the bulk insert.  Call stacks
 * (callchainId of the API tables) go to CUDA_CALLCHAINS as nsys has it
 * (stackDepth 0 = innermost), symbolised like the other exports. */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/stacks.h"
#include "common/tool.h"
#include "export/export.h"

/* Tables that are not one row per record (strings, call stacks, enums);
 * the record tables (below) are created between these two parts. */
static const char schema_head[] =
	"CREATE TABLE META_DATA(name TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);";
static const char schema_tail[] =
	"CREATE TABLE ENUM_NSYS_EVENT_TYPE(id INTEGER PRIMARY KEY, name TEXT);"
	"INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(34,'NvtxMark'),(59,'NvtxPushPopRange'),(60,'NvtxStartEndRange');"
	"CREATE TABLE CUDA_CALLCHAINS(id INTEGER NOT NULL, stackDepth INTEGER NOT NULL, symbol INTEGER NOT NULL);"
	"CREATE TABLE CALLCHAIN_SITES(id INTEGER PRIMARY KEY, site INTEGER NOT NULL);"
	"CREATE TABLE ENUM_CUDA_MEMCPY_OPER(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(0,'unknown','Unknown'),(1,'HtoD','Host-to-Device'),"
	"(2,'DtoH','Device-to-Host'),(3,'HtoA','Host-to-Array'),(4,'AtoH','Array-to-Host'),"
	"(5,'AtoA','Array-to-Array'),(6,'AtoD','Array-to-Device'),(7,'DtoA','Device-to-Array'),"
	"(8,'DtoD','Device-to-Device'),(9,'HtoH','Host-to-Host'),(10,'PtoP','Peer-to-Peer');";

static const char indexes[] =
	"CREATE INDEX idx_kernel_corr ON CUPTI_ACTIVITY_KIND_KERNEL(correlationId);"
	"CREATE INDEX idx_memcpy_corr ON CUPTI_ACTIVITY_KIND_MEMCPY(correlationId);"
	"CREATE INDEX idx_memset_corr ON CUPTI_ACTIVITY_KIND_MEMSET(correlationId);"
	"CREATE INDEX idx_runtime_corr ON CUPTI_ACTIVITY_KIND_RUNTIME(correlationId);"
	"CREATE INDEX idx_driver_corr ON CUPTI_ACTIVITY_KIND_DRIVER(correlationId);"
	"CREATE INDEX idx_nvtx_start ON NVTX_EVENTS(start);"
	"CREATE INDEX idx_callchains_id ON CUDA_CALLCHAINS(id);";

/* ------------------------------------------------------------ record tables
 * One row per record, the columns following the field table
 * (libprof/common/gp_fields.h): a table lists its nsys-named columns with
 * the field each reads and how (style); `hide` names the fields not
 * exported on purpose.  Every other field of the table (one added after
 * this was written) becomes a column of its own, named as in the table,
 * after these: the CREATE TABLE, the INSERT and the binding are made from
 * the list.  Quirks kept from the nsys layout: RUNTIME and DRIVER share
 * one column list (the record's domain picks the table), NVTX_EVENTS holds
 * ranges and marks (marks bind its columns from their own list, NULL for
 * columns from fields marks do not have). */
enum qstyle {
	Q_DEF,      /* by kind: a string id -> its StringIds id; else the number
		       (signed ones sign-extended); an array field: element idx */
	Q_TEXT,     /* a string id's text */
	Q_SID0,     /* StringIds id, 0 stays 0 */
	Q_GPID,     /* globalPid = pid << 24 of the record's process */
	Q_PID,      /* the record's process */
	Q_TID,      /* a tid; a SRC_TID tid of 0 -> the source's */
	Q_GTID,     /* globalTid = pid << 24 | tid (Q_TID of field) */
	Q_GTID_END, /* NVTX end thread: field, 0 -> the range's (field2) */
	Q_CONST,    /* value */
	Q_NULL,
	Q_FLAG,     /* (field & value) != 0 */
	Q_NAME,     /* an enum's name (name()) as text */
	Q_HEX,      /* bytes as hex text */
	Q_KNAME,    /* kernel name's StringIds id: value 0 short, 1 demangled, 2 mangled */
	Q_EVTYPE,   /* NVTX eventType of a range kind: 60 start/end, 59 push/pop */
	Q_DOUBLE,   /* counter value as REAL, by the record's kind */
};

struct qcol {
	const char *col, *sqltype;
	const char *field, *field2;
	uint8_t style;
	int64_t value;                 /* Q_CONST, Q_FLAG mask, Q_KNAME, Q_DEF array element */
	const char *(*name)(uint32_t); /* Q_NAME */
};
#define Q(col, sqltype, field) { col, sqltype, field, NULL, Q_DEF, 0, NULL }
#define QS(col, sqltype, field, style) { col, sqltype, field, NULL, style, 0, NULL }
#define QV(col, sqltype, field, style, value) { col, sqltype, field, NULL, style, value, NULL }
#define Q2(col, sqltype, field, field2, style) { col, sqltype, field, field2, style, 0, NULL }
#define QN(col, sqltype, field, name) { col, sqltype, field, NULL, Q_NAME, 0, name }
#define Q_END { NULL, NULL, NULL, NULL, 0, 0, NULL }
#define I "INTEGER"
#define INN "INTEGER NOT NULL"

static const struct qcol q_process[] = {
	QS("globalPid", "INTEGER PRIMARY KEY", NULL, Q_GPID), Q("pid", I, "pid"), Q("ppid", I, "ppid"),
	QS("name", "TEXT", "name_id", Q_TEXT), QS("host", "TEXT", "host_id", Q_TEXT), Q("rank", I, "rank"),
	Q("start", I, "start_ns"), Q_END };
static const char *const q_process_hide[] = { "settings_id", NULL };
static const struct qcol q_thread[] = {
	Q("nameId", I, "name_id"), QV("priority", I, NULL, Q_CONST, 0), QS("globalTid", I, "tid", Q_GTID),
	Q("pid", I, "pid"), Q("tid", I, "tid"), Q_END };
static const struct qcol q_device[] = {
	Q("id", I, "device_id"), QS("globalPid", I, NULL, Q_GPID), QS("name", "TEXT", "name_id", Q_TEXT),
	Q("totalMemory", I, "global_mem_bytes"), Q("smCount", I, "sm_count"), Q("computeMajor", I, "cc_major"),
	Q("computeMinor", I, "cc_minor"), Q("maxThreadsPerBlock", I, "max_threads_per_block"),
	Q("threadsPerWarp", I, "warp_size"), Q("clockRate", I, "clock_khz"), Q("memoryClockRate", I, "mem_clock_khz"),
	Q("memoryBusWidth", I, "mem_bus_width"), Q("maxRegistersPerSm", I, "max_regs_per_sm"),
	Q("maxShmemPerBlock", I, "max_smem_per_block"), Q("busLocation", I, "pci_bus_id"),
	QS("uuid", "TEXT", "uuid", Q_HEX), Q_END };
static const char *const q_device_hide[] = { "max_threads_per_sm", "max_blocks_per_sm", "max_smem_per_sm", NULL };
/* the first columns of nsys's kernel, memcpy and memset tables */
#define Q_GPU_WORK \
	Q("start", INN, "start_ns"), Q("end", INN, "end_ns"), Q("deviceId", I, "device_id"), \
	Q("contextId", I, "context_id"), Q("streamId", I, "stream_id"), Q("correlationId", I, "correlation_id"), \
	QS("globalPid", I, NULL, Q_GPID)
static const struct qcol q_kernel[] = {
	Q_GPU_WORK, QV("gridX", I, "grid", Q_DEF, 0), QV("gridY", I, "grid", Q_DEF, 1),
	QV("gridZ", I, "grid", Q_DEF, 2), QV("blockX", I, "block", Q_DEF, 0), QV("blockY", I, "block", Q_DEF, 1),
	QV("blockZ", I, "block", Q_DEF, 2), Q("registersPerThread", I, "registers"),
	Q("staticSharedMemory", I, "static_smem"), Q("dynamicSharedMemory", I, "dynamic_smem"),
	Q("localMemoryPerThread", I, "local_mem"), Q("launchType", I, "launch_type"),
	QV("shortName", I, "name_id", Q_KNAME, 0), QV("demangledName", I, "name_id", Q_KNAME, 1),
	QV("mangledName", I, "name_id", Q_KNAME, 2), Q("graphId", I, "graph_id"), Q("graphNodeId", I, "graph_node_id"),
	Q_END };
static const struct qcol q_memcpy[] = {
	Q_GPU_WORK, Q("bytes", I, "bytes"), Q("copyKind", I, "copy_kind"),
	Q("srcKind", I, "src_kind"), Q("dstKind", I, "dst_kind"), Q("srcDeviceId", I, "src_device"),
	Q("dstDeviceId", I, "dst_device"), QV("async", I, "flags", Q_FLAG, 1), Q("graphNodeId", I, "graph_node_id"),
	Q_END };
static const struct qcol q_memset[] = {
	Q_GPU_WORK, Q("value", I, "value"), Q("bytes", I, "bytes"), Q("memKind", I, "mem_kind"),
	Q("graphNodeId", I, "graph_node_id"), Q_END };
static const char *const q_memset_hide[] = { "flags", NULL };
static const struct qcol q_api[] = {
	Q("start", INN, "start_ns"), Q("end", INN, "end_ns"), QS("globalTid", I, "tid", Q_GTID),
	QS("pid", I, NULL, Q_PID), QS("tid", I, "tid", Q_TID), Q("correlationId", I, "correlation_id"),
	Q("nameId", I, "name_id"), Q("cbid", I, "cbid"), Q("returnValue", I, "status"), Q("callchainId", I, "stack_id"),
	Q_END };
static const char *const q_api_hide[] = { "domain", NULL };   /* picks RUNTIME or DRIVER */
static const struct qcol q_sync[] = {
	Q("start", INN, "start_ns"), Q("end", INN, "end_ns"), QS("globalPid", I, NULL, Q_GPID),
	Q("correlationId", I, "correlation_id"), Q("syncType", I, "type"), Q("contextId", I, "context_id"),
	Q("streamId", I, "stream_id"), Q("eventId", I, "event_id"), Q_END };
static const struct qcol q_memory[] = {
	Q("start", INN, "ts_ns"), QS("globalPid", I, NULL, Q_GPID), Q("correlationId", I, "correlation_id"),
	Q("deviceId", I, "device_id"), Q("contextId", I, "context_id"), Q("streamId", I, "stream_id"),
	Q("address", I, "address"), Q("bytes", I, "bytes"), Q("memKind", I, "mem_kind"),
	Q("memoryOperationType", I, "op"), Q_END };
static const struct qcol q_nvtx_range[] = {
	Q("start", INN, "start_ns"), Q("end", I, "end_ns"), QS("eventType", INN, "kind", Q_EVTYPE),
	Q("rangeId", I, "range_id"), Q("category", I, "category"), Q("color", I, "color"),
	QS("text", "TEXT", "message_id", Q_TEXT), QS("globalTid", I, "tid", Q_GTID),
	Q2("endGlobalTid", I, "end_tid", "tid", Q_GTID_END), Q("textId", I, "message_id"),
	QS("domainId", I, "domain_id", Q_SID0), Q("depth", I, "depth"), Q("int64Value", I, "payload"),
	QV("unterminated", I, "flags", Q_FLAG, GP_NVTX_UNTERMINATED), Q_END };
/* the same columns, for marks */
static const struct qcol q_nvtx_mark[] = {
	Q("start", INN, "ts_ns"), QS("end", I, NULL, Q_NULL), QV("eventType", INN, NULL, Q_CONST, 34),
	QV("rangeId", I, NULL, Q_CONST, 0), Q("category", I, "category"), Q("color", I, "color"),
	QS("text", "TEXT", "message_id", Q_TEXT), QS("globalTid", I, "tid", Q_GTID),
	QS("endGlobalTid", I, NULL, Q_NULL), Q("textId", I, "message_id"), QS("domainId", I, "domain_id", Q_SID0),
	QV("depth", I, NULL, Q_CONST, 0), QV("int64Value", I, NULL, Q_CONST, 0), QV("unterminated", I, NULL, Q_CONST, 0),
	Q_END };
static const struct qcol q_counter[] = {
	Q("start", INN, "ts_ns"), QS("globalPid", I, NULL, Q_GPID), Q("deviceId", I, "device_id"),
	Q("nameId", I, "name_id"), Q2("value", "REAL", "kind", "value", Q_DOUBLE), Q_END };
static const struct qcol q_dropped[] = {
	Q("start", I, "ts_ns"), QS("globalPid", I, NULL, Q_GPID), Q("count", I, "count"),
	QN("source", "TEXT", "where", drop_where_name), Q("sourceId", I, "source_id"), Q_END };

enum {
	T_PROC, T_THREAD, T_GPU, T_KERN, T_MEMCPY, T_MEMSET, T_RUNTIME, T_DRIVER, T_SYNC, T_MEMORY, T_NVTX,
	T_COUNTER, T_DROPPED, T_COUNT
};
/* In creation order (the database lists them so). */
static const struct qtable {
	const char *name, *verb;
	uint32_t type;
	const struct qcol *cols;
	const char *const *hide;
} qtables[T_COUNT] = {
	[T_PROC] = { "PROCESSES", "INSERT OR REPLACE", GP_REC_PROCESS, q_process, q_process_hide },
	[T_THREAD] = { "ThreadNames", "INSERT", GP_REC_THREAD, q_thread, NULL },
	[T_GPU] = { "TARGET_INFO_GPU", "INSERT", GP_REC_DEVICE, q_device, q_device_hide },
	[T_KERN] = { "CUPTI_ACTIVITY_KIND_KERNEL", "INSERT", GP_REC_KERNEL, q_kernel, NULL },
	[T_MEMCPY] = { "CUPTI_ACTIVITY_KIND_MEMCPY", "INSERT", GP_REC_MEMCPY, q_memcpy, NULL },
	[T_MEMSET] = { "CUPTI_ACTIVITY_KIND_MEMSET", "INSERT", GP_REC_MEMSET, q_memset, q_memset_hide },
	[T_RUNTIME] = { "CUPTI_ACTIVITY_KIND_RUNTIME", "INSERT", GP_REC_API, q_api, q_api_hide },
	[T_DRIVER] = { "CUPTI_ACTIVITY_KIND_DRIVER", "INSERT", GP_REC_API, q_api, q_api_hide },
	[T_SYNC] = { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "INSERT", GP_REC_SYNC, q_sync, NULL },
	[T_MEMORY] = { "CUDA_GPU_MEMORY_USAGE_EVENTS", "INSERT", GP_REC_MEMORY, q_memory, NULL },
	[T_NVTX] = { "NVTX_EVENTS", "INSERT", GP_REC_NVTX_RANGE, q_nvtx_range, NULL },
	[T_COUNTER] = { "COUNTERS", "INSERT", GP_REC_COUNTER, q_counter, NULL },
	[T_DROPPED] = { "DROPPED", "INSERT", GP_REC_DROPPED, q_dropped, NULL },
};

/* A column list resolved against the table once. */
struct rq { const struct qcol *c; const struct gp_field *f, *f2; };
struct qview {
	struct rq *cols;              /* the list's, then one per other field */
	unsigned n;
	sqlite3_stmt *st;
};

enum { S_STR, S_CHAIN, S_SITE, S_COUNT };
static const char *const stmt_sql[S_COUNT] = {
	[S_STR] = "INSERT INTO StringIds VALUES(?,?)",
	[S_CHAIN] = "INSERT INTO CUDA_CALLCHAINS VALUES(?,?,?)",
	[S_SITE] = "INSERT INTO CALLCHAIN_SITES VALUES(?,?)",
};

struct sx {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	struct qview view[T_COUNT];
	struct qview mark;  /* NVTX marks into T_NVTX's statement */
	gp_reader *r;
	uint64_t base;      /* times count from it: the trace start, or 0 (--abs-time) */
	strmap strs;        /* text -> our StringIds id */
	int64_t next_id;
	u64map id_cache;    /* trace string id -> our id */
	u64map kname;       /* trace kernel name id -> index into knames */
	int64_t (*knames)[3]; size_t nk, ck; /* short, demangled, mangled */
	struct stacks *stacks;
	u64map chains_done; /* stack ids written to CUDA_CALLCHAINS */
	int err;
};

static int64_t sid(struct sx *x, const char *s)
{
	int is_new;
	size_t *slot = strmap_get(&x->strs, s ? s : "", &is_new);
	if (is_new) {
		*slot = (size_t)++x->next_id;
		sqlite3_stmt *st = x->st[S_STR];
		sqlite3_bind_int64(st, 1, (int64_t)*slot);
		sqlite3_bind_text(st, 2, s ? s : "", -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
		sqlite3_reset(st);
	}
	return (int64_t)*slot;
}

/* string id from the trace -> StringIds id (NULL for id 0) */
static int64_t tsid(struct sx *x, uint32_t id)
{
	uint64_t *s = u64map_get(&x->id_cache, id, MAP_FIND);
	if (s) return (int64_t)*s;
	int64_t v = sid(x, tool_str(x->r, id));
	*u64map_get(&x->id_cache, id, MAP_INSERT) = (uint64_t)v;
	return v;
}

/* Binds the given int64 values to params 1..n and steps. */
static void run_ints(struct sx *x, int which, int n, const int64_t *v)
{
	sqlite3_stmt *st = x->st[which];
	for (int i = 0; i < n; i++)
		sqlite3_bind_int64(st, i + 1, v[i]);
	if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

static int64_t gtid(uint32_t pid, uint32_t tid) { return ((int64_t)pid << 24) | tid; }
static int64_t gpid(uint32_t pid) { return (int64_t)pid << 24; }

/* Resolves a column list; with_other: also a column per field the list
 * neither reads nor hides. */
static void qview_build(struct qview *v, uint32_t type, const struct qcol *cols, const char *const *hide,
			int with_other)
{
	static const struct qcol other = Q(NULL, I, NULL);
	unsigned nf, nc = 0, nn = 0;
	gp_rec_fields(type, &nf);
	while (cols[nc].col) nc++;
	const char **names = xcalloc(2 * nc + nf + 1, sizeof(*names));
	const struct gp_field **rest = xcalloc(nf + 1, sizeof(*rest));
	for (unsigned i = 0; i < nc; i++) { names[nn++] = cols[i].field; names[nn++] = cols[i].field2; }
	for (const char *const *h = hide; h && *h; h++) names[nn++] = tool_field(type, *h)->name;
	unsigned nrest = with_other ? gp_rec_fields_other(type, names, nn, rest) : 0;
	v->n = nc + nrest;
	v->cols = xcalloc(v->n ? v->n : 1, sizeof(*v->cols));
	for (unsigned i = 0; i < nc; i++) {
		v->cols[i].c = &cols[i];
		v->cols[i].f = cols[i].field ? tool_field(type, cols[i].field) : NULL;
		v->cols[i].f2 = cols[i].field2 ? tool_field(type, cols[i].field2) : NULL;
	}
	for (unsigned i = 0; i < nrest; i++) { v->cols[nc + i].c = &other; v->cols[nc + i].f = rest[i]; }
	free(names);
	free(rest);
}

static const char *col_name(const struct rq *q) { return q->c->col ? q->c->col : q->f->name; }

/* CREATE TABLE and the INSERT statement of a table, from its view. */
static char *create_sql(const struct qtable *t, const struct qview *v)
{
	size_t cap = 256, len = 0;
	for (unsigned i = 0; i < v->n; i++) cap += strlen(col_name(&v->cols[i])) + strlen(v->cols[i].c->sqltype) + 4;
	char *s = xmalloc(cap + strlen(t->name));
	len += (size_t)sprintf(s, "CREATE TABLE %s(", t->name);
	for (unsigned i = 0; i < v->n; i++)
		len += (size_t)sprintf(s + len, "%s%s %s", i ? ", " : "", col_name(&v->cols[i]), v->cols[i].c->sqltype);
	strcpy(s + len, ");");
	return s;
}

static char *insert_sql(const struct qtable *t, unsigned ncols)
{
	char *s = xmalloc(64 + strlen(t->name) + 2 * (size_t)ncols);
	size_t len = (size_t)sprintf(s, "%s INTO %s VALUES(", t->verb, t->name);
	for (unsigned i = 0; i < ncols; i++) len += (size_t)sprintf(s + len, i ? ",?" : "?");
	strcpy(s + len, ")");
	return s;
}

/* The kernel name's StringIds ids (short, demangled, mangled), made once per name. */
static const int64_t *knames(struct sx *x, uint32_t name_id)
{
	uint64_t *s = u64map_get(&x->kname, name_id, MAP_FIND);
	if (s) return x->knames[*s];
	const char *m = tool_str(x->r, name_id);
	char *d = demangle(m), *sh = short_name(d);
	int64_t ids[3] = { sid(x, sh), sid(x, d), tsid(x, name_id) };
	free(d); free(sh);
	size_t ki = x->nk;
	vec_reserve((void **)&x->knames, &x->ck, x->nk + 1, sizeof(*x->knames));
	memcpy(x->knames[x->nk++], ids, sizeof(ids));
	*u64map_get(&x->kname, name_id, MAP_INSERT) = ki;
	return x->knames[ki];
}

/* Binds one column (parameter i) of rec. */
static void bind_col(struct sx *x, sqlite3_stmt *st, int i, const struct rq *q, const gp_record *rec)
{
	const struct qcol *c = q->c;
	const struct gp_field *f = q->f;
	uint32_t pid = tool_pid(x->r, rec);
	uint64_t v = f && f->kind != GP_FK_BYTES ? gp_field_get(rec, f, c->style == Q_DEF ? (unsigned)c->value : 0) : 0;
	switch (c->style) {
	case Q_TEXT: sqlite3_bind_text(st, i, tool_str(x->r, (uint32_t)v), -1, SQLITE_TRANSIENT); return;
	case Q_SID0: sqlite3_bind_int64(st, i, v ? tsid(x, (uint32_t)v) : 0); return;
	case Q_GPID: sqlite3_bind_int64(st, i, gpid(pid)); return;
	case Q_PID: sqlite3_bind_int64(st, i, pid); return;
	case Q_TID: sqlite3_bind_int64(st, i, gp_reader_tid(x->r, rec, f)); return;
	case Q_GTID: sqlite3_bind_int64(st, i, gtid(pid, gp_reader_tid(x->r, rec, f))); return;
	case Q_GTID_END: sqlite3_bind_int64(st, i, gtid(pid, v ? (uint32_t)v : gp_reader_tid(x->r, rec, q->f2))); return;
	case Q_CONST: sqlite3_bind_int64(st, i, c->value); return;
	case Q_NULL: sqlite3_bind_null(st, i); return;
	case Q_FLAG: sqlite3_bind_int64(st, i, (v & (uint64_t)c->value) ? 1 : 0); return;
	case Q_NAME: sqlite3_bind_text(st, i, c->name((uint32_t)v), -1, SQLITE_TRANSIENT); return;
	case Q_HEX: {
		char hex[2 * 255 + 1];
		for (unsigned k = 0; k < f->count; k++) sprintf(hex + 2 * k, "%02x", (unsigned)gp_field_get(rec, f, k));
		sqlite3_bind_text(st, i, hex, 2 * f->count, SQLITE_TRANSIENT);
		return;
	}
	case Q_KNAME: sqlite3_bind_int64(st, i, knames(x, (uint32_t)v)[c->value]); return;
	case Q_EVTYPE: sqlite3_bind_int64(st, i, v == GP_NVTX_STARTEND ? 60 : 59); return;
	case Q_DOUBLE: {
		const gp_counter_value *cv = (const gp_counter_value *)((const uint8_t *)&rec->u + q->f2->offset);
		sqlite3_bind_double(st, i, v == GP_COUNTER_DOUBLE ? cv->d : (double)cv->i);
		return;
	}
	default:
		if (f->kind == GP_FK_STRING) sqlite3_bind_int64(st, i, tsid(x, (uint32_t)v));
		else if (f->kind == GP_FK_BYTES || f->kind == GP_FK_TEXT || f->kind == GP_FK_FRAMES) sqlite3_bind_null(st, i);
		else if (f->kind == GP_FK_TIME || f->kind == GP_FK_END) sqlite3_bind_int64(st, i, (int64_t)(v - x->base));
		else sqlite3_bind_int64(st, i, (int64_t)v);
		return;
	}
}

/* One row: v's columns of rec into st; columns past v->n (a mark in
 * NVTX_EVENTS, which has the range's other fields) are NULL. */
static void insert_row(struct sx *x, sqlite3_stmt *st, const struct qview *v, unsigned ncols, const gp_record *rec)
{
	for (unsigned i = 0; i < ncols; i++) {
		if (i < v->n) bind_col(x, st, (int)i + 1, &v->cols[i], rec);
		else sqlite3_bind_null(st, (int)i + 1);
	}
	if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
	sqlite3_reset(st);
}

/* API calls: the row, then the call stack once per stack id. */
static void on_api(struct sx *x, const gp_record *rec)
{
	const gp_rec_api *a = &rec->u.api;
	/* quirk of the nsys layout: one table per domain */
	struct qview *v = &x->view[a->domain == GP_API_DRIVER ? T_DRIVER : T_RUNTIME];
	insert_row(x, v->st, v, v->n, rec);
	uint32_t pid = tool_pid(x->r, rec);
	const gp_rec_source *src = gp_reader_source(x->r, rec->source_id);
	uint32_t tid = a->tid ? a->tid : (src ? src->tid : 0);
	const struct stack_view *sv;
	if (a->stack_id && !u64map_get(&x->chains_done, a->stack_id, MAP_FIND) &&
	    (sv = stacks_view(x->stacks, a->stack_id, pid, tid))) {
		/* one chain per id, resolved for its first call (only a
		 * borrowed-context stack depends on the calling thread) */
		*u64map_get(&x->chains_done, a->stack_id, MAP_INSERT) = 1;
		for (uint32_t i = 0; i < sv->nframes; i++) {
			int64_t c[] = { a->stack_id, sv->nframes - 1 - i, sid(x, sv->frames[i]) };
			run_ints(x, S_CHAIN, 3, c);
		}
		int64_t si[] = { a->stack_id, sid(x, sv->site) };
		run_ints(x, S_SITE, 2, si);
	}
}

static void on_record(struct sx *x, const gp_record *rec)
{
	switch (rec->type) {
	case GP_REC_API: on_api(x, rec); return;
	case GP_REC_NVTX_MARK: insert_row(x, x->view[T_NVTX].st, &x->mark, x->view[T_NVTX].n, rec); return;
	}
	for (int t = 0; t < T_COUNT; t++)
		if (qtables[t].type == rec->type) {
			insert_row(x, x->view[t].st, &x->view[t], x->view[t].n, rec);
			return;
		}
}

static int exec(struct sx *x, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(x->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		tool_err("sqlite: %s", msg ? msg : sqlite3_errmsg(x->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int export_sqlite(const char *in, const char *out, int strict, const struct export_opts *o)
{
	gp_reader *r = tool_open(in);
	if (!r)
		return EXIT_BADINPUT;
	struct sx x;
	memset(&x, 0, sizeof(x));
	x.r = r;
	int code = EXIT_BADINPUT;
	if (unlink(out) != 0 && errno != ENOENT) {
		tool_err("cannot replace %s: %s", out, strerror(errno));
		gp_reader_close(r);
		return EXIT_BADINPUT;
	}
	if (sqlite3_open(out, &x.db) != SQLITE_OK) {
		tool_err("cannot write %s: %s", out, x.db ? sqlite3_errmsg(x.db) : "sqlite3_open failed");
		goto out;
	}
	if (exec(&x, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;") || exec(&x, schema_head))
		goto out;
	for (int t = 0; t < T_COUNT; t++) {
		qview_build(&x.view[t], qtables[t].type, qtables[t].cols, qtables[t].hide, 1);
		char *sql = create_sql(&qtables[t], &x.view[t]);
		int bad = exec(&x, sql);
		free(sql);
		if (bad) goto out;
		sql = insert_sql(&qtables[t], x.view[t].n);
		bad = sqlite3_prepare_v2(x.db, sql, -1, &x.view[t].st, NULL) != SQLITE_OK;
		free(sql);
		if (bad) {
			tool_err("sqlite: %s", sqlite3_errmsg(x.db));
			goto out;
		}
	}
	qview_build(&x.mark, GP_REC_NVTX_MARK, q_nvtx_mark, NULL, 0);
	if (exec(&x, schema_tail) || exec(&x, "BEGIN"))
		goto out;
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v2(x.db, stmt_sql[i], -1, &x.st[i], NULL) != SQLITE_OK) {
			tool_err("sqlite: %s", sqlite3_errmsg(x.db));
			goto out;
		}
	const gp_header *h = gp_reader_header(r);
	int abs_time = o && o->abs_time;
	const struct selection *sel = o ? o->sel : NULL;
	x.base = abs_time ? 0 : h->start_trace_ns;
	{
		char buf[640], iso[64];
		fmt_iso8601(iso, sizeof(iso), h->start_realtime_ns);
		snprintf(buf, sizeof(buf) - 1, "INSERT INTO META_DATA VALUES('format','%u.%u'),"
			 "('clock','%s'),('start_trace_ns','%" PRIu64 "'),('start_realtime_ns','%" PRIu64 "'),"
			 "('start','%s'),('pid','%u'),('rank','%d'),('time_base','%s')",
			 h->major, h->minor, clock_name(h->clock_id), h->start_trace_ns,
			 h->start_realtime_ns, iso, h->pid, h->rank,
			 abs_time ? "ns on the trace clock" : "ns since start_trace_ns");
		if (exec(&x, buf)) goto out;
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(x.db, "INSERT INTO META_DATA VALUES(?,?)", -1, &st, NULL) == SQLITE_OK) {
			const char *kv[][2] = { { "producer", h->producer }, { "host", h->host }, { "source_file", in },
						{ "selection", sel && sel->active ? sel->what : "" } };
			for (int i = 0; i < 3 + (sel && sel->active); i++) {
				sqlite3_bind_text(st, 1, kv[i][0], -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 2, kv[i][1], -1, SQLITE_TRANSIENT);
				sqlite3_step(st);
				sqlite3_reset(st);
			}
			sqlite3_finalize(st);
		}
	}
	x.stacks = stacks_new(r);
	int pre = stacks_preload(x.stacks, r);
	if (pre >= 0) pre = selection_window(sel, r); /* the selection's chunks only */
	if (pre < 0) {
		tool_err("cannot read %s: %s", in, gp_strerror(pre));
		goto out;
	}
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next(r, &rec)) > 0 && !x.err) {
		if (!selection_keeps(sel, rec)) continue;
		on_record(&x, rec);
		progress_tick(++n);
	}
	if (x.err) {
		tool_err("cannot write %s: %s", out, sqlite3_errmsg(x.db));
		goto out;
	}
	if (exec(&x, indexes) || exec(&x, "COMMIT"))
		goto out;
	code = tool_finish(r, in, rc, strict);
out:
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(x.st[i]);
	for (int t = 0; t < T_COUNT; t++) {
		sqlite3_finalize(x.view[t].st);
		free(x.view[t].cols);
	}
	free(x.mark.cols);
	if (x.db && sqlite3_close(x.db) != SQLITE_OK && code == EXIT_OK) {
		tool_err("cannot write %s", out);
		code = EXIT_BADINPUT;
	}
	strmap_free(&x.strs);
	u64map_free(&x.id_cache);
	u64map_free(&x.kname);
	free(x.knames);
	u64map_free(&x.chains_done);
	stacks_free(x.stacks);
	gp_reader_close(r);
	return code;
}
