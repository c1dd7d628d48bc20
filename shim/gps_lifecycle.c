/* gps_lifecycle.c — libgpuprof.so's lifecycle, and the one file that calls
 * every module: the injection entry points, the constructor, what runs
 * alongside a trace once one exists, the final flush (exit, signal), and
 * fork.  Each module's init / stop / final / fork hook is called explicitly
 * here, in an order written down at each call site (LTTng-UST's
 * lttng-ust-comm.c style); the modules never call each other's hooks.  The
 * job must never be harmed: every failure turns tracing off with one
 * "gpuprof:" line and lets the job run on. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "features/gps_capture.h"
#include "features/gps_flight.h"
#include "features/gps_livemem.h"
#include "features/gps_stepfind.h"
#include "features/gps_stacks.h"
#include "features/gps_status.h"
#include "features/gps_ticker.h"
#include "features/gps_window.h"
#include "nvidia/gps_activity.h"
#include "nvidia/gps_cupti.h"
#include "nvidia/gps_nvml.h"
#include "nvidia/gps_nvtx.h"
#include "nvidia/gps_pmsampling.h"

#define GPS_EXPORT __attribute__((visibility("default")))

static void install_signal_handlers(void);
static void start_sig_flusher(void);

/* ------------------------------------------------------------ with a trace */
/* gps_rec's hook (core/gps_core.h): the process has a trace.  The signal
 * handlers only where one exists (no file to close otherwise); the flush
 * ticker only where CUDA made it (an NVTX-only process has no CUPTI buffers
 * to flush; gps_cupti_start starts it when CUPTI is bound after the trace),
 * or with any trace under the flight recorder (its spool must be read back,
 * its control channel polled); the GPU metrics sampler with any trace.
 * Each is idempotent.  First, the DEVICE records that came before the trace
 * (nvidia/gps_activity.c). */
static void on_trace(enum gps_rec_want want)
{
	gps_activity_emit_kept(atomic_load(&gps.rec)); /* DEVICE records that came first */
	install_signal_handlers();
	start_sig_flusher();
	if ((want == GPS_REC_CUDA && gps_gpu_bound()) || gps_flight_armed())
		gps_ticker_start();
	gps_nvml_start(); /* GPUPROF_GPU_METRICS: with any trace */
}

/* ------------------------------------------------------------ final flush */
static atomic_int final_once;

static void write_summary_line(const char *file, uint64_t records, uint64_t dropped, uint64_t bytes,
			       unsigned threads)
{
	char line[8192];
	int n = snprintf(line, sizeof line,
			 "pid=%d events=%llu dropped=%llu bytes=%llu threads=%u file=%s\n", (int)gps.pid,
			 (unsigned long long)records, (unsigned long long)dropped, (unsigned long long)bytes, threads,
			 file);
	if (n > 0 && (size_t)n < sizeof line)
		gps_summary_append(line);
}

static void write_summary(const struct gp_recorder_stats *st)
{
	write_summary_line(gps.trace_path, st->records, st->dropped, st->bytes_written, st->threads);
}

/* GPUPROF_FLIGHT_RECORDER: a line per capture file (its own records and
 * size; the spool's totals are not a file anyone reads) */
static void write_capture_summary(const char *file, uint64_t records, uint64_t bytes)
{
	write_summary_line(file, records, 0, bytes, 0);
}

/* Once per process, from whichever comes first: the atexit handler
 * registered at the first CUDA context (before CUDA's teardown), the
 * signal flusher, our own atexit handler, the destructor.  The order is the
 * data's: everything that produces records stops or hands them over while
 * the recorder still takes them, then no thread may enter an emit path, then
 * the recorder closes. */
static void final_flush(const char *why)
{
	if (atomic_exchange(&final_once, 1))
		return;
	int saved_errno = errno;
	int saved = gps_in_shim;
	gps_in_shim = 1;
	/* 1. the service threads stop (each a bounded wait): no periodic
	 * CUPTI flush, no GPU metrics sample, PM sampling stopped after its
	 * last decode (before the forced CUPTI flush below) */
	gps_ticker_stop();
	gps_nvml_stop();
	gps_pm_stop();
	/* 2. GPUPROF_GPU_WINDOW: the open window ends here (written now, and
	 * before the forced flush, which delivers its records);
	 * GPUPROF_CAPTURE_RANGE: the open capture range ends here too; so does
	 * an open flight-recorder capture or sampled step */
	gps_stepfind_final(); /* the open found step, partial: before a capture ends */
	gps_window_final();
	gps_capture_final();
	gps_flight_final();
	/* 3. activity, while the recorder still takes records */
	gps_cupti_flush();
	/* 4. GPU metrics samples that waited for CUDA's DEVICE records (which
	 * that flush may just have delivered) */
	gps_nvml_final();
	/* 5. then no new entries (callbacks, NVTX) and none still inside */
	atomic_store(&gps.closed, 1);
	gps_cupti_stop();
	gps_threads_wait_idle();
	gp_recorder *rec = atomic_load(&gps.rec);
	if (rec) {
		gps_nvtx_flush_unterminated(rec); /* stacks are quiet now */
		gps_ticker_emit_stats(rec);
		gps_stacks_emit_stats(rec);
		gps_emit_clock(rec);
	}
	/* 6. the recorder closes */
	rec = gps_core_take_recorder();
	if (rec) {
		struct gp_recorder_stats st;
		memset(&st, 0, sizeof st);
		st.sz = sizeof st;
		gp_recorder_flush(rec); /* so bytes_written is (almost) final */
		gp_recorder_get_stats(rec, &st);
		struct gp_recorder_stats2 st2; /* before close: close frees rec */
		memset(&st2, 0, sizeof st2);
		st2.sz = sizeof st2;
		gp_recorder_get_stats2(rec, &st2);
		gp_recorder_close(rec);
		/* GPUPROF_FLIGHT_RECORDER: the recorder wrote into the spool;
		 * the capture being written gets its last records and ends */
		if (gps_flight_armed()) {
			gps_flight_after_close(write_capture_summary);
		} else {
			write_summary(&st);
			gps_flight_after_close(NULL); /* step sampling: the registration goes */
		}
		gps_status_final(st.dropped); /* GPUPROF_STATUS: "exited" */
		/* A full disk or a file-size limit costs records, never the job;
		 * it is worth one warning that names the cause (even when quiet). */
		if (st2.write_errors)
			gps_warn("could not write all of the trace %s: %s; %llu records lost", gps.trace_path,
				 strerror(st2.last_write_errno), (unsigned long long)st2.dropped_write);
		/* under `gpuprof run` (GPUPROF_SUMMARY set) the tool prints the
		 * one summary: ours would be a second */
		if (!gps.cfg.summary[0] && !gps_flight_armed())
			gps_info("%llu events, %llu dropped -> %s (at %s)", (unsigned long long)st.records,
				 (unsigned long long)st.dropped, gps.trace_path, why);
	}
	gps_in_shim = saved;
	errno = saved_errno;
}

/* registered three times (constructor, CUPTI bound, first context): the
 * last registered runs first; final_flush runs once */
static void on_exit_handler(void) { final_flush("exit"); }
__attribute__((destructor)) static void gps_destructor(void) { final_flush("exit"); }

/* The final flush must run while CUDA is whole.  Our constructor's atexit
 * handler runs after the ones CUDA and the frameworks register later, i.e.
 * after CUDA's own teardown — and CUPTI calls made then (window edges on the
 * ticker, PM sampling release, disabling kinds) crashed jobs on the H200
 * (exit 139 in 2 of 6 windowed MNIST runs even with edges stopped at the
 * context-destroy callback, which a PyTorch exit never delivers).  A handler
 * registered at the first context creation (the CUPTI session's context
 * hook) runs before every handler registered earlier, CUDA's included.  Work
 * done by exit handlers that run after it is not traced. */
static void on_cuda_context(void)
{
	static atomic_int registered;
	if (!atomic_exchange(&registered, 1))
		atexit(on_exit_handler);
}

/* libcupti registers exit handlers of its own (static destructors) when it
 * is loaded and initialised — after our constructor's handler, so they run
 * before it, and before the destructor.  In a process that binds CUPTI but
 * never makes a context (OpenMPI's orted runs cuInit), the final flush ran
 * from there, after them: disabling the windowed kinds crashed orted under
 * --gpu-window (SIGSEGV in cuptiActivityDisable, Lightning fit, H200).  A
 * handler registered right after CUPTI is bound runs before libcupti's.  In
 * a process with a context, the handler registered there (later) runs
 * first. */
static void on_cupti_bound(void)
{
	static atomic_int registered;
	if (!atomic_exchange(&registered, 1))
		atexit(on_exit_handler);
}

/* ------------------------------------------------------------ signals */
/* SIGTERM/SIGINT: only where the disposition is still the default.  The
 * handler cannot close the trace itself (not async-signal-safe), so it wakes
 * a helper thread that does, waits a bounded time, then restores the default
 * disposition and re-raises so the exit status is the signal's. */
static const int term_sigs[] = {SIGTERM, SIGINT};
static struct sigaction old_act[2];
static atomic_int installed[2];
static int flush_pipe[2] = {-1, -1};
static atomic_int flush_done;
static atomic_int sig_once;
static atomic_int flusher_started;

static void on_term_signal(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	int saved_errno = errno;
	int idx = sig == SIGTERM ? 0 : 1;
	if (!atomic_exchange(&sig_once, 1) && flush_pipe[1] >= 0 && atomic_load(&gps.rec)) {
		char c = (char)sig;
		if (write(flush_pipe[1], &c, 1) == 1) {
			struct timespec ts = {0, 10 * 1000 * 1000};
			for (int i = 0; i < 300 && !atomic_load(&flush_done); i++)
				nanosleep(&ts, NULL);
			if (!atomic_load(&flush_done)) {
				/* the helper is stuck (a lock held by the interrupted
				 * code?): at least have the writer drain the rings */
				gp_recorder *rec = atomic_load(&gps.rec);
				if (rec)
					gp_recorder_flush_signal(rec, 1000);
				gps_log_raw("trace close on signal timed out; the trace ends without its index");
			}
		}
	}
	sigaction(sig, &old_act[idx], NULL);
	atomic_store(&installed[idx], 0);
	errno = saved_errno;
	raise(sig); /* delivered with the old disposition once we return */
}

static void install_signal_handlers(void)
{
	for (int i = 0; i < 2; i++) {
		if (atomic_load(&installed[i]))
			continue;
		struct sigaction cur;
		if (sigaction(term_sigs[i], NULL, &cur) != 0)
			continue;
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_sigaction = on_term_signal;
			sa.sa_flags = SA_SIGINFO | SA_RESTART;
			sigemptyset(&sa.sa_mask);
			old_act[i] = cur;
			if (atomic_exchange(&installed[i], 1) == 0)
				sigaction(term_sigs[i], &sa, NULL);
		}
	}
}

static void *sig_flusher(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "gpuprof-sig");
	char c;
	for (;;) {
		ssize_t n = read(flush_pipe[0], &c, 1);
		if (n == 1)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		return NULL;
	}
	final_flush("signal");
	atomic_store(&flush_done, 1);
	return NULL;
}

static void start_sig_flusher(void)
{
	if (!atomic_load(&installed[0]) && !atomic_load(&installed[1]))
		return;
	if (atomic_exchange(&flusher_started, 1))
		return;
	if (pipe2(flush_pipe, O_CLOEXEC) != 0) {
		flush_pipe[0] = flush_pipe[1] = -1;
		return;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits: no signals */
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pthread_create(&th, &at, sig_flusher, NULL) != 0) {
		close(flush_pipe[0]);
		close(flush_pipe[1]);
		flush_pipe[0] = flush_pipe[1] = -1;
	}
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* the fork child: the helper thread is the parent's, so is its pipe */
static void signals_after_fork_child(void)
{
	if (flush_pipe[0] >= 0)
		close(flush_pipe[0]);
	if (flush_pipe[1] >= 0)
		close(flush_pipe[1]);
	flush_pipe[0] = flush_pipe[1] = -1;
	atomic_store(&flusher_started, 0);
	atomic_store(&flush_done, 0);
	atomic_store(&sig_once, 0);
}

/* ------------------------------------------------------------ fork */
/* Not TLS: 128 bytes would eat the static-TLS surplus we need when loaded by
 * dlopen (CUDA_INJECTION64_PATH).  Two threads forking at the same instant
 * could restore each other's mask; accepted (rare, and only affects which
 * signals those threads block). */
static sigset_t fork_saved_mask;

/* Lock order.  Our prepare handler runs AFTER libprof's (prepare handlers
 * run in reverse order of registration, and ours is registered first, in
 * the constructor), i.e. while libprof holds its registry/ring/intern
 * locks.  So prepare must not take any lock of ours that is held while
 * calling into libprof — rec_lock (recorder create/forget), threads_lock
 * and NVTX's se_lock (the final flush emits under them) are such locks:
 * taking them here was an ABBA deadlock (a thread creating the recorder
 * under rec_lock waits for libprof's g_reg_lock, the forking thread holds
 * g_reg_lock and waits for rec_lock).  The child does not need them held:
 * it re-initialises them and discards what they protect (thread list,
 * start/end table) or reads it atomically (gps.rec).  Only buf_lock, never
 * held across a libprof call, is taken — and PM sampling's pm_call_lock
 * (timed), first: it may wait (bounded) for the sampler to leave CUPTI, and
 * no lock of ours may be held meanwhile. */
static void fork_prepare(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fork_saved_mask);
	gps_pm_fork_prepare(); /* before our own locks: it may wait (bounded) on CUPTI */
	gps_activity_fork_prepare();
}

/* the reverse of prepare */
static void fork_parent(void)
{
	gps_activity_fork_parent();
	gps_pm_fork_parent();
	pthread_sigmask(SIG_SETMASK, &fork_saved_mask, NULL);
}

/* Only the forking thread exists in the child; every lock another thread
 * may have held is re-initialised, every service thread is gone.  The core
 * first (new pid, no trace: the parent's file stays the parent's, fresh
 * rec_lock and registry), then each module forgets the parent's threads,
 * locks and counts; a child that uses CUDA or NVTX makes its own trace and
 * starts its own threads then.  The order among the modules does not matter
 * (none reads another's state here); the signal mask is restored last. */
static void fork_child(void)
{
	gps_core_after_fork_child();
	gps_clock_after_fork_child();
	gps_activity_after_fork_child();
	gps_nvtx_after_fork_child();
	gps_cupti_after_fork_child();
	gps_capture_after_fork_child();
	gps_stacks_after_fork_child();
	gps_ticker_after_fork_child();
	gps_window_after_fork_child();
	gps_nvml_after_fork_child();
	gps_pm_after_fork_child();
	gps_status_after_fork_child();
	gps_flight_after_fork_child();
	gps_livemem_after_fork_child();
	gps_steps_after_fork_child();
	gps_stepfind_after_fork_child();
	atomic_store(&final_once, 0);
	signals_after_fork_child();
	pthread_sigmask(SIG_SETMASK, &fork_saved_mask, NULL);
}

/* ------------------------------------------------------------ environment */
/* GPUPROF_FOLLOW_EXEC=0: take ourselves out of LD_PRELOAD so exec'd
 * children run untraced.  Entries are separated by ':' or ' '. */
static void drop_from_ld_preload(void)
{
	const char *v = getenv("LD_PRELOAD");
	if (!v)
		return;
	char out[8192];
	size_t o = 0;
	int changed = 0;
	const char *p = v;
	while (*p) {
		while (*p == ':' || *p == ' ')
			p++;
		const char *w = p;
		while (*p && *p != ':' && *p != ' ')
			p++;
		size_t n = (size_t)(p - w);
		if (!n)
			continue;
		char ent[PATH_MAX];
		int ours = 0;
		if (n < sizeof ent) {
			memcpy(ent, w, n);
			ent[n] = 0;
			char rp[PATH_MAX];
			const char *base = strrchr(ent, '/');
			base = base ? base + 1 : ent;
			if ((realpath(ent, rp) && !strcmp(rp, gps.self_path)) ||
			    !strcmp(base, "libgpuprof.so"))
				ours = 1;
		}
		if (ours) {
			changed = 1;
			continue;
		}
		if (o + n + 2 >= sizeof out)
			return; /* absurdly long: leave it alone */
		if (o)
			out[o++] = ':';
		memcpy(out + o, w, n);
		o += n;
	}
	if (!changed)
		return;
	out[o] = 0;
	if (o)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
}

static int same_file(const char *a, const char *b)
{
	char ra[PATH_MAX];
	return realpath(a, ra) && !strcmp(ra, b);
}

/* ------------------------------------------------------------ entry points */
static atomic_int ctor_once;

/* The constructor's body; idempotent (the injection entry points call it
 * too).  Order: the config first (everything below reads it; its complaints
 * are warnings, printed whatever GPUPROF_QUIET says), then the log level
 * and the modules that only read the config, who we are, and — tracing
 * enabled — the core, the clock (before any thread: the flush thread is its
 * one writer), the fork and exit handlers (registered before anything of
 * libprof's: see the lock order at fork_prepare), the CUDA context hook, and
 * last the decision when CUPTI is bound. */
static void gps_init(void)
{
	if (atomic_exchange(&ctor_once, 1))
		return;
	int saved_errno = errno;
	gps_config_load(&gps.cfg);
	gps_log_set_level(gps.cfg.quiet ? GPS_LOG_WARN : GPS_LOG_INFO);
	gps_capture_init();
	gps_core_identify();
	gps.initialized = 1;
	gps_status_init();
	if (!gps.cfg.follow_exec)
		drop_from_ld_preload();
	if (!gps.cfg.enabled) {
		gps.disabled = 1;
		errno = saved_errno;
		return;
	}
	const char *root_pid = gp_setting_get(GP_SET_ROOT_PID)->name;
	if (!getenv(root_pid)) { /* first traced process of the job */
		char pidbuf[24];
		snprintf(pidbuf, sizeof pidbuf, "%d", (int)gps.pid);
		setenv(root_pid, pidbuf, 1);
	}
	gps_core_start(on_trace);
	/* GPUPROF_FLIGHT_RECORDER / _SAMPLE_STEPS: the control channel, steps;
	 * armed, the recorder writes into the spool */
	gps_flight_init();
	gps_core_set_trace_file_ops(gps_flight_file_ops());
	gps_clock_init(gps.cfg.clock);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(on_exit_handler);
	gps_cupti_set_context_hook(on_cuda_context);
	gps_cupti_set_bound_hook(on_cupti_bound);
	/* NVTX reads this lazily, at the job's first NVTX call */
	if (gps.self_path[0] && !getenv("NVTX_INJECTION64_PATH"))
		setenv("NVTX_INJECTION64_PATH", gps.self_path, 0);

	/* When to bind CUPTI: as CUDA is about to be used.  The driver calls
	 * InitializeInjection from cuInit when CUDA_INJECTION64_PATH names
	 * us, so we point it at ourselves: nothing CUDA-related is loaded into
	 * processes that never use CUDA.  Bind now instead when CUPTI is
	 * already there, when asked to, when another tool owns the variable,
	 * or when exec'd children must not inherit tracing. */
	int loaded = 0;
	static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
	for (size_t i = 0; i < 3 && !loaded; i++) {
		void *h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			loaded = 1;
			dlclose(h);
		}
	}
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	int inj_ours = inj && *inj && gps.self_path[0] && same_file(inj, gps.self_path);
	if (loaded) {
		gps_cupti_start("CUPTI already loaded");
	} else if (gps.cfg.bind == GP_BIND_EAGER) {
		gps_cupti_start("GPUPROF_BIND=eager");
	} else if (gps.cfg.bind == GP_BIND_INJECTION || inj_ours) {
		/* the driver will call InitializeInjection */
	} else if (inj && *inj) {
		gps_cupti_start("CUDA_INJECTION64_PATH names another library");
	} else if (!gps.cfg.follow_exec) {
		gps_cupti_start("GPUPROF_FOLLOW_EXEC=0");
	} else if (gps.self_path[0]) {
		setenv("CUDA_INJECTION64_PATH", gps.self_path, 0);
	} else {
		gps_cupti_start("own path unknown");
	}
	errno = saved_errno;
}

__attribute__((constructor)) static void gps_constructor(void) { gps_init(); }

/* CUDA_INJECTION64_PATH entry point: the driver calls it during cuInit.
 * Returns 1 (success) even when tracing is off: failing would only make the
 * driver complain, and the job must run on. */
GPS_EXPORT int InitializeInjection(void)
{
	gps_init(); /* no-op when the constructor ran */
	/* CUPTI only: the trace is made by the first record worth one (a call
	 * of the recorded set, a context, GPU activity), so a process that only
	 * runs cuInit (OpenMPI's orted, torch.compile's workers) leaves none */
	if (!gps.disabled)
		gps_cupti_start("CUDA injection");
	return 1;
}

/* NVTX_INJECTION64_PATH entry point: NVTX calls it at the job's first NVTX
 * call.  0: NVTX turns every call into a no-op. */
GPS_EXPORT int InitializeInjectionNvtx2(gps_nvtx_get_export_table get_export_table)
{
	gps_init(); /* no-op when the constructor ran */
	if (gps.disabled || !get_export_table)
		return 0;
	return gps_nvtx_inject(get_export_table);
}
