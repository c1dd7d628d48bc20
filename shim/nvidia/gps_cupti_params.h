/* gps_cupti_params.h — where a launch call's kernel function or executable
 * graph, and an allocation call's size, are in CUDA's params struct of the
 * call (nvidia/gps_cupti_params.c):
 * the one table of those offsets, read by the call stacks' site key
 * (nvidia/gps_cupti_stacks.c) and the step finder's launch signatures
 * (nvidia/gps_cupti_markers.c).  Which calls are launches is libprof's
 * gp_launch_kind (by callback id); this says only where the key is. */
#ifndef GPS_CUPTI_PARAMS_H
#define GPS_CUPTI_PARAMS_H

/* clean: the callback's name without its _vNNNN suffix (gps_cbid_clean_name).
 * The byte offset of the kernel function (kernel launches) or the
 * executable graph (graph launches) in the call's params; -1 when the call
 * has none to read (a multi-device launch, `__cudaLaunchKernel`, any other
 * call). */
int gps_cupti_launch_key_at(const char *clean);

/* The byte offset of the size an allocation call (libprof's gp_alloc_kind)
 * asks for, a size_t in its params; -1 when it has none to read (the
 * legacy 32-bit cuMemAlloc, the pitched and 3D calls, whose size is a
 * product of their widths and heights, any other call). */
int gps_cupti_alloc_size_at(const char *clean);

#endif
