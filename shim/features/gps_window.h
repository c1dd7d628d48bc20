/* gps_window.h — windowed GPU activity (features/gps_window.c,
 * GPUPROF_GPU_WINDOW).  All are no-ops when the mode is off.  bound: the GPU
 * backend has just enabled the activity kinds (t_enabled: trace clock taken
 * before), window 0 is open; ticker_start/next_ns/tick: the gpuprof-flush
 * thread anchors the schedule, sleeps until the next edge (CLOCK_MONOTONIC
 * ns, UINT64_MAX none) and performs due edges (inside gps_enter/gps_leave);
 * final: the final flush closes the open window (before its forced flush of
 * the backend). */
#ifndef GPS_WINDOW_H
#define GPS_WINDOW_H

#include <stdint.h>

#include "gp_trace.h"

int gps_window_enabled(void);
void gps_window_bound(uint64_t t_enabled);
void gps_window_ticker_start(uint64_t now_mono);
uint64_t gps_window_next_ns(void);
void gps_window_tick(uint64_t now_mono);
void gps_window_final(void);
/* CUDA is tearing a context down (resource callback): no edge toggles the
 * activity kinds any more; waits (bounded) for an edge in progress. */
void gps_window_cuda_teardown(void);
void gps_window_after_fork_child(void);
/* Emits one GP_REC_WINDOW {start, end} (start clamped to the trace start). */
void gps_window_emit(gp_recorder *rec, uint64_t start, uint64_t end);

#endif
