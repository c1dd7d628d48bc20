/* gps_cupti.c — CUPTI session: subscribe, choose the API callbacks, turn on
 * activity kinds, and the API callback itself (the hot path: one enter and one
 * exit per traced call, each a clock read and a few loads). */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gps_core.h"
#include "features/gps_capture.h"
#include "features/gps_flight.h"
#include "features/gps_stacks.h"
#include "features/gps_stepfind.h"
#include "features/gps_ticker.h"
#include "features/gps_window.h"
#include "nvidia/gps_activity.h"
#include "nvidia/gps_api_names.h"
#include "nvidia/gps_cbid.h"
#include "nvidia/gps_coexist.h"
#include "nvidia/gps_cupti_alloc.h"
#include "nvidia/gps_cupti.h"
#include "nvidia/gps_cupti_fns.h"
#include "nvidia/gps_cupti_graphs.h"
#include "nvidia/gps_cupti_markers.h"
#include "nvidia/gps_cupti_stacks.h"
#include "nvidia/gps_pmsampling.h"

static CUpti_SubscriberHandle subscriber;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int skip_nested_driver; /* default set: driver calls inside runtime calls */
static int capture_mode;       /* GPUPROF_CAPTURE_RANGE=cudaProfilerApi */
static atomic_int cupti_tried; /* binding was tried in this process (once) */
static void (*context_hook)(void);
static void (*bound_hook)(void);

_Static_assert(GPS_CB_DRIVER == (int)CUPTI_CB_DOMAIN_DRIVER_API &&
		       GPS_CB_RUNTIME == (int)CUPTI_CB_DOMAIN_RUNTIME_API,
	       "gps_cb_domain numbers the domains as CUPTI does");

/* API callbacks just switched on again: the next recorded call's
 * correlation id closes the gap (gps_activity_api_on). */
static atomic_int api_gap_fresh;

/* GPUPROF_COEXIST (nvidia/gps_coexist.c): the job's own profiler holds our
 * subscription's place (sub_released) or the activity buffers
 * (act_released); meanwhile the switches below only note what was asked
 * (api_on_now, gpu_on_now) and the resume applies it.  Written under the
 * coexistence lock. */
static atomic_int sub_released, act_released;
static int api_on_now, gpu_on_now;

/* Runtime-callback nesting depth on this thread (see skip_nested_driver). */
static GPS_TLS int rt_depth;

/* The API callbacks that are on make records (callback mode, switched on).
 * Off, the only callbacks on are the step finder's markers (and a capture
 * range's start/stop calls): they feed it and record nothing. */
static atomic_int cb_records;

/* The step finder's event (features/gps_stepfind.h), at a call's entry:
 * before the call, so a step that begins here has the call's GPU work. */
static __attribute__((noinline)) int feed_steps(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
						 const CUpti_CallbackData *cd, uint64_t now)
{
	if (cbid >= GPS_MK_MAX_CBID || !gps_cupti_marker_class[dom][cbid] ||
	    (dom == CUPTI_CB_DOMAIN_DRIVER_API && rt_depth > 0) || atomic_load_explicit(&gps.closed, memory_order_relaxed))
		return 0; /* not an event, or the driver's half of a runtime call */
	gps_in_shim = 1;
	struct gps_thread *t = gps_thread_get();
	int edge = t && gps_stepfind_event(gps_cupti_marker_sig((enum gps_cb_domain)dom, cbid, cd->functionParams),
					   t->tid, now);
	gps_in_shim = 0;
	return edge;
}

/* API exit: one record.  Out of line: the enter path stays tiny. */
static __attribute__((noinline)) void api_exit(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
					       const CUpti_CallbackData *cd, uint64_t start)
{
	uint64_t end = gps_now();
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter(); /* NULL once closing */
	gp_recorder *rec = t ? gps_rec(GPS_REC_CUDA) : NULL;
	if (rec) {
		gp_record r;
		r.type = GP_REC_API;
		r.source_id = 0;
		r.u.api = (gp_rec_api){
			.start_ns = start,
			.end_ns = end,
			.correlation_id = cd->correlationId,
			.domain = gps_cb_domain_format((enum gps_cb_domain)dom),
			.cbid = cbid,
			.name_id = gps_api_name_id(rec, (enum gps_cb_domain)dom, cbid, cd->functionName),
			/* cudaError_t and CUresult are both int-sized enums */
			.status = cd->functionReturnValue ? *(const int *)cd->functionReturnValue : 0,
		};
		/* GPUPROF_STACKS: launches and copies, outermost call of the
		 * thread only (rt_depth is back to 0 at a runtime call's exit) */
		if (gps_stacks_on && cbid < GPS_STK_MAX_CBID && gps_cupti_stack_want[dom][cbid] && rt_depth == 0)
			r.u.api.stack_id = gps_cupti_stack_for_call(rec, (enum gps_cb_domain)dom, cbid,
								    cd->functionParams);
		gp_emit(rec, &r);
		/* a failed allocation, outermost call only (a runtime call and
		 * the driver call inside it are one failure) */
		if (__builtin_expect(r.u.api.status != 0, 0) && rt_depth == 0 && gps_cupti_is_alloc(dom, cbid))
			gps_cupti_alloc_failed(rec, (enum gps_cb_domain)dom, cbid, cd->functionName, cd->context,
					       cd->functionParams, start, cd->correlationId, r.u.api.status);
		/* GPUPROF_TRIGGER=cuda-error */
		if (__builtin_expect(r.u.api.status != 0, 0) && (gps_flight_rules & GP_RULE_CUDA_ERROR))
			gps_flight_cuda_error(cd->functionName, r.u.api.status);
	}
	gps_leave(t);
	gps_in_shim = 0;
}

/* The exit of an allocation call whose callback is on while API records
 * are off or come from activity records (keep_alloc_callbacks): a failure
 * still makes its record and tells the oom rule. */
static __attribute__((noinline)) void alloc_exit_unrecorded(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
							    const CUpti_CallbackData *cd)
{
	int status = cd->functionReturnValue ? *(const int *)cd->functionReturnValue : 0;
	if (!status || rt_depth > 0)
		return;
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? gps_rec(GPS_REC_CUDA) : NULL;
	if (rec)
		gps_cupti_alloc_failed(rec, (enum gps_cb_domain)dom, cbid, cd->functionName, cd->context,
				       cd->functionParams, 0, cd->correlationId, status);
	gps_leave(t);
	gps_in_shim = 0;
}

static __attribute__((noinline)) void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
	if (gps_in_shim || atomic_load_explicit(&gps.closed, memory_order_relaxed))
		return;
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter();
	if (t) {
		if (gps_cupti_graphs_cbid(cbid)) {
			/* GPUPROF_STACKS: a graph node made or copied */
			gps_cupti_graphs_on_node(cbid, rd ? rd->resourceDescriptor : NULL);
		} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			/* CUDA's own atexit teardown runs before ours: the
			 * context's records must leave CUPTI now.  No window
			 * edge may toggle activity kinds from here on. */
			gps_window_cuda_teardown();
			gps_flight_cuda_teardown();
			GPS_CUPTI(cuptiActivityFlushAll, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			if (context_hook) /* the lifecycle's: the final flush before CUDA's teardown */
				context_hook();
			gp_recorder *rec = gps_rec(GPS_REC_CUDA);
			if (rec)
				gps_emit_clock(rec);
			/* GPUPROF_PM_SAMPLING: only notes it; set-up on its thread */
			if (rec && gps.cfg.pm_interval_ns)
				gps_pm_context_created(rd ? (void *)rd->context : NULL);
		}
	}
	gps_leave(t);
	gps_in_shim = 0;
}

/* ------------------------------------------------------------ capture range */
/* The four calls that start and stop a capture range (runtime and driver).
 * A start takes effect at its call's exit and a stop at its call's entry
 * (features/gps_capture.c), so they are never recorded themselves. */
static const struct {
	CUpti_CallbackDomain dom;
	CUpti_CallbackId cbid;
	int start;
} capture_calls[] = {
	{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1},
	{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 0},
	{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 1},
	{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, 0},
};
#define N_CAPTURE_CALLS (sizeof capture_calls / sizeof capture_calls[0])

/* 1 when (dom, cbid) is one of them: it starts or stops the range here
 * (not in a call the shim made itself) */
static int capture_call(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site)
{
	for (size_t i = 0; i < N_CAPTURE_CALLS; i++) {
		if (capture_calls[i].dom != dom || capture_calls[i].cbid != cbid)
			continue;
		if (!gps_in_shim) {
			if (capture_calls[i].start && site == CUPTI_API_EXIT)
				gps_capture_start();
			else if (!capture_calls[i].start && site == CUPTI_API_ENTER)
				gps_capture_stop();
		}
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ callbacks */
/* The hot path: a runtime launch in the default set comes here 4 times
 * (runtime enter, nested driver enter + exit, runtime exit).  Nested driver
 * callbacks leave at the first test; enter only stores the start time in
 * CUPTI's per-call correlationData (no TLS, no emit, no fence); exit builds
 * and emits the record.  bench/shim measures it. */
static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud;
	const CUpti_CallbackData *cd = data;
	/* GPUPROF_COEXIST: the job's profiler shares our subscription */
	if (__builtin_expect(atomic_load_explicit(&gps_coexist_sharing, memory_order_relaxed), 0) &&
	    !gps_coexist_forward(dom, cbid, data))
		return; /* its callback only */
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (skip_nested_driver && rt_depth > 0)
			return; /* the runtime call around it has the record */
	} else if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		if (cd->callbackSite == CUPTI_API_ENTER)
			rt_depth++;
		else if (rt_depth > 0)
			rt_depth--;
	} else {
		if (dom == CUPTI_CB_DOMAIN_RESOURCE)
			on_resource(cbid, data);
		return;
	}
	/* GPUPROF_CAPTURE_RANGE: the profiler start/stop calls switch
	 * recording and are never recorded themselves */
	if (__builtin_expect(capture_mode, 0) && capture_call(dom, cbid, cd->callbackSite))
		return;
	if (cd->callbackSite == CUPTI_API_ENTER) {
		/* 0 = not recorded (a call made by the shim itself) */
		uint64_t now = gps_in_shim ? 0 : gps_now();
		if (__builtin_expect(atomic_load_explicit(&gps_stepfind_on, memory_order_relaxed), 0) && now &&
		    feed_steps(dom, cbid, cd, now))
			now = gps_now(); /* after a step edge's work: the call is inside the step it begins
					    (and its window, if it switched records on) */
		*cd->correlationData = atomic_load_explicit(&cb_records, memory_order_relaxed) ? now : 0;
		if (*cd->correlationData &&__builtin_expect(atomic_load_explicit(&api_gap_fresh, memory_order_relaxed), 0) &&
		    atomic_exchange(&api_gap_fresh, 0))
			gps_activity_api_first(cd->correlationId);
		return;
	}
	uint64_t start = *cd->correlationData;
	if (start && !gps_in_shim)
		api_exit(dom, cbid, cd, start);
	else if (__builtin_expect(!start && !gps_in_shim && gps_cupti_is_alloc(dom, cbid), 0))
		alloc_exit_unrecorded(dom, cbid, cd);
}

static uint64_t CUPTIAPI timestamp_cb(void) { return gps_mono_ns(); }

/* 0 when resource callback cbid is on */
static int enable_resource_callback(uint32_t cbid)
{
	return GPS_CUPTI(cuptiEnableCallback, 1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid) != CUPTI_SUCCESS;
}

/* ------------------------------------------------------------ other tools */
struct who { const char *found; };
static int find_tool(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	static const struct { const char *needle, *name; } tools[] = {
		{"libToolsInjection", "Nsight Systems (libToolsInjection64.so)"},
		{"libInterceptorInjectionTarget", "Nsight Compute"},
		{"libkineto", "PyTorch profiler / kineto"},
		{"libtorch_cuda", "PyTorch profiler / kineto (in libtorch_cuda.so)"},
		{"libdcgm", "DCGM"},
		{"libhpcrun", "HPCToolkit"},
	};
	struct who *w = arg;
	const char *n = info->dlpi_name;
	if (!n || !*n)
		return 0;
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (strstr(n, tools[i].needle)) {
			w->found = tools[i].name;
			return 1;
		}
	return 0;
}

/* ------------------------------------------------------------ start */
/* The default set's cbids per domain (index: gps_cb_domain), looked up once
 * by name: a capture range switches them again and again. */
#define GPS_MAX_SET_CBIDS 1024
static uint16_t set_cbids[3][GPS_MAX_SET_CBIDS];
static int n_set_cbids[3];

static void collect_default_set(enum gps_cb_domain dom)
{
	n_set_cbids[dom] = 0;
	for (uint32_t cbid = 1; cbid < GPS_API_MAX_CBID && n_set_cbids[dom] < GPS_MAX_SET_CBIDS; cbid++) {
		const char *name = NULL;
		if (GPS_CUPTI_QUIET(cuptiGetCallbackName, (CUpti_CallbackDomain)dom, cbid, &name) !=
			    CUPTI_SUCCESS || !name)
			continue;
		if (gps_cbid_default(dom, name))
			set_cbids[dom][n_set_cbids[dom]++] = (uint16_t)cbid;
	}
}

/* Switches the default set of one domain through the callback or the
 * per-API activity flavour.  Returns how many cbids took it. */
static int switch_default_set(enum gps_cb_domain dom, int on)
{
	int n = 0;
	for (int i = 0; i < n_set_cbids[dom]; i++) {
		uint32_t cbid = set_cbids[dom][i];
		CUptiResult r;
		if (gps.cfg.api_mode == GP_API_MODE_ACTIVITY)
			r = dom == GPS_CB_RUNTIME ? GPS_CUPTI(cuptiActivityEnableRuntimeApi, cbid, on ? 1 : 0)
				     : GPS_CUPTI(cuptiActivityEnableDriverApi, cbid, on ? 1 : 0);
		else
			r = GPS_CUPTI(cuptiEnableCallback, on ? 1 : 0, subscriber, (CUpti_CallbackDomain)dom, cbid);
		if (r == CUPTI_SUCCESS)
			n++;
	}
	return n;
}

/* The profiler start/stop callbacks stay on for the whole run under a
 * capture range (a domain switched off takes them with it). */
static void enable_capture_callbacks(void)
{
	for (size_t i = 0; i < N_CAPTURE_CALLS; i++)
		GPS_CUPTI(cuptiEnableCallback, 1, subscriber, capture_calls[i].dom, capture_calls[i].cbid);
}

static void switch_kind(CUpti_ActivityKind kind, int on)
{
	if (on)
		GPS_CUPTI(cuptiActivityEnable, kind);
	else
		GPS_CUPTI(cuptiActivityDisable, kind);
}

static int enable_api_callback(enum gps_cb_domain dom, uint32_t cbid)
{
	return GPS_CUPTI(cuptiEnableCallback, 1, subscriber, (CUpti_CallbackDomain)dom, cbid) != CUPTI_SUCCESS;
}

/* API records off (or made by activity records): the step finder's marker
 * callbacks on, feeding it only (features/gps_stepfind.h).  Never kernel
 * launches: their callbacks are what the records' switch-off saves
 * (docs/FLIGHT.md, "Steps"); a kernel boundary is lost then, with one line. */
static void keep_step_markers(void)
{
	unsigned cls = gps_stepfind_classes();
	if (cls & (1u << GPS_SIG_KERNEL))
		gps_stepfind_kernels_gone(); /* (a no-op while learning) */
	cls = gps_stepfind_classes() & ~(1u << GPS_SIG_KERNEL);
	if (cls)
		gps_cupti_markers_enable(cls, gps.cfg.api_driver, enable_api_callback);
}

/* API records off, or made by activity records (GPUPROF_API_MODE=activity:
 * no callback sees a status): the allocation calls' callbacks stay on while
 * the oom rule wants to see a failure (allocations are few: a caching allocator
 * makes a handful a step at most; their callbacks cost nothing measurable
 * beside the calls). */
static void keep_alloc_callbacks(void)
{
	if (gps_flight_rules & GP_RULE_OOM)
		gps_cupti_alloc_enable(gps.cfg.api_driver, enable_api_callback);
}

static int disable_api_callback(enum gps_cb_domain dom, uint32_t cbid)
{
	return GPS_CUPTI(cuptiEnableCallback, 0, subscriber, (CUpti_CallbackDomain)dom, cbid) != CUPTI_SUCCESS;
}

static int api_released(void);

/* The step finder's classes changed while API records were off: its
 * boundary found (of the marker callbacks kept for learning, every class,
 * those of the boundary's classes only), or learning again (every class
 * back on) — now rather than at the next switch of API records (flush
 * thread, under the flight recorder's lock, which every such switch
 * takes).  Not while the job's profiler shares the subscription (its
 * callbacks are its own) nor with call stacks (taken at these callbacks);
 * nothing when the finder stopped (its callbacks stay, as before). */
static void step_markers_now(void)
{
	unsigned cls = gps_stepfind_classes() & ~(1u << GPS_SIG_KERNEL);
	if (!cls || atomic_load(&cb_records) || api_released() || gps_stacks_wanted() || !gps_gpu_bound())
		return;
	gps_cupti_markers_enable(cls, gps.cfg.api_driver, enable_api_callback);
	gps_cupti_markers_narrow(cls, gps.cfg.api_driver, disable_api_callback);
}

/* API records on or off, in the mode chosen at bind time. */
static int switch_api_records_now(int on)
{
	const struct gps_config *c = &gps.cfg;
	int driver = c->api_driver, n = 0;
	if (c->api_set == GP_API_SET_NONE)
		return 0;
	if (on && c->api_mode != GP_API_MODE_ACTIVITY)
		atomic_store(&cb_records, 1);
	if (c->api_set == GP_API_SET_ALL) {
		if (c->api_mode == GP_API_MODE_ACTIVITY) {
			switch_kind(CUPTI_ACTIVITY_KIND_RUNTIME, on);
			if (driver)
				switch_kind(CUPTI_ACTIVITY_KIND_DRIVER, on);
		} else {
			GPS_CUPTI(cuptiEnableDomain, on ? 1 : 0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
			if (driver)
				GPS_CUPTI(cuptiEnableDomain, on ? 1 : 0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
		}
		n = 1;
	} else {
		n = switch_default_set(GPS_CB_RUNTIME, on);
		if (driver && (c->api_mode != GP_API_MODE_ACTIVITY || gps_p_cuptiActivityEnableDriverApi))
			n += switch_default_set(GPS_CB_DRIVER, on);
	}
	if (!on && c->api_mode != GP_API_MODE_ACTIVITY) {
		atomic_store(&cb_records, 0);
		keep_step_markers();
		keep_alloc_callbacks();
	}
	if (capture_mode && !on)
		enable_capture_callbacks(); /* whatever the set, they stay on */
	return n;
}

/* Where API records come from was given to the job's profiler. */
static int api_released(void)
{
	return gps.cfg.api_mode == GP_API_MODE_ACTIVITY ? atomic_load(&act_released) : atomic_load(&sub_released);
}

/* switch_api_records_now, or only noted while the job's profiler holds
 * CUPTI (the resume applies it) */
static int switch_api_records(int on)
{
	gps_coexist_lock();
	api_on_now = on;
	int n = api_released() ? 0 : switch_api_records_now(on);
	gps_coexist_unlock();
	return n;
}

/* Chooses how API calls are recorded (callbacks or per-API activity
 * records; which set) and, unless a capture range starts the job paused,
 * switches them on. */
static void bind_api_records(void)
{
	const struct gps_config *c = &gps.cfg;
	if (c->api_set == GP_API_SET_NONE)
		return;
	/* a stack must be taken on the calling thread, during the call:
	 * per-API activity records come later, from CUPTI's thread */
	if (gps_stacks_on)
		gps.cfg.api_mode = GP_API_MODE_CALLBACK;
	if (c->api_mode == GP_API_MODE_ACTIVITY) {
		if (!gps_p_cuptiActivityEnableRuntimeApi) {
			gps_info("this CUPTI has no per-API activity records (needs CUDA >= 12.5); using callbacks");
			gps.cfg.api_mode = GP_API_MODE_CALLBACK;
		} else if (capture_mode) {
			/* On the H200 (CUDA 13.0 CUPTI) per-API activity records
			 * switched on at a cudaProfilerStart never came: zero API
			 * records in three ranges, while callbacks got them all. */
			gps_info("GPUPROF_API_MODE=activity records no API calls under a capture range; using callbacks");
			gps.cfg.api_mode = GP_API_MODE_CALLBACK;
		}
	}
	if (c->api_set == GP_API_SET_ALL) {
		skip_nested_driver = 0;
	} else {
		/* Driver launches must be enabled to catch launches made
		 * straight through the driver (cuBLAS: cuLaunchKernelEx); the
		 * ones the runtime makes underneath its own calls then fire
		 * too and are skipped first thing in on_callback (activity
		 * mode: dropped when decoding, gps_activity.c).
		 * GPUPROF_API_DRIVER=0 saves those callbacks. */
		collect_default_set(GPS_CB_RUNTIME);
		if (c->api_driver)
			collect_default_set(GPS_CB_DRIVER);
		if (c->api_mode == GP_API_MODE_ACTIVITY)
			gps_activity_skip_nested_driver(c->api_driver && gps_p_cuptiActivityEnableDriverApi);
		else
			skip_nested_driver = 1;
	}
	if (capture_mode)
		return; /* paused until the job's first cudaProfilerStart */
	if (gps.cfg.flight_api == GP_FLIGHT_API_CAPTURE && gps_flight_activity_off())
		return; /* armed or between sampled steps: on with GPU activity */
	if (switch_api_records(1) == 0)
		gps_info("no CUDA API callbacks matched the default set");
}

/* GPUPROF_ACTIVITY's kinds (their names: the settings table's) as CUPTI's */
static const struct { unsigned bit; CUpti_ActivityKind kind; } act_kinds[] = {
	{GP_ACT_DEVICE, CUPTI_ACTIVITY_KIND_DEVICE},
	{GP_ACT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
	{GP_ACT_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY},
	{GP_ACT_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET},
	{GP_ACT_PEER, CUPTI_ACTIVITY_KIND_MEMCPY2},
	{GP_ACT_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
	{GP_ACT_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2},
};
#define N_ACT_KINDS (sizeof act_kinds / sizeof act_kinds[0])

/* paused: DEVICE only (names the devices, nothing per operation) */
static void enable_activity(int paused)
{
	gpu_on_now = !paused;
	for (size_t i = 0; i < N_ACT_KINDS; i++) {
		if (!(gps.cfg.activity & act_kinds[i].bit))
			continue;
		if (paused && act_kinds[i].bit != GP_ACT_DEVICE)
			continue;
		CUptiResult r = GPS_CUPTI_QUIET(cuptiActivityEnable, act_kinds[i].kind);
		if (r != CUPTI_SUCCESS)
			gps_info("activity kind %s unavailable: %s", gp_setting_word_of(GP_SET_ACTIVITY, act_kinds[i].bit),
				 gps_cupti_errstr(r));
	}
}

/* Enables (on=1) or disables the configured per-operation activity kinds
 * (all of GPUPROF_ACTIVITY but DEVICE); API and NVTX capture untouched. */
static void gpu_activity_now(int on)
{
	/* quiet: a kind that failed at bind time was reported there */
	for (size_t i = 0; i < N_ACT_KINDS; i++) {
		if (!(gps.cfg.activity & act_kinds[i].bit) || act_kinds[i].bit == GP_ACT_DEVICE)
			continue;
		if (on)
			GPS_CUPTI_QUIET(cuptiActivityEnable, act_kinds[i].kind);
		else
			GPS_CUPTI_QUIET(cuptiActivityDisable, act_kinds[i].kind);
	}
}

/* gpu_activity_now, or only noted while the job's profiler holds the
 * activity buffers */
static void gpu_activity(int on)
{
	gps_coexist_lock();
	gpu_on_now = on;
	if (!atomic_load(&act_released))
		gpu_activity_now(on);
	gps_coexist_unlock();
}

/* API callbacks on again while the job runs, before GPU activity: the
 * calls in flight that entered while they were off have no record
 * (gps_activity_api_on drops their GPU operations).  Per-API activity
 * records are made at a call's exit and need no such care. */
static void api_records_on_again(void)
{
	if (gps.cfg.api_mode != GP_API_MODE_ACTIVITY && gps.cfg.api_set != GP_API_SET_NONE) {
		gps_activity_api_on(gps_now());
		atomic_store(&api_gap_fresh, 1);
	}
	switch_api_records(1);
}

/* Capture range: API records and GPU activity kinds on/off together */
/* API records on before GPU activity and off after it, as the flight
 * recorder does (features/gps_flight.c): a kernel that another thread
 * launches while the range opens or closes then has its launch call in the
 * trace; the other order could keep a kernel whose call was not recorded,
 * and a kernel without its launch is attributed to nothing. */
static void capture_switch(int on)
{
	if (!capture_mode)
		return;
	if (on) {
		api_records_on_again();
		gpu_activity(1);
	} else {
		gpu_activity(0);
		switch_api_records(0);
	}
}

/* The flight recorder's GPUPROF_FLIGHT_API=capture: API records follow GPU
 * activity (on before it, off after it: features/gps_flight.c) */
static void api_switch(int on)
{
	if (on)
		api_records_on_again();
	else
		switch_api_records(0);
}

static const char *callback_name(enum gps_cb_domain dom, uint32_t cbid)
{
	const char *name = NULL;
	if (GPS_CUPTI_QUIET(cuptiGetCallbackName, (CUpti_CallbackDomain)dom, cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

static int start_locked(const char *why)
{
	if (gps_cupti_load() != 0)
		return -1;
	CUptiResult r = GPS_CUPTI_QUIET(cuptiSubscribe, &subscriber, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
			struct who w = {NULL};
			char job[160];
			const char *js = gps_coexist_job_subscriber(); /* it subscribed first */
			if (js) {
				snprintf(job, sizeof job, "the job's own profiler, in %s", js);
				w.found = job;
			} else {
				dl_iterate_phdr(find_tool, &w);
			}
			gps_warn("another CUPTI tool is attached%s%s%s; gpuprof switches itself off, the job runs on",
				 w.found ? " (" : "", w.found ? w.found : "", w.found ? ")" : "");
			gps.disabled = 1; /* NVTX too: one tool's view, not half of two */
		} else {
			gps_warn("cuptiSubscribe failed: %s; tracing off", gps_cupti_errstr(r));
		}
		return -1;
	}
	gps_coexist_bound(); /* before our first switch */
	/* One trace clock: CUPTI timestamps on CLOCK_MONOTONIC, or (old/odd
	 * CUPTI) everything on CUPTI's clock, or, if our recorder already runs
	 * on CLOCK_MONOTONIC (NVTX came first), CUPTI's converted by an offset. */
	r = GPS_CUPTI_QUIET(cuptiActivityRegisterTimestampCallback, timestamp_cb);
	if (r != CUPTI_SUCCESS) {
		if (atomic_load(&gps.rec)) {
			uint64_t t0 = gps_mono_ns(), g = 0, t1;
			GPS_CUPTI(cuptiGetTimestamp, &g);
			t1 = gps_mono_ns();
			gps_activity_set_gpu_offset((int64_t)((t0 + t1) / 2) - (int64_t)g);
			gps_info("CUPTI timestamp callback unavailable; converting CUPTI times by offset");
		} else {
			gps.clock_id = GP_CLOCK_CUPTI;
			gps_info("CUPTI timestamp callback unavailable; trace uses CUPTI's clock");
		}
	}
	gps_activity_register();
	GPS_CUPTI(cuptiActivityFlushPeriod, gps.cfg.flush_ms);
	GPS_CUPTI(cuptiEnableCallback, 1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
		  CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	GPS_CUPTI(cuptiEnableCallback, 1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
		  CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	capture_mode = gps.cfg.capture_range == GP_CAPTURE_PROFILER_API;
	uint64_t t_enabled = gps_now();
	/* paused: a capture range's job starts outside one; the flight
	 * recorder's and step sampling's start without GPU activity */
	enable_activity(capture_mode || gps_flight_activity_off());
	gps_window_bound(t_enabled); /* GPUPROF_GPU_WINDOW: window 0 is open */
	gps_cupti_alloc_bind(callback_name);
	gps_cupti_stacks_bind(callback_name); /* before the callbacks can fire */
	gps_cupti_graphs_bind(enable_resource_callback);
	if (atomic_load(&gps_stepfind_on))
		gps_cupti_markers_bind(callback_name);
	bind_api_records();
	if (!atomic_load(&cb_records)) {
		keep_step_markers(); /* no records by callback: the finder's own */
		keep_alloc_callbacks();
	}
	if (capture_mode) /* last: the sets above are what a start switches on */
		enable_capture_callbacks();
	/* informational: not under `gpuprof run` (GPUPROF_SUMMARY set), which
	 * prints its own lines */
	if (!gps.cfg.summary[0])
		gps_info("tracing CUDA via %s (%s)", gps_cupti_loaded_path(), why);
	return 0;
}

/* What vendor-neutral code asks of CUPTI (core/gps_core.h's gps_gpu_*). */
static void flush_completed(void)
{
	gps_coexist_tick(); /* a resume after the job's profiler let go */
	if (!atomic_load(&act_released))
		GPS_CUPTI_QUIET(cuptiActivityFlushAll, 0);
}
static uint64_t cupti_timestamp(void)
{
	uint64_t t = 0;
	if (gps_p_cuptiGetTimestamp)
		gps_p_cuptiGetTimestamp(&t);
	return t;
}
static const struct gps_gpu_ops cupti_ops = {
	.flush_completed = flush_completed,
	.activity = gpu_activity,
	.capture = capture_switch,
	.api = api_switch,
	.step_markers = step_markers_now,
	.timestamp = cupti_timestamp,
};

void gps_cupti_set_context_hook(void (*fn)(void)) { context_hook = fn; }
void gps_cupti_set_bound_hook(void (*fn)(void)) { bound_hook = fn; }

int gps_cupti_start(const char *why)
{
	if (gps_gpu_bound())
		return 0;
	if (gps.disabled || atomic_load(&cupti_tried))
		return -1;
	int saved = gps_in_shim;
	gps_in_shim = 1;
	pthread_mutex_lock(&start_lock);
	int rc = 0;
	if (!gps_gpu_bound() && !atomic_load(&cupti_tried)) {
		atomic_store(&cupti_tried, 1);
		gps_gpu_set_ops(&cupti_ops); /* each a no-op until loaded */
		rc = start_locked(why);
		if (rc == 0) {
			gps_gpu_set_bound(1);
			if (bound_hook) /* the lifecycle's: a final flush before libcupti's exit teardown */
				bound_hook();
		}
	} else if (!gps_gpu_bound()) {
		rc = -1;
	}
	pthread_mutex_unlock(&start_lock);
	if (rc == 0 && atomic_load(&gps.rec))
		gps_ticker_start(); /* else when the trace is created */
	gps_in_shim = saved;
	return rc;
}

/* A fork child of a process with a CUPTI session: the session and its
 * buffers are the parent's (gps_cupti_after_fork_child). */
static int inherited_session;
int gps_cupti_session_inherited(void) { return inherited_session; }

void gps_cupti_flush(void)
{
	if (!gps_gpu_bound())
		return;
	if (atomic_load(&act_released))
		return; /* ours came back when the job's profiler took over */
	int saved = gps_in_shim;
	gps_in_shim = 1;
	GPS_CUPTI(cuptiActivityFlushAll, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	gps_in_shim = saved;
}

void gps_cupti_stop(void)
{
	if (!gps_gpu_bound())
		return;
	/* Stop new API callbacks before the recorder goes away; activity was
	 * flushed already.  Unsubscribing during exit is what CUPTI samples do.
	 * A subscription given to the job's profiler is not ours to end. */
	if (!atomic_load(&sub_released))
		GPS_CUPTI_QUIET(cuptiUnsubscribe, subscriber);
	gps_gpu_set_bound(0);
}

void gps_cupti_after_fork_child(void)
{
	inherited_session = gps_gpu_bound();
	pthread_mutex_init(&start_lock, NULL);
	/* (cb_records: CUPTI's callbacks are as the parent left them) */
	gps_coexist_after_fork_child();
	rt_depth = 0;
}

/* ------------------------------------------------------------ coexistence */
/* GPUPROF_COEXIST (nvidia/gps_coexist.c decides when; these do it).  All
 * run under the coexistence lock. */

void *gps_cupti_subscriber(void) { return (void *)subscriber; }

/* The job's profiler subscribes: our subscription goes (CUPTI has one). */
void gps_cupti_release_callbacks(void)
{
	if (atomic_load(&sub_released))
		return;
	atomic_store(&sub_released, 1);
	GPS_CUPTI_QUIET(cuptiUnsubscribe, subscriber);
}

/* Subscribed again with what was on (the resource callbacks, the capture
 * range's, the API records if they were asked for meanwhile).  0, or -1
 * when CUPTI still has another subscriber. */
int gps_cupti_resume_callbacks(void)
{
	if (!atomic_load(&sub_released))
		return 0;
	if (GPS_CUPTI_QUIET(cuptiSubscribe, &subscriber, on_callback, NULL) != CUPTI_SUCCESS)
		return -1;
	atomic_store(&sub_released, 0);
	enable_resource_callback(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	enable_resource_callback(CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	gps_cupti_graphs_bind(enable_resource_callback);
	if (capture_mode)
		enable_capture_callbacks();
	if (api_on_now && gps.cfg.api_mode != GP_API_MODE_ACTIVITY) {
		/* the calls in flight now entered unrecorded: as after a pause */
		gps_activity_api_on(gps_now());
		atomic_store(&api_gap_fresh, 1);
		switch_api_records_now(1);
	} else if (!atomic_load(&cb_records)) {
		keep_step_markers(); /* the step finder's markers, as at bind */
		keep_alloc_callbacks();
	}
	return 0;
}

/* The job's profiler registers its buffer callbacks: our kinds off and our
 * buffers back to us first (a buffer CUPTI still holds is handed to
 * whichever pair is registered when it completes). */
void gps_cupti_release_activity(void)
{
	if (atomic_load(&act_released))
		return;
	for (size_t i = 0; i < N_ACT_KINDS; i++)
		if (gps.cfg.activity & act_kinds[i].bit)
			GPS_CUPTI_QUIET(cuptiActivityDisable, act_kinds[i].kind);
	if (gps.cfg.api_mode == GP_API_MODE_ACTIVITY)
		switch_api_records_now(0);
	GPS_CUPTI_QUIET(cuptiActivityFlushAll, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	atomic_store(&act_released, 1);
}

/* Our buffer callbacks and kinds back (DEVICE stays off: the devices were
 * named already).  after_finalize: CUPTI was detached meanwhile
 * (cuptiFinalize), so its timestamp callback and flush period go again. */
void gps_cupti_resume_activity(int after_finalize)
{
	if (!atomic_load(&act_released))
		return;
	if (after_finalize) {
		GPS_CUPTI_QUIET(cuptiActivityRegisterTimestampCallback, timestamp_cb);
		GPS_CUPTI_QUIET(cuptiActivityFlushPeriod, gps.cfg.flush_ms);
	}
	gps_activity_register();
	atomic_store(&act_released, 0);
	if (gpu_on_now)
		gpu_activity_now(1);
	if (api_on_now && gps.cfg.api_mode == GP_API_MODE_ACTIVITY)
		switch_api_records_now(1);
}

/* cuptiFinalize by the job: CUPTI forgot our subscription and buffer
 * callbacks; both are to be made again. */
void gps_cupti_lost_all(void)
{
	atomic_store(&sub_released, 1);
	atomic_store(&act_released, 1);
}
