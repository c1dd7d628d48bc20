/* gps_ticker.h — the flush ticker (features/gps_ticker.c): a thread
 * "gpuprof-flush" asking the GPU backend for its completed activity records
 * every flush interval while it is bound and a trace exists, so partially
 * filled activity buffers reach the file even when the job is SIGKILLed; the
 * same thread performs the GPU-window edges, the status file writes and the
 * TSC clock's calibration.  start: idempotent; stop: before the final flush,
 * bounded wait; emit_stats: the final flush's cost counters. */
#ifndef GPS_TICKER_H
#define GPS_TICKER_H

#include "gp_trace.h"

void gps_ticker_start(void);
void gps_ticker_stop(void);
void gps_ticker_after_fork_child(void);
void gps_ticker_emit_stats(gp_recorder *rec);

#endif
