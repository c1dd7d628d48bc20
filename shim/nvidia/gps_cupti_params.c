/* gps_cupti_params.c — the params offsets of gps_cupti_params.h, from
 * CUDA's own params structs (a layout change is a compile error). */
/* the params structs name the legacy _v1 types, which cuda.h declares only
 * for its own implementation: we read fields, call nothing */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <generated_cuda_meta.h>
#include <generated_cuda_runtime_api_meta.h>

#include <stddef.h>
#include <string.h>

#include "nvidia/gps_cupti_params.h"

static int starts(const char *clean, const char *base) { return !strncmp(clean, base, strlen(base)); }

int gps_cupti_launch_key_at(const char *clean)
{
	if (strstr(clean, "MultiDevice"))
		return -1;
	/* longest names first: cudaLaunchKernelExC before cudaLaunchKernel */
	if (starts(clean, "cudaLaunchKernelExC"))
		return (int)offsetof(cudaLaunchKernelExC_v11060_params, func);
	if (starts(clean, "cudaLaunchKernel"))
		return (int)offsetof(cudaLaunchKernel_v7000_params, func);
	if (starts(clean, "cudaLaunchCooperativeKernel"))
		return (int)offsetof(cudaLaunchCooperativeKernel_v9000_params, func);
	if (starts(clean, "cuLaunchKernelEx"))
		return (int)offsetof(cuLaunchKernelEx_params, f);
	if (starts(clean, "cuLaunchKernel"))
		return (int)offsetof(cuLaunchKernel_params, f);
	if (starts(clean, "cuLaunchCooperativeKernel"))
		return (int)offsetof(cuLaunchCooperativeKernel_params, f);
	if (starts(clean, "cudaGraphLaunch"))
		return (int)offsetof(cudaGraphLaunch_v10000_params, graphExec);
	if (starts(clean, "cuGraphLaunch"))
		return (int)offsetof(cuGraphLaunch_params, hGraph);
	return -1;
}

/* The offset of member in the params struct st of the call named name (the
 * _ptsz twins have the same params as their base call). */
#define MEMBER_AT(name, st, member) \
	if (!strcmp(clean, name) || (starts(clean, name "_ptsz") && !clean[strlen(name "_ptsz")])) \
		return (int)offsetof(st, member);
int gps_cupti_alloc_size_at(const char *clean)
{
	_Static_assert(sizeof(((cudaMalloc_v3020_params *)0)->size) == 8, "size_t sizes");
	MEMBER_AT("cudaMalloc", cudaMalloc_v3020_params, size)
	MEMBER_AT("cudaMallocHost", cudaMallocHost_v3020_params, size)
	MEMBER_AT("cudaHostAlloc", cudaHostAlloc_v3020_params, size)
	MEMBER_AT("cudaMallocManaged", cudaMallocManaged_v6000_params, size)
	MEMBER_AT("cudaMallocAsync", cudaMallocAsync_v11020_params, size)
	MEMBER_AT("cudaMallocFromPoolAsync", cudaMallocFromPoolAsync_v11020_params, size)
	MEMBER_AT("cuMemAlloc_v2", cuMemAlloc_v2_params, bytesize)
	MEMBER_AT("cuMemAllocHost_v2", cuMemAllocHost_v2_params, bytesize)
	MEMBER_AT("cuMemHostAlloc", cuMemHostAlloc_params, bytesize)
	MEMBER_AT("cuMemHostAlloc_v2", cuMemHostAlloc_params, bytesize)
	MEMBER_AT("cuMemAllocManaged", cuMemAllocManaged_params, bytesize)
	MEMBER_AT("cuMemAllocAsync", cuMemAllocAsync_params, bytesize)
	MEMBER_AT("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync_params, bytesize)
	MEMBER_AT("cuMemCreate", cuMemCreate_params, size)
	return -1;
}

/* (a pointer-sized out parameter: void ** or CUdeviceptr * or the handle's) */
int gps_cupti_alloc_out_at(const char *clean)
{
	_Static_assert(sizeof(CUdeviceptr) == 8 && sizeof(CUmemGenericAllocationHandle) == 8, "64-bit out values");
	MEMBER_AT("cudaMalloc", cudaMalloc_v3020_params, devPtr)
	MEMBER_AT("cudaMallocAsync", cudaMallocAsync_v11020_params, devPtr)
	MEMBER_AT("cudaMallocFromPoolAsync", cudaMallocFromPoolAsync_v11020_params, ptr)
	MEMBER_AT("cuMemAlloc_v2", cuMemAlloc_v2_params, dptr)
	MEMBER_AT("cuMemAllocAsync", cuMemAllocAsync_params, dptr)
	MEMBER_AT("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync_params, dptr)
	MEMBER_AT("cuMemCreate", cuMemCreate_params, handle)
	return -1;
}

int gps_cupti_free_at(const char *clean, int *handle)
{
	_Static_assert(sizeof(((cudaFree_v3020_params *)0)->devPtr) == 8, "64-bit pointers");
	*handle = 0;
	MEMBER_AT("cudaFree", cudaFree_v3020_params, devPtr)
	MEMBER_AT("cudaFreeAsync", cudaFreeAsync_v11020_params, devPtr)
	MEMBER_AT("cuMemFree_v2", cuMemFree_v2_params, dptr)
	MEMBER_AT("cuMemFreeAsync", cuMemFreeAsync_params, dptr)
	*handle = 1;
	MEMBER_AT("cuMemRelease", cuMemRelease_params, handle)
	*handle = 0;
	return -1;
}
