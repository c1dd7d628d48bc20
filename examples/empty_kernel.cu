// empty_kernel.cu — the per-launch cost probe.
//
// Launches an empty kernel N times back to back on one stream, after a
// warm-up, with a single synchronize at the end, and prints
//   RESULT launches=N us_per_launch=X
// where X = wall time of the N launches + final sync, divided by N.  The GPU
// finishes an empty kernel faster than the CPU can launch the next one, so X
// is the host-side cost of one launch: exactly what a tracer adds to.
//
//   ./empty_kernel [launches=200000] [warmup=2000]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

__global__ void emptyKernel() {}

static double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const long n = argc > 1 ? atol(argv[1]) : 200000;
	const long warm = argc > 2 ? atol(argv[2]) : 2000;
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
		fprintf(stderr, "empty_kernel: no usable CUDA device\n");
		return 1;
	}
	for (long i = 0; i < warm; i++) emptyKernel<<<1, 1, 0, s>>>();
	cudaStreamSynchronize(s);
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
