/* gp_launch.h — which CUDA API calls launch GPU work, decided from what the
 * format stores of every call (gp_rec_api): its domain and CUPTI callback id.
 * The one definition of "launch call" for the shim and the tools.
 *
 * A launch call is one whose GPU work CUPTI correlates with it: a kernel
 * launch (cudaLaunchKernel and its Ex/cooperative/per-thread-stream
 * variants, CUDA 13's __cudaLaunchKernel, the legacy cudaLaunch,
 * cuLaunchKernel[Ex], cuLaunchCooperativeKernel, the legacy
 * cuLaunch/cuLaunchGrid[Async]), a graph launch (cudaGraphLaunch,
 * cuGraphLaunch: any number of kernels and copies under its one correlation
 * id), or a copy or set (cudaMemcpy*, cudaMemset*, cuMemcpy*, cuMemset*).
 * Not launches: cudaLaunchHostFunc/cuLaunchHostFunc (host work, no GPU
 * record), the other cudaGraph and cuGraph calls (building, instantiating
 * or uploading a graph runs nothing), cudaGraphics calls (interop).
 *
 * Why callback ids, not names: the ids are what CUPTI reports for every
 * call, recorded whether or not the name could be interned, and they are
 * fixed (CUPTI only appends to its id enums).  The tools used to match
 * substrings of the name ("Launch", "Graph", "Memcpy"), which also matched
 * cudaLaunchHostFunc, cudaGraphInstantiate, cudaGraphAddMemcpyNode and
 * cudaGraphicsMapResources, and missed a call without a recorded name; and
 * the "kernel launch" of the NVTX and comm attribution differed from the
 * "launch" of launch sites and Perfetto flows only by copies and sets, which
 * gp_launch_kind keeps apart.  The ids come from CUPTI's
 * cupti_runtime_cbid.h / cupti_driver_cbid.h (CUPTI 13.0); a launch call a
 * newer CUPTI adds is not known here until its id is added to gp_launch.c,
 * and tests/tools/test_gp_launch checks the table against the installed
 * toolkit's headers (every id whose name is a launch by the rules above, and
 * no other). */
#ifndef GP_LAUNCH_H
#define GP_LAUNCH_H

#include <stdint.h>

enum gp_launch_kind {
	GP_LAUNCH_NONE = 0, /* not a launch call */
	GP_LAUNCH_KERNEL,   /* one kernel */
	GP_LAUNCH_GRAPH,    /* a graph: its kernels and copies share the call's correlation id */
	GP_LAUNCH_MEMCPY,
	GP_LAUNCH_MEMSET,
};

/* What the call (domain: enum gp_api_domain, as gp_rec_api.domain; cbid:
 * gp_rec_api.cbid) launches; GP_LAUNCH_NONE for any other call or domain. */
enum gp_launch_kind gp_launch_kind(uint32_t domain, uint32_t cbid);

/* Kernels: a kernel or a graph launch. */
static inline int gp_launch_runs_kernels(enum gp_launch_kind k)
{
	return k == GP_LAUNCH_KERNEL || k == GP_LAUNCH_GRAPH;
}

/* CUPTI's name of a launch call's id ("cudaLaunchKernel_v7000"); NULL when
 * gp_launch_kind is GP_LAUNCH_NONE. */
const char *gp_launch_name(uint32_t domain, uint32_t cbid);

#endif
