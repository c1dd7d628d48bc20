/* gps_status.c — the live status file (GPUPROF_STATUS=FILE): a small JSON
 * object a scheduler or `gpuprof top` can read while the job runs, rewritten
 * about once a second by the "gpuprof-flush" thread (gps_ticker.c; no thread
 * of its own; the first write is made when that thread is started) and one
 * last time at exit with "state":"exited".
 *
 * Rates come from the GPU activity records, which arrive late: CUPTI hands
 * them over in buffers, flushed every GPUPROF_FLUSH_MS by the ticker.  So the
 * activity path adds each kernel to one-second buckets on the trace clock
 * (count by end time, duration clipped to each bucket it overlaps), and a
 * write reports the last whole bucket that ended at least one flush interval
 * plus a margin ago (RATE_LAG), by which time its records have arrived.
 * Busy time is the SUM of kernel durations clipped to the bucket, capped at
 * 100 %: kernels that overlap on several streams or devices are counted
 * twice (a union would need the records sorted; `gpuprof stats` computes the
 * union offline).  A kernel still running when its bucket is reported is not
 * in it.
 *
 * Rules: the file is written as FILE.tmp then rename()d, so a reader sees
 * the old or the new object, never a part; O_NOFOLLOW, mode 0644 like the
 * trace.  Any error: one "gpuprof:" line and status writing stops for this
 * process (the trace goes on).  The hot paths (kernel records, NVTX push)
 * pay one predictable branch when the feature is off, a few relaxed atomics
 * (kernels) or a trylock (NVTX) when on; nothing here ever waits on the job. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "features/gps_flight.h"
#include "features/gps_status.h"

#define SEC 1000000000ull
#define NBUCKET 64              /* seconds of history: covers RATE_LAG up to ~60 s */
#define RANGE_MAX 128           /* bytes of the last NVTX message kept */
#define DEV_MAX 64              /* NVML devices summed */

atomic_int gps_status_on;

/* one second of kernel activity; idx = second since st_origin */
struct bucket {
	_Atomic uint64_t idx;
	_Atomic uint64_t kernels, busy_ns;
};
static struct bucket buckets[NBUCKET];
static uint64_t st_origin;      /* trace clock of bucket 0 */
static _Atomic uint64_t kernels_total, memcpy_bytes_total;
static _Atomic int64_t cupti_mem_bytes;  /* device allocations minus releases */
static _Atomic uint64_t nvml_mem[DEV_MAX];
static _Atomic uint64_t nvml_seen;        /* a bit per device with a sample */

static pthread_mutex_t range_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_range[RANGE_MAX];

/* the writing side: the ticker, and the final flush */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static char st_path[4096];
static char st_tmp[4096 + 8];
static atomic_int st_ready;     /* path expanded, buckets anchored (release) */
static _Atomic uint64_t next_write; /* CLOCK_MONOTONIC ns */

void gps_status_init(void)
{
	if (gps.cfg.enabled && gps.cfg.status[0])
		atomic_store(&gps_status_on, 1);
}

static inline uint64_t bucket_of(uint64_t t)
{
	return t > st_origin ? (t - st_origin) / SEC : 0;
}

/* Buckets around the current second carry their index; one far behind is
 * recycled.  Only the writer side calls this, so indexes move forward only;
 * an activity thread racing a recycle may add to the new second (off by one
 * record, once in a while: acceptable for a monitor). */
static void prepare_buckets(uint64_t cur)
{
	for (uint64_t i = cur > NBUCKET - 3 ? cur - (NBUCKET - 3) : 0; i <= cur + 2; i++) {
		struct bucket *b = &buckets[i % NBUCKET];
		if (atomic_load_explicit(&b->idx, memory_order_acquire) == i)
			continue;
		atomic_store_explicit(&b->idx, UINT64_MAX, memory_order_relaxed);
		atomic_store_explicit(&b->kernels, 0, memory_order_relaxed);
		atomic_store_explicit(&b->busy_ns, 0, memory_order_relaxed);
		atomic_store_explicit(&b->idx, i, memory_order_release);
	}
}

static void bucket_add(uint64_t i, uint64_t kernels, uint64_t busy)
{
	struct bucket *b = &buckets[i % NBUCKET];
	if (atomic_load_explicit(&b->idx, memory_order_acquire) != i)
		return; /* too old or too far ahead: only the totals count it */
	if (kernels)
		atomic_fetch_add_explicit(&b->kernels, kernels, memory_order_relaxed);
	if (busy)
		atomic_fetch_add_explicit(&b->busy_ns, busy, memory_order_relaxed);
}

void gps_status_kernel(uint64_t start_ns, uint64_t end_ns)
{
	atomic_fetch_add_explicit(&kernels_total, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&st_ready, memory_order_acquire) || !end_ns || end_ns < start_ns ||
	    start_ns < st_origin)
		return;
	uint64_t first = bucket_of(start_ns), last = bucket_of(end_ns);
	bucket_add(last, 1, 0);
	if (last - first >= NBUCKET) /* longer than the history: its tail only */
		first = last - (NBUCKET - 1);
	for (uint64_t i = first; i <= last; i++) {
		uint64_t lo = st_origin + i * SEC, hi = lo + SEC;
		uint64_t s = start_ns > lo ? start_ns : lo, e = end_ns < hi ? end_ns : hi;
		if (e > s)
			bucket_add(i, 0, e - s);
	}
}

void gps_status_copy(uint64_t bytes)
{
	atomic_fetch_add_explicit(&memcpy_bytes_total, bytes, memory_order_relaxed);
}

void gps_status_memory(enum gps_mem_op op, int device_memory, uint64_t bytes)
{
	if (!device_memory)
		return;
	if (op == GPS_MEM_OP_ALLOC)
		atomic_fetch_add_explicit(&cupti_mem_bytes, (int64_t)bytes, memory_order_relaxed);
	else if (op == GPS_MEM_OP_FREE)
		atomic_fetch_sub_explicit(&cupti_mem_bytes, (int64_t)bytes, memory_order_relaxed);
}

void gps_status_nvml_mem(unsigned dev, uint64_t used)
{
	if (dev >= DEV_MAX)
		return;
	atomic_store_explicit(&nvml_mem[dev], used, memory_order_relaxed);
	atomic_fetch_or_explicit(&nvml_seen, 1ull << dev, memory_order_relaxed);
}

void gps_status_nvtx(const char *msg)
{
	if (!msg)
		return;
	/* the job's thread: never wait; a busy lock means another thread is
	 * storing an equally recent range */
	if (pthread_mutex_trylock(&range_lock) != 0)
		return;
	snprintf(last_range, sizeof last_range, "%s", msg);
	pthread_mutex_unlock(&range_lock);
}

/* ------------------------------------------------------------ JSON */
struct jbuf { char *p; size_t n, cap; int overflow; };

static void jput(struct jbuf *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jput(struct jbuf *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(j->p + j->n, j->cap - j->n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= j->cap - j->n)
		j->overflow = 1;
	else
		j->n += (size_t)m;
}

/* length of the valid UTF-8 sequence at s (0: invalid or cut short) */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* a JSON string: quotes, backslash and control characters escaped, bytes
 * that are not valid UTF-8 (a message cut at RANGE_MAX) become '?' */
static void jstr(struct jbuf *j, const char *s)
{
	jput(j, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p && !j->overflow;) {
		if (*p == '"' || *p == '\\') {
			jput(j, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			jput(j, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			jput(j, "%c", *p++);
		} else {
			size_t n = utf8_len(p);
			if (n) {
				jput(j, "%.*s", (int)n, (const char *)p);
				p += n;
			} else {
				jput(j, "?");
				p++;
			}
		}
	}
	jput(j, "\"");
}

/* ------------------------------------------------------------ writing */
/* RATE_LAG: how old the reported second's end must be for its records to
 * have arrived: one ticker flush interval, plus delivery and the writer. */
static uint64_t rate_lag_ns(void)
{
	return (uint64_t)(gps.cfg.flush_ms ? gps.cfg.flush_ms : 500) * 1000000ull + 250000000ull;
}

static void disable(const char *what, int err)
{
	atomic_store(&gps_status_on, 0);
	gps_warn("GPUPROF_STATUS: cannot %s %s: %s; no status file from now on", what, st_tmp,
		strerror(err));
}

static int build(struct jbuf *j, int exited, uint64_t dropped)
{
	uint64_t now = gps_now();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t lag = exited ? 0 : rate_lag_ns(); /* at exit every record is in */
	uint64_t kps = 0, busy_pct10 = 0;
	uint64_t cur = bucket_of(now > lag ? now - lag : 0);
	if (cur >= 1) {
		struct bucket *b = &buckets[(cur - 1) % NBUCKET];
		if (atomic_load_explicit(&b->idx, memory_order_acquire) == cur - 1) {
			kps = atomic_load_explicit(&b->kernels, memory_order_relaxed);
			busy_pct10 = atomic_load_explicit(&b->busy_ns, memory_order_relaxed) / (SEC / 1000);
			if (busy_pct10 > 1000)
				busy_pct10 = 1000;
		}
	}
	uint64_t seen = atomic_load_explicit(&nvml_seen, memory_order_relaxed);
	uint64_t mem = 0;
	const char *mem_src;
	if (seen) {
		for (unsigned d = 0; d < DEV_MAX; d++)
			if (seen & (1ull << d))
				mem += atomic_load_explicit(&nvml_mem[d], memory_order_relaxed);
		mem_src = "nvml";
	} else if (gps.cfg.activity & GP_ACT_MEMORY) {
		int64_t m = atomic_load_explicit(&cupti_mem_bytes, memory_order_relaxed);
		mem = m > 0 ? (uint64_t)m : 0;
		mem_src = "cupti";
	} else {
		mem_src = "none";
	}
	char range[RANGE_MAX];
	pthread_mutex_lock(&range_lock); /* held by a job thread for a copy at most */
	memcpy(range, last_range, sizeof range);
	pthread_mutex_unlock(&range_lock);
	range[sizeof range - 1] = 0;

	jput(j, "{\"version\":1,\"pid\":%d,\"host\":", (int)gps.pid);
	jstr(j, gps.host);
	if (gps.rank >= 0)
		jput(j, ",\"rank\":%d", gps.rank);
	else
		jput(j, ",\"rank\":null");
	/* armed, the recorder's file is the flight recorder's spool (unlinked):
	 * the trace anyone can read is the last capture */
	struct gps_flight_status fs;
	gps_flight_status(&fs);
	jput(j, ",\"trace\":");
	jstr(j, gps_flight_armed() ? fs.file : gps.trace_path);
	jput(j, ",\"updated_realtime_ns\":%llu,\"uptime_s\":%.1f",
	     (unsigned long long)rt.tv_sec * SEC + (unsigned long long)rt.tv_nsec,
	     now > gps.trace_start_ns ? (double)(now - gps.trace_start_ns) / 1e9 : 0.0);
	jput(j, ",\"kernels_total\":%llu,\"kernels_per_s\":%llu,\"gpu_busy_pct\":%llu.%llu",
	     (unsigned long long)atomic_load(&kernels_total), (unsigned long long)kps,
	     (unsigned long long)(busy_pct10 / 10), (unsigned long long)(busy_pct10 % 10));
	jput(j, ",\"rate_lag_ms\":%llu", (unsigned long long)(lag / 1000000ull));
	jput(j, ",\"memcpy_bytes_total\":%llu,\"device_mem_used_bytes\":%llu,\"device_mem_source\":\"%s\"",
	     (unsigned long long)atomic_load(&memcpy_bytes_total), (unsigned long long)mem, mem_src);
	jput(j, ",\"last_nvtx_range\":");
	jstr(j, range);
	/* the flight recorder (docs/FLIGHT.md): its state, the captures it
	 * finished, the last one's reason and file */
	if (fs.state) {
		jput(j, ",\"capture_state\":\"%s\",\"captures\":%u,\"step\":%lld,\"step_ms_median\":%.3f,"
		     "\"steps_per_s\":%.2f,\"last_capture_why\":",
		     exited ? "exited" : fs.state, fs.captures, (long long)fs.step, fs.step_ms, fs.steps_per_s);
		jstr(j, fs.why);
		jput(j, ",\"last_capture_file\":");
		jstr(j, fs.file);
		/* which API calls the history keeps (GPUPROF_FLIGHT_API) */
		jput(j, ",\"api_history\":\"%s\"", fs.api_in_captures ? "captures" : "all");
		if (fs.api_rate)
			jput(j, ",\"api_switch_rate\":%llu", (unsigned long long)fs.api_rate);
	}
	jput(j, ",\"dropped\":%llu,\"state\":\"%s\"}\n", (unsigned long long)dropped,
	     exited ? "exited" : "running");
	return j->overflow ? -1 : 0;
}

/* FILE.tmp, then rename over FILE.  0, or -1 after the one line. */
static int write_file(int exited, uint64_t dropped)
{
	char buf[8192];
	struct jbuf j = {buf, 0, sizeof buf, 0};
	if (build(&j, exited, dropped) != 0)
		return 0; /* cannot happen with our field sizes; skip this one */
	int fd = open(st_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		disable("create", errno);
		return -1;
	}
	size_t off = 0;
	while (off < j.n) {
		ssize_t w = write(fd, buf + off, j.n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;
			close(fd);
			unlink(st_tmp);
			disable("write", e);
			return -1;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0) {
		int e = errno;
		unlink(st_tmp);
		disable("write", e);
		return -1;
	}
	if (rename(st_tmp, st_path) != 0) {
		int e = errno;
		unlink(st_tmp);
		atomic_store(&gps_status_on, 0);
		gps_warn("GPUPROF_STATUS: cannot rename %s to %s: %s; no status file from now on", st_tmp,
			st_path, strerror(e));
		return -1;
	}
	return 0;
}

/* First use in this process (the trace exists): path and bucket origin. */
static int setup(void)
{
	if (atomic_load(&st_ready))
		return 0;
	char pat[sizeof gps.cfg.status + 4];
	gps_descendant_pattern(gps.cfg.status, pat, sizeof pat);
	if (gps_expand_pattern(pat, st_path, sizeof st_path, (int)gps.pid, gps.host, gps.rank,
			       gps.start_time) != 0) {
		atomic_store(&gps_status_on, 0);
		gps_warn("GPUPROF_STATUS expands to a path that is too long; no status file");
		return -1;
	}
	snprintf(st_tmp, sizeof st_tmp, "%s.tmp", st_path);
	st_origin = gps.trace_start_ns;
	prepare_buckets(bucket_of(gps_now()));
	atomic_store_explicit(&st_ready, 1, memory_order_release);
	return 0;
}

static uint64_t recorder_dropped(void)
{
	gp_recorder *rec = atomic_load(&gps.rec);
	if (!rec)
		return 0;
	struct gp_recorder_stats st;
	memset(&st, 0, sizeof st);
	st.sz = sizeof st;
	gp_recorder_get_stats(rec, &st);
	return st.dropped;
}

uint64_t gps_status_next_ns(void)
{
	return atomic_load(&gps_status_on) ? atomic_load(&next_write) : UINT64_MAX;
}

void gps_status_tick(uint64_t now_mono)
{
	if (!atomic_load(&gps_status_on) || now_mono < atomic_load(&next_write))
		return;
	if (pthread_mutex_trylock(&write_lock) != 0)
		return; /* the final write, or the other caller's, is under way */
	if (now_mono < atomic_load(&next_write)) {
		pthread_mutex_unlock(&write_lock);
		return;
	}
	atomic_store(&next_write, now_mono + SEC);
	int saved_in_shim = gps_in_shim;
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter(); /* the recorder stays open meanwhile */
	if (t && atomic_load(&gps_status_on) && setup() == 0) {
		prepare_buckets(bucket_of(gps_now()));
		write_file(0, recorder_dropped());
	}
	gps_leave(t);
	gps_in_shim = saved_in_shim;
	pthread_mutex_unlock(&write_lock);
}

void gps_status_final(uint64_t dropped)
{
	/* only where the flush thread started it: a process with a trace but
	 * no CUDA (NVTX only) has no status to close */
	if (!atomic_load(&gps_status_on) || !atomic_load(&st_ready))
		return;
	/* a ticker that outlived its stop may be writing: wait a little, never
	 * hang the exit on a stuck file system */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 1;
	if (pthread_mutex_timedlock(&write_lock, &dl) != 0)
		return;
	if (atomic_load(&gps_status_on))
		write_file(1, dropped);
	pthread_mutex_unlock(&write_lock);
}

void gps_status_after_fork_child(void)
{
	/* a child that traces writes its own file (its own pid in the name);
	 * the parent's counts are not its own */
	pthread_mutex_init(&range_lock, NULL);
	pthread_mutex_init(&write_lock, NULL);
	atomic_store(&st_ready, 0);
	atomic_store(&next_write, 0);
	last_range[0] = 0;
	atomic_store(&kernels_total, 0);
	atomic_store(&memcpy_bytes_total, 0);
	atomic_store(&cupti_mem_bytes, 0);
	atomic_store(&nvml_seen, 0);
	for (int i = 0; i < NBUCKET; i++)
		atomic_store(&buckets[i].idx, UINT64_MAX);
}
