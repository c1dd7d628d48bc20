/* gps_stepfind.h — training steps found online, without NVTX
 * (features/gps_stepfind.c; docs/STEPS.md, "Steps found online (shim)").
 *
 * The GPU backend feeds it the API events it sees on the job's threads
 * (nvidia/gps_cupti_markers.c: copies, synchronisations, graph launches,
 * kernel launches, each as a signature, features/gps_period.h).  It learns
 * which signature starts each step (gps_period_find) on the first thread
 * that makes such calls, then turns every occurrence of it into a step edge
 * of features/gps_steps.c, so the step consumers (the flight recorder's
 * rules, captures and sampling, the status file, `gpuprof top`) work as
 * with NVTX steps.  NVTX steps win: the first one seen stops it.
 *
 * gps_stepfind_on: the hot path's test (1 while events are wanted). */
#ifndef GPS_STEPFIND_H
#define GPS_STEPFIND_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "features/gps_period.h"

extern atomic_int gps_stepfind_on;

/* on: GPUPROF_STEPS=auto and a feature uses steps */
void gps_stepfind_init(int on);
/* The job's thread tid calls into CUDA (before the call; now: trace
 * clock).  Lock-free; a store, or a compare once steps are tracked.
 * 1 when the call is a step boundary (a step ended and the next began,
 * after now: the call itself is inside the new step). */
int gps_stepfind_event(uint64_t sig, uint32_t tid, uint64_t now);
/* The classes of events it needs now (bits 1 << GPS_SIG_*): while learning
 * every marker class, while tracking the boundary's class; 0 when off. */
unsigned gps_stepfind_classes(void);
/* The backend's API callbacks are off but for the marker classes (the
 * flight recorder's GPUPROF_FLIGHT_API=auto switch): kernel launches are
 * no longer seen.  A kernel boundary stops the finder, with one line. */
void gps_stepfind_kernels_gone(void);
/* How many times gps_stepfind_classes changed while it runs: a boundary
 * found (every marker class to the boundary's), learning again (back to
 * every marker class) */
unsigned gps_stepfind_classes_changes(void);
/* What it knows, one phrase (for messages) */
void gps_stepfind_describe(char *buf, size_t n);
/* The final flush: the open found step (no boundary will end it) as the
 * range "step N (partial)" up to now */
void gps_stepfind_final(void);
void gps_stepfind_after_fork_child(void);

#endif
