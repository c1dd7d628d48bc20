/* gp_recorder.c — in-process recording: each thread's source (its ring,
 * write/gp_ring.h) filled by gp_emit, the metadata queue, the writer thread
 * that drains them into chunks, string interning (write/gp_intern.h), async
 * signal flush and fork handling.  Design notes: docs/ARCHITECTURE.md. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "common/gp_error.h"
#include "common/gp_format.h"
#include "codec/gp_codec.h"
#include "gp_intern.h"
#include "gp_out.h"
#include "gp_recorder.h"
#include "gp_ring.h"

#define LD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LD_RLX(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define ST_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ST_RLX(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

#define META_QUEUE_MAX (64u << 20) /* pending metadata bytes before we drop */
/* Default ring: 4 MiB.  A ring more than half full wakes the writer (see
 * gp_ring_put), so a ring need not hold a whole flush interval: 2 MiB is ~35 ms
 * of 1 M events/s of 56-byte entries, and a training job's busiest thread
 * emits ~10x less (MNIST on an H200: ~60 k events/s).  A small ring stays
 * cache-warm (emit cost 13-15 ns with 1 MiB against 45-56 ns with 32 MiB at
 * 1 M events/s) and keeps the tracer's resident memory low: every page of a
 * ring becomes resident once the head has gone round it.  Later threads get
 * smaller rings when the cap is near (see tsrc_create), down to
 * RING_DEFAULT_MIN. */
#define RING_DEFAULT (4u << 20)
#define RING_DEFAULT_MIN (128u << 10)
/* The tracer's memory bound (rings + writer buffers); issue bar: <= 64 MiB. */
#define MAX_MEMORY_DEFAULT (64u << 20)

/* A thread's source: its ring (hot: first, cache-line aligned) and what
 * the recorder knows of it (cold). */
struct gp_tsrc {
	struct gp_ring ring;
	_Alignas(64) int exited; /* owning thread is gone */
	uint32_t source_id, tid, pid, name_id;
	uint32_t kind, kind_written;
	int source_written;
	uint64_t drops_reported; /* writer: drops already written as DROPPED */
	const void *owner;       /* gp_tstate that created it */
	struct gp_tsrc *next;
};

/* rec/src: this thread's source in rec (both NULL or both set).  gp_recorder_close
 * clears them in every live thread (sources' owners), so rec == the caller's
 * recorder is the whole validity check on the hot path. */
struct gp_tstate {
	gp_recorder *rec;
	struct gp_tsrc *src;
	struct gp_icache icache;
};

/* A ring as drain_all saw it: its head, and whether its thread had exited. */
struct snap_ent {
	struct gp_tsrc *g;
	uint64_t head;
	int exited;
};

struct gp_recorder {
	uint64_t gen; /* unique per recorder: stale-TLS check */
	int closed;
	int paused;
	int clk; /* clockid_t of gp_recorder_now */
	uint32_t flush_ms;
	uint64_t ring_bytes, ring_budget;
	int ring_default; /* ring_bytes not given: may shrink to fit the cap */
	int fd, efd;
	pthread_t writer;
	int writer_started, stop;

	pthread_mutex_t drain_lock; /* consumer side of every ring + out + enc */
	struct gp_out out;
	struct gp_enc enc;
	struct snap_ent *snap; /* drain_all: the rings and their heads */
	size_t snap_cap;
	uint64_t write_lost_reported, no_ring_reported, meta_drop_reported;
	uint64_t freed_accepted, freed_drops; /* counters of freed rings */

	pthread_mutex_t rings_lock;
	struct gp_tsrc *rings;
	uint64_t ring_mem;
	uint32_t next_source, nthreads;
	uint64_t no_ring_drops; /* atomic */

	pthread_mutex_t meta_lock; /* intern table + meta queue */
	struct gp_strtab strs;
	uint8_t *mq, *mq_spare;
	size_t mq_len, mq_cap, mq_spare_cap;
	uint64_t meta_accepted, meta_drops;

	uint64_t flush_req, flush_done; /* async flush tickets (atomic) */
	struct gp_recorder *next_live;
};

/* ---------------------------------------------------------------- globals */
static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static gp_recorder *g_live;
static uint64_t g_gen;
static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static __thread struct gp_tstate *gp_tls __attribute__((tls_model("initial-exec")));

/* Metadata goes through the meta queue to source 0, which the writer drains
 * before the rings: a record that refers to it (string id, stack id, a stack
 * address inside a module) is never written in an earlier chunk.  Stacks and
 * modules are shared by every thread of the process, hence metadata too.
 * Clocks and graph nodes too (format 1.4, GP_HDR_FLAG_META_APART): the tools
 * keep them whatever the time selected, so they must be in the chunks a
 * windowed reader always reads; both are rare (a clock per activity buffer,
 * a graph node per node made or instantiated), so the lock costs nothing. */
static int is_meta_type(uint32_t t) { return gp_rec_is_meta(t); }

static uint32_t my_tid(void) { return (uint32_t)syscall(SYS_gettid); }

static void tstate_destroy(void *arg);
static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void global_init(void)
{
	pthread_key_create(&g_key, tstate_destroy);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static struct gp_tstate *tstate_get(void)
{
	struct gp_tstate *ts = gp_tls;
	if (GP_LIKELY(ts)) return ts;
	ts = calloc(1, sizeof(*ts));
	if (!ts) return NULL;
	gp_tls = ts;
	pthread_setspecific(g_key, ts);
	return ts;
}

/* Thread exit: mark this thread's rings so the writer drains and frees them. */
static void tstate_destroy(void *arg)
{
	struct gp_tstate *ts = arg;
	pthread_mutex_lock(&g_reg_lock);
	for (gp_recorder *r = g_live; r; r = r->next_live) {
		pthread_mutex_lock(&r->rings_lock);
		for (struct gp_tsrc *g = r->rings; g; g = g->next)
			if (g->owner == ts) __atomic_store_n(&g->exited, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&r->rings_lock);
	}
	pthread_mutex_unlock(&g_reg_lock);
	if (gp_tls == ts) gp_tls = NULL;
	free(ts);
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&g_reg_lock);
	for (gp_recorder *r = g_live; r; r = r->next_live) {
		pthread_mutex_lock(&r->meta_lock);
		pthread_mutex_lock(&r->rings_lock);
	}
}
static void atfork_release(void)
{
	for (gp_recorder *r = g_live; r; r = r->next_live) {
		pthread_mutex_unlock(&r->rings_lock);
		pthread_mutex_unlock(&r->meta_lock);
	}
	pthread_mutex_unlock(&g_reg_lock);
}
static void atfork_parent(void) { atfork_release(); }
static void atfork_child(void) { atfork_release(); }

GP_API uint64_t gp_recorder_now(const gp_recorder *rec)
{
	struct timespec t;
	clock_gettime(rec ? rec->clk : CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---------------------------------------------------------------- metadata queue
 * Entries use the ring entry layout (gp_ring.h). */
static int mq_append(gp_recorder *rec, uint32_t type, const void *body, uint32_t blen,
		     const void *extra, uint32_t elen)
{
	uint32_t size = gp_entry_size(blen, elen);
	if (rec->mq_len + size > META_QUEUE_MAX) {
		rec->meta_drops++;
		return GP_ERR_FULL;
	}
	if (rec->mq_len + size > rec->mq_cap) {
		size_t nc = rec->mq_cap ? rec->mq_cap * 2 : 65536;
		while (nc < rec->mq_len + size) nc *= 2;
		uint8_t *nb = realloc(rec->mq, nc);
		if (!nb) {
			rec->meta_drops++;
			return GP_ERR_NOMEM;
		}
		rec->mq = nb;
		rec->mq_cap = nc;
	}
	gp_entry_put(rec->mq + rec->mq_len, type, size, body, blen, extra, elen);
	rec->mq_len += size;
	return 0;
}

/* ---------------------------------------------------------------- interning */
/* meta_lock held.  Returns the id, 0 when out of memory/queue space: the
 * string's record is queued before the id is handed out, so it precedes
 * every record that uses the id in the file. */
static uint32_t intern_locked(gp_recorder *rec, const char *s, uint32_t len, uint64_t h)
{
	uint32_t id = gp_strtab_find(&rec->strs, s, len, h);
	if (id) return id;
	id = gp_strtab_add(&rec->strs, s, len, h);
	if (!id) return 0;
	gp_rec_string body = { id, len, NULL };
	if (mq_append(rec, GP_REC_STRING, &body, sizeof(body), s, len)) {
		gp_strtab_remove_last(&rec->strs);
		return 0;
	}
	return id;
}

GP_API uint32_t gp_intern_n(gp_recorder *rec, const char *s, size_t len)
{
	if (!rec || (!s && len)) return 0;
	if (!s) s = "";
	if (len > GP_MAX_STRING_LEN) len = GP_MAX_STRING_LEN;
	uint64_t h = gp_str_hash(s, len);
	struct gp_tstate *ts = tstate_get();
	struct gp_icache_ent *ce = NULL;
	if (ts) {
		ce = gp_icache_slot(&ts->icache, rec->gen, s, h);
		if (gp_icache_hit(ce, s, (uint32_t)len, h)) return ce->id;
	}
	pthread_mutex_lock(&rec->meta_lock);
	uint32_t id = intern_locked(rec, s, (uint32_t)len, h);
	pthread_mutex_unlock(&rec->meta_lock);
	if (ce && id) *ce = (struct gp_icache_ent){ s, h, (uint32_t)len, id };
	return id;
}

GP_API uint32_t gp_intern(gp_recorder *rec, const char *s)
{
	return gp_intern_n(rec, s, s ? strlen(s) : 0);
}

/* ---------------------------------------------------------------- sources */
static void kick(gp_recorder *rec)
{
	int saved = errno;
	uint64_t one = 1;
	ssize_t rc = write(rec->efd, &one, sizeof(one));
	(void)rc;
	errno = saved;
}

static void tsrc_free(struct gp_tsrc *g)
{
	gp_ring_fini(&g->ring);
	free(g);
}

/* Makes (or finds) ts's source in rec and caches it in ts.  The cache is set
 * under rings_lock and only while rec is not closed, so forget_thread_caches
 * (same lock, after closed is set) cannot miss it.  The ring's size is the
 * recorder's memory policy, decided here. */
static struct gp_tsrc *tsrc_create(gp_recorder *rec, struct gp_tstate *ts, uint32_t kind, int fresh)
{
	char name[17] = { 0 };
	prctl(PR_GET_NAME, name, 0, 0, 0);
	uint32_t name_id = gp_intern(rec, name);
	struct gp_tsrc *g = NULL;
	pthread_mutex_lock(&rec->rings_lock);
	for (g = fresh ? NULL : rec->rings; g; g = g->next)
		if (g->owner == ts && !LD_ACQ(&g->exited)) break;
	if (g) {
		if (!LD_ACQ(&rec->closed)) {
			ST_RLX(&ts->src, g);
			ST_RLX(&ts->rec, rec);
		}
		pthread_mutex_unlock(&rec->rings_lock);
		return g;
	}
	uint64_t cap = rec->ring_bytes;
	if (rec->ring_default && kind == GP_SOURCE_ACTIVITY) {
		/* CUPTI's activity thread hands over whole buffers at once
		 * (kernels, copies: the burstiest source): a full ring whenever
		 * the cap allows, whenever the thread shows up */
		cap = 4 * (uint64_t)RING_DEFAULT; /* one CUPTI buffer (8 MiB) decodes to ~5 MB */
		while (cap > RING_DEFAULT_MIN && rec->ring_mem + cap > rec->ring_budget) cap >>= 1;
	} else if (rec->ring_default) {
		/* At most a quarter of what is left above a reserve of 1/8 of
		 * the cap: the first threads (main, CUPTI's) get full rings,
		 * later ones geometrically smaller ones, and the reserve (half
		 * the cap) gives many more threads a minimum ring (64 MiB cap:
		 * ~200 threads in all). */
		uint64_t avail = rec->ring_budget > rec->ring_mem ? rec->ring_budget - rec->ring_mem : 0;
		uint64_t reserve = rec->ring_budget / 2;
		uint64_t big = avail > reserve ? avail - reserve : 0;
		if (big >= 4 * (uint64_t)RING_DEFAULT_MIN)
			while (cap > RING_DEFAULT_MIN && cap > big / 4) cap >>= 1;
		else
			cap = RING_DEFAULT_MIN;
	}
	if (LD_ACQ(&rec->closed) || rec->ring_mem + cap > rec->ring_budget) {
		pthread_mutex_unlock(&rec->rings_lock);
		return NULL;
	}
	rec->ring_mem += cap; /* reserved while we allocate unlocked */
	pthread_mutex_unlock(&rec->rings_lock);

	g = aligned_alloc(64, sizeof(*g));
	int rc = GP_ERR_NOMEM;
	if (g) {
		memset(g, 0, sizeof(*g));
		rc = gp_ring_init(&g->ring, cap, rec->efd);
		g->tid = my_tid();
		g->pid = (uint32_t)getpid();
		g->name_id = name_id;
		g->kind = kind;
		g->owner = ts;
	}
	pthread_mutex_lock(&rec->rings_lock);
	if (rc || LD_ACQ(&rec->closed)) {
		rec->ring_mem -= cap;
		pthread_mutex_unlock(&rec->rings_lock);
		if (g) tsrc_free(g);
		return NULL;
	}
	g->source_id = rec->next_source++;
	rec->nthreads++;
	g->next = rec->rings;
	ST_REL(&rec->rings, g);
	ST_RLX(&ts->src, g);
	ST_RLX(&ts->rec, rec);
	pthread_mutex_unlock(&rec->rings_lock);
	return g;
}

/* Finds or makes the calling thread's source in rec. */
static struct gp_tsrc *tsrc_for_thread(gp_recorder *rec)
{
	struct gp_tstate *ts = tstate_get();
	if (!ts) return NULL;
	if (LD_RLX(&ts->rec) == rec && ts->src) return ts->src;
	return tsrc_create(rec, ts, GP_SOURCE_THREAD, 0);
}

/* Every live thread forgets its cached source of rec (rec is being closed or
 * forgotten).  g_reg_lock held: a thread exiting meanwhile either marked its
 * sources exited already or waits, so each owner read here is alive. */
static void forget_thread_caches(gp_recorder *rec)
{
	pthread_mutex_lock(&rec->rings_lock);
	for (struct gp_tsrc *g = rec->rings; g; g = g->next) {
		struct gp_tstate *ts = (struct gp_tstate *)g->owner;
		if (LD_ACQ(&g->exited) || !ts) continue;
		if (LD_RLX(&ts->rec) == rec) {
			ST_RLX(&ts->rec, NULL);
			ST_RLX(&ts->src, NULL);
		}
	}
	pthread_mutex_unlock(&rec->rings_lock);
}

static __attribute__((noinline)) int emit_slow(gp_recorder *rec, const gp_record *r)
{
	if (!rec || !r) return GP_ERR_INVALID;
	uint32_t type = r->type;
	if (type == 0 || type >= GP_REC_TYPE_MAX) return GP_ERR_INVALID;
	if (LD_ACQ(&rec->closed)) return GP_ERR_CLOSED;
	if (is_meta_type(type)) {
		const void *extra = NULL;
		uint32_t elen = 0;
		gp_rec_stack stack_body;
		gp_rec_graph_node node_body;
		const void *body = &r->u;
		if (type == GP_REC_STRING && r->u.string.str) {
			extra = r->u.string.str;
			elen = r->u.string.len > GP_MAX_STRING_LEN ? GP_MAX_STRING_LEN : r->u.string.len;
		} else if (type == GP_REC_GRAPH_NODE && !r->u.graph_node.tid) {
			/* tid 0 means "the source's thread"; in source 0 that would
			 * be no thread: name the emitting one */
			node_body = r->u.graph_node;
			node_body.tid = my_tid();
			body = &node_body;
		} else if (type == GP_REC_STACK) {
			uint32_t n = r->u.stack.nframes > GP_STACK_MAX_FRAMES ? GP_STACK_MAX_FRAMES : r->u.stack.nframes;
			if (!r->u.stack.frames) n = 0;
			stack_body = r->u.stack;
			stack_body.nframes = n;
			body = &stack_body;
			extra = r->u.stack.frames;
			elen = n * 8u;
		}
		pthread_mutex_lock(&rec->meta_lock);
		int rc = mq_append(rec, type, body, gp_rec_struct_size[type], extra, elen);
		if (!rc) rec->meta_accepted++;
		pthread_mutex_unlock(&rec->meta_lock);
		return rc ? GP_ERR_FULL : 0;
	}
	struct gp_tsrc *g = tsrc_for_thread(rec);
	if (!g) {
		__atomic_add_fetch(&rec->no_ring_drops, 1, __ATOMIC_RELAXED);
		return GP_ERR_FULL;
	}
	return gp_ring_put(&g->ring, type, &r->u, gp_rec_struct_size[type], NULL, 0);
}

/* The hot path: one TLS load, one compare for "this thread has a source in
 * rec" (close clears every thread's cache, see forget_thread_caches), a
 * switch whose cases copy a compile-time number of bytes, one compare for
 * ring space.  Everything else (first use, metadata, stacks, ring nearly
 * full, wrong arguments) goes to emit_slow / gp_ring_put. */
#define FIXED(T, m) \
	case T: return gp_ring_put_fixed(g, T, &r->u.m, sizeof(r->u.m))
GP_API int gp_emit(gp_recorder *rec, const gp_record *r)
{
	struct gp_tstate *ts = gp_tls;
	if (GP_LIKELY(ts && rec && LD_RLX(&ts->rec) == rec && r)) {
		struct gp_ring *g = &ts->src->ring;
		/* cases made by a macro: */
		/* clang-format off */
		switch (r->type) {
		FIXED(GP_REC_API, api);
		FIXED(GP_REC_KERNEL, kernel);
		FIXED(GP_REC_MEMCPY, memcpy);
		FIXED(GP_REC_MEMSET, memset);
		FIXED(GP_REC_NVTX_RANGE, nvtx_range);
		FIXED(GP_REC_NVTX_MARK, nvtx_mark);
		FIXED(GP_REC_SYNC, sync);
		FIXED(GP_REC_MEMORY, memory);
		FIXED(GP_REC_DROPPED, dropped);
		FIXED(GP_REC_COUNTER, counter);
		FIXED(GP_REC_WINDOW, window);
		default: break;
		}
		/* clang-format on */
	}
	return emit_slow(rec, r);
}
#undef FIXED

GP_API void gp_recorder_set_thread_kind(gp_recorder *rec, uint32_t source_kind)
{
	if (!rec || LD_ACQ(&rec->closed)) return;
	struct gp_tstate *ts = tstate_get();
	if (!ts) return;
	struct gp_tsrc *g = LD_RLX(&ts->rec) == rec ? ts->src : NULL;
	if (!g) {
		/* no ring yet: make it for this kind (an activity thread gets a full one) */
		g = tsrc_create(rec, ts, source_kind, 0);
	} else if (source_kind == GP_SOURCE_ACTIVITY && rec->ring_default && g->ring.cap < rec->ring_bytes) {
		/* The thread emitted before it turned out to be CUPTI's activity
		 * thread and got a small ring: give it a full one (a new source).
		 * The old ring is retired like an exited thread's: drained, freed. */
		struct gp_tsrc *ng = tsrc_create(rec, ts, source_kind, 1);
		if (ng && ng->ring.cap > g->ring.cap) {
			pthread_mutex_lock(&rec->rings_lock);
			ST_REL(&g->exited, 1);
			pthread_mutex_unlock(&rec->rings_lock);
			g = ng;
		} else if (ng) {
			/* no bigger ring to be had: keep the old one */
			pthread_mutex_lock(&rec->rings_lock);
			ST_REL(&ng->exited, 1);
			ST_RLX(&ts->src, g);
			pthread_mutex_unlock(&rec->rings_lock);
		}
	}
	if (g) ST_REL(&g->kind, source_kind);
}

/* ---------------------------------------------------------------- writer side */
static void enc_switch(gp_recorder *rec, uint32_t source, uint32_t tid)
{
	gp_enc_reset(&rec->enc);
	rec->enc.source = source;
	rec->enc.src_tid = tid;
}

static void put_rec(gp_recorder *rec, const gp_record *r)
{
	if (gp_enc_record(&rec->enc, r)) return;
	if (gp_enc_full(&rec->enc)) gp_out_chunk(&rec->out, &rec->enc);
}

static void put_dropped(gp_recorder *rec, uint64_t now, uint64_t count, uint32_t where, uint32_t src)
{
	gp_record r = { .type = GP_REC_DROPPED };
	r.u.dropped = (gp_rec_dropped){ now, count, where, src };
	put_rec(rec, &r);
}

/* Drains every ring up to the heads seen at entry.  Order matters: heads are
 * read before the metadata queue is taken, so every string a drained record
 * uses was queued (and is written) before that record's chunk. */
static void drain_all(gp_recorder *rec)
{
	pthread_mutex_lock(&rec->drain_lock);
	size_t n = 0;
	pthread_mutex_lock(&rec->rings_lock);
	for (struct gp_tsrc *g = rec->rings; g; g = g->next) {
		if (n == rec->snap_cap) {
			size_t nc = rec->snap_cap ? rec->snap_cap * 2 : 64;
			void *ns = realloc(rec->snap, nc * sizeof(*rec->snap));
			if (!ns) break;
			rec->snap = ns;
			rec->snap_cap = nc;
		}
		rec->snap[n].g = g;
		rec->snap[n].exited = LD_ACQ(&g->exited); /* before head: then head is final */
		rec->snap[n].head = gp_ring_head(&g->ring);
		n++;
	}
	pthread_mutex_unlock(&rec->rings_lock);

	pthread_mutex_lock(&rec->meta_lock);
	uint8_t *mq = rec->mq;
	size_t mq_len = rec->mq_len, mq_cap = rec->mq_cap;
	rec->mq = rec->mq_spare;
	rec->mq_cap = rec->mq_spare_cap;
	rec->mq_len = 0;
	uint64_t meta_drops = rec->meta_drops;
	pthread_mutex_unlock(&rec->meta_lock);

	/* source 0: metadata, sources, drop counts */
	uint64_t now = gp_recorder_now(rec);
	enc_switch(rec, 0, 0);
	gp_record r;
	for (size_t off = 0; off + GP_ENTRY_HDR <= mq_len;) {
		uint32_t type = gp_get32(mq + off), size = gp_get32(mq + off + 4);
		if (size < GP_ENTRY_HDR || off + size > mq_len) break;
		if (!gp_entry_to_record(mq + off, type, size, &r)) put_rec(rec, &r);
		off += size;
	}
	rec->mq_spare = mq;
	rec->mq_spare_cap = mq_cap;
	for (size_t i = 0; i < n; i++) {
		struct gp_tsrc *g = rec->snap[i].g;
		uint32_t kind = LD_ACQ(&g->kind);
		if (!g->source_written || kind != g->kind_written) {
			r.type = GP_REC_SOURCE;
			r.u.source = (gp_rec_source){ g->source_id, kind, g->pid, g->tid, g->name_id };
			put_rec(rec, &r);
			g->source_written = 1;
			g->kind_written = kind;
		}
		uint64_t d = gp_ring_drops(&g->ring);
		if (d != g->drops_reported) {
			put_dropped(rec, now, d - g->drops_reported, GP_DROP_RING, g->source_id);
			g->drops_reported = d;
		}
	}
	uint64_t nr = LD_RLX(&rec->no_ring_drops);
	if (nr != rec->no_ring_reported) {
		put_dropped(rec, now, nr - rec->no_ring_reported, GP_DROP_NO_RING, 0);
		rec->no_ring_reported = nr;
	}
	if (meta_drops != rec->meta_drop_reported) {
		put_dropped(rec, now, meta_drops - rec->meta_drop_reported, GP_DROP_RING, 0);
		rec->meta_drop_reported = meta_drops;
	}
	if (rec->out.lost_records != rec->write_lost_reported) {
		uint64_t lost = rec->out.lost_records;
		put_dropped(rec, now, lost - rec->write_lost_reported, GP_DROP_WRITE, 0);
		rec->write_lost_reported = lost;
	}
	gp_out_chunk(&rec->out, &rec->enc);

	/* data: one ring at a time, releasing ring space after each chunk */
	for (size_t i = 0; i < n; i++) {
		struct gp_tsrc *g = rec->snap[i].g;
		struct gp_ring *ring = &g->ring;
		uint64_t t = ring->tail, head = rec->snap[i].head;
		gp_ring_prefault_ahead(ring, head, rec->snap[i].exited);
		enc_switch(rec, g->source_id, g->tid);
		while (t < head) {
			uint32_t type, size;
			const uint8_t *p = gp_ring_entry(ring, t, head, &type, &size);
			if (!p) {
				t = head;
				break;
			} /* cannot happen; never loop */
			if (type && !gp_entry_to_record(p, type, size, &r)) {
				if (!gp_enc_record(&rec->enc, &r) && gp_enc_full(&rec->enc)) {
					gp_out_chunk(&rec->out, &rec->enc);
					gp_ring_release(ring, t + size);
				}
			}
			t += size;
		}
		gp_out_chunk(&rec->out, &rec->enc);
		gp_ring_release(ring, t);
		gp_ring_drained(ring);
	}

	/* free rings of exited threads once empty and fully reported */
	pthread_mutex_lock(&rec->rings_lock);
	for (size_t i = 0; i < n; i++) {
		struct gp_tsrc *g = rec->snap[i].g;
		if (!rec->snap[i].exited || g->ring.tail != rec->snap[i].head) continue;
		for (struct gp_tsrc **pp = &rec->rings; *pp; pp = &(*pp)->next)
			if (*pp == g) {
				*pp = g->next;
				break;
			}
		rec->ring_mem -= g->ring.cap;
		rec->freed_accepted += g->ring.accepted;
		rec->freed_drops += g->ring.drops;
		tsrc_free(g);
	}
	pthread_mutex_unlock(&rec->rings_lock);
	pthread_mutex_unlock(&rec->drain_lock);
}

static void *writer_main(void *arg)
{
	gp_recorder *rec = arg;
	prctl(PR_SET_NAME, "gpuprof-writer", 0, 0, 0);
	for (;;) {
		struct pollfd pfd = { rec->efd, POLLIN, 0 };
		int pr = poll(&pfd, 1, (int)rec->flush_ms);
		if (pr > 0 && (pfd.revents & POLLIN)) {
			uint64_t v;
			ssize_t rc = read(rec->efd, &v, sizeof(v));
			(void)rc;
		}
		if (LD_ACQ(&rec->stop)) break;
		int64_t req = (int64_t)LD_ACQ(&rec->flush_req);
		if (!LD_ACQ(&rec->paused) || req != (int64_t)LD_ACQ(&rec->flush_done)) {
			drain_all(rec);
			ST_REL(&rec->flush_done, (uint64_t)req);
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------- lifecycle */
static uint64_t clock_now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void rec_free(gp_recorder *rec)
{
	for (struct gp_tsrc *g = rec->rings, *nx; g; g = nx) {
		nx = g->next;
		tsrc_free(g);
	}
	gp_strtab_free(&rec->strs);
	free(rec->mq);
	free(rec->mq_spare);
	free(rec->snap);
	gp_enc_free(&rec->enc);
	gp_out_free(&rec->out);
	free(rec);
}

GP_API int gp_recorder_create(const struct gp_recorder_opts *opts, gp_recorder **out)
{
	if (!opts || !out || !opts->path || opts->sz < sizeof(size_t) + sizeof(const char *)) return GP_ERR_INVALID;
	*out = NULL;
	struct gp_recorder_opts o = { 0 };
	memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	pthread_once(&g_once, global_init);

	gp_recorder *rec = calloc(1, sizeof(*rec));
	if (!rec) return GP_ERR_NOMEM;
	rec->gen = __atomic_add_fetch(&g_gen, 1, __ATOMIC_RELAXED);
	rec->clk = o.clock_id == GP_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	rec->flush_ms = o.flush_interval_ms ? o.flush_interval_ms : 500;
	if (rec->flush_ms > 3600000) rec->flush_ms = 3600000;
	uint64_t rb = o.ring_bytes ? o.ring_bytes : RING_DEFAULT;
	rec->ring_default = !o.ring_bytes;
	uint64_t pw = GP_RING_MIN;
	while (pw < rb && pw < (1ull << 32)) pw <<= 1;
	rec->ring_bytes = pw;
	uint64_t maxm = o.max_memory_bytes ? o.max_memory_bytes : MAX_MEMORY_DEFAULT;
	int level = o.zstd_level ? o.zstd_level : 3;
	/* writer overhead: encode + compress buffers, format 2.0's section B
	 * and template slots, and the zstd contexts (section B's at level -1:
	 * 537 KB after a 256 KiB chunk with libzstd 1.5.4) */
	uint64_t overhead = 2 * (GP_CHUNK_TARGET + 8192) + (GP_CHUNK_TARGET + (96u << 10)) +
			    (level > 9 ? (8u << 20) : (2u << 20)) + (640u << 10); /* rough zstd CCtx sizes */
	rec->ring_budget = maxm > overhead ? maxm - overhead : 0;
	rec->next_source = 1;
	rec->fd = rec->efd = -1;
	pthread_mutex_init(&rec->drain_lock, NULL);
	pthread_mutex_init(&rec->rings_lock, NULL);
	pthread_mutex_init(&rec->meta_lock, NULL);

	int rc = GP_ERR_IO;
	rec->fd = open(o.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, gp_pick_mode(o.path, o.file_mode));
	if (rec->fd < 0) goto fail;
	rec->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rec->efd < 0) goto fail;
	rc = gp_out_init(&rec->out, rec->fd, level);
	if (!rc) rc = gp_enc_init(&rec->enc, 0, 0);
	if (rc) goto fail;
	/* In the traced process every write is guarded: a pipe without reader
	 * (SIGPIPE) or a file past RLIMIT_FSIZE (SIGXFSZ) must cost records,
	 * never the job.  Writes happen per chunk, so the three extra system
	 * calls are noise. */
	rec->out.sigpipe_guard = 1;

	gp_header h = { 0 };
	h.major = GP_FORMAT_MAJOR;
	h.minor = GP_FORMAT_MINOR;
	h.pid = (uint32_t)getpid();
	h.clock_id = o.clock_id ? o.clock_id : GP_CLOCK_MONOTONIC;
	h.start_trace_ns = o.start_trace_ns ? o.start_trace_ns : gp_recorder_now(rec);
	h.start_realtime_ns = o.start_realtime_ns ? o.start_realtime_ns : clock_now(CLOCK_REALTIME);
	h.rank = o.sz > offsetof(struct gp_recorder_opts, rank) ? o.rank : -1;
	snprintf(h.producer, sizeof(h.producer), "gpuprof %s", GP_PRODUCER_VERSION);
	if (gethostname(h.host, sizeof(h.host) - 1)) h.host[0] = 0;
	rc = gp_out_header(&rec->out, &h, GP_HDR_FLAG_RECORDER | GP_HDR_FLAG_META_APART);
	if (rc) goto fail;

	/* The writer thread must not run the job's signal handlers. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int prc = pthread_create(&rec->writer, NULL, writer_main, rec);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (prc) {
		rc = GP_ERR_NOMEM;
		goto fail;
	}
	rec->writer_started = 1;

	pthread_mutex_lock(&g_reg_lock);
	rec->next_live = g_live;
	g_live = rec;
	pthread_mutex_unlock(&g_reg_lock);
	*out = rec;
	return 0;
fail:
	if (rec->fd >= 0) {
		close(rec->fd);
		unlink(o.path);
	}
	if (rec->efd >= 0) close(rec->efd);
	rec_free(rec);
	return rc;
}

/* Unlinks rec from the live list; 0 if it was not there. */
static int unregister(gp_recorder *rec)
{
	int found = 0;
	pthread_mutex_lock(&g_reg_lock);
	for (gp_recorder **pp = &g_live; *pp; pp = &(*pp)->next_live)
		if (*pp == rec) {
			*pp = rec->next_live;
			found = 1;
			break;
		}
	if (found) {
		ST_REL(&rec->closed, 1);
		forget_thread_caches(rec);
	}
	pthread_mutex_unlock(&g_reg_lock);
	return found;
}

GP_API int gp_recorder_flush(gp_recorder *rec)
{
	if (!rec) return GP_ERR_INVALID;
	pthread_mutex_lock(&rec->drain_lock); /* out.* is writer state */
	uint64_t errs = rec->out.write_errors;
	pthread_mutex_unlock(&rec->drain_lock);
	drain_all(rec);
	pthread_mutex_lock(&rec->drain_lock);
	int rc = rec->out.write_errors != errs ? GP_ERR_IO : 0;
	pthread_mutex_unlock(&rec->drain_lock);
	return rc;
}

GP_API void gp_recorder_close(gp_recorder *rec)
{
	if (!rec || !unregister(rec)) return;
	ST_REL(&rec->closed, 1);
	ST_REL(&rec->stop, 1);
	kick(rec);
	if (rec->writer_started) pthread_join(rec->writer, NULL);
	drain_all(rec);
	gp_out_finish(&rec->out);
	close(rec->fd);
	close(rec->efd);
	rec_free(rec);
}

GP_API void gp_recorder_forget_after_fork(gp_recorder *rec)
{
	if (!rec || !unregister(rec)) return;
	/* Our fd copy shares the parent's file offset: closing it is harmless,
	 * writing to it would corrupt the parent's trace.  The writer thread
	 * does not exist here, and drain_lock may be held forever: not touched. */
	close(rec->fd);
	close(rec->efd);
	rec_free(rec); /* unregister() cleared the threads' cached rings */
}

GP_API void gp_recorder_pause_writer(gp_recorder *rec, int paused)
{
	if (rec) ST_REL(&rec->paused, paused ? 1 : 0);
}

GP_API int64_t gp_recorder_request_flush_async(gp_recorder *rec)
{
	if (!rec) return GP_ERR_INVALID;
	int64_t t = (int64_t)__atomic_add_fetch(&rec->flush_req, 1, __ATOMIC_SEQ_CST);
	kick(rec);
	return t;
}

GP_API int gp_recorder_wait_flush_async(gp_recorder *rec, int64_t ticket, uint32_t timeout_ms)
{
	if (!rec || ticket <= 0) return GP_ERR_INVALID;
	struct timespec t0, now, nap = { 0, 1000000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((int64_t)LD_ACQ(&rec->flush_done) >= ticket) return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t ms = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= (int64_t)timeout_ms) return GP_ERR_TIMEOUT;
		nanosleep(&nap, NULL);
	}
}

GP_API int gp_recorder_flush_signal(gp_recorder *rec, uint32_t timeout_ms)
{
	int64_t t = gp_recorder_request_flush_async(rec);
	if (t < 0) return (int)t;
	return gp_recorder_wait_flush_async(rec, t, timeout_ms);
}

static void collect(gp_recorder *rec, uint64_t *acc, uint64_t *ring_drops)
{
	pthread_mutex_lock(&rec->rings_lock);
	*acc = rec->freed_accepted;
	*ring_drops = rec->freed_drops;
	for (struct gp_tsrc *g = rec->rings; g; g = g->next) {
		*acc += gp_ring_accepted(&g->ring);
		*ring_drops += gp_ring_drops(&g->ring);
	}
	pthread_mutex_unlock(&rec->rings_lock);
}

GP_API void gp_recorder_get_stats(gp_recorder *rec, struct gp_recorder_stats *st)
{
	if (!rec || !st || st->sz < sizeof(size_t)) return;
	struct gp_recorder_stats s = { .sz = st->sz };
	uint64_t acc, rd;
	pthread_mutex_lock(&rec->drain_lock); /* out.* and freed_* are writer state */
	collect(rec, &acc, &rd);
	pthread_mutex_lock(&rec->meta_lock);
	acc += rec->meta_accepted;
	uint64_t md = rec->meta_drops;
	s.threads = rec->nthreads;
	pthread_mutex_unlock(&rec->meta_lock);
	s.records = acc;
	s.dropped = rd + md + LD_RLX(&rec->no_ring_drops) + rec->out.lost_records;
	s.bytes_written = rec->out.off;
	s.frames = rec->out.chunks;
	pthread_mutex_unlock(&rec->drain_lock);
	memcpy(st, &s, st->sz < sizeof(s) ? st->sz : sizeof(s));
}

GP_API void gp_recorder_get_stats2(gp_recorder *rec, struct gp_recorder_stats2 *st)
{
	if (!rec || !st || st->sz < sizeof(size_t)) return;
	struct gp_recorder_stats2 s = { .sz = st->sz };
	uint64_t acc, rd;
	pthread_mutex_lock(&rec->drain_lock);
	collect(rec, &acc, &rd);
	s.dropped_ring = rd;
	pthread_mutex_lock(&rec->meta_lock);
	s.dropped_meta = rec->meta_drops;
	pthread_mutex_unlock(&rec->meta_lock);
	s.dropped_no_ring = LD_RLX(&rec->no_ring_drops);
	s.dropped_write = rec->out.lost_records;
	s.write_errors = rec->out.write_errors;
	s.last_write_errno = rec->out.last_errno;
	pthread_mutex_unlock(&rec->drain_lock);
	memcpy(st, &s, st->sz < sizeof(s) ? st->sz : sizeof(s));
}
