/* gps_clock.c — the trace clock, read through the TSC when that is safe.
 *
 * Every traced API call reads the clock twice (enter and exit), and CUPTI
 * takes its own timestamps through the shim's timestamp callback.  On the
 * H200 machine a vDSO clock_gettime(CLOCK_MONOTONIC) costs 41 ns and a bare
 * rdtsc 21 ns (bench/shim/clock_cost, `scripts/gpu-session.sh clock`).
 *
 * CLOCK_MONOTONIC stays the trace clock: every process of a job, CUPTI and
 * the tools agree on it.  What changes is how it is read.  ns = ns0 +
 * (tsc - tsc0) * mult / 2^32, where
 *  - the rate is measured against CLOCK_MONOTONIC on the flush thread
 *    (gps_ticker.c): first after CALIBRATE_NS, then refined at every tick
 *    from the same base pair, so it gets more exact as the run goes on;
 *  - each tick re-anchors the line where it is now (no step) and steers any
 *    error against CLOCK_MONOTONIC out over the next SLEW_NS, so the two
 *    never drift apart, and the clock never goes back (its slope stays
 *    between half and one and a half times the rate).  Only when it is
 *    behind by more than MAX_BEHIND_NS does it jump, forward.
 * Until the first calibration, and wherever the TSC is not used, it is
 * clock_gettime as before.
 *
 * Used only on x86-64 when the kernel's own clocksource is the TSC and the
 * CPU says the TSC is invariant (constant_tsc, nonstop_tsc): then the kernel
 * vouches for it being synchronised across CPUs.  GPUPROF_CLOCK=monotonic
 * never uses it; GPUPROF_CLOCK=tsc skips the clocksource check (a VM on
 * kvm-clock whose TSC is still invariant; the tests).
 *
 * One writer (the thread that runs init, then the flush thread), many
 * readers: the parameters are published under a sequence count. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "gps.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

struct gps_tsc_clock gps_tsc;

#define CALIBRATE_NS 200000000ull   /* first rate after 0.2 s */
#define RETUNE_NS 250000000ull      /* at most 4 retunes a second */
#define SLEW_NS 1000000000ll        /* an error is steered out over 1 s */
#define MAX_BEHIND_NS 1000000ll     /* further behind than 1 ms: jump */

/* Owned by the writer (init, then the flush thread). */
static struct {
	int eligible;                 /* TSC usable here */
	uint64_t base_tsc, base_ns;   /* first pair: the rate's base */
	uint64_t last_ns;             /* CLOCK_MONOTONIC at the last retune */
	uint64_t rate;                /* measured ns per tick << 32 */
} w;
/* parameter sets published (the first switches the TSC on): the trace's
 * counter gpuprof.clock_tsc_updates says whether and how it ran */
static _Atomic uint64_t n_published;

uint64_t gps_clock_tsc_updates(void) { return atomic_load_explicit(&n_published, memory_order_relaxed); }

int gps_tsc_retune(const struct gps_tsc_params *cur, uint64_t rate, uint64_t tsc, uint64_t mono,
		   struct gps_tsc_params *out)
{
	uint64_t now = gps_tsc_to_ns(cur, tsc);
	int64_t err = (int64_t)(now - mono); /* > 0: ahead of CLOCK_MONOTONIC */
	if (err < -MAX_BEHIND_NS) {
		*out = (struct gps_tsc_params){.tsc0 = tsc, .ns0 = mono, .mult = rate};
		return 1;
	}
	if (err > SLEW_NS / 2)
		err = SLEW_NS / 2;
	if (err < -SLEW_NS / 2)
		err = -SLEW_NS / 2;
	__int128 adj = (__int128)rate * err / SLEW_NS;
	*out = (struct gps_tsc_params){.tsc0 = tsc, .ns0 = now, .mult = (uint64_t)((__int128)rate - adj)};
	return 0;
}

#if defined(__x86_64__)
static void publish(const struct gps_tsc_params *p)
{
	uint32_t s = atomic_load_explicit(&gps_tsc.seq, memory_order_relaxed);
	atomic_store_explicit(&gps_tsc.seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&gps_tsc.tsc0, p->tsc0, memory_order_relaxed);
	atomic_store_explicit(&gps_tsc.ns0, p->ns0, memory_order_relaxed);
	atomic_store_explicit(&gps_tsc.mult, p->mult, memory_order_relaxed);
	atomic_store_explicit(&gps_tsc.seq, s + 2, memory_order_release);
	atomic_fetch_add_explicit(&n_published, 1, memory_order_relaxed);
}

static void current(struct gps_tsc_params *p)
{
	/* the writer's own view: no other writer, no retry needed */
	p->tsc0 = atomic_load_explicit(&gps_tsc.tsc0, memory_order_relaxed);
	p->ns0 = atomic_load_explicit(&gps_tsc.ns0, memory_order_relaxed);
	p->mult = atomic_load_explicit(&gps_tsc.mult, memory_order_relaxed);
}

/* One (TSC, CLOCK_MONOTONIC) pair: the best bracketed of a few tries (a
 * preemption between the reads would skew it). */
static void read_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t1 = __rdtsc();
		uint64_t m = gps_sys_mono_ns();
		uint64_t t2 = __rdtsc();
		if (t2 >= t1 && t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1 + (t2 - t1) / 2;
			*mono = m;
		}
	}
	if (best == UINT64_MAX) { /* cannot happen on an invariant TSC */
		*tsc = __rdtsc();
		*mono = gps_sys_mono_ns();
	}
}

/* The start of a small (proc/sys) file, NUL-terminated; procfs may hand
 * it out a page per read(). */
static ssize_t read_head(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	while (n < size - 1) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

/* The first line of /proc/cpuinfo's "flags" has both words. */
static int cpu_has_invariant_tsc(void)
{
	char buf[16384];
	if (read_head("/proc/cpuinfo", buf, sizeof buf) <= 0)
		return 0;
	char *flags = strstr(buf, "\nflags");
	if (!flags)
		return 0;
	char *eol = strchr(flags + 1, '\n');
	if (eol)
		*eol = 0;
	return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
}

static int clocksource_is_tsc(void)
{
	char buf[64];
	return read_head("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf, sizeof buf) >= 3 &&
	       (!strcmp(buf, "tsc") || !strcmp(buf, "tsc\n"));
}

void gps_clock_init(int mode)
{
	if (mode == GPS_CLOCK_MONOTONIC)
		return;
	if (!cpu_has_invariant_tsc() || (mode != GPS_CLOCK_TSC && !clocksource_is_tsc()))
		return;
	w.eligible = 1;
	read_pair(&w.base_tsc, &w.base_ns);
}

void gps_clock_tick(void)
{
	if (!w.eligible)
		return;
	uint64_t tsc, mono;
	read_pair(&tsc, &mono);
	if (tsc <= w.base_tsc || mono <= w.base_ns) /* no time passed: nothing to learn */
		return;
	int on = atomic_load_explicit(&gps_tsc.on, memory_order_relaxed);
	if (!on && mono - w.base_ns < CALIBRATE_NS)
		return;
	if (on && mono - w.last_ns < RETUNE_NS)
		return;
	uint64_t rate = (uint64_t)(((unsigned __int128)(mono - w.base_ns) << 32) / (tsc - w.base_tsc));
	/* 100 MHz .. 20 GHz, else the TSC is not what it claimed to be */
	if (rate > (10ull << 32) || rate < (1ull << 32) / 20) {
		w.eligible = 0;
		atomic_store_explicit(&gps_tsc.on, 0, memory_order_relaxed);
		gps_log(0, "the TSC runs at an implausible rate; timestamps from clock_gettime");
		return;
	}
	w.rate = rate;
	w.last_ns = mono;
	struct gps_tsc_params p;
	if (!on) {
		/* switch over where CLOCK_MONOTONIC is now: no step */
		p = (struct gps_tsc_params){.tsc0 = tsc, .ns0 = mono, .mult = rate};
		publish(&p);
		atomic_store_explicit(&gps_tsc.on, 1, memory_order_release);
		return;
	}
	struct gps_tsc_params cur;
	current(&cur);
	gps_tsc_retune(&cur, rate, tsc, mono, &p);
	publish(&p);
}

void gps_clock_after_fork_child(void)
{
	/* Nobody may retune in this process until it has a flush thread of
	 * its own: leave the slope at the measured rate, without the
	 * parent's correction, continuous where the line is now. */
	if (!atomic_load_explicit(&gps_tsc.on, memory_order_relaxed) || !w.rate)
		return;
	struct gps_tsc_params cur, p;
	current(&cur);
	uint64_t tsc = __rdtsc();
	p = (struct gps_tsc_params){.tsc0 = tsc, .ns0 = gps_tsc_to_ns(&cur, tsc), .mult = w.rate};
	atomic_store_explicit(&gps_tsc.seq, 0, memory_order_relaxed);
	publish(&p);
	atomic_store_explicit(&n_published, 1, memory_order_relaxed);
}
#else
uint64_t gps_clock_tsc_updates(void) { return 0; }
void gps_clock_init(int mode) { (void)mode; }
void gps_clock_tick(void) {}
void gps_clock_after_fork_child(void) {}
#endif
