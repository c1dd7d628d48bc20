/* gps_pmsampling.c — CUPTI PM sampling (GPUPROF_PM_SAMPLING=INTERVAL): the
 * GPU's performance monitors sampled every INTERVAL of GPU time, for each
 * device a CUDA context was created on, as GP_REC_COUNTER records (kind
 * DOUBLE, percent) at each sample's start:
 *   pm.sm_active_pct       SMs with at least one warp resident  (DCGM SMACT)
 *   pm.sm_occupancy_pct    resident warps / warp slots          (DCGM SMOCC)
 *   pm.tensor_active_pct   tensor pipes issuing                 (DCGM TENSO)
 *   pm.dram_throughput_pct DRAM interface busy                  (DCGM DRAMA)
 * plus, once per device (INT): pm.interval_ns, the interval in use;
 * pm.setup_ns, how long set-up took; pm.formula.<figure> (e.g.
 * pm.formula.sm_occupancy_pct), the index of the formula each figure uses in
 * its candidate list below.
 *
 * Each figure has candidate metric formulas, tried in order against the
 * chip's base-metric list (cuptiProfilerHostGetBaseMetrics); a formula is
 * one metric or a combination (SMOCC from the two "unused warp slots"
 * metrics of CUPTI's PM sampling table when sm__warps_active is not
 * sampleable).  A figure without a usable formula is left out, with one
 * line naming it.
 *
 * Flow per device (CUPTI's PM sampling guide): cuptiProfilerInitialize;
 * chip name + counter availability -> host object -> add metrics -> config
 * image (one pass, else the last figure is dropped); cuptiPmSamplingEnable ->
 * SetConfig(GPU time interval) -> counter data image -> Start.  The thread
 * then decodes the hardware buffer every DECODE_NS into the counter data
 * image, evaluates each completed sample and resets the image.
 *
 * Threading: everything above runs on the "gpuprof-pm" thread, never in the
 * CUPTI resource callback that announces the context (profiler calls there
 * could wait on the driver lock the context creation holds).  Lifecycle
 * rules are gps_nvml.c's: all signals blocked, no lock held while in CUPTI,
 * emits only inside gps_enter/gps_leave, bounded wait at stop, none in a fork
 * child until it creates a context of its own.
 *
 * Clock: the guide says sample timestamps are "CPU based"; it does not say
 * which clock, nor whether the activity timestamp callback applies.  At the
 * first sample of a device the clock whose current reading is nearest the
 * sample's end (CLOCK_MONOTONIC, CLOCK_REALTIME or cuptiGetTimestamp) is
 * taken and its offset to the trace clock fixed (the clocks differ by years
 * or agree, so the choice is unambiguous); pm.clock (INT: 1 monotonic,
 * 2 realtime, 3 CUPTI) records which.
 *
 * Set-up runs while the application is quiet: the callback that announces
 * a new context waits (bounded, SETUP_WAIT_S) for the thread to finish that
 * device's set-up.  On the H200 a set-up that overlapped MNIST's start
 * (DataLoader workers forking, first kernels) was followed by a SIGSEGV,
 * while the same set-up during the microbenchmark's idle start was fine; the
 * cause is not known yet, this keeps the two apart.  Likewise fork(): the
 * prepare handler waits (bounded) until the thread is outside CUPTI, so a
 * child never inherits a half-done CUPTI call.
 *
 * Stop: at exit, pm_at_exit (an atexit handler registered by the thread
 * right after cuptiProfilerInitialize) has the thread stop sampling and
 * decode what is left; gps_pm_stop (final flush, before the forced CUPTI
 * activity flush) does the same where exit handlers do not run (signals)
 * and is a no-op after pm_at_exit.  Why a handler of its own: CUPTI loads
 * libnvperf_host at set-up, after our final-flush handler was registered,
 * and exit handlers run last-registered first, so that library's static
 * destructors ran before the final flush, and the Stop/decode made there
 * used its freed state (a SIGSEGV in NVPW_GPU_PeriodicSampler_StopSampling
 * under MALLOC_PERTURB_, "corrupted double-linked list" in a Lightning job:
 * issue #18).  Registered once CUPTI has loaded it, ours runs before them.
 * Should the thread still be in set-up when the stop's bounded wait ends,
 * it is abandoned: it makes no PM call after its current one.  PM sampling is
 * never disabled nor the host objects freed: on the H200 doing so at exit
 * (cuptiPmSamplingDisable, cuptiProfilerHostDeinitialize) ended the job with
 * "free(): double free detected" (XLA's PM sampler notes that disabling
 * tears down CUPTI state); the process is exiting, the driver releases it.
 * When CUDA's own exit teardown destroyed the context first, the last decode
 * fails quietly: at most one decode period of samples is lost. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "core/gps_service.h"
#include "nvidia/gps_cupti_fns.h"
#include "nvidia/gps_pmsampling.h"

#define PM_MAX_DEV 16
#define DECODE_NS 100000000ull          /* decode the hardware buffer every 100 ms */
#define HW_BUFFER_SIZE (32u << 20)      /* raw samples between decodes */
#define SETUP_WAIT_S 3                  /* the announcing callback waits this long at most */

/* One figure: value = c0 + s[0]*m[0] + s[1]*m[1], in percent. */
struct pm_formula {
	const char *m[2];
	double s[2];
	double c0;
};
enum { F_SMACT, F_SMOCC, F_TENSO, F_DRAMA, F_COUNT };
#define PCT ".avg.pct_of_peak_sustained_elapsed"
static const char *const fig_names[F_COUNT] = {
	"pm.sm_active_pct", "pm.sm_occupancy_pct", "pm.tensor_active_pct", "pm.dram_throughput_pct",
};
#define MAX_CAND 3
static const struct pm_formula candidates[F_COUNT][MAX_CAND] = {
	[F_SMACT] = {{{"sm__cycles_active" PCT}, {1}, 0}},
	[F_SMOCC] = {{{"sm__warps_active" PCT}, {1}, 0},
		     /* 100 - unused slots on active SMs - slots of idle SMs */
		     {{"tpc__warps_inactive_sm_active_realtime" PCT,
		       "tpc__warps_inactive_sm_idle_realtime" PCT},
		      {-1, -1},
		      100}},
	[F_TENSO] = {{{"sm__pipe_tensor_cycles_active_realtime" PCT}, {1}, 0},
		     {{"sm__pipe_tensor_op_hmma_cycles_active" PCT}, {1}, 0},
		     {{"sm__pipe_tensor_cycles_active" PCT}, {1}, 0}},
	[F_DRAMA] = {{{"dram__throughput" PCT}, {1}, 0},
		     {{"dramc__read_throughput" PCT, "dramc__write_throughput" PCT}, {1, 1}, 0}},
};

struct pm_dev {
	void *ctx;              /* announced context (only its device is used) */
	int announced;
	int setup_done;         /* set-up finished (either way): under pm.lock */
	int state;              /* PD_* */
	uint32_t dev;           /* CUDA device ordinal */
	CUpti_Profiler_Host_Object *host;
	CUpti_PmSampling_Object *obj;
	int started;
	uint8_t *counter;       /* counter data image */
	size_t counter_size;
	int fig_on[F_COUNT];
	int fig_cand[F_COUNT];  /* index of the chosen formula in candidates[f] */
	uint64_t setup_ns;      /* how long set-up took */
	/* What CUPTI is handed at set-up and may keep pointers to for the life
	 * of the host and PM sampling objects: the chip name (host object),
	 * the counter availability image (host object) and the config image
	 * (SetConfig; DecodeData reads it).  They live as long as the objects,
	 * which are never freed (see "Stop" above), so they are never freed
	 * either.  Freeing the config image after SetConfig was the SIGSEGV of
	 * issue #18: a busy process (Lightning) reused the freed block, and the
	 * next decode read garbage offsets inside libnvperf_host
	 * (docs/RELIABILITY.md, "PM sampling crash"). */
	char chip[64];
	uint8_t *avail;
	uint8_t *config;
	size_t config_size;
	struct pm_formula fig[F_COUNT];
	const char *metrics[2 * F_COUNT]; /* distinct metric names, evaluation order */
	size_t nmetrics;
	int clock_known;
	int64_t clock_off;      /* added to sample timestamps -> trace clock */
	int overflow_logged;
};
enum { PD_NONE = 0, PD_RUNNING, PD_FAILED, PD_STOPPED };

static struct gps_service pm = GPS_SERVICE_INIT("gpuprof-pm");
/* held by the thread around its CUPTI calls; fork's prepare handler takes it */
static pthread_mutex_t pm_call_lock = PTHREAD_MUTEX_INITIALIZER;
static int fork_locked;
static atomic_int pm_started; /* the thread exists in this process */
/* pm_at_exit is registered (kept across fork: the child inherits the
 * registration, and its order before libnvperf_host's destructors) */
static atomic_int exit_hook;
/* the stop gave up waiting for the thread (a set-up longer than the bound
 * at exit): the thread makes no more PM calls, the exit handlers of the
 * library set-up loaded may already have run */
static atomic_int pm_abandoned;
static int pm_failed; /* the feature is off in this process (one line said why) */
static int pm_profiler_inited;
static struct pm_dev devs[PM_MAX_DEV];
static unsigned ndev;
static unsigned names_gen = ~0u;
enum { N_INTERVAL = F_COUNT, N_CLOCK, N_SETUP, N_FORMULA, N_COUNT = N_FORMULA + F_COUNT };
static uint32_t name_ids[N_COUNT];

/* CUPTI's status names for the causes a user can act on */
static const char *pm_cause(CUptiResult r)
{
	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		return "insufficient privileges: GPU performance counters are restricted to admin users "
		       "(NVreg_RestrictProfilingToAdminUsers=0, or run as root)";
	case CUPTI_ERROR_NOT_SUPPORTED:
		return "not supported on this device or CUPTI";
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
		return "not supported on CMP devices";
	case CUPTI_ERROR_HARDWARE_BUSY:
		return "the performance monitors are busy (another profiler or DCGM profiling?)";
	default:
		return gps_cupti_errstr(r);
	}
}

/* The one line of a process whose PM sampling (on some device) goes off:
 * on a multi-GPU machine every device would say the same (privileges). */
static atomic_int off_logged;
static void pm_off(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void pm_off(const char *fmt, ...)
{
	if (atomic_exchange(&off_logged, 1))
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	gps_warn("%s", buf);
}

static int have_functions(void)
{
#define X(name, req)      \
	if (!gps_p_##name) \
		return 0;
	GPS_CUPTI_PM_FUNCS(X)
#undef X
	return 1;
}

static void host_free(struct pm_dev *d)
{
	if (!d->host)
		return;
	CUpti_Profiler_Host_Deinitialize_Params p = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	p.pHostObject = d->host;
	GPS_CUPTI_QUIET(cuptiProfilerHostDeinitialize, &p);
	d->host = NULL;
}

static CUptiResult host_new(struct pm_dev *d, const char *chip, const uint8_t *avail)
{
	host_free(d);
	CUpti_Profiler_Host_Initialize_Params p = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = avail;
	CUptiResult r = GPS_CUPTI_QUIET(cuptiProfilerHostInitialize, &p);
	if (r == CUPTI_SUCCESS)
		d->host = p.pHostObject;
	return r;
}

static CUptiResult host_add(struct pm_dev *d, const char **names, size_t n)
{
	CUpti_Profiler_Host_ConfigAddMetrics_Params p = {
		.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	p.pHostObject = d->host;
	p.ppMetricNames = names;
	p.numMetrics = n;
	return GPS_CUPTI_QUIET(cuptiProfilerHostConfigAddMetrics, &p);
}

/* Is the base of "base.rollup.submetric" in the chip's lists? */
static int base_listed(const char *metric, const char *const *const lists[], const size_t counts[])
{
	size_t blen = strcspn(metric, ".");
	for (int t = 0; t < CUPTI_METRIC_TYPE__COUNT; t++)
		for (size_t i = 0; lists[t] && i < counts[t]; i++)
			if (lists[t][i] && strlen(lists[t][i]) == blen && !strncmp(lists[t][i], metric, blen))
				return 1;
	return 0;
}

/* The metric list for the figures switched on, without duplicates. */
static void collect_metrics(struct pm_dev *d)
{
	d->nmetrics = 0;
	for (int f = 0; f < F_COUNT; f++) {
		if (!d->fig_on[f])
			continue;
		for (int k = 0; k < 2 && d->fig[f].m[k]; k++) {
			size_t j = 0;
			while (j < d->nmetrics && strcmp(d->metrics[j], d->fig[f].m[k]))
				j++;
			if (j == d->nmetrics)
				d->metrics[d->nmetrics++] = d->fig[f].m[k];
		}
	}
}

/* The first listed candidate formula of each figure (verify: that a host
 * object accepts on its own); the figures without one are named in missing. */
static void pick(struct pm_dev *d, const char *chip, const uint8_t *avail,
		 const int listed[F_COUNT][MAX_CAND], int verify, char *missing, size_t msz)
{
	for (int f = 0; f < F_COUNT; f++) {
		d->fig_on[f] = 0;
		for (int c = 0; c < MAX_CAND && candidates[f][c].m[0] && !d->fig_on[f]; c++) {
			const struct pm_formula *fm = &candidates[f][c];
			if (!listed[f][c])
				continue;
			if (verify && (host_new(d, chip, avail) != CUPTI_SUCCESS ||
				       host_add(d, (const char **)fm->m, fm->m[1] ? 2 : 1) != CUPTI_SUCCESS))
				continue;
			d->fig[f] = *fm;
			d->fig_on[f] = 1;
			d->fig_cand[f] = c;
		}
		if (!d->fig_on[f])
			snprintf(missing + strlen(missing), msz - strlen(missing), "%s%s (no metric)",
				 missing[0] ? ", " : "", fig_names[f]);
	}
}

/* Chooses a formula per figure, builds the one-pass config image.  0, or
 * -1 after one line. */
static int configure(struct pm_dev *d, const char *chip, const uint8_t *avail, uint8_t **config,
		     size_t *config_size)
{
	CUptiResult r = host_new(d, chip, avail);
	if (r != CUPTI_SUCCESS) {
		pm_off("PM sampling off on device %u (chip %s): host initialisation failed: %s", d->dev,
			chip, pm_cause(r));
		return -1;
	}
	const char *const *lists[CUPTI_METRIC_TYPE__COUNT] = {NULL};
	size_t counts[CUPTI_METRIC_TYPE__COUNT] = {0};
	for (int t = 0; t < CUPTI_METRIC_TYPE__COUNT; t++) {
		CUpti_Profiler_Host_GetBaseMetrics_Params p = {
			.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
		p.pHostObject = d->host;
		p.metricType = (CUpti_MetricType)t;
		if (GPS_CUPTI_QUIET(cuptiProfilerHostGetBaseMetrics, &p) == CUPTI_SUCCESS) {
			lists[t] = p.ppMetricNames;
			counts[t] = p.numMetrics;
		}
	}
	/* which candidates the chip lists; the lists belong to the host object,
	 * so no use of them past the next host_new */
	int listed[F_COUNT][MAX_CAND] = {{0}};
	for (int f = 0; f < F_COUNT; f++)
		for (int c = 0; c < MAX_CAND && candidates[f][c].m[0]; c++)
			listed[f][c] = base_listed(candidates[f][c].m[0], lists, counts) &&
				       (!candidates[f][c].m[1] || base_listed(candidates[f][c].m[1], lists, counts));
	/* per figure: the first listed candidate; host set-up is slow (it parses
	 * the chip's metric database), so the set is tried as a whole first and
	 * each candidate on its own (a fresh host object per test: adding is
	 * not undoable) only when the whole is refused: a base listed does not
	 * make every rollup/submetric of it sampleable */
	char missing[256] = "";
	pick(d, chip, avail, listed, 0, missing, sizeof missing);
	int verified = 0;
	for (;;) {
		collect_metrics(d);
		if (d->nmetrics == 0) {
			pm_off("PM sampling off on device %u (chip %s): none of its metrics is available",
				d->dev, chip);
			return -1;
		}
		r = host_new(d, chip, avail);
		if (r == CUPTI_SUCCESS)
			r = host_add(d, d->metrics, d->nmetrics);
		size_t passes = 0;
		if (r == CUPTI_SUCCESS) {
			CUpti_Profiler_Host_GetConfigImageSize_Params ps = {
				.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
			ps.pHostObject = d->host;
			r = GPS_CUPTI_QUIET(cuptiProfilerHostGetConfigImageSize, &ps);
			if (r == CUPTI_SUCCESS) {
				free(*config);
				*config = calloc(1, ps.configImageSize ? ps.configImageSize : 1);
				*config_size = ps.configImageSize;
				if (!*config)
					r = CUPTI_ERROR_OUT_OF_MEMORY;
			}
			if (r == CUPTI_SUCCESS) {
				CUpti_Profiler_Host_GetConfigImage_Params pi = {
					.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
				pi.pHostObject = d->host;
				pi.configImageSize = *config_size;
				pi.pConfigImage = *config;
				r = GPS_CUPTI_QUIET(cuptiProfilerHostGetConfigImage, &pi);
			}
			if (r == CUPTI_SUCCESS) {
				CUpti_Profiler_Host_GetNumOfPasses_Params pp = {
					.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
				pp.pConfigImage = *config;
				pp.configImageSize = *config_size;
				r = GPS_CUPTI_QUIET(cuptiProfilerHostGetNumOfPasses, &pp);
				passes = pp.numOfPasses;
			}
		}
		if (r == CUPTI_SUCCESS && passes == 1)
			break;
		if (r != CUPTI_SUCCESS && !verified) {
			verified = 1;
			missing[0] = 0;
			pick(d, chip, avail, listed, 1, missing, sizeof missing);
			continue;
		}
		/* more than one pass, or a metric refused: drop the last figure */
		int last = F_COUNT - 1;
		while (last >= 0 && !d->fig_on[last])
			last--;
		int on = 0;
		for (int f = 0; f < F_COUNT; f++)
			on += d->fig_on[f];
		if (on <= 1) {
			if (r != CUPTI_SUCCESS)
				pm_off("PM sampling off on device %u (chip %s): configuration failed: %s",
					d->dev, chip, pm_cause(r));
			else
				pm_off("PM sampling off on device %u (chip %s): %s alone needs %zu passes",
					d->dev, chip, last >= 0 ? fig_names[last] : "?", passes);
			return -1;
		}
		d->fig_on[last] = 0;
		snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s (not in one pass with the others)",
			 missing[0] ? ", " : "", fig_names[last]);
	}
	if (missing[0])
		gps_info("PM sampling on device %u (chip %s) without %s", d->dev, chip, missing);
	return 0;
}

static CUptiResult counter_reset(struct pm_dev *d)
{
	CUpti_PmSampling_CounterDataImage_Initialize_Params p = {
		.structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	p.pPmSamplingObject = d->obj;
	p.counterDataSize = d->counter_size;
	p.pCounterData = d->counter;
	return GPS_CUPTI_QUIET(cuptiPmSamplingCounterDataImageInitialize, &p);
}

static void pm_at_exit(void)
{
	gps_pm_stop();
}

/* Everything from the chip name to Start.  Leaves d->state RUNNING or
 * FAILED (after one line). */
static void setup(struct pm_dev *d, unsigned n)
{
	d->state = PD_FAILED;
	uint32_t dev = 0;
	CUptiResult r = GPS_CUPTI_QUIET(cuptiGetDeviceId, (CUcontext)d->ctx, &dev);
	if (r != CUPTI_SUCCESS) {
		pm_off("PM sampling off: cannot tell the device of a CUDA context: %s", pm_cause(r));
		return;
	}
	d->dev = dev;
	for (unsigned i = 0; i < n; i++)
		if (&devs[i] != d && devs[i].state != PD_NONE && devs[i].dev == dev) {
			d->state = PD_STOPPED; /* another context of a sampled device */
			return;
		}
	if (!pm_profiler_inited) {
		CUpti_Profiler_Initialize_Params p = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		r = GPS_CUPTI_QUIET(cuptiProfilerInitialize, &p);
		if (r != CUPTI_SUCCESS) {
			pm_off("PM sampling off: cuptiProfilerInitialize failed: %s", pm_cause(r));
			return;
		}
		pm_profiler_inited = 1;
		/* CUPTI has loaded its profiler libraries (libnvperf_host):
		 * registered now, ours runs before their exit handlers (see
		 * "Stop" above) */
		if (!atomic_exchange(&exit_hook, 1))
			atexit(pm_at_exit);
	}
	CUpti_Device_GetChipName_Params pc = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	pc.deviceIndex = dev;
	r = GPS_CUPTI_QUIET(cuptiDeviceGetChipName, &pc);
	if (r != CUPTI_SUCCESS || !pc.pChipName) {
		pm_off("PM sampling off on device %u: no chip name: %s", dev, pm_cause(r));
		return;
	}
	char *chip = d->chip;
	snprintf(d->chip, sizeof d->chip, "%s", pc.pChipName);
	CUpti_PmSampling_GetCounterAvailability_Params pa = {
		.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
	pa.deviceIndex = dev;
	r = GPS_CUPTI_QUIET(cuptiPmSamplingGetCounterAvailability, &pa);
	if (r == CUPTI_SUCCESS) {
		d->avail = calloc(1, pa.counterAvailabilityImageSize ? pa.counterAvailabilityImageSize : 1);
		pa.pCounterAvailabilityImage = d->avail;
		r = d->avail ? GPS_CUPTI_QUIET(cuptiPmSamplingGetCounterAvailability, &pa)
			     : CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (r != CUPTI_SUCCESS) {
		pm_off("PM sampling off on device %u (chip %s): %s", dev, chip, pm_cause(r));
		return;
	}
	if (configure(d, chip, d->avail, &d->config, &d->config_size) != 0)
		return;
	if (atomic_load(&pm_abandoned))
		return; /* exiting without us: no more PM calls */
	CUpti_PmSampling_Enable_Params pe = {.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
	pe.deviceIndex = dev;
	r = GPS_CUPTI_QUIET(cuptiPmSamplingEnable, &pe);
	if (r != CUPTI_SUCCESS) {
		pm_off("PM sampling off on device %u (chip %s): %s", dev, chip, pm_cause(r));
		return;
	}
	d->obj = pe.pPmSamplingObject;
	if (atomic_load(&pm_abandoned))
		return; /* exiting without us: no more PM calls */
	CUpti_PmSampling_SetConfig_Params ps = {.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
	ps.pPmSamplingObject = d->obj;
	ps.configSize = d->config_size;
	ps.pConfig = d->config;
	ps.hardwareBufferSize = HW_BUFFER_SIZE;
	ps.samplingInterval = gps.cfg.pm_interval_ns;
	ps.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
	ps.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
	r = GPS_CUPTI_QUIET(cuptiPmSamplingSetConfig, &ps);
	if (r != CUPTI_SUCCESS) {
		pm_off("PM sampling off on device %u (chip %s): cuptiPmSamplingSetConfig: %s", dev,
			chip, pm_cause(r));
		return;
	}
	/* room for four decode periods of samples (decodes are late sometimes) */
	uint64_t per = DECODE_NS / gps.cfg.pm_interval_ns + 1;
	uint32_t max_samples = (uint32_t)(per * 4 < 64 ? 64 : per * 4 > 20000 ? 20000 : per * 4);
	CUpti_PmSampling_GetCounterDataSize_Params pz = {
		.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
	pz.pPmSamplingObject = d->obj;
	pz.pMetricNames = d->metrics;
	pz.numMetrics = d->nmetrics;
	pz.maxSamples = max_samples;
	r = GPS_CUPTI_QUIET(cuptiPmSamplingGetCounterDataSize, &pz);
	if (r == CUPTI_SUCCESS) {
		d->counter_size = pz.counterDataSize;
		d->counter = calloc(1, d->counter_size ? d->counter_size : 1);
		r = d->counter ? counter_reset(d) : CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (r != CUPTI_SUCCESS) {
		pm_off("PM sampling off on device %u (chip %s): counter data image: %s", dev, chip,
			pm_cause(r));
		return;
	}
	if (atomic_load(&pm_abandoned))
		return; /* exiting without us: no more PM calls */
	CUpti_PmSampling_Start_Params pst = {.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE};
	pst.pPmSamplingObject = d->obj;
	r = GPS_CUPTI_QUIET(cuptiPmSamplingStart, &pst);
	if (r != CUPTI_SUCCESS) {
		pm_off("PM sampling off on device %u (chip %s): cuptiPmSamplingStart: %s", dev, chip,
			pm_cause(r));
		return;
	}
	d->started = 1;
	d->state = PD_RUNNING;
}

/* trace-clock offset for sample timestamps, from the first sample's end */
static void fix_clock(struct pm_dev *d, uint64_t sample_end)
{
	struct timespec rt;
	uint64_t trace_now = gps_now(), mono = gps_mono_ns(), cupti = 0;
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	if (gps_p_cuptiGetTimestamp)
		gps_p_cuptiGetTimestamp(&cupti);
	const uint64_t now[3] = {mono, real, cupti};
	int best = 0;
	uint64_t best_gap = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		if (!now[i])
			continue;
		uint64_t gap = now[i] > sample_end ? now[i] - sample_end : sample_end - now[i];
		if (gap < best_gap) {
			best_gap = gap;
			best = i;
		}
	}
	d->clock_off = (int64_t)(trace_now - now[best]);
	d->clock_known = best + 1;
}

static void emit_counter(gp_recorder *rec, uint64_t ts, uint32_t dev, uint32_t name, int dbl, double v,
			 int64_t iv)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_COUNTER;
	r.u.counter.ts_ns = ts;
	r.u.counter.name_id = name;
	r.u.counter.device_id = dev;
	r.u.counter.kind = dbl ? GP_COUNTER_DOUBLE : GP_COUNTER_INT;
	if (dbl)
		r.u.counter.value.d = v;
	else
		r.u.counter.value.i = iv;
	gp_emit(rec, &r);
}

/* The recorder to emit into now (NULL once closing), names interned. */
static gp_recorder *emit_begin(struct gps_thread **tp)
{
	struct gps_thread *t = gps_enter();
	*tp = t;
	gp_recorder *rec = gps_tool_rec(t);
	if (!rec)
		return NULL;
	unsigned gen = atomic_load(&gps.gen);
	if (names_gen != gen) {
		for (int f = 0; f < F_COUNT; f++)
			name_ids[f] = gp_intern(rec, fig_names[f]);
		name_ids[N_INTERVAL] = gp_intern(rec, "pm.interval_ns");
		name_ids[N_CLOCK] = gp_intern(rec, "pm.clock");
		name_ids[N_SETUP] = gp_intern(rec, "pm.setup_ns");
		for (int f = 0; f < F_COUNT; f++) {
			/* "pm.sm_active_pct" -> "pm.formula.sm_active_pct" */
			char n[64];
			snprintf(n, sizeof n, "pm.formula.%s", fig_names[f] + 3);
			name_ids[N_FORMULA + f] = gp_intern(rec, n);
		}
		names_gen = gen;
	}
	return rec;
}

/* Decodes what the hardware buffer holds and emits every completed sample.
 * -1 when the device can no longer be decoded (after one line, unless
 * final: at exit CUDA's own teardown may have destroyed the context, and a
 * job that ran fine gets no complaint about its last partial period). */
static int decode(struct pm_dev *d, int final)
{
	/* a full counter image ends a decode early: go on, a bounded number of times */
	for (int round = 0; round < 8; round++) {
		CUpti_PmSampling_DecodeData_Params pd = {.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
		pd.pPmSamplingObject = d->obj;
		pd.pCounterDataImage = d->counter;
		pd.counterDataImageSize = d->counter_size;
		CUptiResult r = GPS_CUPTI_QUIET(cuptiPmSamplingDecodeData, &pd);
		if (r != CUPTI_SUCCESS) {
			if (final)
				return -1;
			pm_off("PM sampling stopped on device %u: cuptiPmSamplingDecodeData: %s%s", d->dev,
				pm_cause(r),
				r == CUPTI_ERROR_OUT_OF_MEMORY ? " (hardware buffer overflow: interval too short?)" : "");
			return -1;
		}
		if (pd.overflow && !d->overflow_logged) {
			d->overflow_logged = 1;
			gps_warn("PM sampling on device %u: hardware buffer overflow, samples lost (interval too short?)",
				 d->dev);
		}
		CUpti_PmSampling_GetCounterDataInfo_Params pi = {
			.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
		pi.pCounterDataImage = d->counter;
		pi.counterDataImageSize = d->counter_size;
		if (GPS_CUPTI_QUIET(cuptiPmSamplingGetCounterDataInfo, &pi) != CUPTI_SUCCESS)
			return 0;
		if (pi.numCompletedSamples) {
			double vals[2 * F_COUNT];
			struct gps_thread *t;
			gp_recorder *rec = emit_begin(&t);
			for (size_t i = 0; rec && i < pi.numCompletedSamples; i++) {
				CUpti_PmSampling_CounterData_GetSampleInfo_Params psi = {
					.structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
				psi.pPmSamplingObject = d->obj;
				psi.pCounterDataImage = d->counter;
				psi.counterDataImageSize = d->counter_size;
				psi.sampleIndex = i;
				if (GPS_CUPTI_QUIET(cuptiPmSamplingCounterDataGetSampleInfo, &psi) != CUPTI_SUCCESS)
					continue;
				CUpti_Profiler_Host_EvaluateToGpuValues_Params pv = {
					.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
				pv.pHostObject = d->host;
				pv.pCounterDataImage = d->counter;
				pv.counterDataImageSize = d->counter_size;
				pv.rangeIndex = i;
				pv.ppMetricNames = d->metrics;
				pv.numMetrics = d->nmetrics;
				pv.pMetricValues = vals;
				if (GPS_CUPTI_QUIET(cuptiProfilerHostEvaluateToGpuValues, &pv) != CUPTI_SUCCESS)
					continue;
				if (!d->clock_known) {
					fix_clock(d, psi.endTimestamp);
					emit_counter(rec, gps_now(), d->dev, name_ids[N_CLOCK], 0, 0,
						     d->clock_known);
				}
				uint64_t ts = (uint64_t)((int64_t)psi.startTimestamp + d->clock_off);
				for (int f = 0; f < F_COUNT; f++) {
					if (!d->fig_on[f])
						continue;
					double v = d->fig[f].c0;
					for (int k = 0; k < 2 && d->fig[f].m[k]; k++) {
						size_t j = 0;
						while (j < d->nmetrics && strcmp(d->metrics[j], d->fig[f].m[k]))
							j++;
						v += d->fig[f].s[k] * vals[j];
					}
					emit_counter(rec, ts, d->dev, name_ids[f], 1, v, 0);
				}
			}
			gps_leave(t);
		}
		counter_reset(d);
		if (pd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
			break;
	}
	return 0;
}

static void announce_interval(struct pm_dev *d)
{
	struct gps_thread *t;
	gp_recorder *rec = emit_begin(&t);
	if (rec) {
		uint64_t now = gps_now();
		emit_counter(rec, now, d->dev, name_ids[N_INTERVAL], 0, 0, (int64_t)gps.cfg.pm_interval_ns);
		emit_counter(rec, now, d->dev, name_ids[N_SETUP], 0, 0, (int64_t)d->setup_ns);
		/* which formula each figure uses (index in the CONFIG.md table) */
		for (int f = 0; f < F_COUNT; f++)
			if (d->fig_on[f])
				emit_counter(rec, now, d->dev, name_ids[N_FORMULA + f], 0, 0, d->fig_cand[f]);
	}
	gps_leave(t);
}

static void pm_main(struct gps_service *svc)
{
	(void)svc; /* always &pm, the one service of this file */
	gps_in_shim = 1; /* CUPTI calls made here are not the job's */
	pthread_mutex_lock(&pm.lock);
	while (pm.state == GPS_SERVICE_RUNNING) {
		for (unsigned i = 0; i < ndev; i++) {
			if (devs[i].announced && devs[i].state == PD_NONE) {
				unsigned n = ndev;
				pthread_mutex_unlock(&pm.lock); /* never held while in CUPTI */
				pthread_mutex_lock(&pm_call_lock);
				uint64_t t0 = gps_mono_ns();
				setup(&devs[i], n);
				devs[i].setup_ns = gps_mono_ns() - t0;
				pthread_mutex_unlock(&pm_call_lock);
				if (devs[i].state == PD_RUNNING)
					announce_interval(&devs[i]);
				pthread_mutex_lock(&pm.lock);
				devs[i].setup_done = 1;
				pthread_cond_broadcast(&pm.cond); /* the announcing callback waits */
			}
		}
		unsigned n = ndev; /* entries below n are this thread's alone */
		pthread_mutex_unlock(&pm.lock);
		pthread_mutex_lock(&pm_call_lock);
		for (unsigned i = 0; i < n && !atomic_load(&pm_abandoned); i++)
			if (devs[i].state == PD_RUNNING && decode(&devs[i], 0) != 0)
				devs[i].state = PD_FAILED;
		pthread_mutex_unlock(&pm_call_lock);
		pthread_mutex_lock(&pm.lock);
		uint64_t next = gps_mono_ns() + DECODE_NS;
		int rc = 0;
		int pending = 0;
		while (pm.state == GPS_SERVICE_RUNNING && rc != ETIMEDOUT && !pending) {
			rc = gps_service_wait(&pm, next);
			for (unsigned i = 0; i < ndev; i++)
				pending |= devs[i].announced && devs[i].state == PD_NONE;
		}
	}
	unsigned n = ndev;
	pthread_mutex_unlock(&pm.lock);
	/* stopping: the samples up to now, then no more */
	pthread_mutex_lock(&pm_call_lock);
	for (unsigned i = 0; i < n && !atomic_load(&pm_abandoned); i++) {
		struct pm_dev *d = &devs[i];
		if (d->state != PD_RUNNING)
			continue;
		CUpti_PmSampling_Stop_Params p = {.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
		p.pPmSamplingObject = d->obj;
		GPS_CUPTI_QUIET(cuptiPmSamplingStop, &p); /* a destroyed context: quietly */
		d->started = 0;
		decode(d, 1);
		d->state = PD_STOPPED;
	}
	pthread_mutex_unlock(&pm_call_lock);
}

static int start_thread_locked(void)
{
	/* 4 MiB: CUPTI's host API (NVPW): stack use unknown */
	if (gps_service_start_locked(&pm, pm_main, 4u << 20) != GPS_SERVICE_STARTED)
		return -1;
	atomic_store(&pm_started, 1);
	return 0;
}

void gps_pm_context_created(void *cu_context)
{
	if (!gps.cfg.pm_interval_ns || gps.disabled || atomic_load(&gps.closed))
		return;
	pthread_mutex_lock(&pm.lock);
	if (pm_failed || pm.state == GPS_SERVICE_STOPPING) {
		pthread_mutex_unlock(&pm.lock);
		return;
	}
	if (pm.state == GPS_SERVICE_NONE && !have_functions()) {
		pm_failed = 1;
		pthread_mutex_unlock(&pm.lock);
		gps_warn("GPUPROF_PM_SAMPLING: this CUPTI (%s) has no PM sampling API (needs CUDA >= 12.6); no PM sampling",
			 gps_cupti_loaded_path());
		return;
	}
	for (unsigned i = 0; i < ndev; i++)
		if (devs[i].ctx == cu_context) {
			pthread_mutex_unlock(&pm.lock);
			return; /* seen (a context address reused after destroy: same device or not, skip) */
		}
	int slot = -1;
	if (ndev < PM_MAX_DEV) {
		memset(&devs[ndev], 0, sizeof devs[ndev]);
		devs[ndev].ctx = cu_context;
		devs[ndev].announced = 1;
		slot = (int)ndev++;
	}
	if (pm.state == GPS_SERVICE_NONE) {
		if (start_thread_locked() != 0) {
			pm_failed = 1;
			pthread_mutex_unlock(&pm.lock);
			gps_info("cannot start the PM sampling thread: no PM sampling");
			return;
		}
	} else {
		pthread_cond_broadcast(&pm.cond);
	}
	/* the job does not go on with this context until its set-up is done
	 * (bounded: should set-up wait on something this thread holds, it
	 * carries on after SETUP_WAIT_S, set-up then overlapping the job) */
	if (slot >= 0) {
		struct timespec dl;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += SETUP_WAIT_S;
		int rc = 0;
		while (!devs[slot].setup_done && pm.state == GPS_SERVICE_RUNNING && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&pm.cond, &pm.lock, &dl);
	}
	pthread_mutex_unlock(&pm.lock);
}

void gps_pm_stop(void)
{
	/* it may be inside CUPTI (set-up, a decode): wait, but never hang
	 * the exit on it (it cannot emit once closed is set) */
	if (!gps_service_stop(&pm, 2000))
		atomic_store(&pm_abandoned, 1);
}

void gps_pm_fork_prepare(void)
{
	/* not while the thread is inside CUPTI (bounded: a stuck call must not
	 * hang the job's fork) */
	fork_locked = 0;
	if (!atomic_load(&pm_started))
		return;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 1;
	fork_locked = pthread_mutex_timedlock(&pm_call_lock, &dl) == 0;
}

void gps_pm_fork_parent(void)
{
	if (fork_locked)
		pthread_mutex_unlock(&pm_call_lock);
	fork_locked = 0;
}

void gps_pm_after_fork_child(void)
{
	/* the thread, the PM sampling objects and the contexts are the
	 * parent's: the child starts over when it creates a context itself */
	gps_service_after_fork_child(&pm);
	pthread_mutex_init(&pm_call_lock, NULL);
	fork_locked = 0;
	atomic_store(&pm_started, 0);
	atomic_store(&pm_abandoned, 0);
	pm_profiler_inited = 0;
	atomic_store(&off_logged, 0);
	memset(devs, 0, sizeof devs); /* the parent's buffers: not ours to free */
	ndev = 0;
	names_gen = ~0u;
}
