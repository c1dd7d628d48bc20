// util_microbench.cu — the seed paper's utilisation microbenchmark (docs/UTILISATION.md).
//
// A trivial kernel (one multiply-add per thread on in[threadIdx.x], as the
// paper's square.cu: every block touches the same 4 KiB, so memory is no
// factor) launched back to back for SECONDS per launch shape, shapes given as
// blocks x threads like the paper's <<<blocks, threads>>>:
//   1x1, 131072x1, 1024x1024, 131072x1024
// Each shape runs inside an NVTX range named by it ("1x1", ...), with IDLE
// seconds of an idle GPU between shapes (outside every range), so per-range
// figures (scripts/util_table.py) do not bleed into each other; 2 s of idle
// before the first.  The launch
// queue is kept bounded by an event every BATCH launches: before a batch the
// host waits for the event two batches back, so the GPU always has work.
//
// stdout: one line per shape, "CONFIG name blocks=B threads=T launches=N
// wall_s=S us_per_launch=U", then "CHECKSUM x" (the same with and without a
// tracer).  us_per_launch is the host's wall time per launch over the shape,
// the figure `scripts/gpu-session.sh util` compares bare vs --pm-sampling.
//
//   nvcc -O2 -arch=sm_90 -I/usr/local/cuda/include -o util_microbench util_microbench.cu
//   ./util_microbench [seconds=2] [idle=0.5] [shape...]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(call)                                                                  \
	do {                                                                          \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "util_microbench: %s failed: %s (line %d)\n", #call,  \
			        cudaGetErrorString(e_), __LINE__);                            \
			exit(1);                                                              \
		}                                                                         \
	} while (0)

__global__ void fma1(float *out, const float *in)
{
	int i = threadIdx.x;
	out[i] = in[i] * in[i] + 1.0f;
}

struct shape { const char *name; int blocks, threads; };
static const shape default_shapes[] = {
	{"1x1", 1, 1}, {"131072x1", 131072, 1}, {"1024x1024", 1024, 1024}, {"131072x1024", 131072, 1024},
};

static double now_s()
{
	using namespace std::chrono;
	return duration<double>(steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	double idle = argc > 2 ? atof(argv[2]) : 0.5;
	if (!(seconds > 0) || !(idle >= 0)) {
		fprintf(stderr, "usage: util_microbench [seconds>0] [idle>=0] [BxT...]\n");
		return 2;
	}
	std::vector<shape> shapes;
	for (int a = 3; a < argc; a++) {
		int b = 0, t = 0;
		if (sscanf(argv[a], "%dx%d", &b, &t) != 2 || b < 1 || t < 1 || t > 1024) {
			fprintf(stderr, "util_microbench: bad shape %s (BLOCKSxTHREADS, threads <= 1024)\n", argv[a]);
			return 2;
		}
		shapes.push_back({argv[a], b, t}); // argv outlives the run
	}
	if (shapes.empty())
		shapes.assign(default_shapes, default_shapes + 4);

	float *in, *out;
	CK(cudaMalloc(&in, 1024 * sizeof(float)));
	CK(cudaMalloc(&out, 1024 * sizeof(float)));
	std::vector<float> h(1024);
	for (int i = 0; i < 1024; i++) h[i] = (float)(i % 7) * 0.5f;
	CK(cudaMemcpy(in, h.data(), 1024 * sizeof(float), cudaMemcpyHostToDevice));
	fma1<<<1, 1>>>(out, in); // module load and first-launch costs outside the ranges
	CK(cudaDeviceSynchronize());
	// A tracer's sampling set-up runs after the context exists (gpuprof's PM
	// sampling loads NVIDIA's perf libraries on its own thread): 2 s of idle
	// GPU first, so the first shape is measured from its start.
	std::this_thread::sleep_for(std::chrono::duration<double>(idle > 2.0 ? idle : 2.0));

	const int BATCH = 512;
	cudaEvent_t ev[3];
	for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	for (size_t s = 0; s < shapes.size(); s++) {
		if (s > 0)
			std::this_thread::sleep_for(std::chrono::duration<double>(idle));
		const shape &sh = shapes[s];
		nvtxRangePushA(sh.name);
		double t0 = now_s(), t1 = t0;
		long launches = 0;
		for (int b = 0; t1 - t0 < seconds; b++) {
			CK(cudaEventSynchronize(ev[(b + 1) % 3])); // two batches back (none yet: returns)
			for (int k = 0; k < BATCH; k++)
				fma1<<<sh.blocks, sh.threads>>>(out, in);
			CK(cudaGetLastError());
			CK(cudaEventRecord(ev[b % 3]));
			launches += BATCH;
			t1 = now_s();
		}
		CK(cudaDeviceSynchronize());
		t1 = now_s();
		nvtxRangePop();
		printf("CONFIG %s blocks=%d threads=%d launches=%ld wall_s=%.3f us_per_launch=%.3f\n", sh.name,
		       sh.blocks, sh.threads, launches, t1 - t0, (t1 - t0) * 1e6 / (double)launches);
		fflush(stdout);
	}
	std::this_thread::sleep_for(std::chrono::duration<double>(idle));
	CK(cudaMemcpy(h.data(), out, 1024 * sizeof(float), cudaMemcpyDeviceToHost));
	double sum = 0;
	for (float v : h) sum += v;
	printf("CHECKSUM %.3f\n", sum);
	for (auto &e : ev) CK(cudaEventDestroy(e));
	CK(cudaFree(in));
	CK(cudaFree(out));
	return 0;
}
