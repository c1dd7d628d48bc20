/* gp_alloc.c — see gp_alloc.h.  The allocation calls by (callback id,
 * kind, CUPTI name), sorted by id, per domain.  Ids and names are those of
 * the CUPTI_RUNTIME_TRACE_CBID_<name> / CUPTI_DRIVER_TRACE_CBID_<name>
 * enums in CUPTI 13.0; the names are there to be checked against them
 * (tests/tools/test_gp_alloc.c). */
#include "gp_alloc.h"

#include <stddef.h>

#include "gp_trace.h"

#define GP_RUNTIME_ALLOCS(X) \
	X(20, DEVICE, cudaMalloc_v3020) \
	X(21, DEVICE, cudaMallocPitch_v3020) \
	X(25, HOST, cudaMallocHost_v3020) \
	X(27, HOST, cudaHostAlloc_v3020) \
	X(140, DEVICE, cudaMalloc3D_v3020) \
	X(206, MANAGED, cudaMallocManaged_v6000) \
	X(373, ASYNC, cudaMallocAsync_v11020) \
	X(374, ASYNC, cudaMallocAsync_ptsz_v11020) \
	X(391, ASYNC, cudaMallocFromPoolAsync_v11020) \
	X(392, ASYNC, cudaMallocFromPoolAsync_ptsz_v11020)

#define GP_DRIVER_ALLOCS(X) \
	X(29, DEVICE, cuMemAlloc) \
	X(31, DEVICE, cuMemAllocPitch) \
	X(37, HOST, cuMemAllocHost) \
	X(39, HOST, cuMemHostAlloc) \
	X(243, DEVICE, cuMemAlloc_v2) \
	X(244, DEVICE, cuMemAllocPitch_v2) \
	X(271, HOST, cuMemHostAlloc_v2) \
	X(294, HOST, cuMemAllocHost_v2) \
	X(371, MANAGED, cuMemAllocManaged) \
	X(549, VMM, cuMemCreate) \
	X(598, ASYNC, cuMemAllocAsync) \
	X(599, ASYNC, cuMemAllocAsync_ptsz) \
	X(611, ASYNC, cuMemAllocFromPoolAsync) \
	X(612, ASYNC, cuMemAllocFromPoolAsync_ptsz)

struct alloc_id {
	uint16_t cbid;
	const char *name;
};

#define ENTRY(cbid, kind, name) { cbid, #name },
static const struct alloc_id runtime_ids[] = { GP_RUNTIME_ALLOCS(ENTRY) };
static const struct alloc_id driver_ids[] = { GP_DRIVER_ALLOCS(ENTRY) };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The kinds by id (an id not listed: 0, GP_ALLOC_NONE): the memory view
 * asks for every API record, so a lookup. */
#define KIND_AT(cbid, kind, name) [cbid] = GP_ALLOC_##kind,
static const uint8_t runtime_kinds[] = { GP_RUNTIME_ALLOCS(KIND_AT) };
static const uint8_t driver_kinds[] = { GP_DRIVER_ALLOCS(KIND_AT) };

enum gp_alloc_kind gp_alloc_kind(uint32_t domain, uint32_t cbid)
{
	if (domain == GP_API_RUNTIME) return cbid < COUNT(runtime_kinds) ? runtime_kinds[cbid] : GP_ALLOC_NONE;
	if (domain == GP_API_DRIVER) return cbid < COUNT(driver_kinds) ? driver_kinds[cbid] : GP_ALLOC_NONE;
	return GP_ALLOC_NONE;
}

const char *gp_alloc_name(uint32_t domain, uint32_t cbid)
{
	if (gp_alloc_kind(domain, cbid) == GP_ALLOC_NONE) return NULL;
	const struct alloc_id *v = domain == GP_API_RUNTIME ? runtime_ids : driver_ids;
	size_t n = domain == GP_API_RUNTIME ? COUNT(runtime_ids) : COUNT(driver_ids);
	for (size_t i = 0; i < n; i++) /* a few entries: a scan */
		if (v[i].cbid == cbid) return v[i].name;
	return NULL;
}
