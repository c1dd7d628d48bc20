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
