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
 * Device ids: CUDA's.  Each NVML device's UUID (nvmlDeviceGetUUID) is matched
 * against the UUIDs of CUDA's devices, which gps_activity.c notes here as it
 * converts CUPTI's DEVICE records (gps_nvml_cuda_device: a lock-free table,
 * no CUDA call of ours).  A counter's device_id is the CUDA device id of the
 * same GPU, whatever CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER say; an NVML
 * device that matches no CUDA device is not sampled (not this job's GPU).
 * Until the first DEVICE record arrives (it comes with a CUPTI buffer, so
 * up to GPUPROF_FLUSH_MS after CUDA's start, or at the final flush) samples
 * wait in memory (at most WAIT_MAX) and are emitted, with their own
 * timestamps, once the mapping is known; the final flush emits what still
 * waits after its CUPTI flush (gps_nvml_final).  Where no mapping can be
 * had -- nvmlDeviceGetUUID missing or failing for a device, DEVICE records
 * not traced (GPUPROF_ACTIVITY without "device") or never delivered, no NVML
 * device matching any CUDA device (MIG instances have UUIDs of their own),
 * the wait buffer full -- the device's counters carry
 * GPS_NVML_UNMAPPED_BASE + NVML index, an id no CUDA device has
 * (docs/FORMAT.md).
 *
 * Lifecycle rules are the flush ticker's (gps_ticker.c; both threads are
 * gps_service.c services): exists only in a process that has a trace (a
 * fork child gets one only when it creates its own trace), all signals
 * blocked, no lock held while in NVML, stopped with a
 * bounded wait before the final flush, emits only inside gps_enter/gps_leave
 * so a final flush that gave up waiting never closes the recorder under it.
 * A separate thread rather than the ticker: NVML calls can block for tens of
 * ms (nvmlDeviceGetPcieThroughput samples over ~20 ms) and must not delay
 * the CUPTI flushes or the GPUPROF_GPU_WINDOW edges. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "core/gps_service.h"
#include "features/gps_flight.h"
#include "features/gps_status.h"
#include "nvidia/gps_nvml.h"

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
	X(nvmlDeviceGetUUID, 0, gps_nvmlReturn_t, (gps_nvmlDevice_t, char *, unsigned int))  \
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
enum { OUT_SKIP = -1 }; /* nv_dev.out: matches no CUDA device, not sampled */
struct nv_dev {
	gps_nvmlDevice_t h;
	unsigned skip; /* metric bits: unsupported here, never asked again */
	int has_uuid;
	uint8_t uuid[16];
	int32_t out; /* device_id of its counters (MAP_CUDA, MAP_NVML), or OUT_SKIP */
};
static struct nv_dev devs[NV_MAX_DEV];
static unsigned ndev;

/* CUDA's devices by CUDA device id, from CUPTI's DEVICE records.  Written by
 * whichever thread delivers an activity buffer (slot: 0 empty -> 1 being
 * written -> 2 ready, so two deliverers never write one slot), read by the
 * sampler; cuda_known counts ready slots so the sampler re-maps only when it
 * changes.  A process keeps its devices for life: never cleared (a fork
 * child inherits the same ones). */
#define CUDA_MAX_DEV 64
static atomic_int cuda_slot[CUDA_MAX_DEV];
static uint8_t cuda_uuid[CUDA_MAX_DEV][16];
static atomic_uint cuda_known;

/* How counters are labelled: MAP_WAIT, samples wait in wait_buf for the
 * first DEVICE record; MAP_CUDA, by the CUDA device of the same UUID;
 * MAP_NVML, GPS_NVML_UNMAPPED_BASE + NVML index (no mapping to be had).
 * Sampler thread only (the final flush after it exited). */
enum { MAP_WAIT, MAP_CUDA, MAP_NVML };
static int map_state;
static unsigned map_known; /* cuda_known when devs[].out were computed */
struct waiting { uint64_t ts; int64_t v; uint16_t dev; uint16_t m; };
#define WAIT_MAX 65536u /* 1.5 MiB: ~100 s at 10 Hz with 8 GPUs, 8 metrics */
static struct waiting *wait_buf;
static unsigned nwait;
static void *nv_lib;
static int nv_inited; /* nvmlInit_v2 succeeded in this process */

static struct gps_service nv = GPS_SERVICE_INIT("gpuprof-nvml");
static int nv_failed; /* binding failed in this process: do not retry (under nv.lock) */
/* per recorder generation: interned metric names */
static unsigned names_gen = ~0u;
static uint32_t name_ids[M_COUNT];

/* Binding complaints: one line per traced process that tried (not per job
 * like the config's: the job's first process is often a launcher or
 * `timeout` that never uses CUDA, so it never tries NVML).  A fork child of
 * a process that failed inherits nv_failed and stays silent. */
static void nv_complain(const char *fmt, const char *a, const char *b)
{
	gps_warn(fmt, a, b);
}

static const char *nv_err(gps_nvmlReturn_t rc)
{
	const char *s = p_nvmlErrorString ? p_nvmlErrorString(rc) : NULL;
	return s ? s : "error";
}

void gps_nvml_cuda_device(uint32_t id, const uint8_t uuid[16])
{
	static const uint8_t zero[16];
	if (id >= CUDA_MAX_DEV || !memcmp(uuid, zero, sizeof zero)) /* no UUID: nothing to match */
		return;
	int empty = 0;
	if (!atomic_compare_exchange_strong(&cuda_slot[id], &empty, 1))
		return; /* known already (a device's UUID never changes) */
	memcpy(cuda_uuid[id], uuid, 16);
	atomic_store_explicit(&cuda_slot[id], 2, memory_order_release);
	atomic_fetch_add_explicit(&cuda_known, 1, memory_order_release);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* NVML's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (or "MIG-...") to the
 * 16 bytes CUDA's CUuuid holds, in the same order.  0, or -1 when the text
 * is not 32 hex digits after the prefix (dashes aside). */
int gps_nvml_parse_uuid(const char *s, uint8_t out[16])
{
	const char *dash = strchr(s, '-');
	if (!dash || dash - s != 3) /* "GPU" / "MIG" */
		return -1;
	unsigned n = 0;
	for (const char *p = dash + 1; *p; p++) {
		if (*p == '-')
			continue;
		int h = hexval(*p);
		if (h < 0 || n >= 32)
			return -1;
		if (n % 2 == 0)
			out[n / 2] = (uint8_t)(h << 4);
		else
			out[n / 2] |= (uint8_t)h;
		n++;
	}
	return n == 32 ? 0 : -1;
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
		if (p_nvmlDeviceGetHandleByIndex_v2(i, &devs[i].h) != GPS_NVML_SUCCESS) {
			devs[i].skip = (1u << M_COUNT) - 1; /* no access (e.g. cgroup): keep the index */
		} else if (p_nvmlDeviceGetUUID) {
			char text[96]; /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
			memset(text, 0, sizeof text);
			devs[i].has_uuid =
				p_nvmlDeviceGetUUID(devs[i].h, text, sizeof text - 1) == GPS_NVML_SUCCESS &&
				gps_nvml_parse_uuid(text, devs[i].uuid) == 0;
		}
		devs[i].out = (int32_t)(GPS_NVML_UNMAPPED_BASE + i);
		ndev = i + 1;
	}
	/* DEVICE records not traced: nothing to wait for */
	map_state = gps.cfg.activity & GP_ACT_DEVICE ? MAP_WAIT : MAP_NVML;
	map_known = 0;
	nwait = 0;
	return 0;
}

/* devs[].out from the CUDA devices known now (a change of cuda_known). */
static void map_to_cuda(void)
{
	unsigned known = atomic_load_explicit(&cuda_known, memory_order_acquire);
	if (known == map_known)
		return;
	map_known = known;
	unsigned matched = 0;
	for (unsigned i = 0; i < ndev; i++) {
		struct nv_dev *d = &devs[i];
		d->out = d->has_uuid ? OUT_SKIP : (int32_t)(GPS_NVML_UNMAPPED_BASE + i);
		for (unsigned c = 0; d->has_uuid && c < CUDA_MAX_DEV; c++)
			if (atomic_load_explicit(&cuda_slot[c], memory_order_acquire) == 2 &&
			    !memcmp(cuda_uuid[c], d->uuid, 16)) {
				d->out = (int32_t)c;
				matched++;
				break;
			}
	}
	if (!matched) /* e.g. MIG: CUDA's devices are instances; keep NVML's GPUs */
		for (unsigned i = 0; i < ndev; i++)
			devs[i].out = (int32_t)(GPS_NVML_UNMAPPED_BASE + i);
}

static void emit(gp_recorder *rec, uint64_t ts, uint32_t dev, int m, int64_t v)
{
	if (m == M_MEM_USED && gps_status_active()) /* GPUPROF_STATUS shows it too */
		gps_status_nvml_mem(dev >= GPS_NVML_UNMAPPED_BASE ? dev - GPS_NVML_UNMAPPED_BASE : dev,
				    (uint64_t)v);
	/* GPUPROF_TRIGGER=idle>P%, drop>P%: the devices CUDA shows the job */
	if (m == M_GPU_UTIL && (gps_flight_rules & (GP_RULE_IDLE | GP_RULE_DROP)) && dev < GPS_NVML_UNMAPPED_BASE && v >= 0)
		gps_flight_gpu_util(dev, (unsigned)v);
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

/* The waiting samples, each with its device's id now (MAP_CUDA, MAP_NVML).
 * keep_unmapped: samples of a GPU with no CUDA match yet stay.  CUPTI's
 * DEVICE records are converted one at a time (and a flush may split them
 * across buffers), so the sampler can see the first CUDA device before the
 * second: that GPU's early samples must wait for its record, not be dropped
 * (a flaky test_gpu_metrics run under TSan lost them).  What is still
 * unmapped at the final flush is a GPU CUDA does not see. */
static void emit_waiting(gp_recorder *rec, int keep_unmapped)
{
	unsigned kept = 0;
	for (unsigned k = 0; k < nwait; k++) {
		const struct waiting *w = &wait_buf[k];
		if (devs[w->dev].out != OUT_SKIP)
			emit(rec, w->ts, (uint32_t)devs[w->dev].out, w->m, w->v);
		else if (keep_unmapped)
			wait_buf[kept++] = *w;
	}
	nwait = kept;
}

/* A sample: emitted now, or kept while the mapping is unknown. */
static void put(gp_recorder *rec, uint64_t ts, unsigned i, int m, int64_t v)
{
	if (map_state != MAP_WAIT) {
		if (devs[i].out != OUT_SKIP)
			emit(rec, ts, (uint32_t)devs[i].out, m, v);
		return;
	}
	if (!wait_buf)
		wait_buf = malloc(WAIT_MAX * sizeof *wait_buf);
	if (!wait_buf || nwait == WAIT_MAX) {
		/* no DEVICE record in all that time: stop waiting, NVML's numbering */
		gps_info("GPUPROF_GPU_METRICS: no CUDA device record after %u samples; GPU metrics "
			 "labelled %u + NVML index",
			 nwait, GPS_NVML_UNMAPPED_BASE);
		map_state = MAP_NVML;
		for (unsigned k = 0; k < ndev; k++)
			devs[k].out = (int32_t)(GPS_NVML_UNMAPPED_BASE + k);
		emit_waiting(rec, 0);
		emit(rec, ts, (uint32_t)devs[i].out, m, v);
		return;
	}
	wait_buf[nwait++] = (struct waiting){ts, v, (uint16_t)i, (uint16_t)m};
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
			put(rec, ts, i, M_GPU_UTIL, u.gpu);
			put(rec, ts, i, M_MEM_UTIL, u.memory);
		}
	}
	if (WANT(d, M_MEM_USED)) {
		gps_nvmlMemory_t mm;
		if (ok(d, p_nvmlDeviceGetMemoryInfo(d->h, &mm), 1u << M_MEM_USED))
			put(rec, ts, i, M_MEM_USED, (int64_t)mm.used);
	}
	unsigned v;
	if (WANT(d, M_POWER) && ok(d, p_nvmlDeviceGetPowerUsage(d->h, &v), 1u << M_POWER))
		put(rec, ts, i, M_POWER, v);
	if (WANT(d, M_SM_CLOCK) &&
	    ok(d, p_nvmlDeviceGetClockInfo(d->h, GPS_NVML_CLOCK_SM, &v), 1u << M_SM_CLOCK))
		put(rec, ts, i, M_SM_CLOCK, v);
	if (WANT(d, M_TEMP) &&
	    ok(d, p_nvmlDeviceGetTemperature(d->h, GPS_NVML_TEMPERATURE_GPU, &v), 1u << M_TEMP))
		put(rec, ts, i, M_TEMP, v);
	if (WANT(d, M_PCIE_TX) &&
	    ok(d, p_nvmlDeviceGetPcieThroughput(d->h, GPS_NVML_PCIE_UTIL_TX_BYTES, &v), 1u << M_PCIE_TX))
		put(rec, ts, i, M_PCIE_TX, v);
	if (WANT(d, M_PCIE_RX) &&
	    ok(d, p_nvmlDeviceGetPcieThroughput(d->h, GPS_NVML_PCIE_UTIL_RX_BYTES, &v), 1u << M_PCIE_RX))
		put(rec, ts, i, M_PCIE_RX, v);
}

/* The metric names in rec, once per recorder generation (a fork child's
 * trace interns them again). */
static void intern_names(gp_recorder *rec)
{
	unsigned gen = atomic_load(&gps.gen);
	if (names_gen == gen)
		return;
	for (int m = 0; m < M_COUNT; m++)
		name_ids[m] = gp_intern(rec, metric_names[m]);
	names_gen = gen;
}

static void sample(void)
{
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter(); /* NULL once the final flush began */
	gp_recorder *rec = gps_tool_rec(t);
	if (rec) {
		intern_names(rec);
		if (map_state != MAP_NVML) {
			unsigned known_before = map_known;
			map_to_cuda();
			if (map_state == MAP_WAIT && map_known) { /* the first DEVICE record came */
				map_state = MAP_CUDA;
				emit_waiting(rec, 1);
			} else if (map_known != known_before && nwait) { /* a later one */
				emit_waiting(rec, 1);
			}
		}
		for (unsigned i = 0; i < ndev; i++)
			if (map_state == MAP_WAIT || devs[i].out != OUT_SKIP)
				sample_device(rec, i);
	}
	gps_leave(t);
	gps_in_shim = 0;
}

static void nvml_main(struct gps_service *svc)
{
	int bound = nv_bind() == 0;
	uint64_t period = 1000000000ull / (gps.cfg.gpu_metrics_hz ? gps.cfg.gpu_metrics_hz : 10);
	uint64_t next = gps_mono_ns();
	pthread_mutex_lock(&svc->lock);
	if (!bound)
		nv_failed = 1;
	while (bound && svc->state == GPS_SERVICE_RUNNING) {
		pthread_mutex_unlock(&svc->lock); /* never held while in NVML */
		sample();
		/* fixed schedule (no drift); a tick that overran is not made up */
		next += period;
		uint64_t now = gps_mono_ns();
		if (next < now)
			next = now + period;
		pthread_mutex_lock(&svc->lock);
		gps_service_sleep_until(svc, next);
	}
	pthread_mutex_unlock(&svc->lock);
	if (nv_inited) {
		p_nvmlShutdown();
		nv_inited = 0;
	}
}

void gps_nvml_start(void)
{
	if (!gps.cfg.gpu_metrics_hz || gps.disabled || atomic_load(&gps.closed))
		return;
	pthread_mutex_lock(&nv.lock);
	if (nv.state != GPS_SERVICE_NONE || nv_failed) {
		pthread_mutex_unlock(&nv.lock);
		return;
	}
	/* 512 KiB: NVML's own stack use is unknown */
	if (gps_service_start_locked(&nv, nvml_main, 512 * 1024) == GPS_SERVICE_NO_THREAD) {
		nv_failed = 1;
		gps_info("cannot start the GPU metrics thread: no GPU metrics");
	}
	pthread_mutex_unlock(&nv.lock);
}

void gps_nvml_stop(void)
{
	/* it may be inside NVML (nvmlInit, a slow query): wait, but never
	 * hang the exit on it (it cannot emit once closed is set) */
	gps_service_stop(&nv, 2000);
}

void gps_nvml_final(void)
{
	pthread_mutex_lock(&nv.lock);
	/* the sampler may still be inside NVML (stop gave up): its buffer then */
	int mine = nv.state == GPS_SERVICE_NONE || nv.exited;
	pthread_mutex_unlock(&nv.lock);
	if (!mine || !nwait)
		return;
	int saved = gps_in_shim;
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (rec) {
		map_to_cuda(); /* the DEVICE records the final CUPTI flush delivered */
		if (!map_known)
			for (unsigned i = 0; i < ndev; i++)
				devs[i].out = (int32_t)(GPS_NVML_UNMAPPED_BASE + i);
		intern_names(rec);
		emit_waiting(rec, 0);
	}
	gps_leave(t);
	gps_in_shim = saved;
}

/* ------------------------------------------------------------ a query */
/* gps_nvml_device_memory's own binding: the sampler's p_* are set on its
 * thread and shut down at its stop, so this one keeps a copy of the three
 * functions it needs (q_lock: two threads failing at once). */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static int q_state; /* 0 not tried, 1 bound, -1 failed (q_lock) */
static gps_nvmlReturn_t (*q_count)(unsigned int *);
static gps_nvmlReturn_t (*q_handle)(unsigned int, gps_nvmlDevice_t *);
static gps_nvmlReturn_t (*q_uuid)(gps_nvmlDevice_t, char *, unsigned int);
static gps_nvmlReturn_t (*q_mem)(gps_nvmlDevice_t, gps_nvmlMemory_t *);

static int q_bind(void)
{
	const char *path = gps.cfg.nvml_path[0] ? gps.cfg.nvml_path : "libnvidia-ml.so.1";
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return -1;
	gps_nvmlReturn_t (*init)(void) = (gps_nvmlReturn_t(*)(void))dlsym(lib, "nvmlInit_v2");
	q_count = (gps_nvmlReturn_t(*)(unsigned int *))dlsym(lib, "nvmlDeviceGetCount_v2");
	q_handle = (gps_nvmlReturn_t(*)(unsigned int, gps_nvmlDevice_t *))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
	q_uuid = (gps_nvmlReturn_t(*)(gps_nvmlDevice_t, char *, unsigned int))dlsym(lib, "nvmlDeviceGetUUID");
	q_mem = (gps_nvmlReturn_t(*)(gps_nvmlDevice_t, gps_nvmlMemory_t *))dlsym(lib, "nvmlDeviceGetMemoryInfo");
	if (!init || !q_count || !q_handle || !q_mem || init() != GPS_NVML_SUCCESS)
		return -1; /* (the library stays loaded: a later dlopen is cheap) */
	return 0;
}

int gps_nvml_device_memory(uint32_t cuda_dev, uint64_t *total, uint64_t *free_bytes)
{
	pthread_mutex_lock(&q_lock);
	if (!q_state)
		q_state = q_bind() == 0 ? 1 : -1;
	int rc = -1;
	unsigned n = 0;
	if (q_state == 1 && q_count(&n) == GPS_NVML_SUCCESS && n) {
		int known = cuda_dev < CUDA_MAX_DEV && atomic_load_explicit(&cuda_slot[cuda_dev], memory_order_acquire) == 2;
		for (unsigned i = 0; i < n && rc != 0; i++) {
			gps_nvmlDevice_t h;
			char text[96]; /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
			uint8_t u[16];
			memset(text, 0, sizeof text);
			if (q_handle(i, &h) != GPS_NVML_SUCCESS)
				continue;
			/* the device of the UUID; without one known, only a lone GPU
			 * is surely the job's */
			int match = known ? q_uuid && q_uuid(h, text, sizeof text - 1) == GPS_NVML_SUCCESS &&
						    gps_nvml_parse_uuid(text, u) == 0 && !memcmp(u, cuda_uuid[cuda_dev], 16)
					  : n == 1;
			gps_nvmlMemory_t mm;
			if (match && q_mem(h, &mm) == GPS_NVML_SUCCESS) {
				*total = mm.total;
				*free_bytes = mm.free;
				rc = 0;
			}
		}
	}
	pthread_mutex_unlock(&q_lock);
	return rc;
}

void gps_nvml_after_fork_child(void)
{
	/* the query's nvmlInit is the parent's: the child's first query binds
	 * again (nvmlInit counts its callers) */
	pthread_mutex_init(&q_lock, NULL);
	q_state = 0;
	/* the thread is the parent's; the lock may have been held by it.  The
	 * library stays loaded; the child calls nvmlInit itself if it traces. */
	gps_service_after_fork_child(&nv);
	nv_inited = 0;
	names_gen = ~0u;
	nwait = 0; /* the parent's samples */
	map_state = MAP_WAIT;
}
