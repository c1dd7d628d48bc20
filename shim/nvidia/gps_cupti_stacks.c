/* gps_cupti_stacks.c — which CUDA API calls record a call stack
 * (GPUPROF_STACKS: the launch calls, kernel and graph launches, copies and
 * sets, by callback id: libprof's gp_launch.h; and the allocation calls:
 * libprof's gp_alloc.h), and the key that tells one call's sites apart: the
 * kernel function or graph it launches, read from the call's parameters as
 * CUPTI hands them to the callback (offsets from CUDA's own params structs,
 * so a layout change is a compile error).
 *
 * Allocation calls other than the stream-ordered ones take a stack at every
 * call, not sampled per site: a site is (call, key, Python line), and an
 * allocation has no key, so in native code two call sites of cudaMalloc
 * would be one site and share the first one's stack; yet the memory view
 * names the allocating line (a leak's, the out-of-memory one's) from it.
 * They are few (a caching allocator calls cudaMalloc a handful of times a
 * step at most) and each costs the driver far more than an unwind.
 * Stream-ordered ones (cudaMallocAsync) can be as frequent as launches:
 * sampled as launches are. */
/* the params structs name the legacy _v1 types, which cuda.h declares only
 * for its own implementation: we read two pointer offsets, call nothing */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <generated_cuda_meta.h>
#include <generated_cuda_runtime_api_meta.h>

#include <stddef.h>
#include <string.h>

#include "core/gps_core.h"
#include "gp_alloc.h"
#include "gp_launch.h"
#include "features/gps_stacks.h"
#include "nvidia/gps_cupti_params.h"
#include "nvidia/gps_cupti_stacks.h"

unsigned char gps_cupti_stack_want[3][GPS_STK_MAX_CBID];

uint32_t gps_cupti_stack_for_call(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid,
				  const void *params)
{
	unsigned w = gps_cupti_stack_want[dom][cbid];
	uint64_t key = 0;
	if (w == GPS_STK_EVERY)
		return gps_stacks_for_site(rec, (uint32_t)dom << 16 | cbid, 0, 1);
	if (w >= 2 && params)
		memcpy(&key, (const char *)params + (w - 2) * 8u, sizeof key);
	return gps_stacks_for_site(rec, (uint32_t)dom << 16 | cbid, key, 0);
}

/* Where the call-site key is in the call's params: 1 none, 2 + offset/8
 * (the offsets are 8-aligned: pointers). */
static unsigned char key_kind(const char *clean)
{
	int at = gps_cupti_launch_key_at(clean);
	return at < 0 || at % 8 ? 1 : (unsigned char)(2 + at / 8);
}

void gps_cupti_stacks_bind(const char *(*name)(enum gps_cb_domain dom, uint32_t cbid))
{
	if (!gps_stacks_wanted())
		return;
	int n = 0;
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++)
		for (uint32_t cbid = 1; cbid < GPS_STK_MAX_CBID; cbid++) {
			const char *nm = name(dom, cbid);
			/* allocations: libprof's one definition, by callback id */
			enum gp_alloc_kind ak = gp_alloc_kind(gps_cb_domain_format(dom), cbid);
			if (nm && ak != GP_ALLOC_NONE) {
				gps_cupti_stack_want[dom][cbid] = ak == GP_ALLOC_ASYNC ? 1 : GPS_STK_EVERY;
				n++;
				continue;
			}
			/* launches, graph launches, copies and sets: libprof's one
			 * definition of a launch call, by callback id */
			if (!nm || gp_launch_kind(gps_cb_domain_format(dom), cbid) == GP_LAUNCH_NONE)
				continue;
			char clean[256];
			gps_cbid_clean_name(nm, clean, sizeof clean);
			gps_cupti_stack_want[dom][cbid] = key_kind(clean);
			n++;
		}
	if (!n) {
		gps_warn("stacks: no launch or memcpy callbacks known to this CUPTI; no call stacks");
		return;
	}
	gps_stacks_enable();
}
