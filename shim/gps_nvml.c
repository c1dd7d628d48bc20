/* gps_nvml.c — the "gpuprof-nvml" sampler thread (GPUPROF_GPU_METRICS=HZ):
 * every 1/HZ s it reads NVML for each GPU and emits GP_REC_COUNTER records
 * (kind INT) on the trace clock: nvml.gpu_util, nvml.mem_util (%),
 * nvml.mem_used_bytes, nvml.power_mw, nvml.sm_clock_mhz, nvml.temp_c,
 * nvml.pcie_tx_kbps, nvml.pcie_rx_kbps.
 *
 * NVML is bound late (dlopen of libnvidia-ml.so.1, or GPUPROF_NVML=path and
 * only that file) and on the sampler thread itself: nvmlInit can take a
 * noticeable time on a big machine and the thread that creates the trace is
 * the job's (often inside cuInit).  A missing library or a missing required
 * function: one line, no sampler, the job runs.  A metric function missing or
 * answering NOT_SUPPORTED for a device: that metric of that device is skipped
 * silently from then on; other errors skip one sample only.
 *
 * Device ids: NVML's enumeration order (nvmlDeviceGetHandleByIndex_v2).  The
 * shim does not keep the UUIDs of CUDA's GP_REC_DEVICE records (they arrive
 * asynchronously through CUPTI activity), so device_id here is NVML's index,
 * which equals CUDA's ordinal only when CUDA_DEVICE_ORDER=PCI_BUS_ID and
 * CUDA_VISIBLE_DEVICES is unset (docs/CONFIG.md says so).
 *
 * Lifecycle rules are the flush ticker's (gps_ticker.c): exists only in a
 * process that has a trace (a fork child gets one only when it creates its
 * own trace), all signals blocked, no lock held while in NVML, stopped with a
 * bounded wait before the final flush, emits only inside gps_enter/gps_leave
 * so a final flush that gave up waiting never closes the recorder under it.
 * A separate thread rather than the ticker: NVML calls can block for tens of
 * ms (nvmlDeviceGetPcieThroughput samples over ~20 ms) and must not delay
 * the CUPTI flushes or the GPUPROF_GPU_WINDOW edges. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gps.h"

/* nvml.h is not shipped with every CUDA toolkit (not in this machine's
 * /usr/local/cuda/include): the few declarations we need, from NVML's
 * documented stable ABI. */
typedef int gps_nvmlReturn_t;
typedef struct gps_nvmlDevice_st *gps_nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } gps_nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } gps_nvmlMemory_t;
enum {
	GPS_NVML_SUCCESS = 0,
	GPS_NVML_ERROR_NOT_SUPPORTED = 3,
	GPS_NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	GPS_NVML_CLOCK_SM = 1,             /* nvmlClockType_t */
	GPS_NVML_TEMPERATURE_GPU = 0,      /* nvmlTemperatureSensors_t */
	GPS_NVML_PCIE_UTIL_TX_BYTES = 0,   /* nvmlPcieUtilCounter_t, KB/s */
	GPS_NVML_PCIE_UTIL_RX_BYTES = 1,
};

/* X(name, required, return, args) */
#define GPS_NVML_FNS(X)                                                                      \
	X(nvmlInit_v2, 1, gps_nvmlReturn_t, (void))                                          \
	X(nvmlShutdown, 1, gps_nvmlReturn_t, (void))                                         \
	X(nvmlDeviceGetCount_v2, 1, gps_nvmlReturn_t, (unsigned int *))                      \
	X(nvmlDeviceGetHandleByIndex_v2, 1, gps_nvmlReturn_t, (unsigned int, gps_nvmlDevice_t *)) \
	X(nvmlErrorString, 0, const char *, (gps_nvmlReturn_t))                              \
	X(nvmlDeviceGetUtilizationRates, 0, gps_nvmlReturn_t,                                \
	  (gps_nvmlDevice_t, gps_nvmlUtilization_t *))                                       \
	X(nvmlDeviceGetMemoryInfo, 0, gps_nvmlReturn_t, (gps_nvmlDevice_t, gps_nvmlMemory_t *)) \
	X(nvmlDeviceGetPowerUsage, 0, gps_nvmlReturn_t, (gps_nvmlDevice_t, unsigned int *))  \
	X(nvmlDeviceGetClockInfo, 0, gps_nvmlReturn_t, (gps_nvmlDevice_t, int, unsigned int *)) \
	X(nvmlDeviceGetTemperature, 0, gps_nvmlReturn_t, (gps_nvmlDevice_t, int, unsigned int *)) \
	X(nvmlDeviceGetPcieThroughput, 0, gps_nvmlReturn_t, (gps_nvmlDevice_t, int, unsigned int *))

#define X(name, req, ret, args) static ret(*p_##name) args;
GPS_NVML_FNS(X)
#undef X

/* metrics, one bit each in a device's "skip" mask */
enum {
	M_GPU_UTIL, M_MEM_UTIL, M_MEM_USED, M_POWER, M_SM_CLOCK, M_TEMP, M_PCIE_TX, M_PCIE_RX,
	M_COUNT
};
static const char *const metric_names[M_COUNT] = {
	"nvml.gpu_util", "nvml.mem_util", "nvml.mem_used_bytes", "nvml.power_mw",
	"nvml.sm_clock_mhz", "nvml.temp_c", "nvml.pcie_tx_kbps", "nvml.pcie_rx_kbps",
};

#define NV_MAX_DEV 64
struct nv_dev {
	gps_nvmlDevice_t h;
	unsigned skip; /* metric bits: unsupported here, never asked again */
};
static struct nv_dev devs[NV_MAX_DEV];
static unsigned ndev;
static void *nv_lib;
static int nv_inited; /* nvmlInit_v2 succeeded in this process */

enum { NV_NONE = 0, NV_RUNNING = 1, NV_STOPPING = 2 };
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nv_cond;
static int nv_cond_ok;
static int nv_state;
static int nv_exited;
static int nv_failed; /* binding failed in this process: do not retry */
/* per recorder generation: interned metric names */
static unsigned names_gen = ~0u;
static uint32_t name_ids[M_COUNT];

/* Binding complaints: one line per traced process that tried (not per job
 * like the config's: the job's first process is often a launcher or
 * `timeout` that never uses CUDA, so it never tries NVML).  A fork child of
 * a process that failed inherits nv_failed and stays silent. */
static void nv_complain(const char *fmt, const char *a, const char *b)
{
	gps_log(1, fmt, a, b);
}

static const char *nv_err(gps_nvmlReturn_t rc)
{
	const char *s = p_nvmlErrorString ? p_nvmlErrorString(rc) : NULL;
	return s ? s : "error";
}

/* dlopen + dlsym + nvmlInit + device handles.  0, or -1 after one line. */
static int nv_bind(void)
{
	const char *path = gps.cfg.nvml_path[0] ? gps.cfg.nvml_path : "libnvidia-ml.so.1";
	if (!nv_lib) {
		nv_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!nv_lib) {
			const char *e = dlerror();
			nv_complain("GPUPROF_GPU_METRICS: cannot load NVML (%s): %s; no GPU metrics", path,
				    e ? e : "?");
			return -1;
		}
	}
#define X(name, req, ret, args)                                                         \
	p_##name = (ret(*) args)dlsym(nv_lib, #name);                                   \
	if (req && !p_##name) {                                                         \
		nv_complain("GPUPROF_GPU_METRICS: %s lacks %s; no GPU metrics", path, #name); \
		return -1;                                                      \
	}
	GPS_NVML_FNS(X)
#undef X
	gps_nvmlReturn_t rc = p_nvmlInit_v2();
	if (rc != GPS_NVML_SUCCESS) {
		nv_complain("GPUPROF_GPU_METRICS: nvmlInit failed: %s (%s); no GPU metrics", nv_err(rc),
			    path);
		return -1;
	}
	nv_inited = 1;
	unsigned n = 0;
	rc = p_nvmlDeviceGetCount_v2(&n);
	if (rc != GPS_NVML_SUCCESS || n == 0) {
		nv_complain("GPUPROF_GPU_METRICS: NVML sees no GPU (%s%s); no GPU metrics",
			    rc != GPS_NVML_SUCCESS ? nv_err(rc) : "count 0", "");
		return -1;
	}
	if (n > NV_MAX_DEV)
		n = NV_MAX_DEV;
	ndev = 0;
	for (unsigned i = 0; i < n; i++) {
		memset(&devs[i], 0, sizeof devs[i]);
		if (p_nvmlDeviceGetHandleByIndex_v2(i, &devs[i].h) != GPS_NVML_SUCCESS)
			devs[i].skip = (1u << M_COUNT) - 1; /* no access (e.g. cgroup): keep the index */
		ndev = i + 1;
	}
	return 0;
}

static void emit(gp_recorder *rec, uint64_t ts, unsigned dev, int m, int64_t v)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_COUNTER;
	r.u.counter.ts_ns = ts;
	r.u.counter.name_id = name_ids[m];
	r.u.counter.device_id = dev;
	r.u.counter.kind = GP_COUNTER_INT;
	r.u.counter.value.i = v;
	gp_emit(rec, &r);
}

/* rc of one metric read: NOT_SUPPORTED (or the function missing) retires
 * the metric for this device; 1 when the value is to be emitted */
static int ok(struct nv_dev *d, gps_nvmlReturn_t rc, unsigned mask)
{
	if (rc == GPS_NVML_SUCCESS)
		return 1;
	if (rc == GPS_NVML_ERROR_NOT_SUPPORTED || rc == GPS_NVML_ERROR_FUNCTION_NOT_FOUND)
		d->skip |= mask;
	return 0;
}

#define WANT(d, m) (!((d)->skip & (1u << (m))))

static void sample_device(gp_recorder *rec, unsigned i)
{
	struct nv_dev *d = &devs[i];
	if (!p_nvmlDeviceGetUtilizationRates)
		d->skip |= 1u << M_GPU_UTIL | 1u << M_MEM_UTIL;
	if (!p_nvmlDeviceGetMemoryInfo)
		d->skip |= 1u << M_MEM_USED;
	if (!p_nvmlDeviceGetPowerUsage)
		d->skip |= 1u << M_POWER;
	if (!p_nvmlDeviceGetClockInfo)
		d->skip |= 1u << M_SM_CLOCK;
	if (!p_nvmlDeviceGetTemperature)
		d->skip |= 1u << M_TEMP;
	if (!p_nvmlDeviceGetPcieThroughput)
		d->skip |= 1u << M_PCIE_TX | 1u << M_PCIE_RX;
	/* one timestamp per device and tick: the instant the reads began */
	uint64_t ts = gps_now();
	if (WANT(d, M_GPU_UTIL) || WANT(d, M_MEM_UTIL)) {
		gps_nvmlUtilization_t u;
		if (ok(d, p_nvmlDeviceGetUtilizationRates(d->h, &u), 1u << M_GPU_UTIL | 1u << M_MEM_UTIL)) {
			emit(rec, ts, i, M_GPU_UTIL, u.gpu);
			emit(rec, ts, i, M_MEM_UTIL, u.memory);
		}
	}
	if (WANT(d, M_MEM_USED)) {
		gps_nvmlMemory_t mm;
		if (ok(d, p_nvmlDeviceGetMemoryInfo(d->h, &mm), 1u << M_MEM_USED)) {
			emit(rec, ts, i, M_MEM_USED, (int64_t)mm.used);
			if (gps_status_active()) /* GPUPROF_STATUS shows it too */
				gps_status_nvml_mem(i, mm.used);
		}
	}
	unsigned v;
	if (WANT(d, M_POWER) && ok(d, p_nvmlDeviceGetPowerUsage(d->h, &v), 1u << M_POWER))
		emit(rec, ts, i, M_POWER, v);
	if (WANT(d, M_SM_CLOCK) &&
	    ok(d, p_nvmlDeviceGetClockInfo(d->h, GPS_NVML_CLOCK_SM, &v), 1u << M_SM_CLOCK))
		emit(rec, ts, i, M_SM_CLOCK, v);
	if (WANT(d, M_TEMP) &&
	    ok(d, p_nvmlDeviceGetTemperature(d->h, GPS_NVML_TEMPERATURE_GPU, &v), 1u << M_TEMP))
		emit(rec, ts, i, M_TEMP, v);
	if (WANT(d, M_PCIE_TX) &&
	    ok(d, p_nvmlDeviceGetPcieThroughput(d->h, GPS_NVML_PCIE_UTIL_TX_BYTES, &v), 1u << M_PCIE_TX))
		emit(rec, ts, i, M_PCIE_TX, v);
	if (WANT(d, M_PCIE_RX) &&
	    ok(d, p_nvmlDeviceGetPcieThroughput(d->h, GPS_NVML_PCIE_UTIL_RX_BYTES, &v), 1u << M_PCIE_RX))
		emit(rec, ts, i, M_PCIE_RX, v);
}

static void sample(void)
{
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter(); /* NULL once the final flush began */
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (rec) {
		if (!t->kind_set) { /* reset by gps_thread_get for each recorder */
			gp_recorder_set_thread_kind(rec, GP_SOURCE_TOOL);
			t->kind_set = 1;
		}
		unsigned gen = atomic_load(&gps.gen);
		if (names_gen != gen) {
			for (int m = 0; m < M_COUNT; m++)
				name_ids[m] = gp_intern(rec, metric_names[m]);
			names_gen = gen;
		}
		for (unsigned i = 0; i < ndev; i++)
			sample_device(rec, i);
	}
	gps_leave(t);
	gps_in_shim = 0;
}

static void *nvml_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "gpuprof-nvml");
	int bound = nv_bind() == 0;
	uint64_t period = 1000000000ull / (gps.cfg.gpu_metrics_hz ? gps.cfg.gpu_metrics_hz : 10);
	uint64_t next = gps_mono_ns();
	pthread_mutex_lock(&nv_lock);
	if (!bound)
		nv_failed = 1;
	while (bound && nv_state == NV_RUNNING) {
		pthread_mutex_unlock(&nv_lock); /* never held while in NVML */
		sample();
		/* fixed schedule (no drift); a tick that overran is not made up */
		next += period;
		uint64_t now = gps_mono_ns();
		if (next < now)
			next = now + period;
		pthread_mutex_lock(&nv_lock);
		struct timespec dl = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
		int rc = 0;
		while (nv_state == NV_RUNNING && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&nv_cond, &nv_lock, &dl);
	}
	pthread_mutex_unlock(&nv_lock);
	if (nv_inited) {
		p_nvmlShutdown();
		nv_inited = 0;
	}
	pthread_mutex_lock(&nv_lock);
	nv_exited = 1;
	pthread_cond_broadcast(&nv_cond);
	pthread_mutex_unlock(&nv_lock);
	return NULL;
}

void gps_nvml_start(void)
{
	if (!gps.cfg.gpu_metrics_hz || gps.disabled || atomic_load(&gps.closed))
		return;
	pthread_mutex_lock(&nv_lock);
	if (nv_state != NV_NONE || nv_failed) {
		pthread_mutex_unlock(&nv_lock);
		return;
	}
	if (!nv_cond_ok) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		nv_cond_ok = pthread_cond_init(&nv_cond, &ca) == 0;
		pthread_condattr_destroy(&ca);
		if (!nv_cond_ok) {
			pthread_mutex_unlock(&nv_lock);
			return;
		}
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: the job's signals are not ours */
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 512 * 1024); /* NVML's own stack use is unknown */
	pthread_t th;
	nv_state = NV_RUNNING;
	nv_exited = 0;
	if (pthread_create(&th, &at, nvml_main, NULL) != 0) {
		nv_state = NV_NONE;
		nv_failed = 1;
		gps_log(0, "cannot start the GPU metrics thread: no GPU metrics");
	}
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_unlock(&nv_lock);
}

void gps_nvml_stop(void)
{
	pthread_mutex_lock(&nv_lock);
	if (nv_state == NV_RUNNING) {
		nv_state = NV_STOPPING;
		pthread_cond_broadcast(&nv_cond);
		/* it may be inside NVML (nvmlInit, a slow query): wait, but never
		 * hang the exit on it (it cannot emit once closed is set) */
		struct timespec dl;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += 2;
		int rc = 0;
		while (!nv_exited && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&nv_cond, &nv_lock, &dl);
	}
	pthread_mutex_unlock(&nv_lock);
}

void gps_nvml_after_fork_child(void)
{
	/* the thread is the parent's; the lock may have been held by it.  The
	 * library stays loaded; the child calls nvmlInit itself if it traces. */
	pthread_mutex_init(&nv_lock, NULL);
	if (nv_cond_ok) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		nv_cond_ok = pthread_cond_init(&nv_cond, &ca) == 0;
		pthread_condattr_destroy(&ca);
	}
	nv_state = NV_NONE;
	nv_exited = 0;
	nv_inited = 0;
	names_gen = ~0u;
}
