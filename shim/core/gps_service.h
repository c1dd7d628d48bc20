/* gps_service.h — service threads (core/gps_service.c): the lifecycle the
 * gpuprof-flush, gpuprof-nvml and gpuprof-pm threads share.  A static one is
 * GPS_SERVICE_INIT("thread-name").  lock guards state/exited/the owner's own
 * fields; cond (CLOCK_MONOTONIC) wakes the thread on stop.
 * start_locked: lock held, state NONE; makes cond on first use, creates the
 * detached thread (all signals blocked, stack_bytes) which names itself,
 * runs main_fn (called and returning without lock) and then sets exited;
 * GPS_SERVICE_STARTED, _NO_COND (nothing tried) or _NO_THREAD.
 * stop: RUNNING -> STOPPING, waits at most timeout_ms for exited; returns
 * 1 when no thread runs any more, 0 when it gave up waiting.
 * wait: one timed wait (lock held) until a CLOCK_MONOTONIC ns deadline,
 * pthread_cond_timedwait's result; sleep_until: waits until the deadline
 * or a stop, returns whether still RUNNING.  after_fork_child: fresh lock
 * and cond, state NONE. */
#ifndef GPS_SERVICE_H
#define GPS_SERVICE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum gps_service_state { GPS_SERVICE_NONE = 0, GPS_SERVICE_RUNNING = 1, GPS_SERVICE_STOPPING = 2 };
enum gps_service_start { GPS_SERVICE_STARTED = 0, GPS_SERVICE_NO_COND = -1, GPS_SERVICE_NO_THREAD = -2 };
struct gps_service {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int cond_ok;
	enum gps_service_state state;
	int exited;
	const char *name;
	void (*main)(struct gps_service *svc);
};
#define GPS_SERVICE_INIT(thread_name) {.lock = PTHREAD_MUTEX_INITIALIZER, .name = (thread_name)}
enum gps_service_start gps_service_start_locked(struct gps_service *svc,
					       void (*main_fn)(struct gps_service *), size_t stack_bytes);
int gps_service_stop(struct gps_service *svc, uint32_t timeout_ms);
int gps_service_wait(struct gps_service *svc, uint64_t deadline_mono_ns);
int gps_service_sleep_until(struct gps_service *svc, uint64_t deadline_mono_ns);
void gps_service_after_fork_child(struct gps_service *svc);

#endif
