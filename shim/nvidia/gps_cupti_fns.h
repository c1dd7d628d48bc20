/* gps_cupti_fns.h — every CUPTI function the shim uses, bound with dlsym at
 * run time (never linked: the shim must load in processes without CUDA).
 * X(name, required): a missing required symbol means "not a usable CUPTI";
 * a missing optional one switches that feature off.  The pointer types come
 * from the real declarations in cupti.h via __typeof__, so a signature change
 * in the headers is a compile error, not a silent ABI mismatch. */
#ifndef GPS_CUPTI_FNS_H
#define GPS_CUPTI_FNS_H
#include <cupti.h>

#include "core/gps_log.h"
/* PM sampling (nvidia/gps_pmsampling.c); CUDA >= 12.6.  cupti_profiler_host.h
 * needs shim/nvidia/c-compat on the include path (it includes <string>). */
#include <cupti_target.h>
#include <cupti_profiler_target.h>
#include <cupti_profiler_host.h>
#include <cupti_pmsampling.h>

#define GPS_CUPTI_FUNCS(X)                              \
	X(cuptiSubscribe, 1)                            \
	X(cuptiUnsubscribe, 1)                          \
	X(cuptiEnableCallback, 1)                       \
	X(cuptiEnableDomain, 1)                         \
	X(cuptiGetCallbackName, 1)                      \
	X(cuptiGetResultString, 1)                      \
	X(cuptiActivityEnable, 1)                       \
	X(cuptiActivityDisable, 1)                      \
	X(cuptiActivityRegisterCallbacks, 1)            \
	X(cuptiActivityGetNextRecord, 1)                \
	X(cuptiActivityFlushAll, 1)                     \
	X(cuptiGetTimestamp, 1)                         \
	X(cuptiActivityGetNumDroppedRecords, 0)         \
	X(cuptiActivityFlushPeriod, 0)                  \
	X(cuptiActivityRegisterTimestampCallback, 0)    \
	X(cuptiActivityEnableRuntimeApi, 0)             \
	X(cuptiActivityEnableDriverApi, 0)              \
	X(cuptiFinalize, 0)                              \
	X(cuptiGetGraphNodeId, 0)                       \
	X(cuptiGetGraphId, 0)                           \
	GPS_CUPTI_PM_FUNCS(X)

/* GPUPROF_PM_SAMPLING: all optional; one missing switches PM sampling off
 * (gps_pmsampling.c checks them as a set). */
#define GPS_CUPTI_PM_FUNCS(X)                           \
	X(cuptiGetDeviceId, 0)                          \
	X(cuptiProfilerInitialize, 0)                   \
	X(cuptiDeviceGetChipName, 0)                    \
	X(cuptiPmSamplingGetCounterAvailability, 0)     \
	X(cuptiProfilerHostInitialize, 0)               \
	X(cuptiProfilerHostDeinitialize, 0)             \
	X(cuptiProfilerHostGetBaseMetrics, 0)           \
	X(cuptiProfilerHostConfigAddMetrics, 0)         \
	X(cuptiProfilerHostGetConfigImageSize, 0)       \
	X(cuptiProfilerHostGetConfigImage, 0)           \
	X(cuptiProfilerHostGetNumOfPasses, 0)           \
	X(cuptiProfilerHostEvaluateToGpuValues, 0)      \
	X(cuptiPmSamplingEnable, 0)                     \
	X(cuptiPmSamplingDisable, 0)                    \
	X(cuptiPmSamplingSetConfig, 0)                  \
	X(cuptiPmSamplingStart, 0)                      \
	X(cuptiPmSamplingStop, 0)                       \
	X(cuptiPmSamplingDecodeData, 0)                 \
	X(cuptiPmSamplingGetCounterDataSize, 0)         \
	X(cuptiPmSamplingCounterDataImageInitialize, 0) \
	X(cuptiPmSamplingGetCounterDataInfo, 0)         \
	X(cuptiPmSamplingCounterDataGetSampleInfo, 0)

#define GPS_X_DECL(name, req) extern __typeof__(name) *gps_p_##name;
GPS_CUPTI_FUNCS(GPS_X_DECL)
#undef GPS_X_DECL

/* Loads libcupti following the documented search order (docs/CONFIG.md) and
 * fills the gps_p_* pointers.  Returns 0, or -1 after logging one line. */
int gps_cupti_load(void);
/* The loaded libcupti's dlopen handle, NULL before loading. */
void *gps_cupti_handle(void);
/* Where it came from (for the log / trace), "" before loading. */
const char *gps_cupti_loaded_path(void);

/* One checked-call macro: calls through the bound pointer, logs a failure
 * with CUPTI's own message (once per call site), yields the CUptiResult.
 * A missing optional function yields CUPTI_ERROR_NOT_SUPPORTED silently. */
const char *gps_cupti_errstr(CUptiResult r);
#define GPS_CUPTI(fn, ...)                                                          \
	({                                                                          \
		CUptiResult gps_r_ = CUPTI_ERROR_NOT_SUPPORTED;                     \
		if (gps_p_##fn) {                                                   \
			gps_r_ = gps_p_##fn(__VA_ARGS__);                           \
			static int gps_logged_;                                     \
			if (gps_r_ != CUPTI_SUCCESS && !gps_logged_) {              \
				gps_logged_ = 1;                                    \
				gps_info("%s failed: %s", #fn, gps_cupti_errstr(gps_r_));  \
			}                                                           \
		}                                                                   \
		gps_r_;                                                             \
	})
/* Same without logging: for calls whose failure is an expected answer. */
#define GPS_CUPTI_QUIET(fn, ...)                                                    \
	(gps_p_##fn ? gps_p_##fn(__VA_ARGS__) : CUPTI_ERROR_NOT_SUPPORTED)

#endif
