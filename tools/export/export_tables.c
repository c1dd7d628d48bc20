/* export_tables.c — the tables of the SQLite, Parquet and CSV exports
 * (docs/CLI.md, "--format sqlite"), the pass that fills them and the
 * directories of files (export_tables.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/stacks/stacks.h"
#include "common/tool.h"
#include "export/export_tables.h"

/* The enums' rows. */
static const struct {
	int64_t id;
	const char *name;
} evtypes[] = { { 34, "NvtxMark" }, { 59, "NvtxPushPopRange" }, { 60, "NvtxStartEndRange" } };

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
/* In creation order, after META_DATA and StringIds (XT_REC below). */
static const struct qtable {
	const char *name;
	uint32_t type;
	const struct qcol *cols;
	const char *const *hide;
} qtables[T_COUNT] = {
	[T_PROC] = { "PROCESSES", GP_REC_PROCESS, q_process, q_process_hide },
	[T_THREAD] = { "ThreadNames", GP_REC_THREAD, q_thread, NULL },
	[T_GPU] = { "TARGET_INFO_GPU", GP_REC_DEVICE, q_device, q_device_hide },
	[T_KERN] = { "CUPTI_ACTIVITY_KIND_KERNEL", GP_REC_KERNEL, q_kernel, NULL },
	[T_MEMCPY] = { "CUPTI_ACTIVITY_KIND_MEMCPY", GP_REC_MEMCPY, q_memcpy, NULL },
	[T_MEMSET] = { "CUPTI_ACTIVITY_KIND_MEMSET", GP_REC_MEMSET, q_memset, q_memset_hide },
	[T_RUNTIME] = { "CUPTI_ACTIVITY_KIND_RUNTIME", GP_REC_API, q_api, q_api_hide },
	[T_DRIVER] = { "CUPTI_ACTIVITY_KIND_DRIVER", GP_REC_API, q_api, q_api_hide },
	[T_SYNC] = { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", GP_REC_SYNC, q_sync, NULL },
	[T_MEMORY] = { "CUDA_GPU_MEMORY_USAGE_EVENTS", GP_REC_MEMORY, q_memory, NULL },
	[T_NVTX] = { "NVTX_EVENTS", GP_REC_NVTX_RANGE, q_nvtx_range, NULL },
	[T_COUNTER] = { "COUNTERS", GP_REC_COUNTER, q_counter, NULL },
	[T_DROPPED] = { "DROPPED", GP_REC_DROPPED, q_dropped, NULL },
};

/* Every table, in creation order: the order the SQLite database lists them
 * in, and the sink's table numbers. */
enum {
	X_META, X_STRINGS, X_REC, /* the record tables: X_REC + T_... */
	X_EVTYPE = X_REC + T_COUNT, X_CHAINS, X_SITES, X_OPER, X_COUNT
};

/* The tables that are not one row per record (metadata, strings, call
 * stacks, enums): name, then (column, SQL type) pairs. */
struct fixed_table {
	const char *name;
	const char *cols[4][2];
};
static const struct fixed_table fixed[X_COUNT] = {
	[X_META] = { "META_DATA", { { "name", "TEXT PRIMARY KEY" }, { "value", "TEXT" } } },
	[X_STRINGS] = { "StringIds", { { "id", "INTEGER PRIMARY KEY" }, { "value", "TEXT NOT NULL" } } },
	[X_EVTYPE] = { "ENUM_NSYS_EVENT_TYPE", { { "id", "INTEGER PRIMARY KEY" }, { "name", "TEXT" } } },
	[X_CHAINS] = { "CUDA_CALLCHAINS",
		       { { "id", "INTEGER NOT NULL" }, { "stackDepth", "INTEGER NOT NULL" }, { "symbol", "INTEGER NOT NULL" } } },
	[X_SITES] = { "CALLCHAIN_SITES", { { "id", "INTEGER PRIMARY KEY" }, { "site", "INTEGER NOT NULL" } } },
	[X_OPER] = { "ENUM_CUDA_MEMCPY_OPER", { { "id", "INTEGER PRIMARY KEY" }, { "name", "TEXT" }, { "label", "TEXT" } } },
};

/* A column list resolved against the table once. */
struct rq { const struct qcol *c; const struct gp_field *f, *f2; };
struct qview {
	struct rq *cols;              /* the list's, then one per other field */
	unsigned n;
};

struct xt {
	const struct xt_sink *sink;
	struct xt_table tables[X_COUNT];
	struct xt_col *cols[X_COUNT];
	struct qview view[T_COUNT];
	struct qview mark;  /* NVTX marks: their columns of NVTX_EVENTS */
	struct xt_val *row; /* a record's row (the widest table's columns) */
	char hex[2 * 255 + 1]; /* the one Q_HEX column's text (TARGET_INFO_GPU uuid) */
	gp_reader *r;
	uint64_t base;      /* times count from it: the trace start, or 0 (--abs-time) */
	strmap strs;        /* text -> our StringIds id */
	int64_t next_id;
	u64map id_cache;    /* trace string id -> our id */
	u64map kname;       /* trace kernel name id -> index + 1 into knames */
	int64_t (*knames)[3]; size_t nk, ck; /* short, demangled, mangled */
	struct stacks *stacks;
	u64map chains_done; /* stack ids written to CUDA_CALLCHAINS */
	u64map proc_at;     /* pid -> index + 1 into procs */
	struct proc { uint32_t pid; gp_record rec; } *procs; size_t nproc, cproc;
	int err;            /* the sink failed: stop */
};

static void put(struct xt *x, unsigned table, const struct xt_val *v)
{
	if (!x->err && x->sink->row(x->sink->ctx, table, v)) x->err = 1;
}

static struct xt_val vint(int64_t i) { return (struct xt_val){ .kind = XV_INT, .i = i }; }
static struct xt_val vtext(const char *s) { return (struct xt_val){ .kind = s ? XV_TEXT : XV_NULL, .s = s }; }

static int64_t sid(struct xt *x, const char *s)
{
	int is_new;
	size_t *slot = strmap_get(&x->strs, s ? s : "", &is_new);
	if (is_new) {
		*slot = (size_t)++x->next_id;
		struct xt_val v[] = { vint((int64_t)*slot), vtext(s ? s : "") };
		put(x, X_STRINGS, v);
	}
	return (int64_t)*slot;
}

/* string id from the trace -> StringIds id (NULL for id 0) */
static int64_t tsid(struct xt *x, uint32_t id)
{
	uint64_t *s = u64map_get(&x->id_cache, id, MAP_INSERT);
	if (!*s) *s = (uint64_t)sid(x, tool_str(x->r, id)); /* new: StringIds ids start at 1 */
	return (int64_t)*s;
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

/* A column from its SQL type: what it holds, and whether it may be NULL. */
static struct xt_col col_make(const char *name, const char *sqltype)
{
	struct xt_col c = { name, sqltype, XT_INT, 0 };
	if (!strncmp(sqltype, "REAL", 4)) c.kind = XT_REAL;
	else if (!strncmp(sqltype, "TEXT", 4)) c.kind = XT_TEXT;
	c.not_null = strstr(sqltype, "NOT NULL") || !strcmp(sqltype, "INTEGER PRIMARY KEY");
	return c;
}

static void table_fixed(struct xt *x, unsigned t, const struct fixed_table *f)
{
	unsigned n = 0;
	while (n < 4 && f->cols[n][0]) n++;
	x->cols[t] = xcalloc(n, sizeof(struct xt_col));
	for (unsigned i = 0; i < n; i++) x->cols[t][i] = col_make(f->cols[i][0], f->cols[i][1]);
	x->tables[t] = (struct xt_table){ f->name, n, x->cols[t] };
}

static void table_rec(struct xt *x, unsigned t)
{
	const struct qtable *q = &qtables[t];
	struct qview *v = &x->view[t];
	qview_build(v, q->type, q->cols, q->hide, 1);
	struct xt_col *c = x->cols[X_REC + t] = xcalloc(v->n ? v->n : 1, sizeof(*c));
	for (unsigned i = 0; i < v->n; i++)
		c[i] = col_make(v->cols[i].c->col ? v->cols[i].c->col : v->cols[i].f->name, v->cols[i].c->sqltype);
	x->tables[X_REC + t] = (struct xt_table){ q->name, v->n, c };
}

static void tables_build(struct xt *x)
{
	unsigned widest = 0;
	for (unsigned t = 0; t < X_COUNT; t++) {
		if (fixed[t].name) {
			table_fixed(x, t, &fixed[t]);
			continue;
		}
		table_rec(x, t - X_REC);
		if (x->view[t - X_REC].n > widest) widest = x->view[t - X_REC].n;
	}
	qview_build(&x->mark, GP_REC_NVTX_MARK, q_nvtx_mark, NULL, 0);
	x->row = xcalloc(widest, sizeof(*x->row));
}

/* The enums' rows. */
static void enum_rows(struct xt *x)
{
	for (size_t i = 0; i < sizeof(evtypes) / sizeof(evtypes[0]); i++) {
		struct xt_val v[] = { vint(evtypes[i].id), vtext(evtypes[i].name) };
		put(x, X_EVTYPE, v);
	}
	for (size_t i = 0; i < COPY_KIND_COUNT; i++) {
		struct xt_val v[] = { vint((int64_t)i), vtext(copy_kinds[i][0]), vtext(copy_kinds[i][1]) };
		put(x, X_OPER, v);
	}
}

/* META_DATA: the header, the input and the selection. */
static void meta_rows(struct xt *x, const char *in, const char *selection, int abs_time)
{
	const gp_header *h = gp_reader_header(x->r);
	char fmt[32], trace_ns[32], real_ns[32], iso[64], pid[16], rank[16];
	snprintf(fmt, sizeof(fmt), "%u.%u", h->major, h->minor);
	snprintf(trace_ns, sizeof(trace_ns), "%" PRIu64, h->start_trace_ns);
	snprintf(real_ns, sizeof(real_ns), "%" PRIu64, h->start_realtime_ns);
	fmt_iso8601(iso, sizeof(iso), h->start_realtime_ns);
	snprintf(pid, sizeof(pid), "%u", h->pid);
	snprintf(rank, sizeof(rank), "%d", h->rank);
	const char *kv[][2] = {
		{ "format", fmt }, { "clock", clock_name(h->clock_id) }, { "start_trace_ns", trace_ns },
		{ "start_realtime_ns", real_ns }, { "start", iso }, { "pid", pid }, { "rank", rank },
		{ "time_base", abs_time ? "ns on the trace clock" : "ns since start_trace_ns" },
		{ "producer", h->producer }, { "host", h->host }, { "source_file", in }, { "selection", selection },
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]) && kv[i][1]; i++) {
		struct xt_val v[] = { vtext(kv[i][0]), vtext(kv[i][1]) };
		put(x, X_META, v);
	}
}

/* The kernel name's StringIds ids (short, demangled, mangled), made once per name. */
static const int64_t *knames(struct xt *x, uint32_t name_id)
{
	static const int64_t none[3] = { -1, -1, -1 };
	int64_t *ids = VEC_KEYED(&x->kname, name_id, x->knames, x->nk, x->ck, none);
	if (ids[0] < 0) { /* new: StringIds' ids in this order */
		char *d = demangle(tool_str(x->r, name_id)), *sh = short_name(d);
		ids[0] = sid(x, sh);
		ids[1] = sid(x, d);
		ids[2] = tsid(x, name_id);
		free(d); free(sh);
	}
	return ids;
}

/* One column's value of rec (of process pid). */
static struct xt_val col_val(struct xt *x, const struct rq *q, const gp_record *rec, uint32_t pid)
{
	const struct qcol *c = q->c;
	const struct gp_field *f = q->f;
	uint64_t v = f && f->kind != GP_FK_BYTES ? gp_field_get(rec, f, c->style == Q_DEF ? (unsigned)c->value : 0) : 0;
	switch (c->style) {
	case Q_TEXT: return vtext(tool_str(x->r, (uint32_t)v));
	case Q_SID0: return vint(v ? tsid(x, (uint32_t)v) : 0);
	case Q_GPID: return vint(gpid(pid));
	case Q_PID: return vint(pid);
	case Q_TID: return vint(gp_reader_tid(x->r, rec, f));
	case Q_GTID: return vint(gtid(pid, gp_reader_tid(x->r, rec, f)));
	case Q_GTID_END: return vint(gtid(pid, v ? (uint32_t)v : gp_reader_tid(x->r, rec, q->f2)));
	case Q_CONST: return vint(c->value);
	case Q_NULL: return (struct xt_val){ .kind = XV_NULL };
	case Q_FLAG: return vint((v & (uint64_t)c->value) ? 1 : 0);
	case Q_NAME: return vtext(c->name((uint32_t)v));
	case Q_HEX:
		for (unsigned k = 0; k < f->count; k++)
			sprintf(x->hex + 2 * k, "%02x", (unsigned)gp_field_get(rec, f, k));
		x->hex[2 * f->count] = 0;
		return vtext(x->hex);
	case Q_KNAME: return vint(knames(x, (uint32_t)v)[c->value]);
	case Q_EVTYPE: return vint(v == GP_NVTX_STARTEND ? 60 : 59);
	case Q_DOUBLE: {
		const gp_counter_value *cv = (const gp_counter_value *)((const uint8_t *)&rec->u + q->f2->offset);
		double d = v == GP_COUNTER_DOUBLE ? cv->d : (double)cv->i;
		return isnan(d) ? (struct xt_val){ .kind = XV_NULL } : (struct xt_val){ .kind = XV_REAL, .d = d };
	}
	default:
		if (f->kind == GP_FK_STRING) return vint(tsid(x, (uint32_t)v));
		if (f->kind == GP_FK_BYTES || f->kind == GP_FK_TEXT || f->kind == GP_FK_FRAMES)
			return (struct xt_val){ .kind = XV_NULL };
		if (f->kind == GP_FK_TIME || f->kind == GP_FK_END) return vint((int64_t)(v - x->base));
		return vint((int64_t)v);
	}
}

/* One row of table t: v's columns of rec; the table's columns past v->n
 * (a mark in NVTX_EVENTS, which has the range's other fields) are NULL. */
static void rec_row(struct xt *x, unsigned t, const struct qview *v, const gp_record *rec)
{
	unsigned n = x->tables[X_REC + t].ncols;
	uint32_t pid = tool_pid(x->r, rec);
	for (unsigned i = 0; i < n; i++)
		x->row[i] = i < v->n ? col_val(x, &v->cols[i], rec, pid) : (struct xt_val){ .kind = XV_NULL };
	put(x, X_REC + t, x->row);
}

/* API calls: the row, then the call stack once per stack id. */
static void on_api(struct xt *x, const gp_record *rec)
{
	const gp_rec_api *a = &rec->u.api;
	/* quirk of the nsys layout: one table per domain */
	unsigned t = a->domain == GP_API_DRIVER ? T_DRIVER : T_RUNTIME;
	rec_row(x, t, &x->view[t], rec);
	uint32_t pid = tool_pid(x->r, rec), tid = tool_rec_tid(x->r, rec);
	const struct stack_view *sv;
	if (a->stack_id && !u64map_get(&x->chains_done, a->stack_id, MAP_FIND) &&
	    (sv = stacks_view(x->stacks, a->stack_id, pid, tid))) {
		/* one chain per id, resolved for its first call (only a
		 * borrowed-context stack depends on the calling thread) */
		*u64map_get(&x->chains_done, a->stack_id, MAP_INSERT) = 1;
		for (uint32_t i = 0; i < sv->nframes; i++) {
			struct xt_val c[] = { vint(a->stack_id), vint(sv->nframes - 1 - i), vint(sid(x, sv->frames[i])) };
			put(x, X_CHAINS, c);
		}
		struct xt_val si[] = { vint(a->stack_id), vint(sid(x, sv->site)) };
		put(x, X_SITES, si);
	}
}

/* PROCESSES: a process's last record (a merged or long trace may repeat
 * one), its row given at the end in globalPid order, as SQLite's INTEGER
 * PRIMARY KEY table would hold them after INSERT OR REPLACE. */
static void hold_process(struct xt *x, const gp_record *rec)
{
	uint32_t pid = tool_pid(x->r, rec);
	struct proc *p = VEC_KEYED(&x->proc_at, pid, x->procs, x->nproc, x->cproc, &(struct proc){ .pid = pid });
	p->rec = *rec;
}

static int by_pid(const void *a, const void *b)
{
	uint32_t p = ((const struct proc *)a)->pid, q = ((const struct proc *)b)->pid;
	return p < q ? -1 : p > q;
}

static void on_record(struct xt *x, const gp_record *rec)
{
	switch (rec->type) {
	case GP_REC_API: on_api(x, rec); return;
	case GP_REC_PROCESS: hold_process(x, rec); return;
	case GP_REC_NVTX_MARK: rec_row(x, T_NVTX, &x->mark, rec); return;
	}
	for (unsigned t = 0; t < T_COUNT; t++)
		if (qtables[t].type == rec->type) {
			rec_row(x, t, &x->view[t], rec);
			return;
		}
}

int export_tables(const char *in, int strict, const struct export_opts *o, const struct xt_sink *sink)
{
	gp_reader *r = tool_open(in);
	if (!r)
		return EXIT_BADINPUT;
	struct xt x = { .r = r, .sink = sink };
	tables_build(&x);
	int code = EXIT_BADINPUT, opened = 1;
	if (sink->open(sink->ctx, x.tables, X_COUNT))
		goto out;
	int abs_time = o && o->abs_time;
	const struct selection *sel = o ? o->sel : NULL;
	x.base = abs_time ? 0 : gp_reader_header(r)->start_trace_ns;
	enum_rows(&x);
	meta_rows(&x, in, sel && sel->active ? sel->what : NULL, abs_time);
	x.stacks = stacks_new(r);
	int pre = stacks_preload(x.stacks, r);
	if (pre >= 0) pre = selection_window(sel, r); /* the selection's chunks only */
	if (pre < 0) {
		tool_err("cannot read %s: %s", in, gp_strerror(pre));
		goto out;
	}
	const gp_record *rec;
	int rc = 0;
	uint64_t n = 0;
	while (!x.err && (rc = gp_reader_next(r, &rec)) > 0) {
		if (!selection_keeps(sel, rec)) continue;
		on_record(&x, rec);
		progress_tick(++n);
	}
	if (x.nproc) qsort(x.procs, x.nproc, sizeof(*x.procs), by_pid);
	for (size_t i = 0; i < x.nproc; i++) rec_row(&x, T_PROC, &x.view[T_PROC], &x.procs[i].rec);
	if (x.err)
		goto out;
	opened = 0;
	if (sink->close(sink->ctx, 1))
		goto out;
	code = tool_finish(r, in, rc, strict);
out:
	if (opened) sink->close(sink->ctx, 0);
	for (unsigned t = 0; t < X_COUNT; t++) free(x.cols[t]);
	for (unsigned t = 0; t < T_COUNT; t++) free(x.view[t].cols);
	free(x.mark.cols);
	free(x.row);
	strmap_free(&x.strs);
	u64map_free(&x.id_cache);
	u64map_free(&x.kname);
	free(x.knames);
	u64map_free(&x.chains_done);
	u64map_free(&x.proc_at);
	free(x.procs);
	stacks_free(x.stacks);
	gp_reader_close(r);
	return code;
}

/* ------------------------------------------------------------ directories */
static char *file_name(const char *dir, const char *name, const char *ext)
{
	char *s = xmalloc(strlen(dir) + strlen(name) + strlen(ext) + 2);
	sprintf(s, "%s/%s%s", dir, name, ext);
	return s;
}

int xt_dir_open(struct xt_dir *d, const char *dir, const char *ext, const struct xt_table *tables, unsigned nt)
{
	struct stat st;
	if (mkdir(dir, 0777) != 0 && (errno != EEXIST || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
		return tool_fail(-1, "cannot create directory %s: %s", dir,
				 errno == EEXIST ? "a file has that name" : strerror(errno));
	char tmp_ext[16];
	snprintf(tmp_ext, sizeof(tmp_ext), "%s.tmp", ext);
	d->nt = nt;
	d->path = xcalloc(nt, sizeof(*d->path));
	d->tmp = xcalloc(nt, sizeof(*d->tmp));
	for (unsigned t = 0; t < nt; t++) {
		d->path[t] = file_name(dir, tables[t].name, ext);
		d->tmp[t] = file_name(dir, tables[t].name, tmp_ext);
	}
	return 0;
}

int xt_dir_close(struct xt_dir *d, int ok)
{
	int rc = ok ? 0 : -1;
	/* every file complete: give them their names; else none */
	for (unsigned t = 0; t < d->nt; t++) {
		if (!rc && rename(d->tmp[t], d->path[t]) != 0) {
			tool_err("cannot write %s: %s", d->path[t], strerror(errno));
			rc = -1;
		}
		if (rc) unlink(d->tmp[t]);
		free(d->path[t]);
		free(d->tmp[t]);
	}
	free(d->path);
	free(d->tmp);
	d->nt = 0;
	d->path = d->tmp = NULL;
	return rc;
}
