/* fake_cupti.c — a stand-in libcupti.so.13 for CI without a GPU.  Built
 * against the REAL cupti.h so every struct and signature is CUPTI 13's:
 * callbacks are delivered with a CUpti_CallbackData filled like the real one,
 * activity records are CUPTI's structs packed into client buffers obtained
 * through the registered bufferRequested and handed back through
 * bufferCompleted (when full, and on cuptiActivityFlushAll).
 *
 * Knobs (environment): FAKE_CUPTI_BUSY=1 makes cuptiSubscribe answer
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; FAKE_CUPTI_NO_TSCB=1 makes
 * cuptiActivityRegisterTimestampCallback fail; FAKE_CUPTI_LOG=path appends
 * one line per CUPTI call of interest (for tests that count subscriptions
 * and GPU-activity window edges); FAKE_CUPTI_FLUSH_PERIOD=1 and
 * FAKE_CUPTI_FORK_KEEPS_BUFFER=1, see their functions.  cuptiActivityEnable/Disable are real: a
 * disabled kind produces no records.  FAKE_CUPTI_PM: the PM sampling API,
 * see its section at the end. */
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_CBID 4096

struct cbname { uint32_t cbid; const char *name; };
static const struct cbname rt_names[] = {
#define X(id, n) {id, n},
#include "fake_cbid_runtime.h"
#undef X
};
static const struct cbname drv_names[] = {
#define X(id, n) {id, n},
#include "fake_cbid_driver.h"
#undef X
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc subscriber_cb;
static void *subscriber_ud;
static int subscribed;
/* which callbacks are on; read by the job's threads as they call CUDA while
 * a tool's own thread may switch them (the flight recorder's API records
 * following GPU activity): relaxed atomics, as CUPTI's own switch is
 * thread-safe */
static unsigned char cb_enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
static int cb_on(int d, uint32_t cbid) { return __atomic_load_n(&cb_enabled[d][cbid], __ATOMIC_RELAXED); }
static void cb_set(int d, uint32_t cbid, int on) { __atomic_store_n(&cb_enabled[d][cbid], (unsigned char)on, __ATOMIC_RELAXED); }
static void cb_set_domain(int d, int on)
{
	for (uint32_t k = 0; k < MAX_CBID; k++)
		cb_set(d, k, on);
}
static void cb_clear(void)
{
	for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
		cb_set_domain(d, 0);
}
/* per kind: written by the tool (its window thread toggles them while the
 * job launches), read by every launching thread: atomic */
#define FAKE_NKINDS 64u
static _Atomic unsigned char act_enabled[FAKE_NKINDS];
static unsigned char act_api_rt[MAX_CBID], act_api_drv[MAX_CBID];
static CUpti_BuffersCallbackRequestFunc buf_req;
static CUpti_BuffersCallbackCompleteFunc buf_done;
static CUpti_TimestampCallbackFunc ts_cb;
static uint8_t *cur_buf;
static size_t cur_size, cur_used;
static size_t dropped;
static atomic_uint next_corr = 1;

static void flog(const char *what)
{
	const char *p = getenv("FAKE_CUPTI_LOG");
	if (!p || !*p)
		return;
	FILE *f = fopen(p, "a");
	if (f) {
		fprintf(f, "%d %s\n", (int)getpid(), what);
		fclose(f);
	}
}

/* gettid per call would make the fake's floor a syscall (about 1 us in
 * some sandboxes) and drown the shim's cost in bench/shim: cached. */
static __thread uint32_t cached_tid;
static uint32_t my_tid(void)
{
	if (!cached_tid)
		cached_tid = (uint32_t)syscall(SYS_gettid);
	return cached_tid;
}

static atomic_int first_launch_logged;
static void child_after_fork(void)
{
	atomic_store(&first_launch_logged, 0);
	cached_tid = 0; /* the forking thread has a new tid in the child */
	pthread_mutex_init(&lock, NULL);
	/* the parent's half-filled buffer is the parent's; with
	 * FAKE_CUPTI_FORK_KEEPS_BUFFER=1 the child's flush hands it over (what a
	 * CUPTI might do: the shim must not make a trace of it) */
	const char *keep = getenv("FAKE_CUPTI_FORK_KEEPS_BUFFER");
	if (keep && !strcmp(keep, "1"))
		return;
	cur_buf = NULL;
	cur_size = cur_used = 0;
}

__attribute__((constructor)) static void fake_init(void)
{
	pthread_atfork(NULL, NULL, child_after_fork);
}

/* ------------------------------------------------------------ misc */
EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	switch (r) {
	case CUPTI_SUCCESS: *s = "CUPTI_SUCCESS"; break;
	case CUPTI_ERROR_INVALID_PARAMETER: *s = "CUPTI_ERROR_INVALID_PARAMETER"; break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*s = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	case CUPTI_ERROR_NOT_SUPPORTED: *s = "CUPTI_ERROR_NOT_SUPPORTED"; break;
	default: *s = "CUPTI_ERROR_UNKNOWN"; break;
	}
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	/* real CUPTI on Linux: CLOCK_REALTIME */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	*t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain dom, uint32_t cbid, const char **name)
{
	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const struct cbname *t = NULL;
	size_t n = 0;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		t = rt_names;
		n = sizeof rt_names / sizeof rt_names[0];
	} else if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		t = drv_names;
		n = sizeof drv_names / sizeof drv_names[0];
	}
	for (size_t i = 0; i < n; i++)
		if (t[i].cbid == cbid) {
			*name = t[i].name;
			return CUPTI_SUCCESS;
		}
	*name = NULL;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ------------------------------------------------------------ callbacks */
/* libcupti's own exit teardown: the real library registers exit handlers
 * (static destructors) when it initialises, i.e. after our constructor's
 * handler, so they run before it; toggling an activity kind after them
 * crashed OpenMPI's orted under --gpu-window on the H200 (SIGSEGV in
 * cuptiActivityDisable from our destructor: orted runs cuInit, binds CUPTI,
 * never makes a context).  The fake registers its "library teardown" at the
 * first subscribe and aborts on a kind toggled after it. */
static atomic_int cupti_lib_gone;
static void fake_cupti_library_teardown(void) { atomic_store(&cupti_lib_gone, 1); }
static void cupti_lib_check(const char *call)
{
	if (atomic_load(&cupti_lib_gone)) {
		fprintf(stderr, "fake cupti: %s after the library's exit teardown\n", call);
		abort();
	}
}

/* One subscriber per process, as cupti_callbacks.h says of cuptiSubscribe
 * ("Only a single subscriber can be registered at a time ... returns the
 * error code CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"): a second
 * subscriber is refused until the first unsubscribes (or cuptiFinalize). */
EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud)
{
	static atomic_int teardown_registered;
	if (!atomic_exchange(&teardown_registered, 1))
		atexit(fake_cupti_library_teardown);
	const char *busy = getenv("FAKE_CUPTI_BUSY");
	pthread_mutex_lock(&lock);
	if (subscribed || (busy && *busy == '1')) {
		pthread_mutex_unlock(&lock);
		flog("subscribe-refused");
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	subscribed = 1;
	subscriber_cb = cb;
	subscriber_ud = ud;
	*h = (CUpti_SubscriberHandle)(uintptr_t)0x5;
	pthread_mutex_unlock(&lock);
	flog("subscribe");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	(void)h;
	pthread_mutex_lock(&lock);
	subscribed = 0;
	subscriber_cb = NULL;
	cb_clear();
	pthread_mutex_unlock(&lock);
	flog("unsubscribe");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
				       CUpti_CallbackId cbid)
{
	(void)h;
	if (d <= 0 || d >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* FAKE_CUPTI_LOG: switches of the runtime launch callback, so tests
	 * can order them against the GPU kinds' "activity-enable 10" lines */
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 &&
	    cb_on(d, cbid) != (en ? 1 : 0))
		flog(en ? "callback-enable cudaLaunchKernel" : "callback-disable cudaLaunchKernel");
	cb_set(d, cbid, en ? 1 : 0);
	return CUPTI_SUCCESS;
}

/* For tests of a tool's callback switching: is (d, cbid) enabled now? */
EXPORT int fake_cupti_callback_enabled(int d, uint32_t cbid)
{
	if (d <= 0 || d >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID)
		return -1;
	return cb_on(d, cbid);
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d)
{
	(void)h;
	if (d <= 0 || d >= CUPTI_CB_DOMAIN_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cb_set_domain(d, en ? 1 : 0);
	flog(d == CUPTI_CB_DOMAIN_RUNTIME_API ? "enable-domain-runtime" : "enable-domain");
	return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------ activity */
/* Like CUPTI: a kind produces records only while enabled; records already
 * in the buffer stay there.  FAKE_CUPTI_LOG gets "activity-enable K" /
 * "activity-disable K" for the GPU kinds (kernel 10, memcpy 1, memset 2) so
 * tests can count the window edges. */
/* Set once the context-destroy callback has run (CUDA's atexit teardown):
 * the real CUPTI crashed the job when kinds were toggled from then on, so
 * the log marks such toggles "after-destroy". */
static atomic_int ctx_destroyed;
static void log_toggle(const char *what, CUpti_ActivityKind k)
{
	if (k != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && k != CUPTI_ACTIVITY_KIND_MEMCPY &&
	    k != CUPTI_ACTIVITY_KIND_MEMSET)
		return;
	char line[80];
	snprintf(line, sizeof line, "%s %d%s", what, (int)k,
		 atomic_load(&ctx_destroyed) ? " after-destroy" : "");
	flog(line);
}
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if ((unsigned)k >= FAKE_NKINDS)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cupti_lib_check("cuptiActivityEnable");
	atomic_store_explicit(&act_enabled[k], 1, memory_order_release);
	log_toggle("activity-enable", k);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if ((unsigned)k >= FAKE_NKINDS)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cupti_lib_check("cuptiActivityDisable");
	atomic_store_explicit(&act_enabled[k], 0, memory_order_release);
	log_toggle("activity-disable", k);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t en)
{
	if (cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	act_api_rt[cbid] = en;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t en)
{
	if (cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	act_api_drv[cbid] = en;
	return CUPTI_SUCCESS;
}
/* One pair of buffer callbacks per process: cupti_activity.h lists no error
 * for a second registration (only CUPTI_ERROR_INVALID_PARAMETER for a NULL),
 * so it replaces the first, silently.  The buffer being filled stays where
 * it is and is handed, when it completes, to the pair registered then: a
 * tool whose buffer is in flight gets it back through the other tool's
 * completion callback (Kineto's says "bufferCompleted called with unknown
 * buffer" and drops it). */
EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc done)
{
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	buf_req = req;
	buf_done = done;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	const char *no = getenv("FAKE_CUPTI_NO_TSCB");
	if (no && *no == '1')
		return CUPTI_ERROR_NOT_SUPPORTED;
	if (!f)
		return CUPTI_ERROR_INVALID_PARAMETER;
	ts_cb = f;
	return CUPTI_SUCCESS;
}
/* FAKE_CUPTI_FLUSH_PERIOD=1: like the real CUPTI, a thread of ours hands
 * back the current buffer every `ms` (otherwise only a full buffer or
 * cuptiActivityFlushAll does). */
static uint32_t flush_period_ms;
static void *period_flusher(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts = { flush_period_ms / 1000, (long)(flush_period_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		cuptiActivityFlushAll(0);
	}
	return NULL;
}
EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	const char *on = getenv("FAKE_CUPTI_FLUSH_PERIOD");
	if (on && !strcmp(on, "1") && ms && !flush_period_ms) {
		flush_period_ms = ms;
		pthread_t th;
		if (pthread_create(&th, NULL, period_flusher, NULL) == 0)
			pthread_detach(th);
	}
	return CUPTI_SUCCESS;
}
/* cupti_activity.h, cuptiFinalize: "destroys and cleans up all the
 * resources associated with CUPTI in the current process"; the client
 * flushes first.  So: no subscriber, no callback, no kind, no buffer
 * callbacks (the buffer being filled is dropped), no timestamp callback;
 * a client may subscribe and register again (Kineto does).
 * FAKE_CUPTI_LOG gets "finalize". */
EXPORT CUptiResult cuptiFinalize(void)
{
	pthread_mutex_lock(&lock);
	subscribed = 0;
	subscriber_cb = NULL;
	cb_clear();
	for (unsigned k = 0; k < FAKE_NKINDS; k++)
		atomic_store(&act_enabled[k], 0);
	buf_req = NULL;
	buf_done = NULL;
	ts_cb = NULL;
	cur_buf = NULL; /* the client's memory: not ours to free */
	cur_size = cur_used = 0;
	pthread_mutex_unlock(&lock);
	flog("finalize");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	pthread_mutex_lock(&lock);
	*n = dropped;
	dropped = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

/* Records are stored back to back, each padded to 8 bytes; the size of a
 * record follows from its kind, as in real CUPTI. */
static size_t record_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	default: return 0;
	}
}
static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
	size_t off = 0;
	if (*rec) {
		off = (size_t)((uint8_t *)*rec - buffer);
		size_t sz = record_size((*rec)->kind);
		if (!sz)
			return CUPTI_ERROR_INVALID_KIND;
		off += pad8(sz);
	}
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(buffer + off);
	return CUPTI_SUCCESS;
}

/* takes the current buffer out (under lock) for delivery (outside it) */
static void deliver(uint8_t *b, size_t size, size_t used)
{
	if (b && buf_done)
		buf_done(NULL, 0, b, size, used);
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&lock);
	uint8_t *b = cur_buf;
	size_t sz = cur_size, used = cur_used;
	cur_buf = NULL;
	cur_size = cur_used = 0;
	pthread_mutex_unlock(&lock);
	if (b)
		deliver(b, sz, used);
	flog("flush-all");
	return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------ test API */
EXPORT uint64_t fake_cupti_now(void)
{
	if (ts_cb)
		return ts_cb();
	uint64_t t;
	cuptiGetTimestamp(&t);
	return t;
}

static void push_record(const void *record, size_t size, int force)
{
	const CUpti_Activity *a = record;
	if (!force && ((unsigned)a->kind >= FAKE_NKINDS ||
		       !atomic_load_explicit(&act_enabled[a->kind], memory_order_acquire)))
		return;
	if (!buf_req)
		return;
	size_t need = pad8(size);
	uint8_t *full = NULL, *extra = NULL;
	size_t full_size = 0, full_used = 0, extra_size = 0;
	pthread_mutex_lock(&lock);
	if (cur_buf && cur_used + need > cur_size) {
		full = cur_buf;
		full_size = cur_size;
		full_used = cur_used;
		cur_buf = NULL;
	}
	if (!cur_buf) {
		uint8_t *b = NULL;
		size_t sz = 0, maxrec = 0;
		pthread_mutex_unlock(&lock); /* the client's callback may take its own locks */
		buf_req(&b, &sz, &maxrec);
		pthread_mutex_lock(&lock);
		if (cur_buf) { /* another thread got one meanwhile: hand ours back
				* empty, outside the lock (the client calls into us) */
			extra = b;
			extra_size = sz;
		} else if (!b || sz < need) {
			dropped++;
			pthread_mutex_unlock(&lock);
			deliver(full, full_size, full_used);
			if (b) /* too small: back to the client */
				deliver(b, sz, 0);
			return;
		} else {
			cur_buf = b;
			cur_size = sz;
			cur_used = 0;
		}
	}
	memcpy(cur_buf + cur_used, record, size);
	memset(cur_buf + cur_used + size, 0, need - size);
	cur_used += need;
	pthread_mutex_unlock(&lock);
	deliver(full, full_size, full_used);
	deliver(extra, extra_size, 0);
}

EXPORT void fake_cupti_push_record(const void *record, size_t size)
{
	push_record(record, size, 0);
}

EXPORT void fake_cupti_call_enter(struct fake_cupti_call *c)
{
	if (c->func && strstr(c->func, "LaunchKernel") && !atomic_exchange(&first_launch_logged, 1))
		flog("first-launch"); /* the PM set-up test: before or after pm-start */
	c->correlation_id = atomic_fetch_add(&next_corr, 1);
	c->start = fake_cupti_now();
	c->tid = my_tid();
	CUpti_CallbackFunc cb = subscriber_cb;
	if (!cb || c->domain <= 0 || c->domain >= CUPTI_CB_DOMAIN_SIZE || c->cbid >= MAX_CBID ||
	    !cb_on(c->domain, c->cbid))
		return;
	CUpti_CallbackData d;
	memset(&d, 0, sizeof d);
	d.callbackSite = CUPTI_API_ENTER;
	d.functionName = c->func;
	d.functionParams = c->params;
	d.functionReturnValue = &c->ret;
	d.symbolName = c->symbol;
	d.context = (CUcontext)(uintptr_t)1; /* the one context, device 0 (cuptiGetDeviceId) */
	d.contextUid = 1;
	d.correlationData = &c->correlation_data;
	d.correlationId = c->correlation_id;
	cb(subscriber_ud, (CUpti_CallbackDomain)c->domain, c->cbid, &d);
}

EXPORT void fake_cupti_call_exit(struct fake_cupti_call *c)
{
	CUpti_CallbackFunc cb = subscriber_cb;
	if (cb && c->domain > 0 && c->domain < CUPTI_CB_DOMAIN_SIZE && c->cbid < MAX_CBID &&
	    cb_on(c->domain, c->cbid)) {
		CUpti_CallbackData d;
		memset(&d, 0, sizeof d);
		d.callbackSite = CUPTI_API_EXIT;
		d.functionName = c->func;
		d.functionParams = c->params;
		d.functionReturnValue = &c->ret;
		d.symbolName = c->symbol;
		d.context = (CUcontext)(uintptr_t)1;
		d.contextUid = 1;
		d.correlationData = &c->correlation_data;
		d.correlationId = c->correlation_id;
		cb(subscriber_ud, (CUpti_CallbackDomain)c->domain, c->cbid, &d);
	}
	/* per-API activity records (GPUPROF_API_MODE=activity) */
	int rt = c->domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	unsigned kind = rt ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
	if (c->cbid < MAX_CBID && (atomic_load_explicit(&act_enabled[kind], memory_order_relaxed) ||
				   (rt ? act_api_rt : act_api_drv)[c->cbid])) {
		CUpti_ActivityAPI a;
		memset(&a, 0, sizeof a);
		a.kind = (CUpti_ActivityKind)kind;
		a.cbid = c->cbid;
		a.start = c->start;
		a.end = fake_cupti_now();
		a.processId = (uint32_t)getpid();
		a.threadId = c->tid;
		a.correlationId = c->correlation_id;
		a.returnValue = (uint32_t)c->ret;
		push_record(&a, sizeof a, 1);
	}
}

EXPORT void fake_cupti_resource(uint32_t cbid)
{
	CUpti_CallbackFunc cb = subscriber_cb;
	if (!cb || cbid >= MAX_CBID || !cb_on(CUPTI_CB_DOMAIN_RESOURCE, cbid))
		return;
	CUpti_ResourceData d;
	memset(&d, 0, sizeof d);
	cb(subscriber_ud, CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
	if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		atomic_store(&ctx_destroyed, 1);
		flog("context-destroy");
	}
}

EXPORT void fake_cupti_resource_graph(uint32_t cbid, const void *graph_data)
{
	CUpti_CallbackFunc cb = subscriber_cb;
	if (!cb || cbid >= MAX_CBID || !cb_on(CUPTI_CB_DOMAIN_RESOURCE, cbid))
		return;
	CUpti_ResourceData d;
	memset(&d, 0, sizeof d);
	d.context = (CUcontext)(uintptr_t)1;
	d.resourceDescriptor = (void *)(uintptr_t)graph_data;
	cb(subscriber_ud, CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
}

/* The graph ids of the fake libcudart's objects (fake_api.h).
 * FAKE_CUPTI_GRAPH_IDS=fail: they fail, as a CUPTI that cannot tell. */
static int graph_ids_fail(void)
{
	const char *e = getenv("FAKE_CUPTI_GRAPH_IDS");
	return e && !strcmp(e, "fail");
}
EXPORT CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
	if (!node || !id)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (graph_ids_fail())
		return CUPTI_ERROR_NOT_SUPPORTED;
	*id = ((const struct fake_graph_obj *)(const void *)node)->id;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *id)
{
	if (!graph || !id)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (graph_ids_fail())
		return CUPTI_ERROR_NOT_SUPPORTED;
	*id = (uint32_t)((const struct fake_graph_obj *)(const void *)graph)->id;
	return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------ PM sampling */
/* The PM sampling and profiler host API (GPUPROF_PM_SAMPLING), left out when
 * built with -DFAKE_NO_PM (a CUPTI older than 12.6).  FAKE_CUPTI_PM picks
 * the answer: unset = not supported (cuptiPmSamplingGetCounterAvailability
 * fails), "privileges" = cuptiPmSamplingEnable answers
 * INSUFFICIENT_PRIVILEGES, "ok-nodram" = "ok" on a chip that lists no
 * DRAM metric, "ok-refuse-tensor" = "ok" but the listed
 * sm__pipe_tensor_cycles_active_realtime is refused when added (the hmma one,
 * value 7, is accepted), "ok" = synthetic samples: sample n (from 0 at
 * Start) spans [start + n*interval, start + (n+1)*interval) on
 * CLOCK_REALTIME (real CUPTI calls them "CPU based"; which clock is not
 * documented) and has the values of fake_metric_value.  The chip lists no
 * sm__warps_active (the shim derives occupancy from the two unused-warp-slot
 * metrics) and no dramc__*.  FAKE_CUPTI_PM_DELAY_MS=N: cuptiPmSamplingEnable
 * takes N ms.  FAKE_CUPTI_LOG gets pm-enable, pm-start, pm-stop, pm-disable,
 * and first-launch at the process's first kernel launch. */
#ifndef FAKE_NO_PM
#define PCT ".avg.pct_of_peak_sustained_elapsed"
static const char *const fake_base_metrics[] = {
	"sm__cycles_active", "tpc__warps_inactive_sm_active_realtime",
	"tpc__warps_inactive_sm_idle_realtime", "sm__pipe_tensor_cycles_active_realtime",
	"dram__throughput", "gpc__cycles_elapsed", "sm__pipe_tensor_op_hmma_cycles_active",
};
#define N_FAKE_METRICS (sizeof fake_base_metrics / sizeof fake_base_metrics[0])

static double fake_metric_value(const char *name, uint64_t n)
{
	if (!strcmp(name, "sm__cycles_active" PCT)) return (double)(n % 100);
	if (!strcmp(name, "tpc__warps_inactive_sm_active_realtime" PCT)) return 10.0 + (double)(n % 5);
	if (!strcmp(name, "tpc__warps_inactive_sm_idle_realtime" PCT)) return 30.0;
	if (!strcmp(name, "sm__pipe_tensor_cycles_active_realtime" PCT)) return 0.5 * (double)(n % 10);
	if (!strcmp(name, "dram__throughput" PCT)) return 42.0;
	if (!strcmp(name, "sm__pipe_tensor_op_hmma_cycles_active" PCT)) return 7.0;
	return -1;
}

static int fake_pm_mode(void) /* 0 unsupported, 1 privileges, 2 ok */
{
	const char *m = getenv("FAKE_CUPTI_PM");
	if (m && (!strcmp(m, "ok") || !strcmp(m, "ok-nodram") || !strcmp(m, "ok-refuse-tensor"))) return 2;
	if (m && !strcmp(m, "privileges")) return 1;
	return 0;
}

struct fake_pm_sample { uint64_t seq, start, end; };
struct fake_pm_image { uint32_t magic, cap, n, pad; struct fake_pm_sample s[]; };
#define FAKE_PM_MAGIC 0x504d494du
static struct {
	int enabled, started;
	uint64_t interval, t_start, t_stop, next_seq;
} pm;
static int fake_host_object, fake_pm_object;

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT CUptiResult cuptiGetDeviceId(CUcontext ctx, uint32_t *dev)
{
	(void)ctx;
	*dev = 0;
	return CUPTI_SUCCESS;
}
/* The real CUPTI loads libnvperf_host at PM set-up; that library's static
 * destructors are exit handlers registered then, so they run before any
 * handler registered earlier (a tracer's final flush), and a PM call made
 * after them works on freed state (issue #18: SIGSEGV in
 * NVPW_GPU_PeriodicSampler_StopSampling at exit).  The fake registers its
 * own "library teardown" in cuptiProfilerInitialize and aborts, as the real
 * one crashes, on any PM sampling call after it. */
static int pm_lib_gone;
static void fake_pm_library_teardown(void) { pm_lib_gone = 1; }
static void pm_lib_check(const char *call)
{
	if (pm_lib_gone) {
		fprintf(stderr, "fake cupti: %s after the PM library's exit teardown\n", call);
		abort();
	}
}
EXPORT CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
	static int registered;
	if (!registered) {
		registered = 1;
		atexit(fake_pm_library_teardown);
	}
	(void)p;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
	if (p->deviceIndex != 0)
		return CUPTI_ERROR_INVALID_DEVICE;
	p->pChipName = "GH100";
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
	if (fake_pm_mode() == 0)
		return CUPTI_ERROR_NOT_SUPPORTED;
	if (p->pCounterAvailabilityImage)
		memset(p->pCounterAvailabilityImage, 0xa5, p->counterAvailabilityImageSize);
	else
		p->counterAvailabilityImageSize = 64;
	return CUPTI_SUCCESS;
}
/* The buffers the caller hands over at set-up, kept by pointer as the real
 * CUPTI does: the host object keeps the chip name and the counter
 * availability image, the PM sampling object the config image (on the H200
 * a shim that freed the config image after SetConfig crashed inside
 * DecodeData once the block was reused: issue #18).  The fake checks them
 * where it uses them, and answers INVALID_PARAMETER when they have changed,
 * so a shim that frees or reuses them loses its samples here. */
static struct {
	const char *chip;
	const uint8_t *avail;
	size_t avail_size;
	const uint8_t *config;
	size_t config_size;
} kept;
static int kept_intact(int config_too)
{
	if (kept.chip && strcmp(kept.chip, "GH100"))
		return 0;
	for (size_t i = 0; kept.avail && i < kept.avail_size; i++)
		if (kept.avail[i] != 0xa5)
			return 0;
	for (size_t i = 0; config_too && kept.config && i < kept.config_size; i++)
		if (kept.config[i] != 0x5a)
			return 0;
	return 1;
}
EXPORT CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
	if (p->profilerType != CUPTI_PROFILER_TYPE_PM_SAMPLING || !p->pChipName ||
	    strcmp(p->pChipName, "GH100"))
		return CUPTI_ERROR_INVALID_PARAMETER;
	kept.chip = p->pChipName;
	kept.avail = p->pCounterAvailabilityImage;
	kept.avail_size = kept.avail ? 64 : 0;
	p->pHostObject = (CUpti_Profiler_Host_Object *)&fake_host_object;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
	(void)p;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params *p)
{
	/* all of them under RATIO: the shim must look through every type */
	static const char *nodram[N_FAKE_METRICS];
	const char *m = getenv("FAKE_CUPTI_PM");
	if (p->metricType == CUPTI_METRIC_TYPE_RATIO && m && !strcmp(m, "ok-nodram")) {
		size_t n = 0;
		for (size_t i = 0; i < N_FAKE_METRICS; i++)
			if (strncmp(fake_base_metrics[i], "dram", 4))
				nodram[n++] = fake_base_metrics[i];
		p->ppMetricNames = nodram;
		p->numMetrics = n;
	} else if (p->metricType == CUPTI_METRIC_TYPE_RATIO) {
		p->ppMetricNames = (const char **)fake_base_metrics;
		p->numMetrics = N_FAKE_METRICS;
	} else {
		p->ppMetricNames = NULL;
		p->numMetrics = 0;
	}
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
	const char *m = getenv("FAKE_CUPTI_PM");
	int refuse = m && !strcmp(m, "ok-refuse-tensor");
	for (size_t i = 0; i < p->numMetrics; i++)
		if (fake_metric_value(p->ppMetricNames[i], 0) < 0 ||
		    (refuse && !strcmp(p->ppMetricNames[i], "sm__pipe_tensor_cycles_active_realtime" PCT)))
			return CUPTI_ERROR_INVALID_METRIC_NAME;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
	p->configImageSize = 16;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
	if (!p->pConfigImage || p->configImageSize < 16)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(p->pConfigImage, 0x5a, 16);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
	p->numOfPasses = 1;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{

	const char *delay = getenv("FAKE_CUPTI_PM_DELAY_MS"); /* a slow set-up */
	if (delay && atoi(delay) > 0) {
		struct timespec ts = {atoi(delay) / 1000, (long)(atoi(delay) % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	if (fake_pm_mode() == 1)
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	if (fake_pm_mode() == 0)
		return CUPTI_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&lock);
	memset(&pm, 0, sizeof pm);
	pm.enabled = 1;
	pthread_mutex_unlock(&lock);
	p->pPmSamplingObject = (CUpti_PmSampling_Object *)&fake_pm_object;
	flog("pm-enable");
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
	(void)p;
	pthread_mutex_lock(&lock);
	pm.enabled = 0;
	pthread_mutex_unlock(&lock);
	flog("pm-disable");
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
	if (!pm.enabled || !p->pConfig || p->configSize != 16 || !p->samplingInterval ||
	    p->triggerMode != CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pm.interval = p->samplingInterval;
	kept.config = p->pConfig;
	kept.config_size = p->configSize;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
	(void)p;
	if (!pm.enabled || !pm.interval)
		return CUPTI_ERROR_INVALID_OPERATION;
	pthread_mutex_lock(&lock);
	pm.t_start = realtime_ns();
	pm.started = 1;
	pthread_mutex_unlock(&lock);
	flog("pm-start");
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
	pm_lib_check("cuptiPmSamplingStop");
	(void)p;
	pthread_mutex_lock(&lock);
	pm.t_stop = realtime_ns();
	pm.started = 0;
	pthread_mutex_unlock(&lock);
	flog("pm-stop");
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
	if (!p->maxSamples || !p->numMetrics)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->counterDataSize = sizeof(struct fake_pm_image) + p->maxSamples * sizeof(struct fake_pm_sample);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingCounterDataImageInitialize(
	CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
	if (!p->pCounterData || p->counterDataSize < sizeof(struct fake_pm_image))
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct fake_pm_image *im = (struct fake_pm_image *)p->pCounterData;
	im->magic = FAKE_PM_MAGIC;
	im->cap = (uint32_t)((p->counterDataSize - sizeof *im) / sizeof(struct fake_pm_sample));
	im->n = 0;
	return CUPTI_SUCCESS;
}
static struct fake_pm_image *fake_image(const uint8_t *b)
{
	struct fake_pm_image *im = (struct fake_pm_image *)(uintptr_t)b;
	return im && im->magic == FAKE_PM_MAGIC ? im : NULL;
}
EXPORT CUptiResult cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
	pm_lib_check("cuptiPmSamplingDecodeData");
	struct fake_pm_image *im = fake_image(p->pCounterDataImage);
	if (!im || !pm.enabled || !kept_intact(1))
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	uint64_t now = pm.started ? realtime_ns() : pm.t_stop;
	uint64_t done = now > pm.t_start && pm.interval ? (now - pm.t_start) / pm.interval : 0;
	while (pm.next_seq < done && im->n < im->cap) {
		struct fake_pm_sample *s = &im->s[im->n++];
		s->seq = pm.next_seq++;
		s->start = pm.t_start + s->seq * pm.interval;
		s->end = s->start + pm.interval;
	}
	p->decodeStopReason = pm.next_seq < done ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL
						 : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
	p->overflow = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
	struct fake_pm_image *im = fake_image(p->pCounterDataImage);
	if (!im)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->numTotalSamples = im->cap;
	p->numPopulatedSamples = im->n;
	p->numCompletedSamples = im->n;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPmSamplingCounterDataGetSampleInfo(
	CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
	struct fake_pm_image *im = fake_image(p->pCounterDataImage);
	if (!im || p->sampleIndex >= im->n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->startTimestamp = im->s[p->sampleIndex].start;
	p->endTimestamp = im->s[p->sampleIndex].end;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
	struct fake_pm_image *im = fake_image(p->pCounterDataImage);
	if (!im || p->rangeIndex >= im->n || !p->pMetricValues || !kept_intact(0))
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < p->numMetrics; i++) {
		double v = fake_metric_value(p->ppMetricNames[i], im->s[p->rangeIndex].seq);
		if (v < 0)
			return CUPTI_ERROR_INVALID_METRIC_NAME;
		p->pMetricValues[i] = v;
	}
	return CUPTI_SUCCESS;
}
#endif /* FAKE_NO_PM */
