/* gps_cupti_markers.c — the API calls the step finder is fed, and their
 * signatures (gps_cupti_markers.h).  A copy's signature is its direction
 * and byte count (a step copies a batch of one size); a graph launch's its
 * executable graph; a kernel launch's its function; a synchronisation's the
 * call.  Offsets come from CUDA's own params structs (a layout change is a
 * compile error), as in nvidia/gps_cupti_stacks.c. */
/* the params structs name the legacy _v1 types, which cuda.h declares only
 * for its own implementation: we read fields, call nothing */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <generated_cuda_meta.h>
#include <generated_cuda_runtime_api_meta.h>

#include <stddef.h>
#include <string.h>

#include "features/gps_period.h"
#include "gp_launch.h"
#include "nvidia/gps_cupti_markers.h"
#include "nvidia/gps_cupti_params.h"

unsigned char gps_cupti_marker_class[3][GPS_MK_MAX_CBID];

/* how the signature is read: kind of field and its offset */
enum how { H_CALL = 0, H_RT_COPY, H_BYTES, H_PTR };
static unsigned char how[3][GPS_MK_MAX_CBID], at[3][GPS_MK_MAX_CBID];

_Static_assert(offsetof(cudaMemcpy_v3020_params, count) == offsetof(cudaMemcpyAsync_v3020_params, count) &&
		       offsetof(cudaMemcpy_v3020_params, kind) == offsetof(cudaMemcpyAsync_v3020_params, kind) &&
		       offsetof(cudaMemcpy_ptds_v7000_params, count) == offsetof(cudaMemcpy_v3020_params, count) &&
		       offsetof(cudaMemcpyAsync_ptsz_v7000_params, kind) == offsetof(cudaMemcpy_v3020_params, kind),
	       "the runtime's 1-D copies share one layout");
_Static_assert(offsetof(cuMemcpyHtoD_v2_params, ByteCount) == offsetof(cuMemcpyHtoDAsync_v2_params, ByteCount) &&
		       offsetof(cuMemcpyDtoH_v2_params, ByteCount) == offsetof(cuMemcpyDtoHAsync_v2_params, ByteCount) &&
		       offsetof(cuMemcpyHtoD_v2_params, ByteCount) == offsetof(cuMemcpyDtoH_v2_params, ByteCount) &&
		       offsetof(cuMemcpy_params, ByteCount) == offsetof(cuMemcpyAsync_params, ByteCount),
	       "the driver's 1-D copies share one layout");

static int is(const char *clean, const char *base)
{
	size_t n = strlen(base);
	/* the name, or with its per-thread-stream suffix */
	return !strncmp(clean, base, n) && (!clean[n] || !strncmp(clean + n, "_pt", 3));
}

static void classify(enum gps_cb_domain dom, uint32_t cbid, const char *clean)
{
	unsigned char c = 0, h = H_CALL, off = 0;
	if (is(clean, "cudaMemcpy") || is(clean, "cudaMemcpyAsync")) {
		c = GPS_SIG_COPY; /* the direction is the call's kind: at the call */
		h = H_RT_COPY;
	} else if (is(clean, "cuMemcpyHtoD_v2") || is(clean, "cuMemcpyHtoDAsync_v2")) {
		c = GPS_SIG_HTOD;
		h = H_BYTES;
		off = offsetof(cuMemcpyHtoD_v2_params, ByteCount);
	} else if (is(clean, "cuMemcpyDtoH_v2") || is(clean, "cuMemcpyDtoHAsync_v2")) {
		c = GPS_SIG_DTOH;
		h = H_BYTES;
		off = offsetof(cuMemcpyDtoH_v2_params, ByteCount);
	} else if (is(clean, "cuMemcpy") || is(clean, "cuMemcpyAsync")) {
		c = GPS_SIG_COPY;
		h = H_BYTES;
		off = offsetof(cuMemcpy_params, ByteCount);
	} else if (is(clean, "cudaStreamSynchronize") || is(clean, "cudaDeviceSynchronize") ||
		   is(clean, "cudaEventSynchronize") || is(clean, "cuStreamSynchronize") ||
		   is(clean, "cuCtxSynchronize") || is(clean, "cuEventSynchronize")) {
		c = GPS_SIG_SYNC;
	} else {
		/* kernel and graph launches: libprof's one definition of a
		 * launch, by callback id; the function or graph where the call's
		 * params hold one (nvidia/gps_cupti_params.c) */
		enum gp_launch_kind k = gp_launch_kind(gps_cb_domain_format(dom), cbid);
		int key = gps_cupti_launch_key_at(clean);
		if ((k == GP_LAUNCH_KERNEL || k == GP_LAUNCH_GRAPH) && key >= 0 && key < 256) {
			c = k == GP_LAUNCH_KERNEL ? GPS_SIG_KERNEL : GPS_SIG_GRAPH;
			h = H_PTR;
			off = (unsigned char)key;
		}
	}
	gps_cupti_marker_class[dom][cbid] = c;
	how[dom][cbid] = h;
	at[dom][cbid] = off;
}

void gps_cupti_markers_bind(const char *(*name)(enum gps_cb_domain dom, uint32_t cbid))
{
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++)
		for (uint32_t cbid = 1; cbid < GPS_MK_MAX_CBID; cbid++) {
			const char *nm = name(dom, cbid);
			if (!nm)
				continue;
			char clean[256];
			gps_cbid_clean_name(nm, clean, sizeof clean);
			classify(dom, cbid, clean);
		}
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	return x ^ (x >> 29);
}

uint64_t gps_cupti_marker_sig(enum gps_cb_domain dom, uint32_t cbid, const void *params)
{
	enum gps_sig_class c = (enum gps_sig_class)gps_cupti_marker_class[dom][cbid];
	const char *p = params;
	uint64_t v = 0;
	switch (how[dom][cbid]) {
	case H_RT_COPY:
		if (p) {
			const cudaMemcpy_v3020_params *m = params;
			v = m->count;
			c = m->kind == cudaMemcpyHostToDevice ? GPS_SIG_HTOD
			    : m->kind == cudaMemcpyDeviceToHost ? GPS_SIG_DTOH
								: GPS_SIG_COPY;
		}
		break;
	case H_BYTES:
		if (p)
			memcpy(&v, p + at[dom][cbid], sizeof(size_t));
		break;
	case H_PTR:
		if (p)
			memcpy(&v, p + at[dom][cbid], sizeof(void *));
		v = mix(v);
		break;
	default: /* a synchronisation: which call (the runtime's and the driver's alike) */
		v = mix((uint64_t)dom << 16 | cbid);
		break;
	}
	if (c == GPS_SIG_HTOD || c == GPS_SIG_DTOH || c == GPS_SIG_COPY)
		v &= (1ull << 48) - 1;
	return GPS_SIG_MAKE(c, v);
}

/* (dom, cbid) is a marker call the classes need */
static int wanted(enum gps_cb_domain dom, uint32_t cbid, unsigned classes)
{
	unsigned c = gps_cupti_marker_class[dom][cbid];
	/* a runtime copy's direction is known only at the call */
	return c && ((classes >> c & 1) ||
		     (how[dom][cbid] == H_RT_COPY &&
		      (classes & (1u << GPS_SIG_HTOD | 1u << GPS_SIG_DTOH | 1u << GPS_SIG_COPY))));
}

int gps_cupti_markers_narrow(unsigned classes, int driver, int (*disable)(enum gps_cb_domain dom, uint32_t cbid))
{
	int n = 0;
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++) {
		if (dom == GPS_CB_DRIVER && !driver)
			continue;
		for (uint32_t cbid = 1; cbid < GPS_MK_MAX_CBID; cbid++)
			if (gps_cupti_marker_class[dom][cbid] && !wanted(dom, cbid, classes) && disable(dom, cbid) == 0)
				n++;
	}
	return n;
}

int gps_cupti_markers_enable(unsigned classes, int driver, int (*enable)(enum gps_cb_domain dom, uint32_t cbid))
{
	int n = 0;
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++) {
		if (dom == GPS_CB_DRIVER && !driver)
			continue;
		for (uint32_t cbid = 1; cbid < GPS_MK_MAX_CBID; cbid++) {
			if (wanted(dom, cbid, classes) && enable(dom, cbid) == 0)
				n++;
		}
	}
	return n;
}
