// empty_kernel.cu — the per-launch cost probe.
//
// Launches an empty kernel N times back to back on one stream, after a
// warm-up, with a single synchronize at the end, and prints
//   RESULT launches=N us_per_launch=X
// where X = wall time of the N launches + final sync, divided by N.  The GPU
// finishes an empty kernel faster than the CPU can launch the next one, so X
// is the host-side cost of one launch: exactly what a tracer adds to.
//
//   ./empty_kernel [launches=200000] [warmup=2000] [toggle_pairs=0]
//
// toggle_pairs N > 0: the in-process A/B measurement of a tracer's cost.
// Run-to-run spread between processes (±15 % for identical bare runs) hides
// a few-% overhead, while one process is stable within itself, so the
// launches are split into 2N equal blocks run in ABBA order (on, off, off,
// on, on, off, ...: block b is "on" when b % 4 is 0 or 3) and the tracer is
// told to capture or not with cudaProfilerStart/Stop (what
// `gpuprof run --capture-range=cudaProfilerApi` and `nsys -c cudaProfilerApi`
// honour; no-ops without a tracer, so a bare run measures the method's own
// bias).  Each block: device sync, profiler call if the state changes, timer
// start, launches, device sync, timer stop.  Pair i = blocks (2i, 2i+1); the
// RESULT line then also carries
//   ab_pairs=N ab_on_us=X ab_off_us=Y ab_ratio=R ab_delta_us=D
// X/Y: median over on/off blocks of µs per launch; R/D: median over pairs of
// on/off and on−off.  launches= is then 2N·(launches / 2N), us_per_launch
// and total_s cover the blocks only (not the syncs and profiler calls).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

__global__ void emptyKernel() {}

static double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Same convention as Python's statistics.median (mean of the middle two).
static double median(std::vector<double> v)
{
	if (v.empty())
		return 0.0;
	std::sort(v.begin(), v.end());
	size_t m = v.size() / 2;
	return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// ABBA: on, off, off, on, on, off, off, on, ...
static bool block_is_on(long b) { return b % 4 == 0 || b % 4 == 3; }

// Runs 2·pairs blocks of per_block launches; returns the seconds of each
// block, and in *err the first launch/sync error (checked before each
// profiler call, whose own status is then cleared).
static std::vector<double> run_toggled(cudaStream_t s, long pairs, long per_block, cudaError_t *err)
{
	*err = cudaSuccess;
	std::vector<double> secs;
	bool capturing = false;
	for (long b = 0; b < 2 * pairs; b++) {
		bool on = block_is_on(b);
		cudaError_t e = cudaDeviceSynchronize();
		if (e == cudaSuccess)
			e = cudaGetLastError();
		if (e != cudaSuccess && *err == cudaSuccess)
			*err = e;
		if (on != capturing) {
			// The return value is not ours to judge (no tracer: no-op);
			// clear it so the final error check sees only launch errors.
			if (on)
				cudaProfilerStart();
			else
				cudaProfilerStop();
			cudaGetLastError();
			capturing = on;
		}
		double t0 = now_s();
		for (long i = 0; i < per_block; i++) emptyKernel<<<1, 1, 0, s>>>();
		cudaDeviceSynchronize();
		secs.push_back(now_s() - t0);
	}
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess && *err == cudaSuccess)
		*err = e;
	if (capturing) {
		cudaProfilerStop();
		cudaGetLastError();
	}
	return secs;
}

int main(int argc, char **argv)
{
	const long n = argc > 1 ? atol(argv[1]) : 200000;
	const long warm = argc > 2 ? atol(argv[2]) : 2000;
	const long pairs = argc > 3 ? atol(argv[3]) : 0;
	if (pairs < 0 || (pairs > 0 && n < 2 * pairs)) {
		fprintf(stderr, "empty_kernel: toggle_pairs=%ld needs launches >= 2*pairs (launches=%ld)\n",
		        pairs, n);
		return 2;
	}
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
		fprintf(stderr, "empty_kernel: no usable CUDA device\n");
		return 1;
	}
	for (long i = 0; i < warm; i++) emptyKernel<<<1, 1, 0, s>>>();
	cudaStreamSynchronize(s);
	if (pairs > 0) {
		const long per_block = n / (2 * pairs);
		cudaError_t e;
		std::vector<double> secs = run_toggled(s, pairs, per_block, &e);
		if (e != cudaSuccess) {
			fprintf(stderr, "empty_kernel: launch failed: %s\n", cudaGetErrorString(e));
			return 1;
		}
		std::vector<double> on_us, off_us, ratio, delta;
		double total = 0;
		for (long b = 0; b < 2 * pairs; b++) {
			total += secs[b];
			(block_is_on(b) ? on_us : off_us).push_back(secs[b] * 1e6 / per_block);
		}
		for (long i = 0; i < pairs; i++) { // pair i: blocks 2i and 2i+1, one of each
			double on = on_us[i], off = off_us[i];
			ratio.push_back(off > 0 ? on / off : 0.0);
			delta.push_back(on - off);
		}
		const long done = 2 * pairs * per_block;
		printf("RESULT launches=%ld us_per_launch=%.4f total_s=%.4f ab_pairs=%ld ab_on_us=%.4f "
		       "ab_off_us=%.4f ab_ratio=%.4f ab_delta_us=%.4f\n",
		       done, total * 1e6 / done, total, pairs, median(on_us), median(off_us),
		       median(ratio), median(delta));
		cudaStreamDestroy(s);
		return 0;
	}
	double t0 = now_s();
	for (long i = 0; i < n; i++) emptyKernel<<<1, 1, 0, s>>>();
	cudaError_t e = cudaStreamSynchronize(s);
	double t1 = now_s();
	if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
		fprintf(stderr, "empty_kernel: launch failed: %s\n", cudaGetErrorString(e));
		return 1;
	}
	printf("RESULT launches=%ld us_per_launch=%.4f total_s=%.4f\n", n,
	       n ? (t1 - t0) * 1e6 / n : 0.0, t1 - t0);
	cudaStreamDestroy(s);
	return 0;
}
