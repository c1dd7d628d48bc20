// vector_add.cu — a small CUDA program whose trace content is known exactly.
//
// It exercises what gpuprof must record: named kernels on three streams,
// pageable and pinned memcpys in both directions, sync and async memsets, a
// CUDA graph of two kernels launched several times, nested NVTX push/pop
// ranges, a start/end range and a mark.  At the end it prints to stderr the
// counts a correct trace must contain, as "EXPECT key=value ..." lines that
// tests/gpu/check_trace.py compares against the trace.  stdout gets one
// deterministic line (a checksum) so a test can verify tracing did not change
// the program's output.
//
//   nvcc -O2 -arch=sm_90 -I/usr/local/cuda/include -o vector_add vector_add.cu
//   ./vector_add [iters=50] [graph_launches=10] [empty=20]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                  \
	do {                                                                          \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "vector_add: %s failed: %s (line %d)\n", #call,       \
			        cudaGetErrorString(e_), __LINE__);                            \
			exit(1);                                                              \
		}                                                                         \
	} while (0)

__global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}

__global__ void scale(float *x, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= s;
}

__global__ void emptyKernel() {}

int main(int argc, char **argv)
{
	const int iters = argc > 1 ? atoi(argv[1]) : 50;
	const int graph_launches = argc > 2 ? atoi(argv[2]) : 10;
	const int empties = argc > 3 ? atoi(argv[3]) : 20;
	const int n = 1 << 20;
	const size_t bytes = n * sizeof(float);
	const size_t small = bytes / 4; // async copy and async memset size
	const int block = 256, grid = (n + block - 1) / block;

	float *pinned_a, *pinned_c;
	std::vector<float> pageable_b(n);
	CK(cudaMallocHost(&pinned_a, bytes));
	CK(cudaMallocHost(&pinned_c, bytes));
	for (int i = 0; i < n; i++) {
		pinned_a[i] = (float)(i % 1000);
		pageable_b[i] = 1.0f;
	}
	float *a, *b, *c, *d;
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMalloc(&c, bytes));
	CK(cudaMalloc(&d, bytes));
	cudaStream_t s1, s2;
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

	nvtxRangePushA("vector_add");                              // depth 0
	CK(cudaMemcpy(a, pinned_a, bytes, cudaMemcpyHostToDevice)); // HtoD 1 (pinned)
	CK(cudaMemcpy(b, pageable_b.data(), bytes, cudaMemcpyHostToDevice)); // HtoD 2 (pageable)
	CK(cudaMemcpyAsync(d, pinned_a, small, cudaMemcpyHostToDevice, s2)); // HtoD 3 (async)
	CK(cudaMemset(c, 0, bytes));                               // memset 1
	CK(cudaMemsetAsync(d + n / 2, 0, small, s2));              // memset 2
	CK(cudaDeviceSynchronize());

	nvtxRangePushA("launch_loop");                             // depth 1
	for (int k = 0; k < iters; k++) {
		vecAdd<<<grid, block, 0, s1>>>(a, b, c, n);
		scale<<<grid, block, 0, s2>>>(d, 1.0f, n);
	}
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxMarkA("before_graph");
	nvtxRangeId_t gr = nvtxRangeStartA("graph");               // start/end range
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
	vecAdd<<<grid, block, 0, s1>>>(a, b, c, n);
	scale<<<grid, block, 0, s1>>>(c, 0.5f, n);
	CK(cudaStreamEndCapture(s1, &graph));
	CK(cudaGraphInstantiate(&exec, graph, 0));
	for (int k = 0; k < graph_launches; k++) CK(cudaGraphLaunch(exec, s1));
	CK(cudaStreamSynchronize(s1));
	nvtxRangeEnd(gr);

	for (int k = 0; k < empties; k++) emptyKernel<<<1, 1>>>();
	CK(cudaGetLastError());
	CK(cudaMemcpy(pinned_c, c, bytes, cudaMemcpyDeviceToHost)); // DtoH 1 (pinned)
	CK(cudaMemcpy(pageable_b.data(), d, bytes, cudaMemcpyDeviceToHost)); // DtoH 2 (pageable)
	nvtxRangePop();

	// c = (a + b) * 0.5 after the graph; d's second half was zeroed.
	double sum = 0;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		float want = (pinned_a[i] + 1.0f) * 0.5f;
		if (graph_launches > 0 && pinned_c[i] != want) bad++;
		sum += pinned_c[i];
	}
	printf("vector_add: n=%d iters=%d graph_launches=%d empty=%d checksum=%.1f %s\n", n, iters,
	       graph_launches, empties, sum, bad ? "WRONG" : "OK");

	// What the trace must hold (launches inside the graph count as kernels).
	const int graph_kernels = 2 * graph_launches;
	fprintf(stderr,
	        "EXPECT kernels.vecAdd=%d kernels.scale=%d kernels.emptyKernel=%d kernels.total=%d "
	        "kernels.graph=%d\n",
	        iters + graph_launches, iters + graph_launches, empties,
	        2 * iters + graph_kernels + empties, graph_kernels);
	fprintf(stderr,
	        "EXPECT memcpy.HtoD.count=3 memcpy.HtoD.bytes=%zu memcpy.DtoH.count=2 "
	        "memcpy.DtoH.bytes=%zu memset.count=2 memset.bytes=%zu\n",
	        2 * bytes + small, 2 * bytes, bytes + small);
	fprintf(stderr,
	        "EXPECT nvtx.pushpop=2 nvtx.startend=1 nvtx.mark=1 nvtx.maxdepth=1 "
	        "nvtx.range.vector_add=1 nvtx.range.launch_loop=1 nvtx.range.graph=1 "
	        "nvtx.mark.before_graph=1\n");
	// Kernels whose launch API call lies inside the range (same thread).
	// The two captured launches run only through the graph; graph kernels
	// correlate to cudaGraphLaunch, inside "graph".
	fprintf(stderr,
	        "EXPECT range_kernels.launch_loop=%d range_kernels.graph=%d range_kernels.vector_add=%d "
	        "streams.min=3\n",
	        2 * iters, graph_kernels, 2 * iters + graph_kernels + empties);
	// Runtime API: every <<<>>> goes through cudaLaunchKernel, including the
	// two made while capturing.
	fprintf(stderr, "EXPECT api.cudaLaunchKernel=%d api.cudaGraphLaunch=%d api.cudaMemcpy=4\n",
	        2 * iters + 2 + empties, graph_launches);

	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(graph));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	CK(cudaFree(d));
	CK(cudaFreeHost(pinned_a));
	CK(cudaFreeHost(pinned_c));
	return bad ? 1 : 0;
}
