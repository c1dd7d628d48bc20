/* gps_activity.h — CUPTI activity buffers (nvidia/gps_activity.c): handed
 * out from a small bounded free list, decoded into trace records on the
 * thread CUPTI delivers them on.  fork_prepare/parent/child: buf_lock held
 * across fork (never held across a libprof call). */
#ifndef GPS_ACTIVITY_H
#define GPS_ACTIVITY_H

#include <stdint.h>

#include "gp_trace.h"

/* At bind: our buffer callbacks are CUPTI's (cuptiActivityRegisterCallbacks). */
void gps_activity_register(void);
/* Activity API mode: drop driver API records nested in a runtime record of
 * the same thread (set at bind time for the default API set). */
void gps_activity_skip_nested_driver(int on);
/* Added to CUPTI's timestamps: CUPTI's clock to the trace clock when CUPTI
 * refused the timestamp callback after the trace began (0 otherwise). */
void gps_activity_set_gpu_offset(int64_t offset_ns);
/* DEVICE records that came before the process had a trace (they alone do
 * not make one) go into `rec` now; a no-op when there are none or rec is
 * NULL.  Called where a trace has just been made, inside gps_enter. */
void gps_activity_emit_kept(gp_recorder *rec);
/* API callbacks switched on again while the job runs (a capture range, the
 * flight recorder's API records following GPU activity), at trace time
 * t_on, before GPU activity.  A call that entered while they were still off
 * has no record, yet the GPU operation it makes after activity is on would:
 * such operations (start >= t_on, correlation id below that of the first call
 * recorded since, gps_activity_api_first) are dropped, so that no GPU
 * operation is kept without the call that made it. */
void gps_activity_api_on(uint64_t t_on);
/* The first call recorded after gps_activity_api_on (its enter callback). */
void gps_activity_api_first(uint32_t correlation_id);
void gps_activity_fork_prepare(void);
void gps_activity_fork_parent(void);
void gps_activity_after_fork_child(void);

#endif
