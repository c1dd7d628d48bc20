/* gps_service.c — the lifecycle shared by the shim's service threads
 * (gpuprof-flush in features/gps_ticker.c, gpuprof-nvml in nvidia/gps_nvml.c,
 * gpuprof-pm in nvidia/gps_pmsampling.c): a CLOCK_MONOTONIC condvar made on
 * first start, a detached thread created with every signal blocked (the mask
 * is inherited: the job's signals are not ours), the NONE -> RUNNING ->
 * STOPPING states
 * with an `exited` flag, a bounded stop (the thread may be inside CUPTI or
 * NVML: never hang the job's exit on it), and the fork child's fresh lock
 * and condvar (the thread is the parent's; the lock may have been held by
 * it).  What each thread does, and any state of its own, stays in its file. */
#include <errno.h>
#include <signal.h>

#include "core/gps_service.h"

static int init_cond(struct gps_service *svc)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	svc->cond_ok = pthread_cond_init(&svc->cond, &ca) == 0;
	pthread_condattr_destroy(&ca);
	return svc->cond_ok;
}

static void mono_ns_to_timespec(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
}

/* the thread's entry: named first, then its work; `exited` is what a
 * bounded stop waits for */
static void *service_main(void *arg)
{
	struct gps_service *svc = arg;
	pthread_setname_np(pthread_self(), svc->name);
	svc->main(svc);
	pthread_mutex_lock(&svc->lock);
	svc->exited = 1;
	pthread_cond_broadcast(&svc->cond);
	pthread_mutex_unlock(&svc->lock);
	return NULL;
}

enum gps_service_start gps_service_start_locked(struct gps_service *svc,
					       void (*main_fn)(struct gps_service *), size_t stack_bytes)
{
	if (!svc->cond_ok && !init_cond(svc))
		return GPS_SERVICE_NO_COND;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: the job's signals are not ours */
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, stack_bytes);
	pthread_t th;
	svc->main = main_fn;
	svc->state = GPS_SERVICE_RUNNING;
	svc->exited = 0;
	int rc = pthread_create(&th, &at, service_main, svc);
	if (rc != 0)
		svc->state = GPS_SERVICE_NONE;
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? GPS_SERVICE_STARTED : GPS_SERVICE_NO_THREAD;
}

int gps_service_stop(struct gps_service *svc, uint32_t timeout_ms)
{
	pthread_mutex_lock(&svc->lock);
	if (svc->state == GPS_SERVICE_RUNNING) {
		svc->state = GPS_SERVICE_STOPPING;
		pthread_cond_broadcast(&svc->cond);
		struct timespec dl;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += timeout_ms / 1000;
		dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		int rc = 0;
		while (!svc->exited && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&svc->cond, &svc->lock, &dl);
	}
	int gone = svc->state == GPS_SERVICE_NONE || svc->exited;
	pthread_mutex_unlock(&svc->lock);
	return gone;
}

int gps_service_wait(struct gps_service *svc, uint64_t deadline_mono_ns)
{
	struct timespec dl;
	mono_ns_to_timespec(deadline_mono_ns, &dl);
	return pthread_cond_timedwait(&svc->cond, &svc->lock, &dl);
}

int gps_service_sleep_until(struct gps_service *svc, uint64_t deadline_mono_ns)
{
	struct timespec dl;
	mono_ns_to_timespec(deadline_mono_ns, &dl);
	int rc = 0;
	while (svc->state == GPS_SERVICE_RUNNING && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&svc->cond, &svc->lock, &dl);
	return svc->state == GPS_SERVICE_RUNNING;
}

void gps_service_after_fork_child(struct gps_service *svc)
{
	pthread_mutex_init(&svc->lock, NULL);
	if (svc->cond_ok)
		init_cond(svc);
	svc->state = GPS_SERVICE_NONE;
	svc->exited = 0;
}
