/* hostlink.h — what pinned host<->device copies reach on a device's host
 * link, by the device's name (the trace's device record has no PCIe
 * generation or width).  The table and its source: docs/ADVISE.md
 * "pageable-copy". */
#ifndef GPUPROF_ANALYSIS_GPU_HOSTLINK_H
#define GPUPROF_ANALYSIS_GPU_HOSTLINK_H

struct hostlink {
	double gbps;      /* pinned copy bandwidth assumed, GB/s (bytes per ns); 0: unknown */
	const char *link; /* "PCIe Gen5 x16", "NVLink-C2C"; NULL when the name is not in the table */
};

/* name: the CUDA device name ("NVIDIA H100 80GB HBM3"); NULL or unknown
 * gives {0, NULL}.  A device on NVLink-C2C (GH200, GB200) gives gbps 0 with
 * its link named: not measured, so not assumed. */
struct hostlink hostlink_of(const char *name);

#endif
