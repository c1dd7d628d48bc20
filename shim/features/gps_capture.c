/* gps_capture.c — GPUPROF_CAPTURE_RANGE=cudaProfilerApi: record only between
 * the job's cudaProfilerStart and cudaProfilerStop (or the driver's
 * cuProfilerStart/Stop), like `nsys profile -c cudaProfilerApi`.
 *
 * Outside a capture range nothing per operation is recorded: the API
 * callbacks of the chosen set and the per-operation activity kinds are
 * switched off in CUPTI (gps_gpu_capture: nvidia/gps_cupti.c), so a paused
 * job pays for no callback but the four profiler ones; NVTX ranges and marks
 * are dropped unless they overlap a range (nvidia/gps_nvtx.c reads
 * gps_capture_paused).  Each range is written as a GP_REC_WINDOW {start,
 * end}, like a --gpu-window window: the tools then tell "nothing recorded
 * here" from "nothing ran".
 *
 * The job starts paused.  Start takes effect at the start call's exit and
 * stop at the stop call's entry (nvidia/gps_cupti.c calls gps_capture_start
 * and gps_capture_stop there), so the profiler calls themselves are never
 * recorded; a runtime call and the driver call it makes both arrive, the
 * second one finds the state already set.  Switching happens on the calling
 * thread, inside CUPTI's callback (the place CUPTI's dynamic-detach guide
 * and kineto use for such calls); cap_lock orders two threads that switch
 * at once.  The bench uses this for in-process A/B measurement of the
 * tracer's cost (bench/overhead, TOGGLE_PAIRS). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "core/gps_core.h"
#include "features/gps_capture.h"
#include "features/gps_window.h"

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

static void emit_range(uint64_t start, uint64_t end)
{
	struct gps_thread *t = gps_enter(); /* NULL once closing */
	gp_recorder *rec = t ? gps_rec(GPS_REC_CUDA) : NULL;
	if (rec) {
		gps_window_emit(rec, start, end);
		gp_recorder_request_flush_async(rec);
	}
	gps_leave(t);
}

static void capture_switch(int start)
{
	int saved = gps_in_shim;
	gps_in_shim = 1;
	pthread_mutex_lock(&cap_lock);
	if (!cap_done && capturing != start) {
		if (start) {
			cap_start = gps_now(); /* before the kinds are on */
			gps_gpu_capture(1);
			capturing = 1;
			atomic_fetch_add(&gps_capture_starts, 1);
			atomic_store(&gps_capture_paused, 0);
		} else {
			atomic_store(&gps_capture_paused, 1);
			gps_gpu_capture(0);
			capturing = 0;
			emit_range(cap_start, gps_now()); /* end after the kinds are off */
		}
	}
	pthread_mutex_unlock(&cap_lock);
	gps_in_shim = saved;
}

void gps_capture_start(void) { capture_switch(1); }
void gps_capture_stop(void) { capture_switch(0); }

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
		gps_info("capture range: a start/stop still in progress at exit; last range not written");
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
