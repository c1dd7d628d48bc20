/* fake_nvml.c — a scripted libnvidia-ml.so.1 for the shim's GPU-metrics
 * tests (tests/shim/test_gpu_metrics.sh): no GPU needed.
 *
 * FAKE_NVML_DEVICES=N (default 2) devices.  Each query function counts its
 * calls per device; the k-th call (k = 0, 1, ...) answers:
 *   UUID         "GPU-fa4e0000-0000-4000-8000-0000000000ii", ii = device in
 *                hex (fake_api.h; the fake CUDA's devices take these UUIDs in
 *                the order FAKE_CUDA_UUID_ORDER gives)
 *   utilization  gpu = (10*(k mod 3) + 30*device) mod 100 (each device its own
 *                range: 0-20, 30-50, 60-80), memory = (5*k + 3) mod 100
 *   memory used  (k + 1) MiB + device
 *   power        100000 + 10*device + k   (mW)
 *   SM clock     1000 + 100*device + k    (MHz; other clock types: 7)
 *   temperature  40 + device               (C)
 *   PCIe TX      2*k (KB/s); on device 1: NOT_SUPPORTED (a metric the shim
 *                must retire silently: the test counts the calls)
 *   PCIe RX      3*k
 * FAKE_NVML_BUSY_FIRST=K: the first K utilization answers say gpu = 90 (a job
 *                busy, then idle: the idle rule without steps).
 * FAKE_NVML_INIT_FAIL=1: nvmlInit_v2 fails (NVML_ERROR_DRIVER_NOT_LOADED).
 * FAKE_NVML_NO_UUID=1: nvmlDeviceGetUUID answers NOT_SUPPORTED.
 * FAKE_NVML_LOG=path appends one line per call: "<pid> <function> <device>". */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_api.h"

#define EXPORT __attribute__((visibility("default")))
#define MAXD 8

typedef int nvmlReturn_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
/* a handle is a pointer to the device's slot */
struct fdev { unsigned idx; unsigned n_util, n_mem, n_pow, n_clk, n_temp, n_tx, n_rx; };
typedef struct fdev *nvmlDevice_t;

enum { OK = 0, UNINIT = 1, INVALID = 2, NOT_SUPPORTED = 3, DRIVER_NOT_LOADED = 9 };

static struct fdev devs[MAXD];
static int inits; /* nvmlInit refcount, as the real NVML keeps one */
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;

static unsigned ndev(void)
{
	const char *v = getenv("FAKE_NVML_DEVICES");
	unsigned n = v && *v ? (unsigned)atoi(v) : 2;
	return n > MAXD ? MAXD : n;
}

static void flog(const char *fn, int dev)
{
	const char *p = getenv("FAKE_NVML_LOG");
	if (!p || !*p)
		return;
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	char line[128];
	int n = snprintf(line, sizeof line, "%d %s %d\n", (int)getpid(), fn, dev);
	if (n > 0 && write(fd, line, (size_t)n) < 0) {
	}
	close(fd);
}

static int valid(nvmlDevice_t d)
{
	return inits > 0 && d >= devs && d < devs + ndev();
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	flog("nvmlInit_v2", -1);
	const char *f = getenv("FAKE_NVML_INIT_FAIL");
	if (f && *f == '1')
		return DRIVER_NOT_LOADED;
	pthread_mutex_lock(&lk);
	if (inits++ == 0)
		for (unsigned i = 0; i < MAXD; i++) {
			memset(&devs[i], 0, sizeof devs[i]);
			devs[i].idx = i;
		}
	pthread_mutex_unlock(&lk);
	return OK;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	flog("nvmlShutdown", -1);
	pthread_mutex_lock(&lk);
	int rc = inits > 0 ? (inits--, OK) : UNINIT;
	pthread_mutex_unlock(&lk);
	return rc;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t rc)
{
	switch (rc) {
	case OK: return "Success";
	case UNINIT: return "Uninitialized";
	case NOT_SUPPORTED: return "Not Supported";
	case DRIVER_NOT_LOADED: return "Driver Not Loaded";
	default: return "Unknown Error";
	}
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	flog("nvmlDeviceGetCount_v2", -1);
	if (!inits)
		return UNINIT;
	*n = ndev();
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
	flog("nvmlDeviceGetHandleByIndex_v2", (int)i);
	if (!inits)
		return UNINIT;
	if (i >= ndev())
		return INVALID;
	*h = &devs[i];
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned int len)
{
	if (!valid(d))
		return INVALID;
	flog("nvmlDeviceGetUUID", (int)d->idx);
	const char *no = getenv("FAKE_NVML_NO_UUID");
	if (no && *no == '1')
		return NOT_SUPPORTED;
	unsigned char u[16];
	fake_gpu_uuid(d->idx, u);
	char text[48];
	int n = snprintf(text, sizeof text,
			 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
			 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
			 u[14], u[15]);
	if (n < 0 || (unsigned)n >= len)
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	memcpy(buf, text, (size_t)n + 1);
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	if (!valid(d))
		return INVALID;
	flog("nvmlDeviceGetUtilizationRates", (int)d->idx);
	unsigned k = d->n_util++;
	const char *busy = getenv("FAKE_NVML_BUSY_FIRST");
	u->gpu = busy && k < (unsigned)atoi(busy) ? 90 : (10 * (k % 3) + 30 * d->idx) % 100;
	u->memory = (5 * k + 3) % 100;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	if (!valid(d))
		return INVALID;
	flog("nvmlDeviceGetMemoryInfo", (int)d->idx);
	unsigned k = d->n_mem++;
	m->total = 80ull << 30;
	m->used = ((unsigned long long)k + 1) * (1ull << 20) + d->idx;
	m->free = m->total - m->used;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *p)
{
	if (!valid(d))
		return INVALID;
	flog("nvmlDeviceGetPowerUsage", (int)d->idx);
	*p = 100000 + 10 * d->idx + d->n_pow++;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *c)
{
	if (!valid(d))
		return INVALID;
	flog("nvmlDeviceGetClockInfo", (int)d->idx);
	*c = type == 1 ? 1000 + 100 * d->idx + d->n_clk++ : 7; /* 1: NVML_CLOCK_SM */
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t)
{
	if (!valid(d))
		return INVALID;
	flog("nvmlDeviceGetTemperature", (int)d->idx);
	if (sensor != 0) /* NVML_TEMPERATURE_GPU */
		return INVALID;
	d->n_temp++;
	*t = 40 + d->idx;
	return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int *v)
{
	if (!valid(d))
		return INVALID;
	flog(counter == 0 ? "nvmlDeviceGetPcieThroughput-tx" : "nvmlDeviceGetPcieThroughput-rx",
	     (int)d->idx);
	if (counter == 0) { /* NVML_PCIE_UTIL_TX_BYTES */
		if (d->idx == 1)
			return NOT_SUPPORTED;
		*v = 2 * d->n_tx++;
		return OK;
	}
	if (counter == 1) {
		*v = 3 * d->n_rx++;
		return OK;
	}
	return INVALID;
}
