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

static const char schema[] =
	"CREATE TABLE META_DATA(name TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE PROCESSES(globalPid INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER, name TEXT,"
	" host TEXT, rank INTEGER, start INTEGER);"
	"CREATE TABLE ThreadNames(nameId INTEGER, priority INTEGER, globalTid INTEGER, pid INTEGER, tid INTEGER);"
	"CREATE TABLE TARGET_INFO_GPU(id INTEGER, globalPid INTEGER, name TEXT, totalMemory INTEGER,"
	" smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, maxThreadsPerBlock INTEGER,"
	" threadsPerWarp INTEGER, clockRate INTEGER, memoryClockRate INTEGER, memoryBusWidth INTEGER,"
	" maxRegistersPerSm INTEGER, maxShmemPerBlock INTEGER, busLocation INTEGER, uuid TEXT);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
	" gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,"
	" registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,"
	" localMemoryPerThread INTEGER, launchType INTEGER, shortName INTEGER, demangledName INTEGER,"
	" mangledName INTEGER, graphId INTEGER, graphNodeId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
	" bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,"
	" dstDeviceId INTEGER, async INTEGER, graphNodeId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
	" value INTEGER, bytes INTEGER, memKind INTEGER, graphNodeId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" globalTid INTEGER, pid INTEGER, tid INTEGER, correlationId INTEGER, nameId INTEGER, cbid INTEGER,"
	" returnValue INTEGER, callchainId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" globalTid INTEGER, pid INTEGER, tid INTEGER, correlationId INTEGER, nameId INTEGER, cbid INTEGER,"
	" returnValue INTEGER, callchainId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" globalPid INTEGER, correlationId INTEGER, syncType INTEGER, contextId INTEGER, streamId INTEGER,"
	" eventId INTEGER);"
	"CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INTEGER NOT NULL, globalPid INTEGER,"
	" correlationId INTEGER, deviceId INTEGER, contextId INTEGER, streamId INTEGER, address INTEGER,"
	" bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER);"
	"CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
	" rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
	" endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, depth INTEGER, int64Value INTEGER,"
	" unterminated INTEGER);"
	"CREATE TABLE COUNTERS(start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER, nameId INTEGER,"
	" value REAL);"
	"CREATE TABLE DROPPED(start INTEGER, globalPid INTEGER, count INTEGER, source TEXT, sourceId INTEGER);"
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

enum {
	S_STR, S_PROC, S_THREAD, S_GPU, S_KERN, S_MEMCPY, S_MEMSET, S_RUNTIME, S_DRIVER, S_SYNC,
	S_MEMORY, S_NVTX, S_COUNTER, S_DROPPED, S_CHAIN, S_SITE, S_COUNT
};
static const char *const stmt_sql[S_COUNT] = {
	[S_STR] = "INSERT INTO StringIds VALUES(?,?)",
	[S_PROC] = "INSERT OR REPLACE INTO PROCESSES VALUES(?,?,?,?,?,?,?)",
	[S_THREAD] = "INSERT INTO ThreadNames VALUES(?,0,?,?,?)",
	[S_GPU] = "INSERT INTO TARGET_INFO_GPU VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_KERN] = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MEMCPY] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MEMSET] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[S_RUNTIME] = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?,?,?,?,?,?,?)",
	[S_DRIVER] = "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES(?,?,?,?,?,?,?,?,?,?)",
	[S_SYNC] = "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(?,?,?,?,?,?,?,?)",
	[S_MEMORY] = "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES(?,?,?,?,?,?,?,?,?,?)",
	[S_NVTX] = "INSERT INTO NVTX_EVENTS VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_COUNTER] = "INSERT INTO COUNTERS VALUES(?,?,?,?,?)",
	[S_DROPPED] = "INSERT INTO DROPPED VALUES(?,?,?,?,?)",
	[S_CHAIN] = "INSERT INTO CUDA_CALLCHAINS VALUES(?,?,?)",
	[S_SITE] = "INSERT INTO CALLCHAIN_SITES VALUES(?,?)",
};

struct sx {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	gp_reader *r;
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

static void on_record(struct sx *x, const gp_record *rec)
{
	uint32_t pid = tool_pid(x->r, rec);
	const gp_rec_source *src = gp_reader_source(x->r, rec->source_id);
	uint32_t stid = src ? src->tid : 0;
	switch (rec->type) {
	case GP_REC_PROCESS: {
		const gp_rec_process *p = &rec->u.process;
		sqlite3_stmt *st = x->st[S_PROC];
		sqlite3_bind_int64(st, 1, gpid(p->pid));
		sqlite3_bind_int64(st, 2, p->pid);
		sqlite3_bind_int64(st, 3, p->ppid);
		sqlite3_bind_text(st, 4, tool_str(x->r, p->name_id), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 5, tool_str(x->r, p->host_id), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 6, p->rank);
		sqlite3_bind_int64(st, 7, (int64_t)p->start_ns);
		if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
		sqlite3_reset(st);
		break;
	}
	case GP_REC_THREAD: {
		const gp_rec_thread *t = &rec->u.thread;
		int64_t v[] = { tsid(x, t->name_id), gtid(t->pid, t->tid), t->pid, t->tid };
		run_ints(x, S_THREAD, 4, v);
		break;
	}
	case GP_REC_DEVICE: {
		const gp_rec_device *d = &rec->u.device;
		sqlite3_stmt *st = x->st[S_GPU];
		int64_t v[] = { d->device_id, gpid(pid), 0, (int64_t)d->global_mem_bytes, d->sm_count,
				d->cc_major, d->cc_minor, d->max_threads_per_block, d->warp_size,
				d->clock_khz, d->mem_clock_khz, d->mem_bus_width, d->max_regs_per_sm,
				d->max_smem_per_block, d->pci_bus_id };
		for (int i = 0; i < 15; i++)
			sqlite3_bind_int64(st, i + 1, v[i]);
		sqlite3_bind_text(st, 3, tool_str(x->r, d->name_id), -1, SQLITE_TRANSIENT);
		char uuid[40];
		for (int i = 0; i < 16; i++) sprintf(uuid + 2 * i, "%02x", d->uuid[i]);
		sqlite3_bind_text(st, 16, uuid, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
		sqlite3_reset(st);
		break;
	}
	case GP_REC_API: {
		const gp_rec_api *a = &rec->u.api;
		uint32_t tid = a->tid ? a->tid : stid;
		int64_t v[] = { (int64_t)a->start_ns, (int64_t)a->end_ns, gtid(pid, tid), pid, tid,
				(int64_t)a->correlation_id, tsid(x, a->name_id), a->cbid, a->status, a->stack_id };
		run_ints(x, a->domain == GP_API_DRIVER ? S_DRIVER : S_RUNTIME, 10, v);
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
		break;
	}
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		uint64_t *s = u64map_get(&x->kname, k->name_id, MAP_FIND);
		size_t ki;
		if (s) ki = *s;
		else {
			const char *m = tool_str(x->r, k->name_id);
			char *d = demangle(m), *sh = short_name(d);
			int64_t ids[3] = { sid(x, sh), sid(x, d), tsid(x, k->name_id) };
			free(d); free(sh);
			ki = x->nk;
			vec_reserve((void **)&x->knames, &x->ck, x->nk + 1, sizeof(*x->knames));
			memcpy(x->knames[x->nk++], ids, sizeof(ids));
			*u64map_get(&x->kname, k->name_id, MAP_INSERT) = ki;
		}
		int64_t v[] = { (int64_t)k->start_ns, (int64_t)k->end_ns, k->device_id, k->context_id,
				k->stream_id, (int64_t)k->correlation_id, gpid(pid), k->grid[0], k->grid[1],
				k->grid[2], k->block[0], k->block[1], k->block[2], k->registers,
				k->static_smem, k->dynamic_smem, k->local_mem, k->launch_type,
				x->knames[ki][0], x->knames[ki][1], x->knames[ki][2],
				(int64_t)k->graph_id, (int64_t)k->graph_node_id };
		run_ints(x, S_KERN, 23, v);
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		int64_t v[] = { (int64_t)m->start_ns, (int64_t)m->end_ns, m->device_id, m->context_id,
				m->stream_id, (int64_t)m->correlation_id, gpid(pid), (int64_t)m->bytes,
				m->copy_kind, m->src_kind, m->dst_kind, m->src_device, m->dst_device,
				m->flags & 1, (int64_t)m->graph_node_id };
		run_ints(x, S_MEMCPY, 15, v);
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &rec->u.memset;
		int64_t v[] = { (int64_t)m->start_ns, (int64_t)m->end_ns, m->device_id, m->context_id,
				m->stream_id, (int64_t)m->correlation_id, gpid(pid), m->value,
				(int64_t)m->bytes, m->mem_kind, (int64_t)m->graph_node_id };
		run_ints(x, S_MEMSET, 11, v);
		break;
	}
	case GP_REC_SYNC: {
		const gp_rec_sync *s = &rec->u.sync;
		int64_t v[] = { (int64_t)s->start_ns, (int64_t)s->end_ns, gpid(pid), (int64_t)s->correlation_id,
				s->type, s->context_id, s->stream_id, s->event_id };
		run_ints(x, S_SYNC, 8, v);
		break;
	}
	case GP_REC_MEMORY: {
		const gp_rec_memory *m = &rec->u.memory;
		int64_t v[] = { (int64_t)m->ts_ns, gpid(pid), (int64_t)m->correlation_id, m->device_id,
				m->context_id, m->stream_id, (int64_t)m->address, (int64_t)m->bytes,
				m->mem_kind, m->op };
		run_ints(x, S_MEMORY, 10, v);
		break;
	}
	case GP_REC_NVTX_RANGE: case GP_REC_NVTX_MARK: {
		sqlite3_stmt *st = x->st[S_NVTX];
		int64_t v[14];
		uint32_t msg, dom;
		if (rec->type == GP_REC_NVTX_RANGE) {
			const gp_rec_nvtx_range *n = &rec->u.nvtx_range;
			uint32_t tid = n->tid ? n->tid : stid;
			int64_t t[] = { (int64_t)n->start_ns, (int64_t)n->end_ns,
					n->kind == GP_NVTX_STARTEND ? 60 : 59, (int64_t)n->range_id, n->category,
					n->color, 0, gtid(pid, tid), gtid(pid, n->end_tid ? n->end_tid : tid), 0, 0,
					n->depth, n->payload, (n->flags & GP_NVTX_UNTERMINATED) ? 1 : 0 };
			memcpy(v, t, sizeof(v));
			msg = n->message_id; dom = n->domain_id;
		} else {
			const gp_rec_nvtx_mark *m = &rec->u.nvtx_mark;
			uint32_t tid = m->tid ? m->tid : stid;
			int64_t t[] = { (int64_t)m->ts_ns, 0, 34, 0, m->category, m->color, 0,
					gtid(pid, tid), 0, 0, 0, 0, 0, 0 };
			memcpy(v, t, sizeof(v));
			msg = m->message_id; dom = m->domain_id;
		}
		v[9] = tsid(x, msg);
		v[10] = dom ? tsid(x, dom) : 0;
		for (int i = 0; i < 14; i++)
			sqlite3_bind_int64(st, i + 1, v[i]);
		if (rec->type == GP_REC_NVTX_MARK) { sqlite3_bind_null(st, 2); sqlite3_bind_null(st, 9); }
		sqlite3_bind_text(st, 7, tool_str(x->r, msg), -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
		sqlite3_reset(st);
		break;
	}
	case GP_REC_COUNTER: {
		const gp_rec_counter *c = &rec->u.counter;
		sqlite3_stmt *st = x->st[S_COUNTER];
		sqlite3_bind_int64(st, 1, (int64_t)c->ts_ns);
		sqlite3_bind_int64(st, 2, gpid(pid));
		sqlite3_bind_int64(st, 3, c->device_id);
		sqlite3_bind_int64(st, 4, tsid(x, c->name_id));
		sqlite3_bind_double(st, 5, c->kind == GP_COUNTER_DOUBLE ? c->value.d : (double)c->value.i);
		if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
		sqlite3_reset(st);
		break;
	}
	case GP_REC_DROPPED: {
		const gp_rec_dropped *d = &rec->u.dropped;
		sqlite3_stmt *st = x->st[S_DROPPED];
		sqlite3_bind_int64(st, 1, (int64_t)d->ts_ns);
		sqlite3_bind_int64(st, 2, gpid(pid));
		sqlite3_bind_int64(st, 3, (int64_t)d->count);
		sqlite3_bind_text(st, 4, drop_where_name(d->where), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, d->source_id);
		if (sqlite3_step(st) != SQLITE_DONE) x->err = 1;
		sqlite3_reset(st);
		break;
	}
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

int export_sqlite(const char *in, const char *out, int strict)
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
	if (exec(&x, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;") || exec(&x, schema) ||
	    exec(&x, "BEGIN"))
		goto out;
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v2(x.db, stmt_sql[i], -1, &x.st[i], NULL) != SQLITE_OK) {
			tool_err("sqlite: %s", sqlite3_errmsg(x.db));
			goto out;
		}
	const gp_header *h = gp_reader_header(r);
	{
		char buf[512], iso[64];
		fmt_iso8601(iso, sizeof(iso), h->start_realtime_ns);
		snprintf(buf, sizeof(buf) - 1, "INSERT INTO META_DATA VALUES('format','%u.%u'),"
			 "('clock','%s'),('start_trace_ns','%" PRIu64 "'),('start_realtime_ns','%" PRIu64 "'),"
			 "('start','%s'),('pid','%u'),('rank','%d')",
			 h->major, h->minor, clock_name(h->clock_id), h->start_trace_ns,
			 h->start_realtime_ns, iso, h->pid, h->rank);
		if (exec(&x, buf)) goto out;
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(x.db, "INSERT INTO META_DATA VALUES(?,?)", -1, &st, NULL) == SQLITE_OK) {
			const char *kv[][2] = { { "producer", h->producer }, { "host", h->host }, { "source_file", in } };
			for (int i = 0; i < 3; i++) {
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
	if (pre < 0) {
		tool_err("cannot read %s: %s", in, gp_strerror(pre));
		goto out;
	}
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next(r, &rec)) > 0 && !x.err) {
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
