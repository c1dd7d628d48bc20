/* gps_cbid.c — which CUDA API calls the default trace records.  Chosen by
 * NAME (glob patterns matched against cuptiGetCallbackName for every cbid at
 * bind time), not by CUPTI_*_TRACE_CBID_* constants: a name that a given
 * CUPTI release lacks simply matches nothing, and new variants of a family
 * (cudaLaunchKernelExC_v11060, cuMemcpy3DPeerAsync_ptsz...) are picked up
 * without a rebuild.  Pure string code: unit-tested without CUPTI. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "nvidia/gps_cbid.h"

/* Runtime (GPS_CB_RUNTIME).  Launches, copies/sets, synchronisation, allocation,
 * cross-stream waits, device lifecycle. */
static const char *const rt_patterns[] = {
	"cudaLaunch*", "__cudaLaunch*", "cudaGraphLaunch*",
	"cudaMemcpy*", "cudaMemset*",
	"cuda*Synchronize*",
	"cudaMalloc*", "cudaFree*", "cudaHostAlloc*", "cudaHostRegister*", "cudaHostUnregister*",
	"cudaStreamWaitEvent*", "cudaEventRecord*",
	"cudaSetDevice*", "cudaDeviceReset*", "cudaStreamCreate*", "cudaStreamDestroy*",
	NULL,
};

/* Driver (GPS_CB_DRIVER).  Same families plus module/context lifecycle. */
static const char *const drv_patterns[] = {
	"cuLaunch*", "cuGraphLaunch*",
	"cuMemcpy*", "cuMemset*",
	"cu*Synchronize*",
	"cuMemAlloc*", "cuMemFree*", "cuMemHostAlloc*", "cuMemHostRegister*",
	"cuMemHostUnregister*", "cuMemCreate*", "cuMemRelease*", "cuMemMap*", "cuMemUnmap*",
	"cuStreamWaitEvent*", "cuStreamWaitValue*", "cuStreamWriteValue*", "cuEventRecord*",
	"cuModuleLoad*", "cuModuleUnload*", "cuLibraryLoad*", "cuLibraryUnload*",
	"cuCtxCreate*", "cuCtxDestroy*", "cuDevicePrimaryCtxRetain*",
	"cuDevicePrimaryCtxRelease*", "cuDevicePrimaryCtxReset*", "cuInit*",
	NULL,
};

void gps_cbid_clean_name(const char *name, char *out, size_t outsz)
{
	/* Runtime cbid names carry the version that introduced them
	 * ("cudaMemcpy_v3020", "cudaLaunchKernel_ptsz_v7000"): drop a trailing
	 * _v + 4..6 digits.  Driver names' _v2 is part of the symbol: kept. */
	size_t n = strlen(name);
	const char *v = strrchr(name, '_');
	if (v && v[1] == 'v') {
		size_t digits = 0;
		const char *d = v + 2;
		while (isdigit((unsigned char)d[digits]))
			digits++;
		if (digits >= 4 && digits <= 6 && d[digits] == 0)
			n = (size_t)(v - name);
	}
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, name, n);
	out[n] = 0;
}

int gps_cbid_default(enum gps_cb_domain domain, const char *name)
{
	if (!name || !*name)
		return 0;
	char clean[256];
	gps_cbid_clean_name(name, clean, sizeof clean);
	const char *const *pats = domain == GPS_CB_DRIVER    ? drv_patterns
				  : domain == GPS_CB_RUNTIME ? rt_patterns
							     : NULL;
	if (!pats)
		return 0;
	for (; *pats; pats++)
		if (fnmatch(*pats, clean, 0) == 0)
			return 1;
	return 0;
}
