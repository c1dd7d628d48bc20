/* gp_alloc.h — which CUDA API calls allocate memory, decided from what the
 * format stores of every call (gp_rec_api): its domain and CUPTI callback
 * id.  The one definition of "allocation call" for the shim (the calls that
 * take a call stack with GPUPROF_STACKS, the failed requests it records)
 * and the tools (the memory view, advise).
 *
 * An allocation call is one that asks the driver for memory:
 *  - device memory: cudaMalloc, cudaMallocPitch, cudaMalloc3D, cuMemAlloc,
 *    cuMemAllocPitch (and their _v2);
 *  - stream-ordered (a pool's): cudaMallocAsync, cudaMallocFromPoolAsync,
 *    cuMemAllocAsync, cuMemAllocFromPoolAsync (and _ptsz);
 *  - physical memory of the virtual memory API: cuMemCreate (PyTorch's
 *    expandable segments, NCCL's buffers);
 *  - managed memory: cudaMallocManaged, cuMemAllocManaged;
 *  - pinned host memory: cudaMallocHost, cudaHostAlloc, cuMemAllocHost,
 *    cuMemHostAlloc.
 * Not allocations: frees (they take nothing new), cuMemAddressReserve
 * (address space only: the memory comes with cuMemCreate, and a failed
 * reservation is no out-of-memory), cuMemMap (maps what cuMemCreate made),
 * cudaHostRegister (pins the job's own memory), arrays (cudaMallocArray,
 * cudaMalloc3DArray, cudaMallocMipmappedArray: texture memory, and the
 * driver's cuArrayCreate family has no allocation name either).
 *
 * Why callback ids, not names: as gp_launch.h.  The ids come from CUPTI
 * 13.0's cupti_runtime_cbid.h / cupti_driver_cbid.h;
 * tests/tools/test_gp_alloc checks the table against the installed
 * toolkit's headers (every id whose name is an allocation by the rules
 * above, and no other). */
#ifndef GP_ALLOC_H
#define GP_ALLOC_H

#include <stdint.h>

enum gp_alloc_kind {
	GP_ALLOC_NONE = 0, /* not an allocation call */
	GP_ALLOC_DEVICE,   /* device memory */
	GP_ALLOC_ASYNC,    /* stream-ordered, from a memory pool */
	GP_ALLOC_VMM,      /* cuMemCreate: physical memory to map */
	GP_ALLOC_MANAGED,  /* unified memory */
	GP_ALLOC_HOST,     /* pinned host memory */
};

/* What the call (domain: enum gp_api_domain, as gp_rec_api.domain; cbid:
 * gp_rec_api.cbid) allocates; GP_ALLOC_NONE for any other call or domain. */
enum gp_alloc_kind gp_alloc_kind(uint32_t domain, uint32_t cbid);

/* Device memory, what an out-of-memory error is about: device,
 * stream-ordered and cuMemCreate allocations. */
static inline int gp_alloc_on_device(enum gp_alloc_kind k)
{
	return k == GP_ALLOC_DEVICE || k == GP_ALLOC_ASYNC || k == GP_ALLOC_VMM;
}

/* CUPTI's name of an allocation call's id ("cudaMalloc_v3020"); NULL when
 * gp_alloc_kind is GP_ALLOC_NONE. */
const char *gp_alloc_name(uint32_t domain, uint32_t cbid);

/* The out-of-memory status of an allocation call: cudaErrorMemoryAllocation
 * and CUDA_ERROR_OUT_OF_MEMORY are both 2. */
#define GP_ALLOC_STATUS_OOM 2

#endif
