/* gps_cupti.h — the CUPTI session (nvidia/gps_cupti.c): binding (load,
 * subscribe, timestamps, activity kinds, API callbacks), the API callback
 * itself, and what vendor-neutral code asks of the GPU backend (registered
 * as core/gps_core.h's gps_gpu_ops at bind). */
#ifndef GPS_CUPTI_H
#define GPS_CUPTI_H

/* The lifecycle's hook, called from the resource callback of every CUDA
 * context creation (creating thread, inside gps_enter), first thing. */
void gps_cupti_set_context_hook(void (*fn)(void));
/* called once, right after CUPTI is bound (libcupti loaded, subscribed) */
void gps_cupti_set_bound_hook(void (*fn)(void));
/* Binds CUPTI (dlopen+dlsym), subscribes, enables callbacks and activity.
 * Idempotent and thread-safe; returns 0 when tracing through CUPTI (then
 * gps_gpu_bound() says 1). */
int gps_cupti_start(const char *why);
/* Final: flush CUPTI activity buffers (forced).  Safe when never bound. */
void gps_cupti_flush(void);
/* Final: no more API callbacks (unsubscribe). */
void gps_cupti_stop(void);
void gps_cupti_after_fork_child(void);
/* In a fork child: whether the CUPTI session is the parent's (it was bound
 * before the fork).  Its buffers then hold the parent's records until the
 * child makes a trace of its own (nvidia/gps_activity.c). */
int gps_cupti_session_inherited(void);

#endif
