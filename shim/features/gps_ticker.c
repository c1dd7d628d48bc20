/* gps_ticker.c — the "gpuprof-flush" thread.  CUPTI's own periodic flush
 * (cuptiActivityFlushPeriod) only returns FULL activity buffers, and an 8 MiB
 * buffer may take minutes to fill: a SIGKILLed job used to lose every GPU
 * record.  This thread has the GPU backend call cuptiActivityFlushAll(0)
 * (not forced: only completed records; gps_gpu_flush_completed) every
 * GPUPROF_FLUSH_MS, then asks libprof's writer to write what that delivered
 * right away, so a killed job loses about one interval.
 *
 * Rules: it exists only in a process that has a trace and a bound CUPTI (a
 * fork child that never uses CUDA never gets one: threads do not survive
 * fork and it is started only when the child creates its own trace); all
 * signals blocked; it holds no lock while flushing, so a fork elsewhere
 * never inherits one held; it is stopped (bounded wait) before the final
 * flush; its work is bracketed by gps_enter/gps_leave like every emit path,
 * so a final flush that gave up waiting for it still does not close the
 * recorder under it.
 *
 * GPUPROF_GPU_WINDOW: the same thread opens and closes the GPU-activity
 * windows (gps_window.c), waking at whichever comes first, the next flush
 * or the next window edge.  GPUPROF_STATUS: it also rewrites the status file
 * about once a second (gps_status.c).  The flight recorder (gps_flight.c):
 * it polls the control channel, reads the spool back, writes captures and
 * keeps their timers, every tick and at the flight recorder's deadlines. */
#include "core/gps_core.h"
#include "core/gps_service.h"
#include "features/gps_flight.h"
#include "features/gps_status.h"
#include "features/gps_ticker.h"
#include "features/gps_window.h"

static struct gps_service tk = GPS_SERVICE_INIT("gpuprof-flush");
/* cost accounting, written into the trace at the end (GP_REC_COUNTER) */
static _Atomic uint64_t tk_flushes, tk_flush_ns;

static void tick(void)
{
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter(); /* NULL once the final flush began */
	if (t) {
		uint64_t t0 = gps_mono_ns();
		gps_gpu_flush_completed();
		gp_recorder *rec = atomic_load(&gps.rec);
		if (rec) /* writer: drain now rather than at its next period */
			gp_recorder_request_flush_async(rec);
		atomic_fetch_add_explicit(&tk_flushes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&tk_flush_ns, gps_mono_ns() - t0, memory_order_relaxed);
	}
	gps_leave(t);
	gps_in_shim = 0;
}

/* Work that may emit, bracketed like every emit path: GPUPROF_GPU_WINDOW's
 * edges due now (gps_window.c), the flight recorder's tick (gps_flight.c). */
static void bracketed(void (*work)(uint64_t now), uint64_t now)
{
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter();
	if (t)
		work(now);
	gps_leave(t);
	gps_in_shim = 0;
}

static void ticker_main(struct gps_service *svc)
{
	uint64_t period = (uint64_t)(gps.cfg.flush_ms ? gps.cfg.flush_ms : 500) * 1000000ull;
	uint64_t next_flush = gps_mono_ns() + period;
	gps_window_ticker_start(gps_mono_ns());
	pthread_mutex_lock(&svc->lock);
	while (svc->state == GPS_SERVICE_RUNNING) {
		/* sleep until the next flush or window edge, whichever first */
		uint64_t wake = next_flush, edge = gps_window_next_ns(), st = gps_status_next_ns();
		uint64_t fl = gps_flight_next_ns();
		if (edge < wake)
			wake = edge;
		if (st < wake)
			wake = st;
		if (fl < wake)
			wake = fl;
		if (!gps_service_sleep_until(svc, wake))
			break;
		pthread_mutex_unlock(&svc->lock); /* never held while in CUPTI */
		gps_clock_tick(); /* GPUPROF_CLOCK: calibrate, keep on CLOCK_MONOTONIC */
		uint64_t now = gps_mono_ns();
		if (now >= edge)
			bracketed(gps_window_tick, now);
		int flushed = now >= next_flush;
		if (flushed) {
			tick();
			next_flush = gps_mono_ns() + period;
		}
		if (flushed || now >= fl)
			bracketed(gps_flight_tick, gps_mono_ns());
		gps_status_tick(now); /* GPUPROF_STATUS: after the flush, when due */
		pthread_mutex_lock(&svc->lock);
	}
	pthread_mutex_unlock(&svc->lock);
}

void gps_ticker_start(void)
{
	if (gps.disabled || atomic_load(&gps.closed))
		return;
	pthread_mutex_lock(&tk.lock);
	if (tk.state != GPS_SERVICE_NONE) {
		pthread_mutex_unlock(&tk.lock);
		return;
	}
	/* 256 KiB: CUPTI delivers buffers on it */
	int rc = gps_service_start_locked(&tk, ticker_main, 256 * 1024);
	if (rc == GPS_SERVICE_NO_THREAD)
		gps_info("cannot start the flush thread: GPU records reach the trace only when CUPTI's buffers fill or at exit");
	int started = rc == GPS_SERVICE_STARTED;
	pthread_mutex_unlock(&tk.lock);
	/* GPUPROF_STATUS: the first write here, on the thread that created the
	 * trace: the file exists from the start, and an unwritable path is
	 * found (one line, feature off) before the job can fork a child that
	 * would say it again */
	if (started)
		gps_status_tick(gps_mono_ns());
}

void gps_ticker_stop(void)
{
	/* it may be inside cuptiActivityFlushAll: wait, but never hang the
	 * exit on it (it cannot emit once closed is set: gps_enter) */
	gps_service_stop(&tk, 2000);
}

void gps_ticker_after_fork_child(void)
{
	/* the thread is the parent's; the lock may have been held by it */
	gps_service_after_fork_child(&tk);
	atomic_store(&tk_flushes, 0);
	atomic_store(&tk_flush_ns, 0);
}

void gps_ticker_emit_stats(gp_recorder *rec)
{
	uint64_t u = gps_clock_tsc_updates();
	if (u) /* GPUPROF_CLOCK: timestamps read through the TSC */
		gps_emit_int_counter(rec, "gpuprof.clock_tsc_updates", u);
	uint64_t n = atomic_load(&tk_flushes);
	if (!n)
		return;
	/* what the ticker cost this process, for docs/PERFORMANCE.md */
	gps_emit_int_counter(rec, "gpuprof.flush_ticks", n);
	gps_emit_int_counter(rec, "gpuprof.flush_ns", atomic_load(&tk_flush_ns));
}
