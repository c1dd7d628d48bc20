/* gps.h — shim-internal declarations shared by the files of libgpuprof.so.
 * Every symbol here is hidden (the .so exports only the injection entry
 * points, see shim/exports.map); the prefix is gps_ (gpuprof shim).
 */
#ifndef GPS_H
#define GPS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include "gp_settings.h"
#include "gp_trace.h"

/* Thread-local data the hot paths touch.  initial-exec keeps the access a
 * single %fs-relative load (no __tls_get_addr, which may malloc and recurse)
 * — which is why it must stay tiny: when we are dlopen'ed through
 * CUDA_INJECTION64_PATH it has to fit in glibc's static-TLS surplus. */
#define GPS_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---------------------------------------------------------------- config */
struct gps_config {
	int enabled;            /* GPUPROF_ENABLE (default 1) */
	int quiet;              /* GPUPROF_QUIET */
	int follow_exec;        /* GPUPROF_FOLLOW_EXEC (default 1) */
	enum gp_api_set api_set;   /* GPUPROF_API */
	enum gp_api_mode api_mode; /* GPUPROF_API_MODE */
	int api_driver;         /* GPUPROF_API_DRIVER (default 1): driver-domain calls too */
	enum gp_bind bind;      /* GPUPROF_BIND */
	unsigned activity;      /* GPUPROF_ACTIVITY: gp_activity_bits */
	uint32_t flush_ms;      /* GPUPROF_FLUSH_MS, default 500: writer, CUPTI ticker */
	size_t buffer_size;     /* CUPTI activity buffer, default 8 MiB */
	size_t ring_size;       /* per-thread ring, 0 = libprof default */
	size_t max_memory;      /* recorder cap, 0 = libprof default */
	int zstd_level;         /* 0 = libprof default */
	char output[GP_SETTING_TEXT_MAX];     /* pattern, GPUPROF_OUTPUT */
	char cupti_path[GP_SETTING_TEXT_MAX]; /* GPUPROF_CUPTI, "" = search */
	char summary[GP_SETTING_TEXT_MAX];    /* GPUPROF_SUMMARY, "" = none */
	uint64_t win_on_ns;     /* GPUPROF_GPU_WINDOW ON/PERIOD; 0 = off (always on) */
	uint64_t win_period_ns;
	uint32_t gpu_metrics_hz;  /* GPUPROF_GPU_METRICS, samples/s; 0 = off */
	char nvml_path[GP_SETTING_TEXT_MAX];  /* GPUPROF_NVML, "" = libnvidia-ml.so.1 */
	enum gp_stacks_mode stacks;           /* GPUPROF_STACKS */
	enum gp_unwind unwind;                /* GPUPROF_UNWIND */
	char unwind_lib[GP_SETTING_TEXT_MAX]; /* GPUPROF_UNWIND=/path/libunwind.so: that one only */
	char status[GP_SETTING_TEXT_MAX];     /* GPUPROF_STATUS pattern, "" = no status file */
	uint64_t pm_interval_ns;  /* GPUPROF_PM_SAMPLING, ns; 0 = off */
	enum gp_capture_range capture_range;  /* GPUPROF_CAPTURE_RANGE */
	enum gp_clock_mode clock;             /* GPUPROF_CLOCK */
};

/* Reads the GPUPROF_* environment into *c (defaults first).  Unknown values
 * are reported once and replaced by the default. */
void gps_config_load(struct gps_config *c);
/* The settings that decide what a trace holds, as one line of key=value
 * words ("activity=kernel,memcpy,... api=default ..."); returns its length
 * (cut to fit n). */
size_t gps_config_describe(const struct gps_config *c, char *buf, size_t n);
/* Expands an output pattern (%p pid, %h host, %r rank, %t start time, %%).
 * Returns 0 or -1 when it does not fit. */
int gps_expand_pattern(const char *pat, char *out, size_t outsz, int pid,
		       const char *host, int rank, time_t start);
/* RANK, else LOCAL_RANK, else -1 */
int gps_env_rank(void);

/* ---------------------------------------------------------------- logging */
/* One "gpuprof: ..." line on stderr via write(2).  gps_log is for normal
 * context (formats with vsnprintf); gps_log_raw is async-signal-safe. */
void gps_log(int is_error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gps_log_raw(const char *msg);

/* ---------------------------------------------------------------- state */
struct gps_state {
	struct gps_config cfg;
	int initialized;            /* constructor ran */
	int disabled;               /* tracing off for good (error or ENABLE=0) */
	pid_t pid;                  /* current process (updated in fork child) */
	pid_t ppid;
	char self_path[4096];       /* realpath of libgpuprof.so */
	char host[256];
	int rank;
	time_t start_time;
	_Atomic(gp_recorder *) rec; /* NULL until activated */
	atomic_uint gen;            /* bumps with every recorder: caches key on it */
	int rec_failed;             /* creation failed in this process: don't retry */
	pthread_mutex_t rec_lock;   /* creation / close */
	char trace_path[4096];
	uint64_t trace_start_ns;    /* trace clock at the recorder's creation */
	uint32_t clock_id;          /* gp_clock_id of every timestamp we emit */
	int64_t gpu_offset;         /* added to CUPTI timestamps (clock fallback) */
	atomic_int closed;          /* final flush done in this process */
	atomic_int cupti_bound;     /* CUPTI subscribed & configured */
	atomic_int cupti_tried;
};
extern struct gps_state gps;

/* Recursion guard: set while the shim is running on this thread (CUPTI can
 * call back into us from within calls we make). */
extern GPS_TLS int gps_in_shim;

static inline uint64_t gps_sys_mono_ns(void)
{
	/* vDSO: no system call */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* gps_clock.c: CLOCK_MONOTONIC read through the TSC (GPUPROF_CLOCK).
 * ns = ns0 + (tsc - tsc0) * mult / 2^32, published under seq (odd while
 * the one writer updates). */
struct gps_tsc_params { uint64_t tsc0, ns0, mult; };
struct gps_tsc_clock {
	_Atomic uint32_t seq;
	atomic_int on; /* 0 until calibrated, and wherever the TSC is not used */
	_Atomic uint64_t tsc0, ns0, mult;
};
extern struct gps_tsc_clock gps_tsc;
static inline uint64_t gps_tsc_to_ns(const struct gps_tsc_params *p, uint64_t tsc)
{
	/* a TSC read a little before the anchor (another CPU, out-of-order
	 * execution) counts as the anchor: never before ns0 */
	uint64_t d = tsc > p->tsc0 ? tsc - p->tsc0 : 0;
	return p->ns0 + (uint64_t)(((unsigned __int128)d * p->mult) >> 32);
}
/* New parameters at (tsc, mono): continuous with cur at tsc, slope rate
 * corrected to steer the error against mono out over max(1 s, twice
 * since_last_ns, the time since the previous retune) (or, over 1 ms
 * behind, a jump forward to mono: returns 1). */
int gps_tsc_retune(const struct gps_tsc_params *cur, uint64_t rate, uint64_t tsc, uint64_t mono,
		   uint64_t since_last_ns, struct gps_tsc_params *out);
int gps_cpu_has_invariant_tsc(void);    /* CPUID: the TSC runs at one rate, always */
void gps_clock_init(enum gp_clock_mode mode); /* gps_init, before any thread */
void gps_clock_tick(void);              /* the flush thread, every wake-up */
void gps_clock_after_fork_child(void);
uint64_t gps_clock_tsc_updates(void);   /* 0: the TSC was never used */

#if defined(__x86_64__)
static inline uint64_t gps_tsc_ns(void)
{
	uint32_t s;
	struct gps_tsc_params p;
	int tries = 0;
	do {
		/* a writer stopped mid-update (preempted; a SCHED_FIFO reader
		 * on its CPU) must not stall the job: the system clock then */
		if (__builtin_expect(++tries > 1000, 0))
			return gps_sys_mono_ns();
		s = atomic_load_explicit(&gps_tsc.seq, memory_order_acquire);
		p.tsc0 = atomic_load_explicit(&gps_tsc.tsc0, memory_order_relaxed);
		p.ns0 = atomic_load_explicit(&gps_tsc.ns0, memory_order_relaxed);
		p.mult = atomic_load_explicit(&gps_tsc.mult, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
	} while ((s & 1) || s != atomic_load_explicit(&gps_tsc.seq, memory_order_relaxed));
	return gps_tsc_to_ns(&p, __builtin_ia32_rdtsc());
}
#endif

/* The trace clock's CLOCK_MONOTONIC, through the TSC once calibrated. */
static inline uint64_t gps_mono_ns(void)
{
#if defined(__x86_64__)
	/* acquire: pairs with the release that switched it on after the
	 * first parameters were published */
	if (atomic_load_explicit(&gps_tsc.on, memory_order_acquire))
		return gps_tsc_ns();
#endif
	return gps_sys_mono_ns();
}
/* Trace-clock now (ns): CLOCK_MONOTONIC, the clock CUPTI is given through
 * the timestamp callback; CUPTI's own clock only when CUPTI refused it. */
uint64_t gps_now_cupti(void);
static inline uint64_t gps_now(void)
{
	if (__builtin_expect(gps.clock_id == GP_CLOCK_CUPTI, 0))
		return gps_now_cupti();
	return gps_mono_ns();
}

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

/* The recorder for emitting now, creating it on first use when create != 0
 * (activation).  NULL when tracing is off.  Fast path: one atomic load. */
gp_recorder *gps_rec_slow(int create);
static inline gp_recorder *gps_rec(int create)
{
	gp_recorder *r = atomic_load_explicit(&gps.rec, memory_order_acquire);
	if (__builtin_expect(r != NULL, 1))
		return r;
	return gps_rec_slow(create);
}

/* Per-thread shim data (heap; the TLS slot is just a pointer). */
struct gps_nvtx_entry;
struct gps_thread {
	unsigned gen;          /* recorder generation the fields below belong to */
	uint32_t tid;
	int kind_set;          /* activity thread marked */
	struct gps_nvtx_entry *stack; /* push/pop ranges */
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
/* Called when a recorder is born in this thread (GP_REC_THREAD etc). */
void gps_thread_announce(gp_recorder *rec, struct gps_thread *t);
uint32_t gps_gettid(void);

/* ---------------------------------------------------------------- CUPTI */
/* Binds CUPTI (dlopen+dlsym), subscribes, enables callbacks and activity.
 * Idempotent and thread-safe; returns 0 when tracing through CUPTI. */
int gps_cupti_start(const char *why);
/* Final: flush CUPTI activity buffers (forced).  Safe when never bound. */
void gps_cupti_flush(void);
void gps_cupti_stop(void);
void gps_cupti_after_fork_child(void);

/* Interned display name of an API cbid (dom 1 driver, 2 runtime), cached
 * per cbid and recorder generation; fallback when CUPTI has no name. */
uint32_t gps_api_name_id(gp_recorder *rec, int dom, uint32_t cbid, const char *fallback);
/* Activity mode: drop driver API records nested in a runtime record of the
 * same thread (set at bind time for the default API set). */
extern int gps_act_skip_nested_driver;

/* Service threads (shim/gps_service.c): the lifecycle the gpuprof-flush,
 * gpuprof-nvml and gpuprof-pm threads share.  A static one is
 * GPS_SERVICE_INIT("thread-name").  lock guards state/exited/the owner's own
 * fields; cond (CLOCK_MONOTONIC) wakes the thread on stop.
 * start_locked: lock held, state NONE; makes cond on first use, creates the
 * detached thread (all signals blocked, stack_bytes) which names itself,
 * runs main_fn (called and returning without lock) and then sets exited;
 * GPS_SERVICE_STARTED, _NO_COND (nothing tried) or _NO_THREAD.
 * stop: RUNNING -> STOPPING, waits at most timeout_ms for exited; returns
 * 1 when no thread runs any more, 0 when it gave up waiting.
 * wait: one timed wait (lock held) until a CLOCK_MONOTONIC ns deadline,
 * pthread_cond_timedwait's result; sleep_until: waits until the deadline
 * or a stop, returns whether still RUNNING.  after_fork_child: fresh lock
 * and cond, state NONE. */
enum { GPS_SERVICE_NONE = 0, GPS_SERVICE_RUNNING = 1, GPS_SERVICE_STOPPING = 2 };
enum { GPS_SERVICE_STARTED = 0, GPS_SERVICE_NO_COND = -1, GPS_SERVICE_NO_THREAD = -2 };
struct gps_service {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int cond_ok;
	int state; /* GPS_SERVICE_NONE/RUNNING/STOPPING */
	int exited;
	const char *name;
	void (*main)(struct gps_service *svc);
};
#define GPS_SERVICE_INIT(thread_name) {.lock = PTHREAD_MUTEX_INITIALIZER, .name = (thread_name)}
int gps_service_start_locked(struct gps_service *svc, void (*main_fn)(struct gps_service *),
			     size_t stack_bytes);
int gps_service_stop(struct gps_service *svc, uint32_t timeout_ms);
int gps_service_wait(struct gps_service *svc, uint64_t deadline_mono_ns);
int gps_service_sleep_until(struct gps_service *svc, uint64_t deadline_mono_ns);
void gps_service_after_fork_child(struct gps_service *svc);

/* Flush ticker (shim/gps_ticker.c): a thread "gpuprof-flush" calling
 * cuptiActivityFlushAll(0) every flush interval while CUPTI is bound and a
 * trace exists, so partially filled activity buffers reach the file even
 * when the job is SIGKILLed.  start: idempotent; stop: before the final
 * flush, bounded wait. */
void gps_ticker_start(void);
void gps_ticker_stop(void);
void gps_ticker_after_fork_child(void);
void gps_ticker_emit_stats(gp_recorder *rec);

/* Windowed GPU activity (shim/gps_window.c, GPUPROF_GPU_WINDOW).  All are
 * no-ops when the mode is off.  bound: CUPTI has just enabled the activity
 * kinds (t_enabled: trace clock taken before), window 0 is open;
 * ticker_start/next_ns/tick: the gpuprof-flush thread anchors the schedule,
 * sleeps until the next edge (CLOCK_MONOTONIC ns, UINT64_MAX none) and
 * performs due edges (inside gps_enter/gps_leave); final: the final flush
 * closes the open window (before its forced CUPTI flush). */
int gps_window_enabled(void);
void gps_window_bound(uint64_t t_enabled);
void gps_window_ticker_start(uint64_t now_mono);
uint64_t gps_window_next_ns(void);
void gps_window_tick(uint64_t now_mono);
void gps_window_final(void);
/* CUDA is tearing a context down (resource callback): no edge toggles the
 * activity kinds any more; waits (bounded) for an edge in progress. */
void gps_window_cuda_teardown(void);
void gps_window_after_fork_child(void);
/* Emits one GP_REC_WINDOW {start, end} (start clamped to the trace start). */
void gps_window_emit(gp_recorder *rec, uint64_t start, uint64_t end);

/* gps_capture.c — GPUPROF_CAPTURE_RANGE=cudaProfilerApi: record only between
 * cudaProfilerStart and cudaProfilerStop (nsys -c cudaProfilerApi). */
extern atomic_int gps_capture_paused;  /* 1 while outside a capture range */
extern atomic_uint gps_capture_starts; /* capture ranges started so far */
void gps_capture_init(void);           /* from the config: paused or not */
/* The four calls that start and stop a range (runtime and driver). */
#define GPS_CAPTURE_NCALLS 4
struct gps_capture_call { int domain; uint32_t cbid; int start; };
extern const struct gps_capture_call gps_capture_calls[GPS_CAPTURE_NCALLS];
int gps_capture_cbid(int domain, uint32_t cbid); /* one of them */
void gps_capture_call(int domain, uint32_t cbid, int is_exit);
void gps_capture_final(void);
void gps_capture_after_fork_child(void);
/* gps_cupti.c: API records and GPU activity kinds on/off together */
void gps_cupti_capture_switch(int on);
/* Enables (on=1) or disables the configured per-operation activity kinds
 * (all of GPUPROF_ACTIVITY but DEVICE); API and NVTX capture untouched. */
void gps_cupti_gpu_activity(int on);

/* GPU metrics sampler (shim/gps_nvml.c, GPUPROF_GPU_METRICS): a thread
 * "gpuprof-nvml" emitting nvml.* GP_REC_COUNTER records.  start: once a trace
 * exists (idempotent, no-op when off); stop: before the final flush, bounded
 * wait; the fork child has none until it creates its own trace. */
void gps_nvml_start(void);
void gps_nvml_stop(void);
void gps_nvml_after_fork_child(void);
/* Counters are labelled with CUDA's device id of the same UUID.
 * cuda_device: CUDA device id has this UUID (from a CUPTI DEVICE record;
 * any thread, lock-free); final: from the final flush after its CUPTI
 * flush, emits the samples that still wait for that mapping; parse_uuid:
 * NVML's "GPU-xxxxxxxx-..." text to 16 bytes (0, or -1).  Counters of an
 * NVML device with no CUDA id to be had: GPS_NVML_UNMAPPED_BASE + NVML index
 * (docs/FORMAT.md). */
#define GPS_NVML_UNMAPPED_BASE 1000u
void gps_nvml_cuda_device(uint32_t id, const uint8_t uuid[16]);
void gps_nvml_final(void);
int gps_nvml_parse_uuid(const char *s, uint8_t out[16]);

/* CUPTI PM sampling (shim/gps_pmsampling.c, GPUPROF_PM_SAMPLING): a thread
 * "gpuprof-pm" that samples SM activity/occupancy, tensor and DRAM activity
 * of each device a context was created on, as pm.* GP_REC_COUNTER records.
 * context_created: from the CUPTI resource callback (notes the context, wakes
 * the thread, which makes every CUPTI profiler call, and waits, bounded, for
 * that device's set-up); stop: before the final CUPTI flush (stop, last
 * decode; bounded wait; PM sampling is left enabled for the exit);
 * fork_prepare/parent: fork waits (bounded) until the thread is outside
 * CUPTI. */
void gps_pm_context_created(void *cu_context);
void gps_pm_stop(void);
void gps_pm_fork_prepare(void);
void gps_pm_fork_parent(void);
void gps_pm_after_fork_child(void);

/* Live status file (shim/gps_status.c, GPUPROF_STATUS).  gps_status_on is
 * set at start when configured and cleared for good on a write error; the
 * feeders (activity records, NVTX push/start, NVML samples) are called only
 * while it is set.  tick/next_ns: the gpuprof-flush thread writes the file
 * about once a second; final: the last write ("exited"), from the final
 * flush once the trace is complete. */
extern atomic_int gps_status_on;
void gps_status_kernel(uint64_t start_ns, uint64_t end_ns);
void gps_status_copy(uint64_t bytes);
/* op: 1 allocation, 2 release (GP_REC_MEMORY's); device_kind: device memory */
void gps_status_memory(int op, int device_kind, uint64_t bytes);
void gps_status_nvml_mem(unsigned dev, uint64_t used);
void gps_status_nvtx(const char *msg);
uint64_t gps_status_next_ns(void);
void gps_status_tick(uint64_t now_mono);
void gps_status_final(uint64_t dropped);
void gps_status_after_fork_child(void);
static inline int gps_status_active(void)
{
	return atomic_load_explicit(&gps_status_on, memory_order_relaxed);
}

/* Callback-id selection (shim/gps_cbid.c): does this API name belong to the
 * default set of the domain (1 driver, 2 runtime)? */
int gps_cbid_default(int domain, const char *name);
/* Does this call record its call stack with GPUPROF_STACKS (launches,
 * graph launches, memcpy/memset of the domain)? */
int gps_cbid_wants_stack(int domain, const char *name);
/* Writes the display form of a CUPTI callback name ("cudaMemcpy_v3020" ->
 * "cudaMemcpy"). */
void gps_cbid_clean_name(const char *name, char *out, size_t outsz);

/* Activity (shim/gps_activity.c) */
void gps_activity_buffer_requested(uint8_t **buffer, size_t *size, size_t *maxrec);
void gps_activity_buffer_completed(void *ctx, uint32_t stream, uint8_t *buf, size_t size,
				   size_t valid);
void gps_activity_after_fork_child(void);
void gps_activity_fork_prepare(void);
void gps_activity_fork_parent(void);

/* NVTX (shim/gps_nvtx.c) */
void gps_nvtx_flush_unterminated(gp_recorder *rec);
void gps_nvtx_after_fork_child(void);

/* Emits a GP_REC_CLOCK pair (trace, realtime, CUPTI). */
void gps_emit_clock(gp_recorder *rec);
/* Emits an INT GP_REC_COUNTER `name` = value, now, device 0 (the shim's
 * own cost counters). */
void gps_emit_int_counter(gp_recorder *rec, const char *name, uint64_t value);

/* Lifecycle (shim/gps_main.c) */
void gps_init(void); /* constructor body; idempotent */
void gps_final_flush(const char *why);
void gps_threads_foreach(void (*fn)(struct gps_thread *, void *), void *arg);
/* A trace/status path pattern for this process: a descendant (fork child,
 * followed exec'd child) gets "-%p" before the extension when the pattern
 * has no %p, so it never overwrites the first process's file. */
void gps_descendant_pattern(const char *pat, char *out, size_t n);

#endif /* GPS_H */
