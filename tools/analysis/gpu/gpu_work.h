/* gpu_work.h — the two kinds of GPU work the analyses tell apart. */
#ifndef GPUPROF_ANALYSIS_GPU_GPU_WORK_H
#define GPUPROF_ANALYSIS_GPU_GPU_WORK_H

enum gpu_work { GPU_WORK_KERNEL, GPU_WORK_COPY /* memcpy or memset */ };

#endif
