/* gps_main.c — libgpuprof.so's lifecycle: injection entry points, the
 * constructor, recorder activation, per-thread data, exit/signal flushing
 * and fork handling.  The job must never be harmed: every failure here turns
 * tracing off with one "gpuprof:" line and lets the job run on. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gps.h"
#include "gps_cupti_fns.h"
#include "gps_stacks.h"

#define GPS_EXPORT __attribute__((visibility("default")))

struct gps_state gps = {
	.rec_lock = PTHREAD_MUTEX_INITIALIZER,
	.rank = -1,
	.clock_id = GP_CLOCK_MONOTONIC,
};
GPS_TLS int gps_in_shim;
static int forked; /* this process is a fork child of a traced one */
/* The parent's recorder, inherited by a fork child.  Released later, not in
 * our atfork child handler: libprof's own atfork handlers (registered after
 * ours, so run after ours in the child) still hold its locks there. */
static gp_recorder *inherited_rec;

static void forget_inherited(void)
{
	gp_recorder *r = inherited_rec;
	if (r) {
		inherited_rec = NULL;
		gp_recorder_forget_after_fork(r);
	}
}

uint32_t gps_gettid(void) { return (uint32_t)syscall(SYS_gettid); }

uint64_t gps_now_cupti(void)
{
	uint64_t t = 0;
	if (gps_p_cuptiGetTimestamp)
		gps_p_cuptiGetTimestamp(&t);
	return t ? t : gps_mono_ns();
}

/* ------------------------------------------------------------ barriers */
int gps_membarrier_ok;

void gps_membarrier_register(void)
{
	/* registration is per process: done at start and again in a fork
	 * child (cheap, idempotent) */
	long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	gps_membarrier_ok = q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
			    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void gps_fence_heavy(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (gps_membarrier_ok && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
		/* cannot happen once registered; if it does, light fences are
		 * no longer enough: switch them to full fences from now on and
		 * give threads a moment to leave what they entered unordered */
		gps_membarrier_ok = 0;
		atomic_thread_fence(memory_order_seq_cst);
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* ------------------------------------------------------------ threads */
static GPS_TLS struct gps_thread *tls_thread;
static pthread_key_t thread_key;
static int thread_key_ok;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gps_thread *threads;

static void thread_exit(void *p)
{
	struct gps_thread *t = p;
	pthread_mutex_lock(&threads_lock);
	if (t->depth == 0) {
		/* nothing left to report: forget it */
		for (struct gps_thread **pp = &threads; *pp; pp = &(*pp)->next)
			if (*pp == t) {
				*pp = t->next;
				break;
			}
		pthread_mutex_unlock(&threads_lock);
		free(t->stack);
		free(t);
	} else {
		t->dead = 1; /* its open ranges are reported at the final flush */
		pthread_mutex_unlock(&threads_lock);
	}
	tls_thread = NULL;
}

void gps_thread_announce(gp_recorder *rec, struct gps_thread *t)
{
	char name[64] = "";
	if (pthread_getname_np(pthread_self(), name, sizeof name) != 0 || !name[0])
		return;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_THREAD;
	r.u.thread.pid = (uint32_t)gps.pid;
	r.u.thread.tid = t->tid;
	r.u.thread.name_id = gp_intern(rec, name);
	gp_emit(rec, &r);
}

struct gps_thread *gps_thread_get(void)
{
	struct gps_thread *t = tls_thread;
	if (__builtin_expect(!t, 0)) {
		t = calloc(1, sizeof *t);
		if (!t)
			return NULL;
		t->tid = gps_gettid();
		t->gen = ~0u;
		pthread_mutex_lock(&threads_lock);
		t->next = threads;
		threads = t;
		pthread_mutex_unlock(&threads_lock);
		if (thread_key_ok)
			pthread_setspecific(thread_key, t);
		tls_thread = t;
	}
	unsigned gen = atomic_load_explicit(&gps.gen, memory_order_relaxed);
	if (__builtin_expect(t->gen != gen, 0)) {
		gp_recorder *rec = atomic_load(&gps.rec);
		t->gen = gen;
		t->kind_set = 0;
		if (rec)
			gps_thread_announce(rec, t);
	}
	return t;
}

struct gps_thread *gps_enter(void)
{
	struct gps_thread *t = gps_thread_get();
	if (!t)
		return NULL;
	int b = atomic_load_explicit(&t->busy, memory_order_relaxed);
	atomic_store_explicit(&t->busy, b + 1, memory_order_relaxed);
	/* Dekker with gps_final_flush: our busy store before its closed load,
	 * its closed store before our closed load (gps_fence_heavy there) */
	gps_fence_light();
	if (atomic_load_explicit(&gps.closed, memory_order_relaxed)) {
		atomic_store_explicit(&t->busy, b, memory_order_release);
		return NULL;
	}
	return t;
}

void gps_leave(struct gps_thread *t)
{
	if (t)
		atomic_store_explicit(&t->busy, atomic_load_explicit(&t->busy, memory_order_relaxed) - 1,
				      memory_order_release);
}

/* After closed=1: wait until no other thread is inside an emit path. */
static void wait_not_busy(void)
{
	gps_fence_heavy();
	struct gps_thread *self = tls_thread;
	struct timespec ts = {0, 1000 * 1000};
	for (int i = 0; i < 500; i++) { /* at most ~0.5 s: never hang the exit */
		int busy = 0;
		pthread_mutex_lock(&threads_lock);
		for (struct gps_thread *t = threads; t; t = t->next)
			if (t != self && atomic_load_explicit(&t->busy, memory_order_acquire) > 0)
				busy = 1;
		pthread_mutex_unlock(&threads_lock);
		if (!busy)
			return;
		nanosleep(&ts, NULL);
	}
}

/* Walks every known thread (the final flush reports open NVTX ranges). */
void gps_threads_foreach(void (*fn)(struct gps_thread *, void *), void *arg)
{
	pthread_mutex_lock(&threads_lock);
	for (struct gps_thread *t = threads; t; t = t->next)
		fn(t, arg);
	pthread_mutex_unlock(&threads_lock);
}

/* ------------------------------------------------------------ recorder */
void gps_emit_clock(gp_recorder *rec)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_CLOCK;
	struct timespec rt;
	uint64_t g = 0;
	if (atomic_load(&gps.cupti_bound) && gps_p_cuptiGetTimestamp)
		gps_p_cuptiGetTimestamp(&g);
	r.u.clock.trace_ns = gps_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	r.u.clock.realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	r.u.clock.gpu_ns = g;
	gp_emit(rec, &r);
}

gp_recorder *gps_tool_rec(struct gps_thread *t)
{
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (rec && !t->kind_set) {
		gp_recorder_set_thread_kind(rec, GP_SOURCE_TOOL);
		t->kind_set = 1;
	}
	return rec;
}

void gps_emit_int_counter(gp_recorder *rec, const char *name, uint64_t value)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_COUNTER;
	r.u.counter.ts_ns = gps_now();
	r.u.counter.name_id = gp_intern(rec, name);
	r.u.counter.kind = GP_COUNTER_INT;
	r.u.counter.value.i = (int64_t)value;
	gp_emit(rec, &r);
}

static void emit_process(gp_recorder *rec, uint64_t start_ns)
{
	char cmd[4096];
	size_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k;
		while (n < sizeof cmd - 1 && (k = read(fd, cmd + n, sizeof cmd - 1 - n)) > 0)
			n += (size_t)k;
		close(fd);
	}
	while (n > 0 && cmd[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == 0)
			cmd[i] = ' ';
	cmd[n] = 0;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_PROCESS;
	r.u.process.pid = (uint32_t)gps.pid;
	r.u.process.ppid = (uint32_t)getppid();
	r.u.process.name_id = gp_intern(rec, cmd);
	r.u.process.host_id = gp_intern(rec, gps.host);
	r.u.process.rank = gps.rank;
	r.u.process.start_ns = start_ns;
	char settings[512];
	gps_config_describe(&gps.cfg, settings, sizeof settings);
	r.u.process.settings_id = gp_intern(rec, settings);
	gp_emit(rec, &r);
}

static void install_signal_handlers(void);
static void start_sig_flusher(void);

/* A pattern without %p would make every descendant (fork child, exec'd
 * child when following) collide with the first process's file: those get
 * "-%p" before the extension. */
void gps_descendant_pattern(const char *pat, char *out, size_t n)
{
	int has_p = 0;
	for (const char *p = pat; *p; p++)
		if (*p == '%' && p[1]) {
			has_p |= p[1] == 'p';
			p++;
		}
	const char *root = getenv("GPUPROF_ROOT_PID");
	int descendant = forked || (root && atoi(root) != (int)gps.pid);
	if (has_p || !descendant || strlen(pat) + 3 >= n) {
		snprintf(out, n, "%s", pat);
		return;
	}
	const char *slash = strrchr(pat, '/');
	const char *dot = strrchr(slash ? slash : pat, '.');
	size_t at = dot && dot != (slash ? slash + 1 : pat) ? (size_t)(dot - pat) : strlen(pat);
	snprintf(out, n, "%.*s-%%p%s", (int)at, pat, pat + at);
}

static gp_recorder *create_recorder(void)
{
	char path[sizeof gps.trace_path], pat[sizeof gps.cfg.output + 4];
	gps_descendant_pattern(gps.cfg.output, pat, sizeof pat);
	if (gps_expand_pattern(pat, path, sizeof path, (int)gps.pid, gps.host, gps.rank,
			       gps.start_time) != 0) {
		gps_log(1, "GPUPROF_OUTPUT expands to a path that is too long; job runs untraced");
		return NULL;
	}
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	struct gp_recorder_opts o;
	memset(&o, 0, sizeof o);
	o.sz = sizeof o;
	o.path = path;
	o.ring_bytes = gps.cfg.ring_size;
	o.max_memory_bytes = gps.cfg.max_memory;
	o.flush_interval_ms = gps.cfg.flush_ms;
	o.zstd_level = gps.cfg.zstd_level;
	o.clock_id = gps.clock_id;
	o.start_trace_ns = gps_now();
	o.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	o.rank = gps.rank;
	gp_recorder *rec = NULL;
	int saved_errno = errno;
	int rc = gp_recorder_create(&o, &rec);
	if (rc < 0 || !rec) {
		int e = errno;
		gps_log(1, "cannot create trace file %s: %s%s%s; job runs untraced", path, gp_strerror(rc),
			rc == GP_ERR_IO ? ": " : "", rc == GP_ERR_IO ? strerror(e) : "");
		errno = saved_errno;
		return NULL;
	}
	errno = saved_errno;
	snprintf(gps.trace_path, sizeof gps.trace_path, "%s", path);
	gps.trace_start_ns = o.start_trace_ns;
	atomic_fetch_add(&gps.gen, 1);
	emit_process(rec, o.start_trace_ns);
	gps_emit_clock(rec);
	return rec;
}

gp_recorder *gps_rec_slow(int create)
{
	/* create: 1 = CUDA is in use (CUPTI callback/activity, injection);
	 * 2 = NVTX, which does not start a trace in a fork child by itself
	 * (DataLoader workers must cost nothing). */
	if (!create || gps.disabled || gps.rec_failed || atomic_load(&gps.closed))
		return NULL;
	if (create == 2 && forked)
		return NULL;
	int saved = gps_in_shim;
	gps_in_shim = 1;
	pthread_mutex_lock(&gps.rec_lock);
	forget_inherited();
	gp_recorder *rec = atomic_load(&gps.rec);
	if (!rec && !gps.rec_failed) {
		rec = create_recorder();
		if (rec) {
			atomic_store_explicit(&gps.rec, rec, memory_order_release);
		} else {
			gps.rec_failed = 1;
		}
	}
	pthread_mutex_unlock(&gps.rec_lock);
	if (rec) {
		install_signal_handlers();
		start_sig_flusher();
		if (create == 1 && atomic_load(&gps.cupti_bound))
			gps_ticker_start();
		gps_nvml_start(); /* GPUPROF_GPU_METRICS: with any trace */
	}
	gps_in_shim = saved;
	return rec;
}

/* ------------------------------------------------------------ final flush */
static atomic_int final_once;

static void write_summary(const struct gp_recorder_stats *st)
{
	if (!gps.cfg.summary[0])
		return;
	char path[4096];
	if (gps_expand_pattern(gps.cfg.summary, path, sizeof path, (int)gps.pid, gps.host, gps.rank,
			       gps.start_time) != 0)
		return;
	char line[8192];
	int n = snprintf(line, sizeof line,
			 "pid=%d events=%llu dropped=%llu bytes=%llu threads=%u file=%s\n", (int)gps.pid,
			 (unsigned long long)st->records, (unsigned long long)st->dropped,
			 (unsigned long long)st->bytes_written, st->threads, gps.trace_path);
	if (n <= 0 || (size_t)n >= sizeof line)
		return;
	/* one O_APPEND write per process: lines of several processes (fork,
	 * exec'd children) never interleave */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		gps_log(1, "cannot write summary %s: %s", path, strerror(errno));
		return;
	}
	if (write(fd, line, (size_t)n) != n)
		gps_log(1, "short write to summary %s", path);
	close(fd);
}

void gps_final_flush(const char *why)
{
	if (atomic_exchange(&final_once, 1))
		return;
	int saved_errno = errno;
	int saved = gps_in_shim;
	gps_in_shim = 1;
	/* no periodic CUPTI flush from here on (bounded wait) */
	gps_ticker_stop();
	gps_nvml_stop(); /* no GPU metrics samples either (bounded wait) */
	gps_pm_stop(); /* PM sampling: stop, last decode (bounded wait) */
	/* GPUPROF_GPU_WINDOW: the open window ends here (written now) */
	gps_window_final();
	/* GPUPROF_CAPTURE_RANGE: the open capture range ends here too */
	gps_capture_final();
	/* activity first, while the recorder still takes records */
	gps_cupti_flush();
	/* GPU metrics samples that waited for CUDA's DEVICE records (which that
	 * flush may just have delivered) */
	gps_nvml_final();
	/* then no new entries (callbacks, NVTX) and none still inside */
	atomic_store(&gps.closed, 1);
	gps_cupti_stop();
	wait_not_busy();
	gp_recorder *rec = atomic_load(&gps.rec);
	if (rec) {
		gps_nvtx_flush_unterminated(rec); /* stacks are quiet now */
		gps_ticker_emit_stats(rec);
		gps_stacks_emit_stats(rec);
		gps_emit_clock(rec);
	}
	pthread_mutex_lock(&gps.rec_lock);
	rec = atomic_exchange(&gps.rec, NULL);
	pthread_mutex_unlock(&gps.rec_lock);
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
		write_summary(&st);
		gps_status_final(st.dropped); /* GPUPROF_STATUS: "exited" */
		/* A full disk or a file-size limit costs records, never the job;
		 * it is worth one warning that names the cause (even when quiet). */
		if (st2.write_errors)
			gps_log(1, "could not write all of the trace %s: %s; %llu records lost",
				gps.trace_path, strerror(st2.last_write_errno),
				(unsigned long long)st2.dropped_write);
		/* under `gpuprof run` (GPUPROF_SUMMARY set) the tool prints the
		 * one summary: ours would be a second */
		if (!gps.cfg.summary[0])
			gps_log(0, "%llu events, %llu dropped -> %s (at %s)", (unsigned long long)st.records,
			(unsigned long long)st.dropped, gps.trace_path, why);
	}
	gps_in_shim = saved;
	errno = saved_errno;
}

static void on_exit_handler(void) { gps_final_flush("exit"); }
__attribute__((destructor)) static void gps_destructor(void) { gps_final_flush("exit"); }

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
	gps_final_flush("signal");
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
 * held across a libprof call, is taken. */
static void fork_prepare(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fork_saved_mask);
	gps_pm_fork_prepare(); /* before our own locks: it may wait (bounded) on CUPTI */
	gps_activity_fork_prepare();
}

static void fork_parent(void)
{
	gps_activity_fork_parent();
	gps_pm_fork_parent();
	pthread_sigmask(SIG_SETMASK, &fork_saved_mask, NULL);
}

static void fork_child(void)
{
	pthread_mutex_init(&gps.rec_lock, NULL);
	pthread_mutex_init(&threads_lock, NULL);
	gps_membarrier_register();
	gps_clock_after_fork_child();
	gps_activity_after_fork_child();
	gps_nvtx_after_fork_child();
	gps_cupti_after_fork_child();
	gps_capture_after_fork_child();
	gps_stacks_after_fork_child();
	gps_ticker_after_fork_child();
	gps_nvml_after_fork_child();
	gps_pm_after_fork_child();
	gps_status_after_fork_child();
	forked = 1;
	gps.pid = getpid();
	gps.ppid = getppid();
	gp_recorder *rec = atomic_exchange(&gps.rec, NULL);
	if (rec)
		inherited_rec = rec; /* the parent's file stays the parent's */
	atomic_fetch_add(&gps.gen, 1);
	/* rec_failed is inherited: the parent's reason (unwritable directory,
	 * memory) is the child's too, and one line per job is enough */
	gps.trace_path[0] = 0;
	atomic_store(&final_once, 0);
	atomic_store(&gps.closed, 0);
	/* only the forking thread exists here; the rest of the list is the
	 * parent's (leaked on purpose: freeing could touch inconsistent heap) */
	struct gps_thread *self = tls_thread;
	threads = NULL;
	if (self) {
		self->tid = gps_gettid();
		self->next = NULL;
		self->depth = 0; /* the parent reports its own open ranges */
		threads = self;
	}
	if (flush_pipe[0] >= 0)
		close(flush_pipe[0]);
	if (flush_pipe[1] >= 0)
		close(flush_pipe[1]);
	flush_pipe[0] = flush_pipe[1] = -1;
	atomic_store(&flusher_started, 0);
	atomic_store(&flush_done, 0);
	atomic_store(&sig_once, 0);
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

void gps_init(void)
{
	if (atomic_exchange(&ctor_once, 1))
		return;
	int saved_errno = errno;
	gps_config_load(&gps.cfg);
	gps_capture_init();
	gps.pid = getpid();
	gps.ppid = getppid();
	gps.start_time = time(NULL);
	gps.rank = gps_env_rank();
	if (gethostname(gps.host, sizeof gps.host - 1) != 0)
		snprintf(gps.host, sizeof gps.host, "unknown");
	Dl_info di;
	if (dladdr((void *)&gps_init, &di) && di.dli_fname) {
		if (!realpath(di.dli_fname, gps.self_path))
			snprintf(gps.self_path, sizeof gps.self_path, "%s", di.dli_fname);
	}
	gps.initialized = 1;
	if (gps.cfg.enabled && gps.cfg.status[0])
		atomic_store(&gps_status_on, 1);
	if (!gps.cfg.follow_exec)
		drop_from_ld_preload();
	if (!gps.cfg.enabled) {
		gps.disabled = 1;
		errno = saved_errno;
		return;
	}
	if (!getenv("GPUPROF_ROOT_PID")) { /* first traced process of the job */
		char pidbuf[24];
		snprintf(pidbuf, sizeof pidbuf, "%d", (int)gps.pid);
		setenv("GPUPROF_ROOT_PID", pidbuf, 1);
	}
	thread_key_ok = pthread_key_create(&thread_key, thread_exit) == 0;
	gps_membarrier_register();
	gps_clock_init(gps.cfg.clock);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(on_exit_handler);
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
	if (!gps.disabled && gps_cupti_start("CUDA injection") == 0)
		gps_rec(1); /* activation: the trace exists once CUDA is in use */
	return 1;
}
