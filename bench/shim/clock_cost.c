/* clock_cost.c — what one timestamp costs on this machine: the shim reads
 * CLOCK_MONOTONIC twice per traced API call (and CUPTI calls the shim's
 * timestamp callback for its own records).  On a VM whose clocksource the
 * vDSO cannot read, clock_gettime is a system call (~0.5 µs or more), and
 * a TSC read would be the cheaper clock.  Prints ns per call, medians of 5
 * rounds of N calls, and the kernel's clocksource.
 * Usage: clock_cost [N]   (default 2000000) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median5(double *v)
{
	qsort(v, 5, sizeof *v, cmp);
	return v[2];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	static const struct { clockid_t id; const char *name; } clocks[] = {
		{CLOCK_MONOTONIC, "CLOCK_MONOTONIC"},
		{CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW"},
		{CLOCK_REALTIME, "CLOCK_REALTIME"},
	};
	char src[64] = "?";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (!fgets(src, sizeof src, f))
			src[0] = 0;
		fclose(f);
		for (char *p = src; *p; p++)
			if (*p == '\n')
				*p = 0;
	}
	printf("CLOCK clocksource=%s calls=%ld\n", src, n);
	volatile uint64_t sink = 0;
	for (size_t c = 0; c < sizeof clocks / sizeof clocks[0]; c++) {
		double r[5];
		for (int k = 0; k < 5; k++) {
			uint64_t t0 = now_ns();
			struct timespec ts;
			for (long i = 0; i < n; i++) {
				clock_gettime(clocks[c].id, &ts);
				sink += (uint64_t)ts.tv_nsec;
			}
			r[k] = (double)(now_ns() - t0) / (double)n;
		}
		printf("CLOCK %s ns_per_call=%.1f\n", clocks[c].name, median5(r));
	}
	double r[5];
	for (int k = 0; k < 5; k++) {
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			sink += __rdtsc();
		r[k] = (double)(now_ns() - t0) / (double)n;
	}
	printf("CLOCK rdtsc ns_per_call=%.1f\n", median5(r));
	for (int k = 0; k < 5; k++) {
		uint64_t t0 = now_ns();
		unsigned aux;
		for (long i = 0; i < n; i++)
			sink += __rdtscp(&aux);
		r[k] = (double)(now_ns() - t0) / (double)n;
	}
	printf("CLOCK rdtscp ns_per_call=%.1f\n", median5(r));
	return sink == 42; /* keeps the loops */
}
