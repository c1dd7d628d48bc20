/* gps_core.h — the layer every other part of libgpuprof.so calls
 * (core/gps_core.c, core/gps_threads.c): the process's identity and
 * configuration, access to its recorder (the trace), the thread registry
 * with the enter/leave bracket around every emit path, the emit helpers, the
 * ordering fences, and the GPU backend as vendor-neutral code sees it.
 *
 * The core calls no feature.  Two things point upwards, through pointers
 * set once at start: what happens when a trace is found or made (the
 * lifecycle's hook: signal handlers, service threads) and what the GPU
 * backend does (nvidia/gps_cupti.c's ops).  Every symbol is hidden (the .so
 * exports only the injection entry points, see shim/exports.map); the
 * prefix is gps_ (gpuprof shim). */
#ifndef GPS_CORE_H
#define GPS_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "gp_trace.h"
#include "core/gps_clock.h"
#include "core/gps_config.h"
#include "core/gps_log.h"

/* Thread-local data the hot paths touch.  initial-exec keeps the access a
 * single %fs-relative load (no __tls_get_addr, which may malloc and recurse)
 * — which is why it must stay tiny: when we are dlopen'ed through
 * CUDA_INJECTION64_PATH it has to fit in glibc's static-TLS surplus. */
#define GPS_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---------------------------------------------------------------- state */
/* The core's context: one per process (a fork child re-initialises it). */
struct gps_state {
	struct gps_config cfg;
	/* who we are */
	int initialized;            /* constructor ran */
	int disabled;               /* tracing off for good (error or ENABLE=0) */
	int forked;                 /* a fork child of a traced process */
	pid_t pid;                  /* current process (updated in fork child) */
	pid_t ppid;
	char self_path[4096];       /* realpath of libgpuprof.so */
	char host[256];
	int rank;
	time_t start_time;
	/* the trace */
	_Atomic(gp_recorder *) rec; /* NULL until activated */
	atomic_uint gen;            /* bumps with every recorder: caches key on it */
	int rec_failed;             /* creation failed in this process: don't retry */
	pthread_mutex_t rec_lock;   /* creation / close */
	char trace_path[4096];
	uint64_t trace_start_ns;    /* trace clock at the recorder's creation */
	uint32_t clock_id;          /* gp_clock_id of every timestamp we emit */
	atomic_int closed;          /* final flush done in this process */
};
extern struct gps_state gps;

/* Recursion guard: set while the shim is running on this thread (CUPTI can
 * call back into us from within calls we make). */
extern GPS_TLS int gps_in_shim;

uint32_t gps_gettid(void);

/* Start: pid, host, rank, start time, own path (before the config is
 * acted on). */
void gps_core_identify(void);
/* A pattern for this process's trace or status file: a descendant (fork
 * child, followed exec'd child) gets "-%p" before the extension when the
 * pattern has no %p, so it never overwrites the first process's file. */
void gps_descendant_pattern(const char *pat, char *out, size_t n);

/* ---------------------------------------------------------------- GPU backend */
/* What vendor-neutral code (features/) asks of the GPU tracing backend,
 * which registers these at bind time (nvidia/gps_cupti.c).  A call before
 * that does nothing. */
struct gps_gpu_ops {
	void (*flush_completed)(void); /* hand over completed activity records now (not forced) */
	void (*activity)(int on);      /* the per-operation activity kinds on/off (windows) */
	void (*capture)(int on);       /* API records and GPU activity on/off (capture range) */
	void (*api)(int on);           /* API records on/off (the flight recorder's GPUPROF_FLIGHT_API=capture) */
	void (*step_markers)(void);    /* API records off: the step finder's callbacks to its classes now */
	uint64_t (*timestamp)(void);   /* the backend's clock now, ns; 0 when it has none */
};
void gps_gpu_set_ops(const struct gps_gpu_ops *ops);
/* bound: the backend is subscribed and configured (until the final flush
 * stops it) */
void gps_gpu_set_bound(int bound);
int gps_gpu_bound(void);
/* GPUPROF_COEXIST=yield: the job's own profiler holds CUPTI and the
 * backend records nothing (nvidia/gps_coexist.c).  The trace-clock time it
 * took over, 0 when it holds nothing. */
void gps_gpu_set_yielded(uint64_t since);
uint64_t gps_gpu_yielded(void);
void gps_gpu_flush_completed(void);
void gps_gpu_activity(int on);
void gps_gpu_capture(int on);
void gps_gpu_api(int on);
void gps_gpu_step_markers(void);
/* The backend's clock as the trace clock (CLOCK_MONOTONIC when it has
 * none). */
uint64_t gps_gpu_now(void);

/* ---------------------------------------------------------------- clock */
/* Trace-clock now (ns): CLOCK_MONOTONIC, the clock CUPTI is given through
 * the timestamp callback; the backend's own clock only when CUPTI refused
 * it (clock_id GP_CLOCK_CUPTI). */
static inline uint64_t gps_now(void)
{
	if (__builtin_expect(gps.clock_id == GP_CLOCK_CUPTI, 0))
		return gps_gpu_now();
	return gps_mono_ns();
}

/* ---------------------------------------------------------------- fences */
/* Store->load ordering between the emit paths (many, hot) and the final
 * flush (once): an asymmetric barrier.  With membarrier(2) registered the
 * hot side needs only a compiler barrier and the flush side pays one
 * membarrier(PRIVATE_EXPEDITED); without it both sides use a full fence. */
extern int gps_membarrier_ok;
static inline void gps_fence_light(void)
{
	if (__builtin_expect(gps_membarrier_ok, 1))
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
}
void gps_fence_heavy(void);
void gps_membarrier_register(void);

/* ---------------------------------------------------------------- recorder */
/* What a caller of gps_rec wants when the process has no trace yet. */
enum gps_rec_want {
	GPS_REC_EXISTING = 0, /* only one that exists */
	GPS_REC_CUDA = 1,     /* CUDA is in use (CUPTI callback/activity, injection): create it */
	GPS_REC_NVTX = 2,     /* NVTX: create it, but not in a fork child by itself
				 (DataLoader workers must cost nothing) */
};
/* The recorder for emitting now, creating it on first use as `want` says
 * (activation).  NULL when tracing is off.  Fast path: one atomic load. */
gp_recorder *gps_rec_slow(enum gps_rec_want want);
static inline gp_recorder *gps_rec(enum gps_rec_want want)
{
	gp_recorder *r = atomic_load_explicit(&gps.rec, memory_order_acquire);
	if (__builtin_expect(r != NULL, 1))
		return r;
	return gps_rec_slow(want);
}
/* The lifecycle's hook, called by gps_rec_slow (gps_in_shim set, no lock
 * held) every time it returns a trace: what the process runs alongside a
 * trace (signal handlers, service threads).  Idempotent. */
typedef void (*gps_trace_hook)(enum gps_rec_want want);

/* Enabled: per-thread data, the fences, the trace hook. */
void gps_core_start(gps_trace_hook on_trace);
/* Where the recorder writes when it is not GPUPROF_OUTPUT's file: the flight
 * recorder's spool (features/gps_flight.c), set by the lifecycle at start.
 * path: the file to create into out, 0; or -1 with its one line said (the
 * process then runs untraced).  created: the recorder exists and writes to
 * that path (rec_lock held; nothing but the process and clock records
 * emitted yet). */
struct gps_trace_file_ops {
	int (*path)(char *out, size_t n);
	void (*created)(const char *path);
};
void gps_core_set_trace_file_ops(const struct gps_trace_file_ops *ops);
/* Final flush: the recorder taken out of reach (NULL when none); the caller
 * closes it. */
gp_recorder *gps_core_take_recorder(void);
/* Fork child: fresh locks, the new pid, no trace (the parent's is the
 * parent's), only the forking thread. */
void gps_core_after_fork_child(void);

/* GPUPROF_SUMMARY (set by `gpuprof run`, which reads it when the job ends):
 * appends `line` in one O_APPEND write, so lines of several processes never
 * interleave.  The lines, one key=value list each ("file" and "error" take
 * the rest of the line): "pid=N file=PATH" when the trace file is created
 * (so a job killed or ended by _exit() still names its file), "pid=N
 * error=TEXT" when it cannot be, and the final flush's "pid=N events=N
 * dropped=N bytes=N threads=N file=PATH".  No-op without GPUPROF_SUMMARY. */
void gps_summary_append(const char *line);

/* Emits a GP_REC_CLOCK pair (trace, realtime, backend). */
void gps_emit_clock(gp_recorder *rec);
/* Emits an INT GP_REC_COUNTER `name` = value, now, device 0 (the shim's
 * own cost counters). */
void gps_emit_int_counter(gp_recorder *rec, const char *name, uint64_t value);

/* ---------------------------------------------------------------- threads */
/* Per-thread shim data (heap; the TLS slot is just a pointer). */
struct gps_nvtx_entry;
struct gps_thread {
	unsigned gen;          /* recorder generation the fields below belong to */
	uint32_t tid;
	int kind_set;          /* the thread's source kind is set in this recorder */
	struct gps_nvtx_entry *stack; /* NVTX push/pop ranges (nvidia/gps_nvtx.c) */
	uint32_t depth, cap;
	struct gps_thread *next; /* registry, for the unterminated-range flush */
	int dead;
	atomic_int busy;       /* >0 while this thread may be inside gp_emit */
};
/* Bracket every path that may call gp_emit (CUPTI callbacks, activity
 * delivery, NVTX): libprof forbids gp_emit concurrent with close, so the
 * final flush waits (bounded) for busy threads.  gps_enter returns NULL when
 * tracing is closing/closed: do nothing then. */
struct gps_thread *gps_enter(void);
void gps_leave(struct gps_thread *t);
struct gps_thread *gps_thread_get(void);
/* A shim service thread's recorder for emitting (NULL when t is NULL, i.e.
 * closing, or no trace): marks the thread's source GP_SOURCE_TOOL once per
 * recorder (kind_set is reset by gps_thread_get for each recorder). */
gp_recorder *gps_tool_rec(struct gps_thread *t);
/* Walks every known thread, registry lock held (the final flush reports
 * open NVTX ranges). */
void gps_threads_foreach(void (*fn)(struct gps_thread *, void *), void *arg);
/* Final flush, after gps.closed is set: waits (at most ~0.5 s) until no
 * other thread is inside an emit path. */
void gps_threads_wait_idle(void);
/* The core's own (gps_core_start, gps_core_after_fork_child): the TLS key
 * whose destructor retires a thread; the child's registry. */
void gps_threads_start(void);
void gps_threads_after_fork_child(void);

#endif
