/* gps_nvml.h — the GPU metrics sampler (nvidia/gps_nvml.c,
 * GPUPROF_GPU_METRICS): a thread "gpuprof-nvml" emitting nvml.*
 * GP_REC_COUNTER records.  start: once a trace exists (idempotent, no-op when
 * off); stop: before the final flush, bounded wait; the fork child has none
 * until it creates its own trace. */
#ifndef GPS_NVML_H
#define GPS_NVML_H

#include <stdint.h>

void gps_nvml_start(void);
void gps_nvml_stop(void);
void gps_nvml_after_fork_child(void);
/* Counters are labelled with CUDA's device id of the same UUID.
 * cuda_device: CUDA device id has this UUID (from a CUPTI DEVICE record;
 * any thread, lock-free); final: from the final flush after its CUPTI
 * flush, emits the samples that still wait for that mapping; parse_uuid:
 * NVML's "GPU-xxxxxxxx-..." text to 16 bytes (0, or -1).  Counters of an
 * NVML device with no CUDA id to be had: GPS_NVML_UNMAPPED_BASE + NVML index
 * (docs/FORMAT.md). */
#define GPS_NVML_UNMAPPED_BASE 1000u
void gps_nvml_cuda_device(uint32_t id, const uint8_t uuid[16]);
void gps_nvml_final(void);
int gps_nvml_parse_uuid(const char *s, uint8_t out[16]);

/* The memory of CUDA device cuda_dev as NVML sees it now (total and free
 * bytes): for a failed allocation (nvidia/gps_cupti_alloc.c), from inside
 * its CUPTI callback (NVML makes no CUDA call).  NVML is bound on the first
 * call, on the calling thread, apart from the sampler (its own nvmlInit,
 * never shut down: the process is usually about to end); the device is the
 * NVML device of the CUDA device's UUID (from its DEVICE record), or the
 * only NVML device.  0, or -1 when not to be had (no NVML, no such device,
 * the UUID not known yet), silently: the record says "unknown". */
int gps_nvml_device_memory(uint32_t cuda_dev, uint64_t *total, uint64_t *free_bytes);

#endif
