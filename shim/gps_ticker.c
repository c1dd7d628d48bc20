/* gps_ticker.c — the "gpuprof-flush" thread.  CUPTI's own periodic flush
 * (cuptiActivityFlushPeriod) only returns FULL activity buffers, and an 8 MiB
 * buffer may take minutes to fill: a SIGKILLed job used to lose every GPU
 * record.  This thread calls cuptiActivityFlushAll(0) (not forced: only
 * completed records) every GPUPROF_FLUSH_MS, then asks libprof's writer to
 * write what that delivered right away, so a killed job loses about one
 * interval.
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
 * about once a second (gps_status.c). */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "gps.h"
#include "gps_cupti_fns.h"

enum { TK_NONE = 0, TK_RUNNING = 1, TK_STOPPING = 2 };

static pthread_mutex_t tk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tk_cond;
static int tk_cond_ok;
static int tk_state;
static int tk_exited;
/* cost accounting, written into the trace at the end (GP_REC_COUNTER) */
static _Atomic uint64_t tk_flushes, tk_flush_ns;

static void deadline_after(struct timespec *ts, uint32_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void tick(void)
{
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter(); /* NULL once the final flush began */
	if (t) {
		uint64_t t0 = gps_mono_ns();
		GPS_CUPTI_QUIET(cuptiActivityFlushAll, 0);
		gp_recorder *rec = atomic_load(&gps.rec);
		if (rec) /* writer: drain now rather than at its next period */
			gp_recorder_request_flush_async(rec);
		atomic_fetch_add_explicit(&tk_flushes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&tk_flush_ns, gps_mono_ns() - t0, memory_order_relaxed);
	}
	gps_leave(t);
	gps_in_shim = 0;
}

static void ns_to_timespec(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
}

/* GPUPROF_GPU_WINDOW: window edges due now (gps_window.c), bracketed like
 * every emit path. */
static void window_edges(uint64_t now)
{
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter();
	if (t)
		gps_window_tick(now);
	gps_leave(t);
	gps_in_shim = 0;
}

static void *ticker_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "gpuprof-flush");
	uint64_t period = (uint64_t)(gps.cfg.flush_ms ? gps.cfg.flush_ms : 500) * 1000000ull;
	uint64_t next_flush = gps_mono_ns() + period;
	gps_window_ticker_start(gps_mono_ns());
	pthread_mutex_lock(&tk_lock);
	while (tk_state == TK_RUNNING) {
		/* sleep until the next flush or window edge, whichever first */
		uint64_t wake = next_flush, edge = gps_window_next_ns(), st = gps_status_next_ns();
		if (edge < wake)
			wake = edge;
		if (st < wake)
			wake = st;
		struct timespec dl;
		ns_to_timespec(wake, &dl);
		int rc = 0;
		while (tk_state == TK_RUNNING && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&tk_cond, &tk_lock, &dl);
		if (tk_state != TK_RUNNING)
			break;
		pthread_mutex_unlock(&tk_lock); /* never held while in CUPTI */
		uint64_t now = gps_mono_ns();
		if (now >= edge)
			window_edges(now);
		if (now >= next_flush) {
			tick();
			next_flush = gps_mono_ns() + period;
		}
		gps_status_tick(now); /* GPUPROF_STATUS: after the flush, when due */
		pthread_mutex_lock(&tk_lock);
	}
	tk_exited = 1;
	pthread_cond_broadcast(&tk_cond);
	pthread_mutex_unlock(&tk_lock);
	return NULL;
}

void gps_ticker_start(void)
{
	if (gps.disabled || atomic_load(&gps.closed))
		return;
	pthread_mutex_lock(&tk_lock);
	if (tk_state != TK_NONE) {
		pthread_mutex_unlock(&tk_lock);
		return;
	}
	if (!tk_cond_ok) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		tk_cond_ok = pthread_cond_init(&tk_cond, &ca) == 0;
		pthread_condattr_destroy(&ca);
		if (!tk_cond_ok) {
			pthread_mutex_unlock(&tk_lock);
			return;
		}
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: the job's signals are not ours */
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024); /* CUPTI delivers buffers on it */
	pthread_t th;
	tk_state = TK_RUNNING;
	tk_exited = 0;
	if (pthread_create(&th, &at, ticker_main, NULL) != 0) {
		tk_state = TK_NONE;
		gps_log(0, "cannot start the flush thread: GPU records reach the trace only when CUPTI's buffers fill or at exit");
	}
	int started = tk_state == TK_RUNNING;
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_unlock(&tk_lock);
	/* GPUPROF_STATUS: the first write here, on the thread that created the
	 * trace: the file exists from the start, and an unwritable path is
	 * found (one line, feature off) before the job can fork a child that
	 * would say it again */
	if (started)
		gps_status_tick(gps_mono_ns());
}

void gps_ticker_stop(void)
{
	pthread_mutex_lock(&tk_lock);
	if (tk_state == TK_RUNNING) {
		tk_state = TK_STOPPING;
		pthread_cond_broadcast(&tk_cond);
		/* it may be inside cuptiActivityFlushAll: wait, but never hang the
		 * exit on it (it cannot emit once closed is set: gps_enter) */
		struct timespec dl;
		deadline_after(&dl, 2000);
		int rc = 0;
		while (!tk_exited && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&tk_cond, &tk_lock, &dl);
	}
	pthread_mutex_unlock(&tk_lock);
}

void gps_ticker_after_fork_child(void)
{
	/* the thread is the parent's; the lock may have been held by it */
	pthread_mutex_init(&tk_lock, NULL);
	if (tk_cond_ok) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		tk_cond_ok = pthread_cond_init(&tk_cond, &ca) == 0;
		pthread_condattr_destroy(&ca);
	}
	tk_state = TK_NONE;
	tk_exited = 0;
	atomic_store(&tk_flushes, 0);
	atomic_store(&tk_flush_ns, 0);
	gps_window_after_fork_child();
}

static void emit_counter(gp_recorder *rec, const char *name, uint64_t v)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_COUNTER;
	r.u.counter.ts_ns = gps_now();
	r.u.counter.name_id = gp_intern(rec, name);
	r.u.counter.kind = GP_COUNTER_INT;
	r.u.counter.value.i = (int64_t)v;
	gp_emit(rec, &r);
}

void gps_ticker_emit_stats(gp_recorder *rec)
{
	uint64_t n = atomic_load(&tk_flushes);
	if (!n)
		return;
	/* what the ticker cost this process, for docs/PERFORMANCE.md */
	emit_counter(rec, "gpuprof.flush_ticks", n);
	emit_counter(rec, "gpuprof.flush_ns", atomic_load(&tk_flush_ns));
}
