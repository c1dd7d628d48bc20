/* gps_clock.h — the trace clock: CLOCK_MONOTONIC, read through the TSC once
 * calibrated where that is safe (GPUPROF_CLOCK, core/gps_clock.c). */
#ifndef GPS_CLOCK_H
#define GPS_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "gp_settings.h"

static inline uint64_t gps_sys_mono_ns(void)
{
	/* vDSO: no system call */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC read through the TSC (GPUPROF_CLOCK).
 * ns = ns0 + (tsc - tsc0) * mult / 2^32, published under seq (odd while
 * the one writer updates). */
struct gps_tsc_params { uint64_t tsc0, ns0, mult; };
struct gps_tsc_clock {
	_Atomic uint32_t seq;
	atomic_int on; /* 0 until calibrated, and wherever the TSC is not used */
	_Atomic uint64_t tsc0, ns0, mult;
};
extern struct gps_tsc_clock gps_tsc;
static inline uint64_t gps_tsc_to_ns(const struct gps_tsc_params *p, uint64_t tsc)
{
	/* a TSC read a little before the anchor (another CPU, out-of-order
	 * execution) counts as the anchor: never before ns0 */
	uint64_t d = tsc > p->tsc0 ? tsc - p->tsc0 : 0;
	return p->ns0 + (uint64_t)(((unsigned __int128)d * p->mult) >> 32);
}
/* New parameters at (tsc, mono): continuous with cur at tsc, slope rate
 * corrected to steer the error against mono out over max(1 s, twice
 * since_last_ns, the time since the previous retune) (or, over 1 ms
 * behind, a jump forward to mono: returns 1). */
int gps_tsc_retune(const struct gps_tsc_params *cur, uint64_t rate, uint64_t tsc, uint64_t mono,
		   uint64_t since_last_ns, struct gps_tsc_params *out);
int gps_cpu_has_invariant_tsc(void);    /* CPUID: the TSC runs at one rate, always */
void gps_clock_init(enum gp_clock_mode mode); /* the lifecycle's init, before any thread */
void gps_clock_tick(void);              /* the flush thread, every wake-up */
void gps_clock_after_fork_child(void);
uint64_t gps_clock_tsc_updates(void);   /* 0: the TSC was never used */

#if defined(__x86_64__)
static inline uint64_t gps_tsc_ns(void)
{
	uint32_t s;
	struct gps_tsc_params p;
	int tries = 0;
	do {
		/* a writer stopped mid-update (preempted; a SCHED_FIFO reader
		 * on its CPU) must not stall the job: the system clock then */
		if (__builtin_expect(++tries > 1000, 0))
			return gps_sys_mono_ns();
		s = atomic_load_explicit(&gps_tsc.seq, memory_order_acquire);
		p.tsc0 = atomic_load_explicit(&gps_tsc.tsc0, memory_order_relaxed);
		p.ns0 = atomic_load_explicit(&gps_tsc.ns0, memory_order_relaxed);
		p.mult = atomic_load_explicit(&gps_tsc.mult, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
	} while ((s & 1) || s != atomic_load_explicit(&gps_tsc.seq, memory_order_relaxed));
	return gps_tsc_to_ns(&p, __builtin_ia32_rdtsc());
}
#endif

/* The trace clock's CLOCK_MONOTONIC, through the TSC once calibrated. */
static inline uint64_t gps_mono_ns(void)
{
#if defined(__x86_64__)
	/* acquire: pairs with the release that switched it on after the
	 * first parameters were published */
	if (atomic_load_explicit(&gps_tsc.on, memory_order_acquire))
		return gps_tsc_ns();
#endif
	return gps_sys_mono_ns();
}
#endif
