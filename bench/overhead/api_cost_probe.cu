// api_cost_probe.cu — two questions about recording API calls through CUPTI,
// answered on the GPU machine in one process per mode, with no gpuprof code:
//
// 1. When do per-API activity records (cuptiActivityEnableRuntimeApi /
//    cuptiActivityEnableDriverApi, what GPUPROF_API_MODE=activity uses) take
//    effect?  gpuprof's capture range switched them on from a
//    cudaProfilerStart callback and got no records at all on the H200.
//    Modes enable-*: switch them on at one moment, launch, count records.
// 2. What does each way of recording the launch call cost per launch,
//    measured in-process against itself (blocks with the recording on and
//    off in ABBA order, like bench/overhead's TOGGLE_PAIRS)?  Modes ab-*.
//    Kernel activity (CONCURRENT_KERNEL) is on for the whole run in every
//    mode, as under any tracer, so the difference is the API recording's.
//
// Build: nvcc -O2 -arch=sm_90 -o api_cost_probe api_cost_probe.cu -lcupti
// Usage: api_cost_probe MODE [LAUNCHES_PER_BLOCK=10000] [PAIRS=10]
//   enable-at-start   per-API records switched on before CUDA is initialised
//   enable-after-ctx  ... after the context exists (cudaFree(0))
//   enable-in-cb      ... from the exit callback of cudaProfilerStart
//   prime-then-cb     on and off again before CUDA starts, on again in the callback
//   kind-after-ctx    CUPTI_ACTIVITY_KIND_RUNTIME and _DRIVER (every call) after the context exists
//   kind-in-cb        ... from the exit callback of cudaProfilerStart
//   ab-callback       empty CUPTI callbacks on cudaLaunchKernel + cuLaunchKernel
//   ab-callback-rt    ... on cudaLaunchKernel only (no nested driver callback)
//   ab-actkind        the RUNTIME + DRIVER activity kinds
//   ab-actapi         per-API records for cudaLaunchKernel + cuLaunchKernel
//   ab-actapi-rt      ... for cudaLaunchKernel only
//   ab-actapi-primed  per-API records switched on before CUDA starts (the
//                     first block is 'on'), then off and on again at the
//                     block edges (records = launches in the 'on' blocks
//                     when switching mid-run works)
//   ab-none           the switch does nothing: what the A/B reads with no change
//   nested            every runtime and driver callback on: which driver calls
//                     CUPTI reports inside each kind of runtime call
// Output: one line, "PROBE mode=... key=value ...".
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void empty_kernel() {}

#define CK(call)                                                                              \
	do {                                                                                  \
		CUptiResult r_ = (call);                                                      \
		if (r_ != CUPTI_SUCCESS) {                                                    \
			const char *s_ = "?";                                                 \
			cuptiGetResultString(r_, &s_);                                        \
			fprintf(stderr, "api_cost_probe: %s: %s\n", #call, s_);              \
			exit(2);                                                              \
		}                                                                             \
	} while (0)

static const CUpti_CallbackId RT_LAUNCH = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
static const CUpti_CallbackId DRV_LAUNCH = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;

static std::atomic<unsigned long long> n_runtime, n_driver, n_kernel, n_other;
static CUpti_SubscriberHandle subscriber;
// what the cudaProfilerStart exit callback switches on (enable-in-cb,
// prime-then-cb, kind-in-cb)
static void (*on_profiler_start)(int);

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*size = 8u << 20;
	*buffer = (uint8_t *)aligned_alloc(8, *size);
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid)
{
	CUpti_Activity *rec = nullptr;
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_RUNTIME: n_runtime++; break;
		case CUPTI_ACTIVITY_KIND_DRIVER: n_driver++; break;
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: n_kernel++; break;
		default: n_other++; break;
		}
	}
	free(buffer);
}

static void per_api(int on)
{
	CK(cuptiActivityEnableRuntimeApi(RT_LAUNCH, on));
	CK(cuptiActivityEnableDriverApi(DRV_LAUNCH, on));
}

static void api_kinds(int on)
{
	if (on) {
		CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
		CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
	} else {
		CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
		CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
	}
}

static void per_api_rt(int on) { CK(cuptiActivityEnableRuntimeApi(RT_LAUNCH, on)); }

static void callbacks_rt(int on)
{
	CK(cuptiEnableCallback(on, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, RT_LAUNCH));
}

static void callbacks(int on)
{
	callbacks_rt(on);
	CK(cuptiEnableCallback(on, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, DRV_LAUNCH));
}

static void no_switch(int) {}

/* nested: per (runtime cbid, driver cbid) pair, the driver callbacks seen
 * while that runtime call was open on this thread */
static thread_local int rt_open = -1;
static std::atomic<unsigned> nested_count[1024][64];
static CUpti_CallbackId nested_drv[64];
static std::atomic<unsigned> n_nested_drv;
static bool nested_mode;

static void nested_note(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cd)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		rt_open = cd->callbackSite == CUPTI_API_ENTER ? (int)cbid : -1;
		return;
	}
	if (dom != CUPTI_CB_DOMAIN_DRIVER_API || rt_open < 0 || rt_open >= 1024 || cd->callbackSite != CUPTI_API_ENTER)
		return;
	unsigned k, n = n_nested_drv.load();
	for (k = 0; k < n && nested_drv[k] != cbid; k++)
		;
	if (k == n) {
		if (n >= 64)
			return;
		nested_drv[n] = cbid; // one thread in this probe
		n_nested_drv.store(n + 1);
	}
	nested_count[rt_open][k]++;
}

static void nested_report(void)
{
	for (int r = 0; r < 1024; r++)
		for (unsigned k = 0; k < n_nested_drv.load(); k++) {
			unsigned c = nested_count[r][k].load();
			if (!c)
				continue;
			const char *rn = "?", *dn = "?";
			cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, (uint32_t)r, &rn);
			cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, nested_drv[k], &dn);
			printf("NESTED runtime=%s driver=%s calls=%u\n", rn, dn, c);
		}
}

static void CUPTIAPI on_callback(void *, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
	if (nested_mode) {
		nested_note(dom, cbid, cd);
		return;
	}
	if (on_profiler_start && dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 && cd->callbackSite == CUPTI_API_EXIT)
		on_profiler_start(1);
	// anything else: nothing (ab-callback measures CUPTI's dispatch alone)
}

static double launch_block(long n)
{
	cudaDeviceSynchronize();
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < n; i++)
		empty_kernel<<<1, 1>>>();
	cudaDeviceSynchronize();
	auto t1 = std::chrono::steady_clock::now();
	return std::chrono::duration<double, std::micro>(t1 - t0).count() / (double)n;
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t k = v.size();
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* the PROBE line; the caller has flushed CUPTI's buffers */
static void counts(const char *mode, const char *extra)
{
	printf("PROBE mode=%s runtime_records=%llu driver_records=%llu kernel_records=%llu other=%llu%s\n", mode,
	       n_runtime.load(), n_driver.load(), n_kernel.load(), n_other.load(), extra);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: api_cost_probe MODE [LAUNCHES_PER_BLOCK] [PAIRS]\n");
		return 2;
	}
	const char *mode = argv[1];
	long per_block = argc > 2 ? atol(argv[2]) : 10000;
	int pairs = argc > 3 ? atoi(argv[3]) : 10;
	CK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CK(cuptiSubscribe(&subscriber, on_callback, nullptr));

	if (!strncmp(mode, "enable-", 7) || !strcmp(mode, "prime-then-cb") || !strncmp(mode, "kind-", 5)) {
		if (!strcmp(mode, "enable-at-start"))
			per_api(1);
		if (!strcmp(mode, "prime-then-cb")) {
			per_api(1);
			per_api(0);
		}
		cudaFree(0);
		launch_block(100); // warm-up: module load, first launch
		if (!strcmp(mode, "enable-after-ctx"))
			per_api(1);
		if (!strcmp(mode, "kind-after-ctx"))
			api_kinds(1);
		if (!strcmp(mode, "enable-in-cb") || !strcmp(mode, "prime-then-cb") || !strcmp(mode, "kind-in-cb")) {
			on_profiler_start = strcmp(mode, "kind-in-cb") ? per_api : api_kinds;
			CK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
					       CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
			cudaProfilerStart();
		}
		// records of the calls so far are counted before the block
		CK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
		unsigned long long rt0 = n_runtime.load(), drv0 = n_driver.load();
		launch_block(per_block);
		char extra[128];
		CK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
		snprintf(extra, sizeof extra, " launches=%ld runtime_in_block=%llu driver_in_block=%llu", per_block,
			 n_runtime.load() - rt0, n_driver.load() - drv0);
		counts(mode, extra);
		return 0;
	}

	if (!strcmp(mode, "nested")) {
		// 1000 of each call gpuprof's default set records in a training step
		cudaFree(0);
		launch_block(10);
		const size_t bytes = 1 << 20;
		void *dev = nullptr, *host = nullptr;
		cudaMalloc(&dev, bytes);
		cudaMallocHost(&host, bytes);
		cudaStream_t stream;
		cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
		cudaEvent_t event;
		cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
		cudaDeviceSynchronize();
		nested_mode = true;
		CK(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
		CK(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
		for (int i = 0; i < 1000; i++) {
			empty_kernel<<<1, 1, 0, stream>>>();
			cudaLaunchConfig_t cfg = {};
			cfg.gridDim = dim3(1);
			cfg.blockDim = dim3(1);
			cfg.stream = stream;
			cudaLaunchKernelEx(&cfg, empty_kernel);
			cudaMemcpyAsync(dev, host, 4096, cudaMemcpyHostToDevice, stream);
			cudaMemsetAsync(dev, 0, 4096, stream);
			cudaEventRecordWithFlags(event, stream, 0);
			cudaStreamWaitEvent(stream, event, 0);
			cudaStreamSynchronize(stream);
		}
		cudaDeviceSynchronize();
		CK(cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
		CK(cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
		nested_mode = false;
		nested_report();
		return 0;
	}

	void (*sw)(int) = nullptr;
	if (!strcmp(mode, "ab-none"))
		sw = no_switch;
	else if (!strcmp(mode, "ab-callback"))
		sw = callbacks;
	else if (!strcmp(mode, "ab-callback-rt"))
		sw = callbacks_rt;
	else if (!strcmp(mode, "ab-actkind"))
		sw = api_kinds;
	else if (!strcmp(mode, "ab-actapi"))
		sw = per_api;
	else if (!strcmp(mode, "ab-actapi-rt"))
		sw = per_api_rt;
	else if (!strcmp(mode, "ab-actapi-primed")) {
		sw = per_api;
		per_api(1);
	}
	if (!sw) {
		fprintf(stderr, "api_cost_probe: unknown mode %s\n", mode);
		return 2;
	}
	cudaFree(0);
	launch_block(2000);
	std::vector<double> on_us, off_us, ratio, delta;
	double prev_on = 0, prev_off = 0;
	int state = !strcmp(mode, "ab-actapi-primed");
	for (int b = 0; b < 2 * pairs; b++) {
		int on = (b % 4 == 0 || b % 4 == 3); // ABBA: on off off on ...
		if (on != state) {
			sw(on);
			state = on;
		}
		double us = launch_block(per_block);
		(on ? prev_on : prev_off) = us;
		if (b % 2 == 1) {
			on_us.push_back(prev_on);
			off_us.push_back(prev_off);
			ratio.push_back(prev_on / prev_off);
			delta.push_back(prev_on - prev_off);
		}
	}
	if (state)
		sw(0);
	CK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	char extra[320];
	snprintf(extra, sizeof extra, " launches_on=%ld pairs=%d per_block=%ld on_us=%.4f off_us=%.4f ratio=%.4f delta_us=%.4f", (long)pairs * per_block, pairs,
		 per_block, median(on_us), median(off_us), median(ratio), median(delta));
	counts(mode, extra);
	return 0;
}
