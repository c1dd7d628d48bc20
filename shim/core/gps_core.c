/* gps_core.c — the core's process state: identity, the recorder (created on
 * first use, taken away by the final flush, left behind in a fork child),
 * the emit helpers, the ordering fences and the GPU backend's ops.  The job
 * must never be harmed: a recorder that cannot be created turns tracing off
 * with one "gpuprof:" line and lets the job run on. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/gps_core.h"

struct gps_state gps = {
	.rec_lock = PTHREAD_MUTEX_INITIALIZER,
	.rank = -1,
	.clock_id = GP_CLOCK_MONOTONIC,
};
GPS_TLS int gps_in_shim;
/* The parent's recorder, inherited by a fork child.  Released later, not in
 * our atfork child handler: libprof's own atfork handlers (registered after
 * ours, so run after ours in the child) still hold its locks there. */
static gp_recorder *inherited_rec;
static gps_trace_hook trace_hook;
static const struct gps_trace_file_ops *file_ops;

void gps_core_set_trace_file_ops(const struct gps_trace_file_ops *ops) { file_ops = ops; }

static void forget_inherited(void)
{
	gp_recorder *r = inherited_rec;
	if (r) {
		inherited_rec = NULL;
		gp_recorder_forget_after_fork(r);
	}
}

uint32_t gps_gettid(void) { return (uint32_t)syscall(SYS_gettid); }

void gps_core_identify(void)
{
	gps.pid = getpid();
	gps.ppid = getppid();
	gps.start_time = time(NULL);
	gps.rank = gps_env_rank();
	if (gethostname(gps.host, sizeof gps.host - 1) != 0)
		snprintf(gps.host, sizeof gps.host, "unknown");
	Dl_info di;
	if (dladdr((void *)&gps_core_identify, &di) && di.dli_fname) {
		if (!realpath(di.dli_fname, gps.self_path))
			snprintf(gps.self_path, sizeof gps.self_path, "%s", di.dli_fname);
	}
}

/* ------------------------------------------------------------ GPU backend */
static const struct gps_gpu_ops *gpu_ops;
static atomic_int gpu_bound;

void gps_gpu_set_ops(const struct gps_gpu_ops *ops) { gpu_ops = ops; }
void gps_gpu_set_bound(int bound) { atomic_store(&gpu_bound, bound); }
int gps_gpu_bound(void) { return atomic_load(&gpu_bound); }
static _Atomic uint64_t gpu_yielded;
void gps_gpu_set_yielded(uint64_t since) { atomic_store(&gpu_yielded, since); }
uint64_t gps_gpu_yielded(void) { return atomic_load(&gpu_yielded); }

void gps_gpu_flush_completed(void)
{
	if (gpu_ops && gpu_ops->flush_completed)
		gpu_ops->flush_completed();
}

void gps_gpu_activity(int on)
{
	if (gpu_ops && gpu_ops->activity)
		gpu_ops->activity(on);
}

void gps_gpu_capture(int on)
{
	if (gpu_ops && gpu_ops->capture)
		gpu_ops->capture(on);
}

void gps_gpu_api(int on)
{
	if (gpu_ops && gpu_ops->api)
		gpu_ops->api(on);
}

void gps_gpu_step_markers(void)
{
	if (gpu_ops && gpu_ops->step_markers)
		gpu_ops->step_markers();
}

static uint64_t gpu_timestamp(void)
{
	return gpu_ops && gpu_ops->timestamp ? gpu_ops->timestamp() : 0;
}

uint64_t gps_gpu_now(void)
{
	uint64_t t = gpu_timestamp();
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

/* ------------------------------------------------------------ emit helpers */
void gps_emit_clock(gp_recorder *rec)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_CLOCK;
	struct timespec rt;
	uint64_t g = gps_gpu_bound() ? gpu_timestamp() : 0;
	r.u.clock.trace_ns = gps_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	r.u.clock.realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	r.u.clock.gpu_ns = g;
	gp_emit(rec, &r);
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

/* ------------------------------------------------------------ summary */
void gps_summary_append(const char *line)
{
	if (!gps.cfg.summary[0])
		return;
	char path[4096];
	if (gps_expand_pattern(gps.cfg.summary, path, sizeof path, (int)gps.pid, gps.host, gps.rank,
			       gps.start_time) != 0)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		gps_warn("cannot write summary %s: %s", path, strerror(errno));
		return;
	}
	size_t n = strlen(line);
	if (write(fd, line, n) != (ssize_t)n)
		gps_warn("short write to summary %s", path);
	close(fd);
}

/* The line for gps_summary_append; one "gpuprof:" complaint too. */
static void trace_not_created(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace_not_created(const char *fmt, ...)
{
	char msg[4096 + 256], line[sizeof msg + 32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	gps_warn("%s; job runs untraced", msg);
	snprintf(line, sizeof line, "pid=%d error=%s\n", (int)gps.pid, msg);
	gps_summary_append(line);
}

/* ------------------------------------------------------------ recorder */
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
	const char *root = getenv(gp_setting_get(GP_SET_ROOT_PID)->name);
	int descendant = gps.forked || (root && atoi(root) != (int)gps.pid);
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
	if (file_ops) {
		if (file_ops->path(path, sizeof path) != 0)
			return NULL;
	} else {
		gps_descendant_pattern(gps.cfg.output, pat, sizeof pat);
		if (gps_expand_pattern(pat, path, sizeof path, (int)gps.pid, gps.host, gps.rank,
				       gps.start_time) != 0) {
			trace_not_created("GPUPROF_OUTPUT expands to a path that is too long");
			return NULL;
		}
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
		trace_not_created("cannot create trace file %s: %s%s%s", path, gp_strerror(rc),
				  rc == GP_ERR_IO ? ": " : "", rc == GP_ERR_IO ? strerror(e) : "");
		errno = saved_errno;
		return NULL;
	}
	snprintf(gps.trace_path, sizeof gps.trace_path, "%s", path);
	/* the flight recorder's spool is no file anyone reads (unlinked once
	 * open): its captures are named in the summary when they are done */
	if (!file_ops) {
		char line[sizeof gps.trace_path + 32];
		snprintf(line, sizeof line, "pid=%d file=%s\n", (int)gps.pid, path);
		gps_summary_append(line);
	}
	errno = saved_errno;
	gps.trace_start_ns = o.start_trace_ns;
	atomic_fetch_add(&gps.gen, 1);
	emit_process(rec, o.start_trace_ns);
	gps_emit_clock(rec);
	if (file_ops)
		file_ops->created(path);
	return rec;
}

gp_recorder *gps_rec_slow(enum gps_rec_want want)
{
	if (want == GPS_REC_EXISTING || gps.disabled || gps.rec_failed || atomic_load(&gps.closed))
		return NULL;
	if (want == GPS_REC_NVTX && gps.forked)
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
	if (rec && trace_hook)
		trace_hook(want);
	gps_in_shim = saved;
	return rec;
}

gp_recorder *gps_core_take_recorder(void)
{
	pthread_mutex_lock(&gps.rec_lock);
	gp_recorder *rec = atomic_exchange(&gps.rec, NULL);
	pthread_mutex_unlock(&gps.rec_lock);
	return rec;
}

/* ------------------------------------------------------------ start, fork */
void gps_core_start(gps_trace_hook on_trace)
{
	trace_hook = on_trace;
	gps_threads_start();
	gps_membarrier_register();
}

void gps_core_after_fork_child(void)
{
	pthread_mutex_init(&gps.rec_lock, NULL);
	gps_membarrier_register();
	gps.forked = 1;
	gps.pid = getpid();
	gps.ppid = getppid();
	gp_recorder *rec = atomic_exchange(&gps.rec, NULL);
	if (rec)
		inherited_rec = rec; /* the parent's file stays the parent's */
	atomic_fetch_add(&gps.gen, 1);
	/* rec_failed is inherited: the parent's reason (unwritable directory,
	 * memory) is the child's too, and one line per job is enough */
	gps.trace_path[0] = 0;
	atomic_store(&gps.closed, 0);
	gps_threads_after_fork_child();
}
