/* gps_capture.h — GPUPROF_CAPTURE_RANGE=cudaProfilerApi
 * (features/gps_capture.c): record only between the job's profiler start and
 * stop calls (nsys -c cudaProfilerApi).  Which calls those are is the GPU
 * backend's business (nvidia/gps_cupti.c): it calls start at a start call's
 * exit and stop at a stop call's entry, on the calling thread. */
#ifndef GPS_CAPTURE_H
#define GPS_CAPTURE_H

#include <stdatomic.h>

/* Read by NVTX's hot paths (a range or mark outside a capture range is
 * dropped): */
extern atomic_int gps_capture_paused;  /* 1 while outside a capture range */
extern atomic_uint gps_capture_starts; /* capture ranges started so far */

void gps_capture_init(void);           /* from the config: paused or not */
/* A capture range starts / stops (no-op when already so, or after the
 * final flush). */
void gps_capture_start(void);
void gps_capture_stop(void);
void gps_capture_final(void);
void gps_capture_after_fork_child(void);

#endif
