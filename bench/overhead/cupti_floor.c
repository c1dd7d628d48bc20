/* cupti_floor.c — the cost floor of any CUPTI activity tracer.
 *
 * LD_PRELOAD=libcupti_floor.so JOB enables ONLY the activity kinds every
 * GPU tracer needs (CONCURRENT_KERNEL, MEMCPY, MEMSET), hands CUPTI buffers
 * from a free list, and on completion just walks the records to count them
 * before recycling the buffer.  No API callbacks, no NVTX, no decoding, no
 * file.  The overhead bench reports gpuprof relative to this: what is above
 * the floor is ours; the floor itself is CUPTI's (kernel serialisation under
 * CONCURRENT_KERNEL, record generation) and no tracer can avoid it.
 *
 * Env: CUPTI_FLOOR_LIB     libcupti to dlopen (default: an already loaded
 *                          libcupti.so.13, else the CUDA 13.0 toolkit's)
 *      CUPTI_FLOOR_BUFFER_KB  activity buffer size (default 4096)
 *      CUPTI_FLOOR_QUIET   set: no summary line at exit
 *      CUPTI_FLOOR_CAPTURE=1  honour the CUDA profiler API, like
 *                          `gpuprof run --capture-range=cudaProfilerApi`: the
 *                          kinds start OFF and are on only between
 *                          cudaProfilerStart and cudaProfilerStop (the
 *                          in-process A/B of bench/overhead, TOGGLE_PAIRS).
 *                          For that it subscribes a callback enabled for the
 *                          four profiler start/stop cbids only (runtime and
 *                          driver: one runtime call fires both, so the
 *                          switch is idempotent); no other API callback.
 *      CUPTI_FLOOR_API=default|runtime  also enable an EMPTY API callback
 *                          for gpuprof's default set of API calls
 *                          (shim/nvidia/gps_cbid.c, the same name patterns;
 *                          runtime: without the driver domain, like
 *                          GPUPROF_API_DRIVER=0).  What CUPTI's callback
 *                          dispatch costs before a tracer does any work of
 *                          its own: the floor of a callback-based API
 *                          tracer.  Under CUPTI_FLOOR_CAPTURE they are on
 *                          only inside the capture ranges, like the kinds.
 *      CUPTI_FLOOR_KINDS=none  no activity kind at all: with CUPTI_FLOOR_API,
 *                          what a tracer that records API calls but no GPU
 *                          activity (gpuprof's armed mode) cannot go below.
 * At exit (main process only) it flushes and prints one line to stderr:
 *   cupti_floor: records=N buffers=N dropped=N
 */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvidia/gps_cbid.h" /* gps_cbid_default: gpuprof's default API set */

#define DEFAULT_CUPTI "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13"
#define ALIGN 8

static struct {
	CUptiResult (*register_cb)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	/* CUPTI_FLOOR_CAPTURE only */
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
	                               CUpti_CallbackId);
	/* CUPTI_FLOOR_API only */
	CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
} fn;

static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                          CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* Capture state under CUPTI_FLOOR_CAPTURE.  The lock orders a start and a
 * stop from two threads; the flag makes the second of the runtime/driver
 * pair (and a repeated start or stop) a no-op. */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static int capture_mode; /* CUPTI_FLOOR_CAPTURE=1 and subscribed */
static int capturing;
/* CUPTI_FLOOR_API: the cbids of gpuprof's default set, per domain */
static CUpti_SubscriberHandle subscriber;
static int api_floor;
#define MAX_API_CBIDS 1024
static struct { CUpti_CallbackDomain domain; CUpti_CallbackId cbid; } api_cbids[MAX_API_CBIDS];
static int n_api_cbids;
static unsigned long n_captures; /* start edges, for the exit line */

static pid_t owner_pid;
static size_t buf_size = 4u << 20;
static atomic_ullong n_records, n_buffers, n_dropped;

/* Free list of buffers: CUPTI asks for one whenever it fills one, from its
 * own threads; a mutex is cheap at that rate (once per buffer). */
struct freebuf { struct freebuf *next; };
static struct freebuf *free_list;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	pthread_mutex_lock(&free_lock);
	struct freebuf *b = free_list;
	if (b)
		free_list = b->next;
	pthread_mutex_unlock(&free_lock);
	if (!b)
		b = aligned_alloc(ALIGN, buf_size);
	*buffer = (uint8_t *)b;
	*size = b ? buf_size : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
	(void)size;
	unsigned long long n = 0;
	CUpti_Activity *rec = NULL;
	while (fn.next_record(buffer, valid, &rec) == CUPTI_SUCCESS)
		n++;
	size_t dropped = 0;
	if (fn.dropped && fn.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
		atomic_fetch_add(&n_dropped, dropped);
	atomic_fetch_add(&n_records, n);
	atomic_fetch_add(&n_buffers, 1);
	if (!buffer)
		return;
	struct freebuf *b = (struct freebuf *)buffer;
	pthread_mutex_lock(&free_lock);
	b->next = free_list;
	free_list = b;
	pthread_mutex_unlock(&free_lock);
}

static void at_exit(void)
{
	if (getpid() != owner_pid) /* a forked child that never used CUDA */
		return;
	fn.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (getenv("CUPTI_FLOOR_QUIET"))
		return;
	char cap[48] = "";
	if (capture_mode) {
		pthread_mutex_lock(&capture_lock);
		snprintf(cap, sizeof cap, " captures=%lu", n_captures);
		pthread_mutex_unlock(&capture_lock);
	}
	fprintf(stderr, "cupti_floor: records=%llu buffers=%llu dropped=%llu%s api_cbids=%d\n",
	        (unsigned long long)n_records, (unsigned long long)n_buffers,
	        (unsigned long long)n_dropped, cap, n_api_cbids);
}

static CUptiResult set_kinds(int on)
{
	CUptiResult r = CUPTI_SUCCESS;
	for (size_t i = 0; r == CUPTI_SUCCESS && i < N_KINDS; i++)
		r = on ? fn.enable(kinds[i]) : fn.disable(kinds[i]);
	for (int i = 0; r == CUPTI_SUCCESS && i < n_api_cbids; i++)
		r = fn.enable_callback(on ? 1 : 0, subscriber, api_cbids[i].domain, api_cbids[i].cbid);
	return r;
}

static void set_capture(int on)
{
	pthread_mutex_lock(&capture_lock);
	if (capturing != on) {
		CUptiResult r = set_kinds(on);
		if (r != CUPTI_SUCCESS)
			fprintf(stderr, "cupti_floor: activity %s failed (CUptiResult %d)\n",
			        on ? "enable" : "disable", (int)r);
		capturing = on;
		n_captures += on;
	}
	pthread_mutex_unlock(&capture_lock);
}

/* The four calls that start and stop a capture range (a runtime call and
 * the driver call it makes both arrive: set_capture makes the second a
 * no-op). */
static const struct {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	int start;
} profiler_calls[] = {
	{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1},
	{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 0},
	{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 1},
	{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, 0},
};
#define N_PROFILER_CALLS (sizeof profiler_calls / sizeof profiler_calls[0])

/* 1 + index in profiler_calls, 0 when not a profiler call */
static int profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < N_PROFILER_CALLS; i++)
		if (profiler_calls[i].domain == domain && profiler_calls[i].cbid == cbid)
			return (int)i + 1;
	return 0;
}

/* The one subscriber's callback.  Profiler start/stop (CUPTI_FLOOR_CAPTURE):
 * on at the start call's exit (the job's next launch is captured, the start
 * call itself not); off at the stop call's entry (the stop call not).  Any
 * other call (CUPTI_FLOOR_API) returns at once: only CUPTI's dispatch is
 * paid. */
static void CUPTIAPI floor_api_cb(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void *cbdata)
{
	(void)userdata;
	int k = capture_mode ? profiler_call(domain, cbid) : 0;
	if (!k)
		return;
	const CUpti_CallbackData *d = cbdata;
	int start = profiler_calls[k - 1].start;
	if (start && d->callbackSite == CUPTI_API_EXIT)
		set_capture(1);
	else if (!start && d->callbackSite == CUPTI_API_ENTER)
		set_capture(0);
}

/* Binds what the callback flavours need and subscribes floor_api_cb
 * (once: CUPTI takes one subscriber). */
static CUptiResult subscribe_once(void *h)
{
	if (subscriber)
		return CUPTI_SUCCESS;
	fn.disable = (CUptiResult(*)(CUpti_ActivityKind))dlsym(h, "cuptiActivityDisable");
	fn.subscribe = (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))
		dlsym(h, "cuptiSubscribe");
	fn.enable_callback = (CUptiResult(*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
	                                     CUpti_CallbackId))dlsym(h, "cuptiEnableCallback");
	fn.callback_name = (CUptiResult(*)(CUpti_CallbackDomain, uint32_t, const char **))
		dlsym(h, "cuptiGetCallbackName");
	if (!fn.disable || !fn.subscribe || !fn.enable_callback || !fn.callback_name)
		return CUPTI_ERROR_NOT_SUPPORTED;
	return fn.subscribe(&subscriber, floor_api_cb, NULL);
}

/* CUPTI_FLOOR_API: gpuprof's default set by name, like gps_cupti.c does. */
static CUptiResult collect_api_cbids(void *h, int with_driver)
{
	CUptiResult r = subscribe_once(h);
	for (int dom = with_driver ? 1 : 2; r == CUPTI_SUCCESS && dom <= 2; dom++)
		for (uint32_t cbid = 1; cbid < 4096 && n_api_cbids < MAX_API_CBIDS; cbid++) {
			const char *name = NULL;
			if (fn.callback_name((CUpti_CallbackDomain)dom, cbid, &name) != CUPTI_SUCCESS || !name)
				continue;
			if (!gps_cbid_default(dom, name) || profiler_call((CUpti_CallbackDomain)dom, cbid))
				continue;
			api_cbids[n_api_cbids].domain = (CUpti_CallbackDomain)dom;
			api_cbids[n_api_cbids++].cbid = cbid;
		}
	api_floor = r == CUPTI_SUCCESS && n_api_cbids > 0;
	return r;
}

/* Subscribes floor_api_cb to the four start/stop cbids. */
static CUptiResult subscribe_profiler_api(void *h)
{
	CUptiResult r0 = subscribe_once(h);
	if (r0 != CUPTI_SUCCESS)
		return r0;
	CUptiResult r = CUPTI_SUCCESS;
	for (size_t i = 0; r == CUPTI_SUCCESS && i < N_PROFILER_CALLS; i++)
		r = fn.enable_callback(1, subscriber, profiler_calls[i].domain, profiler_calls[i].cbid);
	return r;
}

static void *open_cupti(void)
{
	const char *p = getenv("CUPTI_FLOOR_LIB");
	if (p && *p)
		return dlopen(p, RTLD_NOW | RTLD_GLOBAL);
	/* Share the copy the job already uses (torch loads its own): two
	 * CUPTIs in one process would fight over the driver's tool hooks. */
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
	return h ? h : dlopen(DEFAULT_CUPTI, RTLD_NOW | RTLD_GLOBAL);
}

__attribute__((constructor)) static void cupti_floor_init(void)
{
	owner_pid = getpid();
	const char *kb = getenv("CUPTI_FLOOR_BUFFER_KB");
	if (kb && atol(kb) >= 64)
		buf_size = (size_t)atol(kb) << 10;
	void *h = open_cupti();
	if (!h) {
		fprintf(stderr, "cupti_floor: cannot load libcupti: %s\n", dlerror());
		return;
	}
	fn.register_cb = (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))
		dlsym(h, "cuptiActivityRegisterCallbacks");
	fn.enable = (CUptiResult(*)(CUpti_ActivityKind))dlsym(h, "cuptiActivityEnable");
	fn.flush_all = (CUptiResult(*)(uint32_t))dlsym(h, "cuptiActivityFlushAll");
	fn.next_record = (CUptiResult(*)(uint8_t *, size_t, CUpti_Activity **))
		dlsym(h, "cuptiActivityGetNextRecord");
	fn.dropped = (CUptiResult(*)(CUcontext, uint32_t, size_t *))
		dlsym(h, "cuptiActivityGetNumDroppedRecords");
	if (!fn.register_cb || !fn.enable || !fn.flush_all || !fn.next_record) {
		fprintf(stderr, "cupti_floor: libcupti lacks the activity API\n");
		return;
	}
	CUptiResult r = fn.register_cb(buffer_requested, buffer_completed);
	const char *api = getenv("CUPTI_FLOOR_API");
	if (r == CUPTI_SUCCESS && api && *api) {
		int drv = strcmp(api, "default") == 0;
		if (!drv && strcmp(api, "runtime") != 0)
			fprintf(stderr, "cupti_floor: CUPTI_FLOOR_API=%s: not default or runtime; using runtime\n", api);
		r = collect_api_cbids(h, drv);
		if (!api_floor)
			fprintf(stderr, "cupti_floor: CUPTI_FLOOR_API: no callbacks (CUptiResult %d, %d cbids)\n",
			        (int)r, n_api_cbids);
	}
	const char *cap = getenv("CUPTI_FLOOR_CAPTURE");
	if (r == CUPTI_SUCCESS && cap && strcmp(cap, "1") == 0) {
		r = subscribe_profiler_api(h);
		capture_mode = r == CUPTI_SUCCESS;
		if (!capture_mode)
			/* Capturing always would make an A/B ratio of ~1 look
			 * like a free floor: say so and capture nothing. */
			fprintf(stderr, "cupti_floor: CUPTI_FLOOR_CAPTURE: cannot subscribe to the profiler "
			                "API (CUptiResult %d): activity off for the whole run\n", (int)r);
		atexit(at_exit); /* records=0 on failure: visible in the log too */
		return;          /* kinds off until cudaProfilerStart */
	}
	const char *kinds = getenv("CUPTI_FLOOR_KINDS");
	if (r == CUPTI_SUCCESS && !(kinds && strcmp(kinds, "none") == 0))
		r = set_kinds(1);
	if (r != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_floor: CUPTI activity setup failed (CUptiResult %d)\n", (int)r);
		return;
	}
	atexit(at_exit);
}
