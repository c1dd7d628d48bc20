/* bench_launch.c — drives the fake cudart's cudaLaunchKernel path N times
 * and prints the mean ns per launch.  Run it bare, with only the fake CUPTI
 * loaded (the floor: CUPTI present, nobody subscribed) and with
 * libgpuprof.so preloaded in its various modes (bench/shim/run.sh does
 * that): the fake CUPTI costs next to nothing, so the differences are the
 * shim's own handler and record path.
 *
 * With PER_STEP > 0 the launches are grouped into training steps the way
 * examples/train_mnist.py marks them: an NVTX range "step <i>" around every
 * PER_STEP launches, holding "forward", "backward" and "optimizer" ranges
 * that split them in three.  NVTX reaches the shim only with
 * NVTX_INJECTION64_PATH set (bench/shim/run.sh does); the per-step cost
 * (step detection, the flight recorder's step hooks) is then spread over the
 * step's launches in ns_per_launch, and ns_per_step says it per step.
 *
 *   bench_launch [N [PER_STEP]]   default N = 1000000 (after 20000 warm-up
 *                                 launches), PER_STEP = 0 (no NVTX)
 * BENCH_CALL=malloc: each "launch" is a cudaMalloc of 4096 B and its
 * cudaFree instead (the allocation calls' path: the flight recorder's live
 * table); PER_STEP is then ignored.
 * Output: one line on stdout: "ns_per_launch <float>", with PER_STEP
 * " ns_per_step <float>", then " bg_cpu_ns_per_launch <float>": the CPU
 * time the process's other threads (the shim's writer, its flush thread)
 * used meanwhile, per launch. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_api.h"

static void k_empty(void) {}

static double clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
/* CPU time of the process's other threads (the shim's writer and flush
 * threads): what they take from a job whose own thread keeps a core busy */
static double others_cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID) - clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static const dim3 g = {1, 1, 1}, b = {32, 1, 1};

static int malloc_pairs; /* BENCH_CALL=malloc */

static void launches(long n)
{
	if (malloc_pairs) {
		for (long i = 0; i < n; i++) {
			void *p = NULL;
			cudaMalloc(&p, 4096);
			cudaFree(p);
		}
		return;
	}
	for (long i = 0; i < n; i++)
		cudaLaunchKernel((const void *)k_empty, g, b, NULL, 0, NULL);
}

/* launches in steps of per_step, numbered from *step on */
static void steps(long n, long per_step, long *step)
{
	static const char *const phases[] = {"forward", "backward", "optimizer"};
	char name[32];
	for (long done = 0; done < n; (*step)++) {
		long s = n - done < per_step ? n - done : per_step;
		snprintf(name, sizeof name, "step %ld", *step);
		nvtxRangePushA(name);
		for (int p = 0; p < 3; p++) {
			long k = s / 3 + (p < s % 3);
			nvtxRangePushA(phases[p]);
			launches(k);
			nvtxRangePop();
		}
		nvtxRangePop();
		done += s;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long per_step = argc > 2 ? atol(argv[2]) : 0;
	const char *call = getenv("BENCH_CALL");
	malloc_pairs = call && !strcmp(call, "malloc");
	if (malloc_pairs)
		per_step = 0;
	if (n <= 0)
		n = 1000000;
	fakeRegisterKernel((const void *)k_empty, "k_empty");
	long step = 0;
	if (per_step > 0)
		steps(20000, per_step, &step);
	else
		launches(20000);
	double c0 = others_cpu_ns(), t0 = now_ns();
	if (per_step > 0)
		steps(n, per_step, &step);
	else
		launches(n);
	double t1 = now_ns(), c1 = others_cpu_ns();
	cudaDeviceSynchronize();
	printf("ns_per_launch %.1f", (t1 - t0) / (double)n);
	if (per_step > 0)
		printf(" ns_per_step %.1f", (t1 - t0) / (double)((n + per_step - 1) / per_step));
	printf(" bg_cpu_ns_per_launch %.1f\n", (c1 - c0) / (double)n);
	return 0;
}
