/* gps_capture.c — GPUPROF_CAPTURE_RANGE=cudaProfilerApi: record only between
 * the job's cudaProfilerStart and cudaProfilerStop (or the driver's
 * cuProfilerStart/Stop), like `nsys profile -c cudaProfilerApi`.
 *
 * Outside a capture range nothing per operation is recorded: the API
 * callbacks of the chosen set and the per-operation activity kinds are
 * switched off in CUPTI (gps_cupti_capture_switch), so a paused job pays for
 * no callback but the four profiler ones; NVTX ranges and marks are dropped
 * unless they overlap a range (gps_nvtx.c reads gps_capture_paused).  Each
 * range is written as a GP_REC_WINDOW {start, end}, like a --gpu-window
 * window: the tools then tell "nothing recorded here" from "nothing ran".
 *
 * The job starts paused.  Start takes effect at the start call's exit and
 * stop at the stop call's entry, so the profiler calls themselves are never
 * recorded; a runtime call and the driver call it makes both arrive, the
 * second one finds the state already set.  Switching happens on the calling
 * thread, inside CUPTI's callback (the place CUPTI's dynamic-detach guide
 * and kineto use for such calls); cap_lock orders two threads that switch
 * at once.  The bench uses this for in-process A/B measurement of the
 * tracer's cost (bench/overhead, TOGGLE_PAIRS). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "gps.h"
#include "gps_cupti_fns.h"

atomic_int gps_capture_paused;
atomic_uint gps_capture_starts;

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static int capturing;      /* cap_lock */
static int cap_done;       /* cap_lock: the final flush ran, no more switching */
static uint64_t cap_start; /* cap_lock: trace clock, the open range's start */

void gps_capture_init(void)
{
	atomic_store(&gps_capture_paused, gps.cfg.capture_range == GP_CAPTURE_PROFILER_API);
}

const struct gps_capture_call gps_capture_calls[GPS_CAPTURE_NCALLS] = {
	{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1},
	{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 0},
	{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 1},
	{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, 0},
};

/* 1 + index in gps_capture_calls, 0 when not a profiler call */
static int call_of(int domain, uint32_t cbid)
{
	for (int i = 0; i < GPS_CAPTURE_NCALLS; i++)
		if (gps_capture_calls[i].domain == domain && gps_capture_calls[i].cbid == cbid)
			return i + 1;
	return 0;
}

int gps_capture_cbid(int domain, uint32_t cbid) { return call_of(domain, cbid) != 0; }

static void emit_range(uint64_t start, uint64_t end)
{
	struct gps_thread *t = gps_enter(); /* NULL once closing */
	gp_recorder *rec = t ? gps_rec(1) : NULL;
	if (rec) {
		gps_window_emit(rec, start, end);
		gp_recorder_request_flush_async(rec);
	}
	gps_leave(t);
}

void gps_capture_call(int domain, uint32_t cbid, int is_exit)
{
	int k = call_of(domain, cbid);
	int start = k && gps_capture_calls[k - 1].start;
	if (!k || start != is_exit)
		return;
	int saved = gps_in_shim;
	gps_in_shim = 1;
	pthread_mutex_lock(&cap_lock);
	if (!cap_done && capturing != start) {
		if (start) {
			cap_start = gps_now(); /* before the kinds are on */
			gps_cupti_capture_switch(1);
			capturing = 1;
			atomic_fetch_add(&gps_capture_starts, 1);
			atomic_store(&gps_capture_paused, 0);
		} else {
			atomic_store(&gps_capture_paused, 1);
			gps_cupti_capture_switch(0);
			capturing = 0;
			emit_range(cap_start, gps_now()); /* end after the kinds are off */
		}
	}
	pthread_mutex_unlock(&cap_lock);
	gps_in_shim = saved;
}

void gps_capture_final(void)
{
	if (gps.cfg.capture_range != GP_CAPTURE_PROFILER_API)
		return;
	/* bounded: a thread stuck inside CUPTI mid-switch holds the lock;
	 * its range is then not closed (the trace still has its records) */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	if (pthread_mutex_timedlock(&cap_lock, &dl) != 0) {
		gps_log(0, "capture range: a start/stop still in progress at exit; last range not written");
		return;
	}
	if (capturing && !cap_done)
		emit_range(cap_start, gps_now());
	cap_done = 1;
	pthread_mutex_unlock(&cap_lock);
}

void gps_capture_after_fork_child(void)
{
	/* the parent may have been mid-switch: the child keeps the state it
	 * inherited; an open range starts with the child's trace */
	pthread_mutex_init(&cap_lock, NULL);
}
