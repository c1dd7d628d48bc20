/* bench_launch.c — drives the fake cudart's cudaLaunchKernel path N times
 * and prints the mean ns per launch.  Run it bare, with only the fake CUPTI
 * loaded (the floor: CUPTI present, nobody subscribed) and with
 * libgpuprof.so preloaded in its various modes (bench/shim/run.sh does
 * that): the fake CUPTI costs next to nothing, so the differences are the
 * shim's own handler and record path.
 *
 *   bench_launch [N]   default N = 1000000 (after 20000 warm-up launches)
 * Output: one line "ns_per_launch <float>" on stdout. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fake_api.h"

static void k_empty(void) {}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	if (n <= 0)
		n = 1000000;
	fakeRegisterKernel((const void *)k_empty, "k_empty");
	dim3 g = {1, 1, 1}, b = {32, 1, 1};
	for (int i = 0; i < 20000; i++)
		cudaLaunchKernel((const void *)k_empty, g, b, NULL, 0, NULL);
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		cudaLaunchKernel((const void *)k_empty, g, b, NULL, 0, NULL);
	double t1 = now_ns();
	cudaDeviceSynchronize();
	printf("ns_per_launch %.1f\n", (t1 - t0) / (double)n);
	return 0;
}
