/* test_shim_unit.c — the shim's pure pieces, without CUPTI:
 * the GPUPROF_* environment read into the config (the settings' syntax
 * itself: test_settings.c), output-pattern expansion, the by-name choice of
 * the default API callback set, the TSC clock (gps_clock.c), the rolling
 * median of the step rule (gps_rolling.c, against a sort of the window), the
 * drop rule's windows (gps_drop.c) and
 * which NVTX names are steps (gps_steps.c; the flight recorder's hooks
 * stubbed here), the step finder's period (gps_period.c) on made-up
 * event sequences, and the live table (gps_livemem.c: against a plain
 * list of what is live; gp_emit stubbed to collect its records). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_clock.h"
#include "core/gps_config.h"
#include "core/gps_log.h"
#include "features/gps_drop.h"
#include "features/gps_flight.h"
#include "features/gps_livemem.h"
#include "features/gps_period.h"
#include "features/gps_rolling.h"
#include "features/gps_stepfind.h"
#include "features/gps_steps.h"
#include "nvidia/gps_cbid.h"
#include "unit_check.h"

static void test_pattern(void)
{
	char out[256];
	time_t t = 0; /* 1970-01-01 00:00:00 UTC */
	setenv("TZ", "UTC", 1);
	CHECK(gps_expand_pattern("gpuprof-%h-%p.gpuprof", out, sizeof out, 1234, "node7", -1, t) == 0 &&
		      !strcmp(out, "gpuprof-node7-1234.gpuprof"), "%s", out);
	CHECK(gps_expand_pattern("r%r_%t_%%_%q", out, sizeof out, 1, "h", 3, t) == 0 &&
		      !strcmp(out, "r3_19700101-000000_%_%q"), "%s", out);
	CHECK(gps_expand_pattern("r%r", out, sizeof out, 1, "h", -1, t) == 0 && !strcmp(out, "r0"),
	      "no rank -> %s", out);
	CHECK(gps_expand_pattern("%h%h%h", out, 8, 1, "abcdef", 0, t) != 0, "overflow not reported");
}

static void test_rank(void)
{
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
	CHECK(gps_env_rank() == -1, "no rank");
	setenv("LOCAL_RANK", "2", 1);
	CHECK(gps_env_rank() == 2, "LOCAL_RANK");
	setenv("RANK", "5", 1);
	CHECK(gps_env_rank() == 5, "RANK wins");
	setenv("RANK", "x", 1);
	CHECK(gps_env_rank() == -1, "bad RANK");
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
}

static void test_config(void)
{
	setenv("GPUPROF_API", "all", 1);
	setenv("GPUPROF_API_MODE", "activity", 1);
	setenv("GPUPROF_ACTIVITY", "kernel", 1);
	setenv("GPUPROF_FLUSH_MS", "250", 1);
	setenv("GPUPROF_BUFFER_SIZE", "1M", 1);
	setenv("GPUPROF_OUTPUT", "/tmp/x-%p", 1);
	setenv("GPUPROF_FOLLOW_EXEC", "0", 1);
	setenv("GPUPROF_QUIET", "1", 1);
	struct gps_config c;
	gps_config_load(&c);
	CHECK(c.api_set == GP_API_SET_ALL && c.api_mode == GP_API_MODE_ACTIVITY, "api %d mode %d", c.api_set, c.api_mode);
	CHECK(c.activity == GP_ACT_KERNEL && c.flush_ms == 250 && c.buffer_size == 1u << 20,
	      "activity %x flush %u buf %zu", c.activity, c.flush_ms, c.buffer_size);
	CHECK(!strcmp(c.output, "/tmp/x-%p") && c.follow_exec == 0 && c.quiet == 1 && c.enabled == 1,
	      "output %s follow %d", c.output, c.follow_exec);
	/* bad values fall back to the defaults */
	setenv("GPUPROF_API", "some", 1);
	setenv("GPUPROF_FLUSH_MS", "-3", 1);
	setenv("GPUPROF_BUFFER_SIZE", "1", 1);
	unsetenv("GPUPROF_OUTPUT");
	setenv("GPUPROF_ENABLE", "0", 1);
	gps_config_load(&c);
	CHECK(c.stacks == GP_STACKS_OFF && c.unwind == GP_UNWIND_AUTO, "stacks off by default");
	struct { const char *v; enum gp_stacks_mode mode; } stk[] = {{"1", GP_STACKS_SAMPLED}, {"sampled", GP_STACKS_SAMPLED},
		{"ALL", GP_STACKS_ALL}, {"0", GP_STACKS_OFF}, {"off", GP_STACKS_OFF}, {"everything", GP_STACKS_OFF}};
	for (size_t i = 0; i < sizeof stk / sizeof stk[0]; i++) {
		setenv("GPUPROF_STACKS", stk[i].v, 1);
		gps_config_load(&c);
		CHECK(c.stacks == stk[i].mode, "GPUPROF_STACKS=%s -> %d", stk[i].v, c.stacks);
	}
	unsetenv("GPUPROF_STACKS");
	setenv("GPUPROF_UNWIND", "glibc", 1);
	gps_config_load(&c);
	CHECK(c.unwind == GP_UNWIND_GLIBC && !c.unwind_lib[0], "GPUPROF_UNWIND=glibc");
	setenv("GPUPROF_UNWIND", "/opt/lib/libunwind.so.8", 1);
	gps_config_load(&c);
	CHECK(c.unwind == GP_UNWIND_LIBUNWIND && !strcmp(c.unwind_lib, "/opt/lib/libunwind.so.8"),
	      "GPUPROF_UNWIND=/path -> %d %s", c.unwind, c.unwind_lib);
	setenv("GPUPROF_UNWIND", "frames", 1);
	gps_config_load(&c);
	CHECK(c.unwind == GP_UNWIND_AUTO, "GPUPROF_UNWIND=frames -> auto");
	unsetenv("GPUPROF_UNWIND");
	/* a size past 64 bits, a kind not known: the defaults (the syntax:
	 * test_settings.c) */
	setenv("GPUPROF_RING_SIZE", "99999999999999999999G", 1);
	setenv("GPUPROF_ACTIVITY", "kernel,kernels", 1);
	gps_config_load(&c);
	CHECK(c.ring_size == 0 && c.activity == GP_ACT_DEFAULT, "bad ring %zu / activity %x", c.ring_size, c.activity);
	unsetenv("GPUPROF_RING_SIZE");
	unsetenv("GPUPROF_ACTIVITY");
	gps_config_load(&c);
	CHECK(c.api_set == GP_API_SET_DEFAULT && c.flush_ms == 500 && c.buffer_size == 8u << 20 &&
		      !strcmp(c.output, "gpuprof-%h-%p.gpuprof") && c.enabled == 0,
	      "defaults: api %d flush %u buf %zu out %s enabled %d", c.api_set, c.flush_ms, c.buffer_size,
	      c.output, c.enabled);
}

static void test_describe(void)
{
	struct gps_config c;
	memset(&c, 0, sizeof c);
	c.activity = GP_ACT_DEFAULT;
	c.api_driver = 1;
	char b[512];
	size_t n = gps_config_describe(&c, b, sizeof b);
	const char *want = "activity=kernel,memcpy,memset,peer,device api=default api_mode=callback api_driver=1 stacks=off clock=auto";
	CHECK(!strcmp(b, want) && n == strlen(want), "default: '%s' (%zu)", b, n);
	c.activity = 0;
	c.api_set = GP_API_SET_ALL;
	c.stacks = GP_STACKS_ALL;
	c.win_on_ns = 1000000;
	c.win_period_ns = 10000000;
	c.pm_interval_ns = 5000000;
	gps_config_describe(&c, b, sizeof b);
	CHECK(!strcmp(b, "activity=none api=all api_mode=callback api_driver=1 stacks=all clock=auto "
			 "gpu_window=1000000ns/10000000ns pm_sampling=5000000ns"), "set: '%s'", b);
	/* cut to fit, always terminated, never past n */
	char small[17];
	memset(small, 'X', sizeof small);
	n = gps_config_describe(&c, small, 12);
	CHECK(n == 11 && !strcmp(small, "activity=no") && small[12] == 'X', "cut: '%.12s' %zu", small, n);
	CHECK(gps_config_describe(&c, small, 0) == 0 && small[0] == 'a', "n = 0 writes nothing");
}

static void test_cbid(void)
{
	char clean[64];
	gps_cbid_clean_name("cudaMemcpy_v3020", clean, sizeof clean);
	CHECK(!strcmp(clean, "cudaMemcpy"), "%s", clean);
	gps_cbid_clean_name("cudaLaunchKernel_ptsz_v7000", clean, sizeof clean);
	CHECK(!strcmp(clean, "cudaLaunchKernel_ptsz"), "%s", clean);
	gps_cbid_clean_name("cuMemcpyHtoD_v2", clean, sizeof clean);
	CHECK(!strcmp(clean, "cuMemcpyHtoD_v2"), "driver _v2 kept: %s", clean);
	gps_cbid_clean_name("cudaLaunchKernelExC_v11060", clean, sizeof clean);
	CHECK(!strcmp(clean, "cudaLaunchKernelExC"), "%s", clean);

	static const char *yes_rt[] = {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060",
		"cudaLaunchCooperativeKernel_v9000", "cudaGraphLaunch_v10000", "cudaMemcpy_v3020",
		"cudaMemcpyAsync_ptsz_v7000", "cudaMemcpy2DAsync_v3020", "cudaMemcpyPeerAsync_v4000",
		"cudaMemset3DAsync_v3020", "cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_v3020",
		"cudaEventSynchronize_v3020", "cudaMalloc_v3020", "cudaMallocAsync_v11020",
		"cudaMallocManaged_v6000", "cudaMallocHost_v3020", "cudaFreeHost_v3020",
		"cudaFreeAsync_v11020", "cudaHostAlloc_v3020", "cudaStreamWaitEvent_v3020",
		"__cudaLaunchKernel_v13000"};
	for (size_t i = 0; i < sizeof yes_rt / sizeof yes_rt[0]; i++)
		CHECK(gps_cbid_default(GPS_CB_RUNTIME, yes_rt[i]), "runtime %s should be in the default set", yes_rt[i]);
	static const char *no_rt[] = {"cudaGetDevice_v3020", "cudaGetDeviceCount_v3020",
		"cudaGetLastError_v3020", "cudaFuncGetAttributes_v3020", "cudaEventQuery_v3020",
		"cudaPeekAtLastError_v3020", "cudaGetDeviceProperties_v3020", "cudaStreamQuery_v3020"};
	for (size_t i = 0; i < sizeof no_rt / sizeof no_rt[0]; i++)
		CHECK(!gps_cbid_default(GPS_CB_RUNTIME, no_rt[i]), "runtime %s should not be in the default set", no_rt[i]);
	static const char *yes_drv[] = {"cuLaunchKernel", "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel",
		"cuGraphLaunch", "cuMemcpyHtoD_v2", "cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpy3DPeerAsync",
		"cuMemsetD32Async", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
		"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocManaged", "cuMemFree_v2", "cuMemFreeHost",
		"cuMemHostAlloc", "cuStreamWaitEvent", "cuModuleLoadData", "cuModuleUnload",
		"cuLibraryLoadData", "cuCtxCreate_v2", "cuCtxDestroy_v2", "cuDevicePrimaryCtxRetain"};
	for (size_t i = 0; i < sizeof yes_drv / sizeof yes_drv[0]; i++)
		CHECK(gps_cbid_default(GPS_CB_DRIVER, yes_drv[i]), "driver %s should be in the default set", yes_drv[i]);
	static const char *no_drv[] = {"cuDeviceGetAttribute", "cuCtxGetCurrent", "cuGetProcAddress_v2",
		"cuPointerGetAttribute", "cuFuncGetAttribute", "cuModuleGetFunction", "cuStreamQuery"};
	for (size_t i = 0; i < sizeof no_drv / sizeof no_drv[0]; i++)
		CHECK(!gps_cbid_default(GPS_CB_DRIVER, no_drv[i]), "driver %s should not be in the default set", no_drv[i]);
	CHECK(!gps_cbid_default((enum gps_cb_domain)3, "cudaMemcpy"), "other domains");
	CHECK(!gps_cbid_default(GPS_CB_RUNTIME, NULL) && !gps_cbid_default(GPS_CB_RUNTIME, ""), "empty names");
}

/* GPUPROF_GPU_WINDOW through the config (the syntax: test_settings.c) */
static void test_window(void)
{
	/* test_config's bad values are not this test's business */
	unsetenv("GPUPROF_API");
	unsetenv("GPUPROF_FLUSH_MS");
	unsetenv("GPUPROF_BUFFER_SIZE");
	setenv("GPUPROF_GPU_WINDOW", "1/10", 1);
	struct gps_config c;
	gps_config_load(&c);
	CHECK(c.win_on_ns == 1000000000ull && c.win_period_ns == 10000000000ull, "config 1/10");
	setenv("GPUPROF_GPU_WINDOW", "10/1", 1);
	gps_log_set_level(GPS_LOG_WARN); /* quiet: the error line still prints, it is a warning */
	gps_config_load(&c);
	CHECK(c.win_on_ns == 0 && c.win_period_ns == 0, "bad value leaves window mode off");
	unsetenv("GPUPROF_GPU_WINDOW");
	gps_config_load(&c);
	CHECK(c.win_period_ns == 0, "unset: off");
}

/* GPUPROF_PM_SAMPLING through the config (the syntax: test_settings.c) */
static void test_pm_interval(void)
{
	setenv("GPUPROF_PM_SAMPLING", "500us", 1);
	struct gps_config c;
	gps_config_load(&c);
	CHECK(c.pm_interval_ns == 500000ull, "config 500us");
	setenv("GPUPROF_PM_SAMPLING", "fast", 1);
	gps_config_load(&c);
	CHECK(c.pm_interval_ns == 0, "bad value: off");
	unsetenv("GPUPROF_PM_SAMPLING");
	gps_config_load(&c);
	CHECK(c.pm_interval_ns == 0, "unset: off");
}

/* gps_clock.c: the line's arithmetic, and the steering back onto
 * CLOCK_MONOTONIC (continuous, never backwards, error gone after ~1 s). */
static void test_clock_retune(void)
{
	const uint64_t rate = 1ull << 31; /* 0.5 ns per tick: a 2 GHz TSC */
	const uint64_t sec = 2000000000ull; /* ticks per second */
	struct gps_tsc_params cur = {.tsc0 = 1000, .ns0 = 5000, .mult = rate}, out;
	CHECK(gps_tsc_to_ns(&cur, 999) == 5000, "a TSC before the anchor is the anchor");
	uint64_t tsc = 1000 + sec, now = gps_tsc_to_ns(&cur, tsc);
	CHECK(now == 5000 + 1000000000ull, "1 s of ticks -> %llu", (unsigned long long)now);
	CHECK(gps_tsc_retune(&cur, rate, tsc, now, 500000000ull, &out) == 0 && out.mult == rate && out.ns0 == now &&
		      out.tsc0 == tsc,
	      "no error: same slope, anchored at now");
	static const int64_t errs[] = {1000, -1000, 300000, -500000}; /* ahead > 0, behind < 0 */
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		uint64_t mono = now - (uint64_t)errs[i];
		int jumped = gps_tsc_retune(&cur, rate, tsc, mono, 500000000ull, &out);
		CHECK(!jumped && out.ns0 == now, "error %lld: continuous, no jump", (long long)errs[i]);
		CHECK(errs[i] > 0 ? out.mult < rate : out.mult > rate, "error %lld: slope %llu against %llu",
		      (long long)errs[i], (unsigned long long)out.mult, (unsigned long long)rate);
		int64_t left = (int64_t)(gps_tsc_to_ns(&out, tsc + sec) - (mono + 1000000000ull));
		CHECK(left > -3 && left < 3, "error %lld: %lld ns left after 1 s", (long long)errs[i],
		      (long long)left);
	}
	CHECK(gps_tsc_retune(&cur, rate, tsc, now + 2000000, 500000000ull, &out) == 1 && out.ns0 == now + 2000000 &&
		      out.mult == rate,
	      "2 ms behind: jumps forward to CLOCK_MONOTONIC");
	CHECK(gps_tsc_retune(&cur, rate, tsc, now - 10 * 1000000000ull, 500000000ull, &out) == 0 && out.ns0 == now &&
		      out.mult == rate / 2,
	      "10 s ahead: never backwards, half speed until caught up (slope %llu)",
	      (unsigned long long)out.mult);
}

/* The closed loop: a rate 1 ppm off the truth, +-30 ns of noise on every
 * (TSC, CLOCK_MONOTONIC) pair, retunes every T.  The error must settle near
 * 1 ppm x the steering time whatever T is (steering over a fixed second
 * made it grow without bound for T > 2 s), never jump, never step. */
static void test_clock_loop(void)
{
	static const uint64_t periods[] = {500000000ull, 5000000000ull, 60000000000ull};
	const uint64_t true_mult = 1ull << 31;             /* 2 GHz */
	const uint64_t rate = true_mult + true_mult / 1000000; /* 1 ppm fast */
	for (size_t k = 0; k < sizeof periods / sizeof periods[0]; k++) {
		uint64_t T = periods[k], ticks_per_T = T * 2;
		struct gps_tsc_params cur = {.tsc0 = 0, .ns0 = 0, .mult = rate}, out;
		unsigned seed = 1;
		int64_t worst = 0, worst_late = 0;
		int jumps = 0, steps = 0;
		for (int i = 1; i <= 200; i++) {
			uint64_t tsc = (uint64_t)i * ticks_per_T;
			seed = seed * 1103515245u + 12345u;
			int64_t noise = (int64_t)((seed >> 16) % 61) - 30;
			uint64_t mono = (uint64_t)(((unsigned __int128)tsc * true_mult) >> 32) + (uint64_t)noise;
			uint64_t before = gps_tsc_to_ns(&cur, tsc);
			int64_t err = (int64_t)(before - mono);
			if (llabs(err) > worst)
				worst = llabs(err);
			if (i > 20 && llabs(err) > worst_late)
				worst_late = llabs(err);
			jumps += gps_tsc_retune(&cur, rate, tsc, mono, T, &out);
			steps += gps_tsc_to_ns(&out, tsc) != before && out.ns0 != mono;
			cur = out;
		}
		/* steady: 1 ppm x max(1 s, 2T), plus the noise */
		int64_t bound = (int64_t)((T * 2 > 1000000000ull ? T * 2 : 1000000000ull) / 1000000) + 100;
		CHECK(jumps == 0 && steps == 0, "period %llu ms: %d jumps, %d steps", (unsigned long long)(T / 1000000),
		      jumps, steps);
		CHECK(worst_late <= bound && worst <= 4 * bound,
		      "period %llu ms: error %lld ns late, %lld ns worst (bound %lld)", (unsigned long long)(T / 1000000),
		      (long long)worst_late, (long long)worst, (long long)bound);
	}
}

struct clock_reader { atomic_int *stop; long reads, backwards; };
static void *clock_reader_main(void *arg)
{
	struct clock_reader *r = arg;
	uint64_t last = 0;
	while (!atomic_load(r->stop)) {
		uint64_t t = gps_mono_ns();
		r->backwards += t < last;
		last = t;
		r->reads++;
	}
	return NULL;
}

/* The live clock with GPUPROF_CLOCK=tsc: on after calibration, within
 * 50 µs of clock_gettime, never backwards on any thread while the
 * parameters are republished under it. */
static void test_clock_live(void)
{
#if defined(__x86_64__)
	gps_clock_init(GP_CLOCK_MODE_TSC);
	atomic_int stop = 0;
	struct clock_reader rd = {.stop = &stop};
	pthread_t th;
	int have_thread = pthread_create(&th, NULL, clock_reader_main, &rd) == 0;
	uint64_t t_end = gps_sys_mono_ns() + 700000000ull, next_tick = 0, last = 0;
	long outside = 0, backwards = 0, reads = 0;
	int64_t worst = 0;
	for (;;) {
		uint64_t m1 = gps_sys_mono_ns();
		if (m1 >= t_end)
			break;
		if (m1 >= next_tick) {
			gps_clock_tick();
			next_tick = m1 + 20000000ull;
		}
		uint64_t t = gps_mono_ns();
		uint64_t m2 = gps_sys_mono_ns();
		backwards += t < last;
		last = t;
		reads++;
		int64_t off = t < m1 ? (int64_t)(m1 - t) : t > m2 ? (int64_t)(t - m2) : 0;
		if (off > worst)
			worst = off;
		outside += off > 50000;
	}
	atomic_store(&stop, 1);
	if (have_thread)
		pthread_join(th, NULL);
	if (!gps_cpu_has_invariant_tsc()) {
		printf("skip live TSC clock check: this CPU has no invariant TSC (CPUID 0x80000007 EDX bit 8)\n");
		return;
	}
	CHECK(atomic_load(&gps_tsc.on), "GPUPROF_CLOCK=tsc on an invariant TSC: never switched on");
	CHECK(outside == 0, "TSC clock off CLOCK_MONOTONIC by > 50 us in %ld of %ld reads (worst %lld ns)",
	      outside, reads, (long long)worst);
	CHECK(backwards == 0 && rd.backwards == 0, "TSC clock went backwards %ld + %ld times", backwards,
	      rd.backwards);
	CHECK(have_thread && rd.reads > 1000, "second reader: %ld reads", rd.reads);

	/* A fork while the parent's writer was mid-publish: seq odd.  The
	 * child must not spin on it, and must start over from clock_gettime
	 * until its own flush thread switches the TSC on again. */
	alarm(10); /* a spinning read kills the test instead of hanging it */
	atomic_store(&gps_tsc.seq, 7);
	uint64_t m1 = gps_sys_mono_ns(), t = gps_mono_ns(), m2 = gps_sys_mono_ns();
	CHECK(t >= m1 && t <= m2, "a reader facing an odd seq falls back to clock_gettime");
	gps_clock_after_fork_child();
	CHECK(atomic_load(&gps_tsc.on) == 0 && (atomic_load(&gps_tsc.seq) & 1) == 0 && gps_clock_tsc_updates() == 0,
	      "fork child: TSC off, seq even, no updates counted");
	gps_clock_tick(); /* the child's flush thread: the base pair is old enough */
	CHECK(atomic_load(&gps_tsc.on) == 1 && (atomic_load(&gps_tsc.seq) & 1) == 0 && gps_clock_tsc_updates() == 1,
	      "fork child: its first tick switches the TSC on again");
	m1 = gps_sys_mono_ns();
	t = gps_mono_ns();
	m2 = gps_sys_mono_ns();
	CHECK(t + 50000 >= m1 && t <= m2 + 50000, "fork child: back on the TSC, %lld ns off",
	      (long long)((int64_t)t - (int64_t)m1));
	alarm(0);
	atomic_store(&gps_tsc.on, 0);
#endif
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* the median of the last min(n, GPS_ROLLING_MAX) of vals[0, n), by sorting
 * a copy (what gps_steps.c did per step before) */
static uint64_t sorted_median(const uint64_t *vals, unsigned n)
{
	uint64_t tmp[GPS_ROLLING_MAX];
	unsigned k = n < GPS_ROLLING_MAX ? n : GPS_ROLLING_MAX;
	if (!k)
		return 0;
	memcpy(tmp, vals + n - k, k * sizeof tmp[0]);
	qsort(tmp, k, sizeof tmp[0], cmp_u64);
	return k & 1 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
}

static void test_rolling(void)
{
	enum { N = 3000 };
	static uint64_t vals[N];
	/* distinct values, many repeats (a few values only), a rising and a
	 * falling run, huge values */
	for (int kind = 0; kind < 5; kind++) {
		struct gps_rolling r;
		gps_rolling_reset(&r);
		CHECK(gps_rolling_median(&r) == 0, "empty window: %llu", (unsigned long long)gps_rolling_median(&r));
		srand(42 + kind);
		int bad = 0;
		for (unsigned i = 0; i < N; i++) {
			uint64_t v = kind == 0 ? (uint64_t)rand() * 1000u + (uint64_t)rand()
				   : kind == 1 ? (uint64_t)(rand() % 4) * 5000000u
				   : kind == 2 ? 1000000u + i
				   : kind == 3 ? 10000000u - i
				   : UINT64_MAX / 2 - (uint64_t)(rand() % 3);
			vals[i] = v;
			gps_rolling_add(&r, v);
			uint64_t want = sorted_median(vals, i + 1), got = gps_rolling_median(&r);
			if (got != want && !bad++)
				CHECK(0, "kind %d after %u values: median %llu, a sort says %llu", kind, i + 1,
				      (unsigned long long)got, (unsigned long long)want);
		}
		CHECK(!bad, "kind %d: %d wrong medians of %d", kind, bad, N);
		CHECK(r.n == GPS_ROLLING_MAX, "kind %d: window holds %u", kind, r.n);
	}
}

/* gps_steps.c's calls into the flight recorder */
int gps_flight_step_begin(uint64_t step) { return 0; }
void gps_flight_step_end(uint64_t step, uint64_t start_ns, uint64_t end_ns, const struct gps_step_stats *st) {}

/* The drop rule's windows: a window's mean busy against the median of the
 * windows before it; nothing before GPS_DROP_WINDOWS_MIN windows or against
 * a median of 0 (a job that never used the GPU) */
static void test_drop(void)
{
	struct gps_drop d;
	struct gps_drop_hit h = {0};
	uint64_t t = 0, step = 100000000ull; /* rounds every 0.1 s, windows of 1 s: 10 rounds */
	int fired = 0;
	gps_drop_init(&d, 50, 1000000000ull);
	/* the first windows are judged against fewer than GPS_DROP_WINDOWS_MIN: no
	 * drop, however deep (start-up) */
	for (int w = 0; w < GPS_DROP_WINDOWS_MIN; w++)
		for (int k = 0; k < 10; k++, t += step)
			fired += gps_drop_round(&d, t, w == 0 ? 90 : w == 1 ? 0 : 90, &h);
	CHECK(!fired, "a drop judged against fewer than %d windows", GPS_DROP_WINDOWS_MIN);
	for (int w = 0; w < 60; w++)
		for (int k = 0; k < 10; k++, t += step)
			fired += gps_drop_round(&d, t, k & 1 ? 80 : 100, &h);
	CHECK(!fired && d.hist.n == GPS_ROLLING_MAX, "steady at 90%%: %d fired, %u windows", fired, d.hist.n);
	/* 50 % of 90 is 45: a window of 46 is no drop, one of 44 is */
	for (int k = 0; k < 10; k++, t += step)
		fired += gps_drop_round(&d, t, 46, &h);
	fired += gps_drop_round(&d, t, 44, &h); /* closes the window of 46 */
	CHECK(!fired, "46%% against 90%% fired at 50%%");
	for (int k = 1; k < 10; k++, t += step)
		fired += gps_drop_round(&d, t + step, 44, &h);
	t += step;
	CHECK(!fired, "the open window was judged before it closed");
	fired += gps_drop_round(&d, t + step, 90, &h); /* closes the window of 44 */
	CHECK(fired == 1 && h.busy == 44.0 && h.median == 90.0 && h.windows == GPS_ROLLING_MAX,
	      "44%% against 90%%: fired %d, busy %.2f median %.2f over %u windows", fired, h.busy, h.median, h.windows);
	/* never busy: a median of 0 has nothing to drop from */
	gps_drop_init(&d, 10, 1000000000ull);
	fired = 0;
	for (int k = 0; k < 200; k++)
		fired += gps_drop_round(&d, (uint64_t)k * step, 0, &h);
	CHECK(!fired && d.hist.n == 19, "idle all along: %d fired, %u windows", fired, d.hist.n);
}

static void test_steps(void)
{
	static const struct { const char *name; uint64_t want; } names[] = {
		{"step 12", 13}, {"Step_12", 13}, {"STEP#0", 1}, {"iteration 7", 8}, {"iter:3", 4},
		{"ProfilerStep#12", 13}, {"profilerstep=5", 6}, {"Iter-9", 10}, {"step", 0}, {"step 1x", 0},
		{"steps 1", 0}, {"forward", 0}, {"optimizer", 0}, {"backward", 0}, {"", 0}, {"Pstep 1", 0},
		{"istep 1", 0}, {"step 1234567890123456789", 0}, {"step 123456789012345678", 123456789012345679ull},
		{"sTeP 4", 5}, {"xstep 1", 0}, {"0step 1", 0},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		uint64_t got = gps_steps_match(names[i].name);
		CHECK(got == names[i].want, "\"%s\": %llu, want %llu", names[i].name, (unsigned long long)got,
		      (unsigned long long)names[i].want);
	}
	CHECK(gps_steps_match(NULL) == 0, "NULL name");
	/* the published median: none before GPS_STEPS_MIN steps, then that of
	 * the last GPS_STEPS_WINDOW step times; a step's time runs from the
	 * previous step's end (the host time between the ranges is the next
	 * step's), the first step's is its range */
	static uint64_t durs[200];
	uint64_t t = 1000;
	srand(7);
	for (unsigned i = 0; i < 200; i++) {
		uint64_t range = 1000000u + (uint64_t)(rand() % 500000), gap = (uint64_t)(rand() % 400000);
		durs[i] = range + (i ? gap : 0);
		t += i ? gap : 0;
		CHECK(gps_steps_begin(i, 4242) == 1, "step %u not taken", i);
		CHECK(gps_steps_begin(i, 4242) == 0, "a nested step %u taken", i);
		gps_steps_end(i, t, t + range);
		t += range;
		struct gps_step_stats st;
		gps_steps_get(&st);
		uint64_t want = i + 1 < GPS_STEPS_MIN ? 0 : sorted_median(durs, i + 1);
		CHECK(st.median_ns == want && st.last == (int64_t)i && st.count == i + 1 && st.last_ns == durs[i],
		      "after step %u: median %llu (want %llu), last %lld, count %llu", i,
		      (unsigned long long)st.median_ns, (unsigned long long)want, (long long)st.last,
		      (unsigned long long)st.count);
	}
	CHECK(gps_steps_begin(200, 4243) == 0, "another thread's step taken");
}

/* ------------------------------------------------------------ period */
#define H2D(b) GPS_SIG_MAKE(GPS_SIG_HTOD, b)
#define D2H(b) GPS_SIG_MAKE(GPS_SIG_DTOH, b)
#define SYNC GPS_SIG_MAKE(GPS_SIG_SYNC, 77)
#define K(i) GPS_SIG_MAKE(GPS_SIG_KERNEL, 1000 + (i))
static struct gps_period_ev pev[8192];
static size_t npev;
static uint64_t pt;
static void ev(uint64_t sig, uint64_t gap)
{
	pt += gap;
	pev[npev].sig = sig;
	pev[npev].t = pt;
	npev++;
}
static int find(struct gps_period_result *r)
{
	static uint64_t scratch[1 << 18];
	CHECK(gps_period_scratch_size(npev) <= sizeof scratch, "scratch %zu", gps_period_scratch_size(npev));
	memset(r, 0, sizeof *r);
	return gps_period_find(pev, npev, 6, scratch, r);
}
static void load_copies(void) /* a model's parameters: alike sizes, once */
{
	for (int j = 0; j < 24; j++)
		ev(H2D(4096 * (1 + j % 4)), 10);
}

static void test_period(void)
{
	struct gps_period_result r;
	/* plain: copy in, 3 kernels, loss out, sync; 20 steps */
	npev = 0;
	for (int s = 0; s < 20; s++) {
		ev(H2D(65536), 5000);
		ev(K(1), 10);
		ev(K(2), 10);
		ev(K(3), 10);
		ev(D2H(4), 10);
		ev(SYNC, 10);
	}
	CHECK(find(&r) && r.sig == H2D(65536) && r.len == 6 && r.alike == 19 && r.count == 20,
	      "plain: found sig %llx len %u alike %u count %u", (unsigned long long)r.sig, r.len, r.alike, r.count);
	/* warm-up: parameter copies, then 3 odd steps (an extra copy and
	 * kernel); the steady steps still win, at the input copy */
	npev = 0;
	load_copies();
	for (int s = 0; s < 30; s++) {
		ev(H2D(65536 + (s < 3 ? 1000 + s : 0)), 5000);
		if (s < 3)
			ev(K(9), 10);
		ev(K(1), 10);
		ev(K(2), 10);
		ev(D2H(4), 10);
		ev(SYNC, 10);
	}
	CHECK(find(&r) && r.sig == H2D(65536) && r.len == 5, "warm-up: sig %llx len %u", (unsigned long long)r.sig,
	      r.len);
	/* a sub-loop: 4 identical layers a step; the layer's first kernel
	 * repeats more often than the step, but is no step */
	npev = 0;
	for (int s = 0; s < 20; s++) {
		ev(H2D(65536), 5000);
		ev(K(0), 10);
		for (int l = 0; l < 4; l++) {
			ev(K(1), 10);
			ev(K(2), 10);
			ev(K(3), 10);
		}
		ev(K(4), 10);
		ev(D2H(4), 10);
		ev(SYNC, 10);
	}
	CHECK(find(&r) && r.sig == H2D(65536) && r.len == 17, "sub-loop: sig %llx len %u", (unsigned long long)r.sig,
	      r.len);
	/* the same without markers: still the step (a kernel), not the layer
	 * (the step's own part, embedding, head, optimizer, is more than the
	 * 2 operations by which a segment may differ and still be "like") */
	npev = 0;
	for (int s = 0; s < 30; s++) {
		ev(K(0), 5000);
		ev(K(5), 10);
		for (int l = 0; l < 4; l++) {
			ev(K(1), 10);
			ev(K(2), 10);
			ev(K(3), 10);
		}
		ev(K(4), 10);
		ev(K(6), 10);
	}
	CHECK(find(&r) && r.len == 16 && r.sig == K(0), "sub-loop, kernels only: sig %llx len %u",
	      (unsigned long long)r.sig, r.len);
	/* an extra op every 10 steps: the period is the step, not 10 steps */
	npev = 0;
	for (int s = 0; s < 40; s++) {
		ev(H2D(65536), 5000);
		ev(K(1), 10);
		ev(K(2), 10);
		if (s % 10 == 9)
			ev(K(7), 10);
		ev(SYNC, 10);
	}
	CHECK(find(&r) && r.sig == H2D(65536) && r.len == 4 && r.alike >= 30,
	      "extra op every 10: sig %llx len %u alike %u", (unsigned long long)r.sig, r.len, r.alike);
	/* no input copy: a marker (the sync) before a kernel, even one after a
	 * longer gap */
	npev = 0;
	for (int s = 0; s < 20; s++) {
		ev(K(1), 9000);
		ev(K(2), 10);
		ev(SYNC, 10);
		ev(K(3), 10);
	}
	CHECK(find(&r) && r.sig == SYNC && r.len == 4, "marker first: sig %llx len %u", (unsigned long long)r.sig, r.len);
	/* kernels only: the one after the longest host gap */
	npev = 0;
	for (int s = 0; s < 20; s++) {
		ev(K(1), 10);
		ev(K(2), 9000);
		ev(K(3), 10);
	}
	CHECK(find(&r) && r.sig == K(2) && r.len == 3, "kernels: sig %llx len %u", (unsigned long long)r.sig, r.len);
	/* too few repeats (5 alike steps < 6) */
	npev = 0;
	for (int s = 0; s < 6; s++) {
		ev(H2D(65536), 5000);
		ev(K(1), 10);
		ev(SYNC, 10);
	}
	CHECK(!find(&r), "6 steps taken: sig %llx", (unsigned long long)r.sig);
	/* alike copies at start-up only, then no structure: none */
	npev = 0;
	load_copies();
	unsigned x = 7;
	for (int i = 0; i < 200; i++) {
		x = x * 1103515245u + 12345u;
		ev(x % 3 ? K(x >> 8 & 3) : H2D(1 + (x >> 4) % 50000), 10 + (x >> 16) % 5000);
	}
	CHECK(!find(&r), "no structure: sig %llx len %u", (unsigned long long)r.sig, r.len);
	/* one call repeated (one kernel in a loop, or a launch whose function
	 * cannot be read): a period of one event is no step structure, as
	 * offline (a step at every launch would make every rule noise) */
	npev = 0;
	for (int i = 0; i < 400; i++)
		ev(K(1), 10);
	CHECK(!find(&r), "one repeated call: sig %llx len %u", (unsigned long long)r.sig, r.len);
	/* but one CUDA graph launched once a step, nothing else between (JAX's
	 * step as the H100 trace of jax_flax.py has it: its main thread's one
	 * cuGraphLaunch a step), is the step */
	npev = 0;
	for (int i = 0; i < 40; i++)
		ev(GPS_SIG_MAKE(GPS_SIG_GRAPH, 77), 5000);
	CHECK(find(&r) && r.sig == GPS_SIG_MAKE(GPS_SIG_GRAPH, 77) && r.len == 1 && r.alike >= 30,
	      "one graph a step: sig %llx len %u alike %u", (unsigned long long)r.sig, r.len, r.alike);
}

/* ---- the step finder (gps_stepfind.c) on a real job's calls.  Its
 * records (the found steps' ranges) need the shim's recorder: stubbed out,
 * so it emits nothing here. */
struct gps_state gps;
struct gps_thread *gps_enter(void) { return NULL; }
void gps_leave(struct gps_thread *t) { (void)t; }
gp_recorder *gps_rec_slow(enum gps_rec_want want) { (void)want; return NULL; }
uint32_t gp_intern(gp_recorder *rec, const char *str) { (void)rec; (void)str; return 0; }
uint64_t gps_gpu_now(void) { return 0; }

/* tests/shim/jax_flax_h100.events: the calls the finder is fed (time, tid,
 * class, value: GPS_SIG_MAKE's) of `gpuprof run -- python3
 * examples/thirdparty/jax_flax.py --steps 60` on an H100 (2026-12-07,
 * build a295c3a), made from its trace by tests/shim/stepfind_events.py (a copy's
 * bytes, a launch's kernel name or graph id, joined by correlation id): a
 * transfer thread's parameter copy comes first, then the main thread (tid
 * 2151) launches each step as one CUDA graph.  The main thread takes the
 * finder's place by its launches and its graph is the boundary. */
static void test_stepfind_jax(void)
{
	FILE *f = fopen("tests/shim/jax_flax_h100.events", "r");
	CHECK(f != NULL, "tests/shim/jax_flax_h100.events: run from the repository's root");
	if (!f)
		return;
	gps_steps_after_fork_child(); /* a fresh process's: test_steps saw NVTX steps */
	gps_stepfind_init(1);
	unsigned long long t, v;
	unsigned tid, cls, n = 0, edges = 0, edges_main = 0;
	while (fscanf(f, "%llu %u %u %llu", &t, &tid, &cls, &v) == 4) {
		int e = gps_stepfind_event(GPS_SIG_MAKE(cls, v), tid, t);
		edges += e;
		edges_main += e && tid == 2151;
		n++;
	}
	fclose(f);
	char what[256];
	gps_stepfind_describe(what, sizeof what);
	CHECK(n == 177 && strstr(what, "steps found online: each starts at a CUDA graph launch (period 1 API events"),
	      "%u events: %s", n, what);
	/* 60 steps: learnt after the 64th launch (the 17th graph) and 16 graph launches */
	CHECK(edges >= 20 && edges == edges_main, "%u step edges, %u on the main thread", edges, edges_main);
}

/* ---- the live table (gps_livemem.c) */
static gp_record emitted[4096];
static unsigned nemitted;
int gp_emit(gp_recorder *rec, const gp_record *r)
{
	(void)rec;
	if (nemitted < sizeof emitted / sizeof emitted[0])
		emitted[nemitted++] = *r;
	return 0;
}

/* what should be live: key, handle, bytes, site (stack id) */
struct ref_alloc { uint64_t key; int handle; uint64_t bytes; uint32_t stack; int live; };

/* The snapshot's records against the list: per stack id (a site), bytes
 * and allocations; returns the sites seen. */
static unsigned check_snapshot(const struct ref_alloc *v, unsigned n, uint32_t nsites, const char *what)
{
	nemitted = 0;
	gps_livemem_snapshot((gp_recorder *)1, 100, 7);
	uint64_t want_b[64] = { 0 }, want_a[64] = { 0 }, got_b[64] = { 0 }, got_a[64] = { 0 };
	for (unsigned i = 0; i < n; i++)
		if (v[i].live) {
			want_b[v[i].stack] += v[i].bytes;
			want_a[v[i].stack]++;
		}
	unsigned sites = 0;
	for (unsigned i = 0; i < nemitted; i++) {
		const gp_rec_mem_live *l = &emitted[i].u.mem_live;
		CHECK(emitted[i].type == GP_REC_MEM_LIVE && l->ts_ns == 100 && l->correlation_id == 7 &&
			      l->kind == GP_MEM_LIVE_SITE && l->stack_id < nsites && l->device_id == 1 && l->size == 0,
		      "%s: record %u: type %u kind %u stack %u", what, i, emitted[i].type, l->kind, l->stack_id);
		if (l->stack_id < 64) {
			got_b[l->stack_id] += l->bytes;
			got_a[l->stack_id] += l->allocs;
		}
		sites++;
	}
	for (uint32_t s = 0; s < nsites && s < 64; s++)
		CHECK(got_b[s] == want_b[s] && got_a[s] == want_a[s], "%s: site %u: %llu B in %llu, want %llu B in %llu",
		      what, s, (unsigned long long)got_b[s], (unsigned long long)got_a[s], (unsigned long long)want_b[s],
		      (unsigned long long)want_a[s]);
	return sites;
}

static void test_livemem(void)
{
	CHECK(gps_livemem_start() == 0 && gps_livemem_kept(), "the table is kept");
	/* 20000 allocations (a load of 0.61) at 8 sites (stack ids 1..8: with
	 * no stack the size would be part of the site), freed in a scrambled
	 * order in three rounds: after each, what is live by site equals the
	 * list's (a delete that broke a probe run loses later entries) */
	enum { N = 20000, SITES = 8 };
	static struct ref_alloc v[N];
	unsigned x = 12345;
	for (unsigned i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		/* unique, and random enough to share probe runs (an arithmetic
		 * sequence of addresses spreads evenly under the hash) */
		uint64_t key = ((uint64_t)x << 20) | i;
		x = x * 1103515245u + 12345u;
		v[i] = (struct ref_alloc){ key, 0, 1 + (x >> 8) % 100000, 1 + i % SITES, 1 };
		gps_livemem_alloc(v[i].key, 0, v[i].bytes, 1, 1, 20, v[i].stack);
	}
	check_snapshot(v, N, SITES + 1, "all live");
	for (int round = 0; round < 3; round++) {
		for (unsigned i = 0; i < N; i++) {
			x = x * 1103515245u + 12345u;
			if (v[i].live && (x >> 10) % 3 == 0) {
				gps_livemem_free(v[i].key, 0);
				v[i].live = 0;
			}
		}
		check_snapshot(v, N, SITES + 1, "after frees");
	}
	/* a free of an address never tabled, and a handle with an address's
	 * number: neither touches the address's entry */
	gps_livemem_free(0x1234, 0);
	gps_livemem_free(v[N - 1].key, 1);
	check_snapshot(v, N, SITES + 1, "unknown frees");
	for (unsigned i = 0; i < N; i++)
		if (v[i].live) {
			gps_livemem_free(v[i].key, 0);
			v[i].live = 0;
		}
	CHECK(check_snapshot(v, N, SITES + 1, "all freed") == 0, "no record for an empty table");

	/* a handle and an address with one number are two allocations */
	gps_livemem_alloc(0x5000, 0, 100, 1, 2, 549, 1);
	gps_livemem_alloc(0x5000, 1, 2u << 20, 1, 2, 549, 2);
	struct ref_alloc h[2] = { { 0x5000, 0, 100, 1, 1 }, { 0x5000, 1, 2u << 20, 2, 1 } };
	check_snapshot(h, 2, 3, "handle and address");
	gps_livemem_free(0x5000, 1);
	h[1].live = 0;
	check_snapshot(h, 2, 3, "the handle released");
	gps_livemem_free(0x5000, 0);

	/* more sites than written: the 256 largest, then one rest record */
	for (unsigned i = 0; i < 300; i++)
		gps_livemem_alloc(0x9000000ull + i * 64u, 0, 1000 + i, 1, 1, 20, 100 + i);
	nemitted = 0;
	gps_livemem_snapshot((gp_recorder *)1, 100, 7);
	uint64_t rest = 0, rest_allocs = 0, smallest = UINT64_MAX;
	unsigned nsite = 0;
	for (unsigned i = 0; i < nemitted; i++) {
		const gp_rec_mem_live *l = &emitted[i].u.mem_live;
		if (l->kind == GP_MEM_LIVE_SITE) {
			nsite++;
			if (l->bytes < smallest) smallest = l->bytes;
		} else if (l->kind == GP_MEM_LIVE_REST) {
			rest += l->bytes;
			rest_allocs += l->allocs;
		}
	}
	uint64_t want_rest = 0;
	for (unsigned i = 0; i < 300 - GPS_LIVE_SITES_WRITTEN; i++)
		want_rest += 1000 + i;
	CHECK(nsite == GPS_LIVE_SITES_WRITTEN && smallest == 1000 + 300 - GPS_LIVE_SITES_WRITTEN && rest == want_rest &&
		      rest_allocs == 300 - GPS_LIVE_SITES_WRITTEN,
	      "rest: %u sites (smallest %llu), rest %llu B in %llu", nsite, (unsigned long long)smallest,
	      (unsigned long long)rest, (unsigned long long)rest_allocs);
	for (unsigned i = 0; i < 300; i++)
		gps_livemem_free(0x9000000ull + i * 64u, 0);

	/* full: past GPS_LIVE_MAX allocations are counted as untabled, by
	 * device; an allocation with no address too */
	for (unsigned i = 0; i < GPS_LIVE_MAX + 10; i++)
		gps_livemem_alloc(0x100000000ull + (uint64_t)i * 4096u, 0, 4096, 1, 1, 20, 0);
	gps_livemem_untabled(777, 1);
	nemitted = 0;
	gps_livemem_snapshot((gp_recorder *)1, 100, 7);
	uint64_t tabled = 0, unt = 0, unt_allocs = 0;
	for (unsigned i = 0; i < nemitted; i++) {
		const gp_rec_mem_live *l = &emitted[i].u.mem_live;
		if (l->kind == GP_MEM_LIVE_SITE) {
			tabled += l->allocs;
			CHECK(l->size == 4096 && l->stack_id == 0, "no stack: the size is the site's (%llu)",
			      (unsigned long long)l->size);
		} else if (l->kind == GP_MEM_LIVE_UNTABLED) {
			CHECK(l->device_id == 1, "untabled on device %u", l->device_id);
			unt += l->bytes;
			unt_allocs += l->allocs;
		}
	}
	CHECK(tabled == GPS_LIVE_MAX && unt_allocs == 11 && unt == 10 * 4096 + 777,
	      "full: %llu tabled, %llu untabled (%llu B)", (unsigned long long)tabled, (unsigned long long)unt_allocs,
	      (unsigned long long)unt);
	/* a fork child starts empty */
	gps_livemem_after_fork_child();
	nemitted = 0;
	gps_livemem_snapshot((gp_recorder *)1, 100, 7);
	CHECK(nemitted == 0, "fork child: %u records", nemitted);
	/* the failed request's own record */
	nemitted = 0;
	gps_livemem_failed((gp_recorder *)1, 100, 7, 1ull << 40, 1, 1, 20, 9);
	CHECK(nemitted == 1 && emitted[0].u.mem_live.kind == GP_MEM_LIVE_FAILED &&
		      emitted[0].u.mem_live.bytes == 1ull << 40 && emitted[0].u.mem_live.stack_id == 9 &&
		      emitted[0].u.mem_live.size == 0,
	      "failed request: %u records", nemitted);
}

int main(void)
{
	test_pattern();
	test_rank();
	test_config();
	test_describe();
	test_cbid();
	test_window();
	test_pm_interval();
	test_clock_retune();
	test_clock_loop();
	test_clock_live();
	test_rolling();
	test_drop();
	test_steps();
	test_period();
	test_stepfind_jax();
	test_livemem();
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	else
		printf("shim unit: all checks passed\n");
	return failures ? 1 : 0;
}
