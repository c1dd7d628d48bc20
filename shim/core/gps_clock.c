/* gps_clock.c — the trace clock, read through the TSC when that is safe.
 *
 * Every traced API call reads the clock twice (enter and exit), and CUPTI
 * takes its own timestamps through the shim's timestamp callback.  On the
 * H200 machine a vDSO clock_gettime(CLOCK_MONOTONIC) costs 34-41 ns and a
 * bare rdtsc 18-21 ns (bench/shim/clock_cost, `scripts/gpu-session.sh clock`).
 *
 * CLOCK_MONOTONIC stays the trace clock: every process of a job, CUPTI and
 * the tools agree on it.  What changes is how it is read.  ns = ns0 +
 * (tsc - tsc0) * mult / 2^32, where
 *  - the rate is measured against CLOCK_MONOTONIC on the flush thread
 *    (gps_ticker.c): first after CALIBRATE_NS, then at every tick over the
 *    last RATE_WINDOW_NS to 2 x RATE_WINDOW_NS, so it follows NTP's changes
 *    of CLOCK_MONOTONIC's rate;
 *  - each tick re-anchors the line where it is now (no step) and steers any
 *    error against CLOCK_MONOTONIC out over the next SLEW_NS, or over twice
 *    the time since the last tick when that is longer (a longer flush period
 *    would otherwise overshoot: the loop is stable for any period), so the
 *    two never drift apart, and the clock never goes back (its slope stays
 *    between half and one and a half times the rate).  Only when it is
 *    behind by more than MAX_BEHIND_NS does it jump, forward;
 *  - a TSC that went back (a reset, a restored VM) switches it off for
 *    good, with one line.
 * Until the first calibration, in a process without the flush thread (a
 * fork child starts over: its first tick switches the TSC on again), and
 * wherever the TSC is not used, it is clock_gettime as before.
 *
 * Used only on x86-64 when the kernel's own clocksource is the TSC and the
 * CPU says the TSC is invariant (CPUID 0x80000007 EDX bit 8, /proc/cpuinfo's
 * nonstop_tsc): then the kernel vouches for it being synchronised across
 * CPUs.  GPUPROF_CLOCK=monotonic never uses it; GPUPROF_CLOCK=tsc skips the
 * clocksource check (a VM on kvm-clock whose TSC is still invariant; the
 * tests).
 *
 * One writer (the thread that runs init, then the flush thread), many
 * readers: the parameters are published under a sequence count. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_clock.h"
#include "core/gps_log.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

struct gps_tsc_clock gps_tsc;

#define CALIBRATE_NS 200000000ull   /* first rate after 0.2 s */
#define RETUNE_NS 250000000ull      /* at most 4 retunes a second */
#define SLEW_NS 1000000000ll        /* an error is steered out over >= 1 s */
#define MAX_BEHIND_NS 1000000ll     /* further behind than 1 ms: jump */
#define RATE_WINDOW_NS 8000000000ull /* the rate: over the last 8..16 s */

/* Owned by the writer (init, then the flush thread). */
static struct {
	int eligible;                 /* TSC usable here */
	uint64_t base_tsc, base_ns;   /* the rate's base pair */
	uint64_t mid_tsc, mid_ns;     /* the next base, RATE_WINDOW_NS later */
	uint64_t last_ns;             /* CLOCK_MONOTONIC at the last retune */
} w;
/* parameter sets published (the first switches the TSC on): the trace's
 * counter gpuprof.clock_tsc_updates says whether and how it ran */
static _Atomic uint64_t n_published;

uint64_t gps_clock_tsc_updates(void) { return atomic_load_explicit(&n_published, memory_order_relaxed); }

int gps_tsc_retune(const struct gps_tsc_params *cur, uint64_t rate, uint64_t tsc, uint64_t mono,
		   uint64_t since_last_ns, struct gps_tsc_params *out)
{
	uint64_t now = gps_tsc_to_ns(cur, tsc);
	int64_t err = (int64_t)(now - mono); /* > 0: ahead of CLOCK_MONOTONIC */
	if (err < -MAX_BEHIND_NS) {
		*out = (struct gps_tsc_params){.tsc0 = tsc, .ns0 = mono, .mult = rate};
		return 1;
	}
	/* The slope set now runs until the next tick, about since_last_ns
	 * away: steering over twice that removes half the error per tick
	 * whatever the period (over less, a long period would overshoot). */
	int64_t slew = SLEW_NS;
	if (since_last_ns < (uint64_t)INT64_MAX / 4 && (int64_t)(2 * since_last_ns) > slew)
		slew = (int64_t)(2 * since_last_ns);
	if (err > slew / 2)
		err = slew / 2;
	if (err < -slew / 2)
		err = -slew / 2;
	__int128 adj = (__int128)rate * err / slew;
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

/* The start of a small (sysfs) file, NUL-terminated. */
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

/* Invariant TSC: CPUID 0x80000007 EDX bit 8 (what the kernel shows as
 * nonstop_tsc; it implies constant_tsc).  No /proc/cpuinfo read in every
 * traced process's constructor. */
int gps_cpu_has_invariant_tsc(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
		return 0;
	return (d >> 8) & 1;
}

static int clocksource_is_tsc(void)
{
	char buf[64];
	return read_head("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf, sizeof buf) >= 3 &&
	       (!strcmp(buf, "tsc") || !strcmp(buf, "tsc\n"));
}

void gps_clock_init(enum gp_clock_mode mode)
{
	if (mode == GP_CLOCK_MODE_MONOTONIC)
		return;
	if ((mode != GP_CLOCK_MODE_TSC && !clocksource_is_tsc()) || !gps_cpu_has_invariant_tsc())
		return;
	w.eligible = 1;
	read_pair(&w.base_tsc, &w.base_ns);
	w.mid_ns = 0;
}

/* For good, with one line; one step back by whatever the error was. */
static void give_up(const char *why)
{
	w.eligible = 0;
	atomic_store_explicit(&gps_tsc.on, 0, memory_order_relaxed);
	gps_info("%s; timestamps from clock_gettime from now on", why);
}

void gps_clock_tick(void)
{
	if (!w.eligible)
		return;
	uint64_t tsc, mono;
	read_pair(&tsc, &mono);
	int on = atomic_load_explicit(&gps_tsc.on, memory_order_relaxed);
	struct gps_tsc_params cur = {0};
	if (on)
		current(&cur);
	if (tsc < w.base_tsc || (on && tsc < cur.tsc0)) {
		give_up("the TSC went back (reset, or a restored VM)");
		return;
	}
	if (tsc == w.base_tsc || mono <= w.base_ns) /* no time passed: nothing to learn */
		return;
	if (!on && mono - w.base_ns < CALIBRATE_NS)
		return;
	if (on && mono - w.last_ns < RETUNE_NS)
		return;
	unsigned __int128 q = ((unsigned __int128)(mono - w.base_ns) << 32) / (tsc - w.base_tsc);
	/* 100 MHz .. 20 GHz, else the TSC is not what it claimed to be */
	if (q > (10ull << 32) || q < (1ull << 32) / 20) {
		give_up("the TSC runs at an implausible rate");
		return;
	}
	uint64_t rate = (uint64_t)q;
	/* the base moves on so the rate covers the last 8..16 s */
	if (!w.mid_ns && mono - w.base_ns >= RATE_WINDOW_NS) {
		w.mid_tsc = tsc;
		w.mid_ns = mono;
	} else if (w.mid_ns && mono - w.mid_ns >= RATE_WINDOW_NS) {
		w.base_tsc = w.mid_tsc;
		w.base_ns = w.mid_ns;
		w.mid_tsc = tsc;
		w.mid_ns = mono;
	}
	uint64_t since_last = on ? mono - w.last_ns : 0;
	w.last_ns = mono;
	struct gps_tsc_params p;
	if (!on) {
		/* switch over where CLOCK_MONOTONIC is now: no step */
		p = (struct gps_tsc_params){.tsc0 = tsc, .ns0 = mono, .mult = rate};
		publish(&p);
		atomic_store_explicit(&gps_tsc.on, 1, memory_order_release);
		return;
	}
	gps_tsc_retune(&cur, rate, tsc, mono, since_last, &p);
	publish(&p);
}

void gps_clock_after_fork_child(void)
{
	/* The parent's flush thread may have been inside publish(): seq odd,
	 * the parameters half written.  seq is made even first (else every
	 * read here would spin for ever), and the child reads clock_gettime
	 * until a flush thread of its own switches the TSC on again from a
	 * fresh pair (the base pair stays valid: one TSC per machine).  A
	 * child that never gets one would otherwise run on the parent's line
	 * uncorrected for the rest of its life. */
	atomic_store_explicit(&gps_tsc.on, 0, memory_order_relaxed);
	atomic_store_explicit(&gps_tsc.seq, 0, memory_order_relaxed);
	atomic_store_explicit(&n_published, 0, memory_order_relaxed);
}
#else
int gps_cpu_has_invariant_tsc(void) { return 0; }
void gps_clock_init(enum gp_clock_mode mode) { (void)mode; }
void gps_clock_tick(void) {}
void gps_clock_after_fork_child(void) {}
#endif
