/* gps_window.c — windowed GPU activity (GPUPROF_GPU_WINDOW=ON/PERIOD): the
 * CUPTI activity kinds that cost per GPU operation are enabled only inside
 * windows of ON every PERIOD; API calls and NVTX stay on all the time.  Each
 * window that closed is written as a GP_REC_WINDOW {start, end}, so the tools
 * can tell "no kernel recorded here" from "no kernel ran here".
 *
 * Is toggling legal at run time?  cupti_activity.h (CUDA 13.0) documents
 * cuptiActivityEnable/cuptiActivityDisable as "enable/disable collection of
 * a specific kind of activity record", callable repeatedly, with no
 * constraint on when (the constraints it does state are on other calls:
 * cuptiActivityEnableLatencyTimestamps and cuptiActivityEnableDeviceGraph
 * "before initialization of CUDA", the timestamp callback "before any kind
 * is enabled" — both done once at bind time, never toggled).  The CUPTI
 * guide (docs.nvidia.com/cupti/main, "CUPTI Initialization"): "For the
 * Activity and Callback APIs there are no requirements on when this
 * initialization must occur".  PyTorch's kineto does exactly this in a
 * running process for torch.profiler's schedule: CuptiActivityApi::
 * enableCuptiActivities / disableCuptiActivities (libkineto/src/
 * CuptiActivityApi.cpp) enable and disable CONCURRENT_KERNEL, MEMCPY,
 * MEMSET, SYNCHRONIZATION at each profiling step boundary.  Not settled by
 * the docs, and so not assumed here: whether a kernel launched inside a
 * window but executed after it closes still gets a record (the tools count
 * kernels by their start time and never call a missing kernel "lost").
 * DEVICE stays enabled: one record per device at CUDA init, which names the
 * devices; it costs nothing per operation.
 *
 * Who does what: window 0 opens when CUPTI enables the kinds at bind time;
 * the gpuprof-flush ticker (gps_ticker.c) anchors the schedule when it
 * starts (the trace exists then) and performs every later edge; the final
 * flush closes an open window (end = flush time).  An edge is owned by
 * whoever moves w_phase out of OPEN/CLOSED first (CAS), so a final flush
 * racing a stalled ticker never closes a window twice and never reopens. */
#include <string.h>

#include "core/gps_core.h"
#include "features/gps_window.h"

enum { W_CLOSED = 0, W_OPEN = 1, W_BUSY = 2, W_DONE = 3 };

static atomic_int w_phase = W_CLOSED;
static uint64_t w_start;   /* trace clock: the open window's start (owner of the phase writes) */
static uint64_t w_anchor;  /* CLOCK_MONOTONIC: window k opens at anchor + k * period */
static uint64_t w_next;    /* CLOCK_MONOTONIC: next edge; ticker thread only */
/* CUDA's atexit teardown runs before our final flush, while the ticker may
 * still reach an edge: toggling activity kinds during or after context
 * destruction crashed the job on the H200 (exit 139 in 2 of 4 windowed MNIST
 * runs).  w_cuda_gone stops edges; w_edge_busy lets the teardown wait for an
 * edge already inside CUPTI.  Both seq_cst: the edge publishes busy before
 * it reads gone, the teardown publishes gone before it reads busy. */
static atomic_int w_cuda_gone;
static atomic_int w_edge_busy;

int gps_window_enabled(void) { return gps.cfg.win_period_ns != 0; }

void gps_window_bound(uint64_t t_enabled)
{
	if (!gps_window_enabled())
		return;
	int expect = W_CLOSED;
	w_start = t_enabled;
	atomic_compare_exchange_strong(&w_phase, &expect, W_OPEN);
}

void gps_window_emit(gp_recorder *rec, uint64_t start, uint64_t end)
{
	if (!rec)
		return;
	/* CUPTI may have been bound before the trace existed (GPUPROF_BIND=eager,
	 * a fork child): the window as recorded starts with the trace */
	if (start < gps.trace_start_ns)
		start = gps.trace_start_ns;
	if (end < start)
		end = start;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_WINDOW;
	r.u.window.start_ns = start;
	r.u.window.end_ns = end;
	r.u.window.device_id = 0; /* activity is toggled process-wide: every device */
	gp_emit(rec, &r);
}

/* OPEN -> CLOSED at now.  The end is taken after the kinds are off, so
 * every record CUPTI produced in the window is stamped before its end. */
static void close_window(void)
{
	int expect = W_OPEN;
	if (!atomic_compare_exchange_strong(&w_phase, &expect, W_BUSY))
		return;
	gps_gpu_activity(0);
	uint64_t end = gps_now();
	/* completed records of the window leave CUPTI now, not at a later tick */
	gps_gpu_flush_completed();
	gp_recorder *rec = atomic_load(&gps.rec);
	gps_window_emit(rec, w_start, end);
	if (rec)
		gp_recorder_request_flush_async(rec);
	atomic_store(&w_phase, W_CLOSED);
}

/* CLOSED -> OPEN.  The start is taken before the kinds are on. */
static int open_window(void)
{
	int expect = W_CLOSED;
	if (!atomic_compare_exchange_strong(&w_phase, &expect, W_BUSY))
		return -1;
	w_start = gps_now();
	gps_gpu_activity(1);
	atomic_store(&w_phase, W_OPEN);
	return 0;
}

static uint64_t next_open_after(uint64_t now)
{
	uint64_t p = gps.cfg.win_period_ns;
	return w_anchor + ((now - w_anchor) / p + 1) * p;
}

static uint64_t close_for(uint64_t now)
{
	uint64_t p = gps.cfg.win_period_ns, on = gps.cfg.win_on_ns;
	uint64_t c = w_anchor + (now - w_anchor) / p * p + on;
	/* opened late (the ticker stalled past this slot's end): the window
	 * still lasts ON rather than closing at once */
	return c > now ? c : now + on;
}

void gps_window_ticker_start(uint64_t now)
{
	if (!gps_window_enabled())
		return;
	w_anchor = now;
	/* a fork child may inherit a closed window: open one with its trace */
	if (atomic_load(&w_phase) == W_CLOSED)
		open_window();
	w_next = atomic_load(&w_phase) == W_OPEN ? now + gps.cfg.win_on_ns : next_open_after(now);
}

uint64_t gps_window_next_ns(void)
{
	return gps_window_enabled() ? w_next : UINT64_MAX;
}

void gps_window_cuda_teardown(void)
{
	if (!gps_window_enabled())
		return;
	atomic_store(&w_cuda_gone, 1);
	/* bounded: the edge may itself wait on a CUPTI lock this thread holds */
	for (int i = 0; i < 200 && atomic_load(&w_edge_busy); i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

static void window_edge(uint64_t now)
{
	switch (atomic_load(&w_phase)) {
	case W_OPEN:
		close_window();
		w_next = next_open_after(gps_mono_ns());
		break;
	case W_CLOSED:
		if (open_window() == 0)
			w_next = close_for(gps_mono_ns());
		break;
	default: /* final flush owns it, or it is done */
		w_next = UINT64_MAX;
		break;
	}
}

void gps_window_tick(uint64_t now)
{
	if (!gps_window_enabled() || now < w_next)
		return;
	atomic_store(&w_edge_busy, 1);
	if (atomic_load(&w_cuda_gone))
		w_next = UINT64_MAX; /* the window stays as it is until the final flush */
	else
		window_edge(now);
	atomic_store(&w_edge_busy, 0);
}

void gps_window_final(void)
{
	if (!gps_window_enabled())
		return;
	int expect = W_OPEN;
	if (atomic_compare_exchange_strong(&w_phase, &expect, W_BUSY)) {
		/* the final forced flush comes next and delivers the rest;
		 * after CUDA's teardown nothing is left to switch off */
		if (!atomic_load(&w_cuda_gone))
			gps_gpu_activity(0);
		gps_window_emit(atomic_load(&gps.rec), w_start, gps_now());
	}
	expect = W_CLOSED;
	atomic_compare_exchange_strong(&w_phase, &expect, W_DONE);
	/* W_BUSY: a ticker stuck in CUPTI mid-edge; it can no longer emit
	 * (closed is set before the recorder goes) */
}

void gps_window_after_fork_child(void)
{
	/* the parent's ticker may have been mid-edge: the child's ticker opens a
	 * window with the child's trace (enabling is idempotent) */
	int ph = atomic_load(&w_phase);
	if (ph != W_OPEN)
		atomic_store(&w_phase, W_CLOSED);
	w_next = UINT64_MAX;
	atomic_store(&w_cuda_gone, 0);
	atomic_store(&w_edge_busy, 0);
}
