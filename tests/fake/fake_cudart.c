/* fake_cudart.c — a stand-in libcudart.so (runtime + the bits of the driver
 * it calls) for CI without a GPU.  Real signatures from cuda_runtime_api.h;
 * "device memory" is host memory.  Every call reports to CUPTI the way the
 * real stack does: runtime enter, nested driver enter/exit (same correlation
 * id), runtime exit, and an activity record in CUPTI's own struct layout with
 * deterministic durations.  Like the driver's cuInit, the first call loads
 * CUDA_INJECTION64_PATH and calls its InitializeInjection; CUPTI is reported
 * to only when some tool has loaded a libcupti.so.13. */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <cudaProfiler.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_api.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
	void (*enter)(struct fake_cupti_call *);
	void (*exit)(struct fake_cupti_call *);
	void (*resource)(uint32_t);
	void (*resource_graph)(uint32_t, const void *);
	void (*push)(const void *, size_t);
	uint64_t (*now)(void);
} cupti;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------ kernels */
#define MAX_KERNELS 64
static struct { const void *func; const char *name; } kernels[MAX_KERNELS];
static int nkernels;

EXPORT void fakeRegisterKernel(const void *func, const char *name)
{
	if (nkernels < MAX_KERNELS) {
		kernels[nkernels].func = func;
		kernels[nkernels].name = name; /* the pointer stays stable, like CUPTI's */
		nkernels++;
	}
}
static const char *kernel_name(const void *func)
{
	for (int i = 0; i < nkernels; i++)
		if (kernels[i].func == func)
			return kernels[i].name;
	return "unknown_kernel";
}

/* ------------------------------------------------------------ "cuInit" */
static void teardown(void)
{
	/* CUDA's own atexit: contexts are destroyed before later atexit
	 * handlers (the tool's) run */
	if (cupti.resource)
		cupti.resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	/* FAKE_CUDA_TEARDOWN_MS: a real teardown takes a while, during which the
	 * tool's threads still run (and must leave CUPTI alone) */
	const char *ms = getenv("FAKE_CUDA_TEARDOWN_MS");
	if (ms && atoi(ms) > 0) {
		struct timespec ts = { atoi(ms) / 1000, (long)(atoi(ms) % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* FAKE_CUDA_LAUNCH_US=N: a kernel launch or memset spends N us between its
 * driver call and its activity record, so that a tool switching its API
 * callbacks and activity kinds meanwhile sees a call without its enter
 * callback whose operation is recorded (the straddling call). */
static void launch_pause(void)
{
	static atomic_int us = -1;
	int v = atomic_load(&us);
	if (v < 0) {
		const char *e = getenv("FAKE_CUDA_LAUNCH_US");
		v = e ? atoi(e) : 0;
		atomic_store(&us, v);
	}
	if (v > 0) {
		struct timespec ts = { v / 1000000, (long)(v % 1000000) * 1000L };
		nanosleep(&ts, NULL);
	}
}

/* FAKE_CUDA_UUID_ORDER="2,0": CUDA device k is the GPU the fake NVML
 * numbers 2, 0, ... (its UUID; as CUDA_VISIBLE_DEVICES=2,0 would make it).
 * Unset: one device, NVML's GPU 0.  Read once, by "cuInit". */
#define FAKE_MAX_CUDA_DEV 8
static unsigned fake_cuda_uuid_of[FAKE_MAX_CUDA_DEV];
static int n_cuda_devices;
static int late_device_ms;
static uint64_t init_ns;
static atomic_int late_done;
static void push_device_records(int from, int to);
static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static int read_cuda_devices(void)
{
	const char *o = getenv("FAKE_CUDA_UUID_ORDER");
	int n = 0;
	while (o && *o && n < FAKE_MAX_CUDA_DEV) {
		char *end;
		fake_cuda_uuid_of[n++] = (unsigned)strtoul(o, &end, 10);
		o = *end == ',' ? end + 1 : "";
	}
	if (n == 0)
		fake_cuda_uuid_of[n++] = 0;
	return n;
}

static void fake_cuinit(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		void *h = dlopen(inj, RTLD_NOW);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		if (init)
			init();
	}
	void *c = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (c) {
		cupti.enter = (void (*)(struct fake_cupti_call *))dlsym(c, "fake_cupti_call_enter");
		cupti.exit = (void (*)(struct fake_cupti_call *))dlsym(c, "fake_cupti_call_exit");
		cupti.resource = (void (*)(uint32_t))dlsym(c, "fake_cupti_resource");
		cupti.resource_graph = (void (*)(uint32_t, const void *))dlsym(c, "fake_cupti_resource_graph");
		cupti.push = (void (*)(const void *, size_t))dlsym(c, "fake_cupti_push_record");
		cupti.now = (uint64_t(*)(void))dlsym(c, "fake_cupti_now");
		if (!cupti.enter || !cupti.exit || !cupti.resource || !cupti.resource_graph || !cupti.push || !cupti.now)
			memset(&cupti, 0, sizeof cupti); /* a real CUPTI: nothing to report to */
	}
	n_cuda_devices = read_cuda_devices();
	const char *late = getenv("FAKE_CUDA_LATE_DEVICE_MS");
	late_device_ms = late ? atoi(late) : 0;
	init_ns = mono_ns();
	push_device_records(0, late_device_ms > 0 ? 1 : n_cuda_devices);
}

/* FAKE_CUDA_LATE_DEVICE_MS=N: the DEVICE records of CUDA devices 1.. are
 * pushed at the first API call N ms after "cuInit", not with device 0's (real
 * CUPTI converts them one by one and a flush can split them). */
static void push_late_devices(void)
{
	if (late_device_ms <= 0 || atomic_load(&late_done) ||
	    mono_ns() - init_ns < (uint64_t)late_device_ms * 1000000ull)
		return;
	if (!atomic_exchange(&late_done, 1))
		push_device_records(1, n_cuda_devices);
}

static void push_device_records(int from, int to)
{
	for (int i = from; cupti.push && i < to; i++) {
		CUpti_ActivityDevice5 d;
		memset(&d, 0, sizeof d);
		d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
		d.id = (uint32_t)i;
		d.name = "Fake H200";
		d.computeCapabilityMajor = 9;
		d.computeCapabilityMinor = 0;
		d.numMultiprocessors = 132;
		d.numThreadsPerWarp = 32;
		d.maxWarpsPerMultiprocessor = 64;
		d.maxBlocksPerMultiprocessor = 32;
		d.maxRegistersPerMultiprocessor = 65536;
		d.maxSharedMemoryPerMultiprocessor = 233472;
		d.maxSharedMemoryPerBlock = 232448;
		d.maxThreadsPerBlock = 1024;
		d.coreClockRate = 1980000;
		d.globalMemorySize = 150ull << 30;
		unsigned char u[16];
		fake_gpu_uuid(fake_cuda_uuid_of[i], u);
		memcpy(&d.uuid, u, sizeof u);
		cupti.push(&d, sizeof d);
	}
}

static void ensure_init(void) { pthread_once(&init_once, fake_cuinit); }

/* The primary context: created by the first call that needs one (not by
 * cuInit or cudaGetDeviceCount, as with the real CUDA). */
static pthread_once_t context_once = PTHREAD_ONCE_INIT;
static void fake_context(void)
{
	if (cupti.resource)
		cupti.resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	/* CUDA's own exit teardown, registered after the tool's context hook
	 * ran (so it runs before the tool's exit handler) */
	atexit(teardown);
}
static void ensure_context(void)
{
	ensure_init();
	pthread_once(&context_once, fake_context);
}

/* ------------------------------------------------------------ call framing */
struct frame { struct fake_cupti_call rt, drv; };

static void rt_enter_params(struct frame *f, uint32_t cbid, const char *name, const char *symbol,
			    const void *params)
{
	if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020)
		ensure_init();
	else
		ensure_context();
	push_late_devices();
	memset(f, 0, sizeof *f);
	f->rt.domain = CUPTI_CB_DOMAIN_RUNTIME_API;
	f->rt.cbid = cbid;
	f->rt.func = name;
	f->rt.symbol = symbol;
	f->rt.params = params;
	if (cupti.enter)
		cupti.enter(&f->rt);
}
static void rt_enter(struct frame *f, uint32_t cbid, const char *name, const char *symbol)
{
	rt_enter_params(f, cbid, name, symbol, NULL);
}
/* the driver call the runtime makes underneath: same correlation id */
static void drv_call(struct frame *f, uint32_t cbid, const char *name)
{
	if (!cupti.enter)
		return;
	f->drv.domain = CUPTI_CB_DOMAIN_DRIVER_API;
	f->drv.cbid = cbid;
	f->drv.func = name;
	cupti.enter(&f->drv);
	f->drv.correlation_id = f->rt.correlation_id;
	cupti.exit(&f->drv);
}
static cudaError_t rt_exit(struct frame *f, cudaError_t ret)
{
	f->rt.ret = ret;
	if (cupti.exit)
		cupti.exit(&f->rt);
	return ret;
}
static uint64_t now(void) { return cupti.now ? cupti.now() : 0; }
static uint32_t stream_id(cudaStream_t s) { return s ? (uint32_t)((uintptr_t)s & 0xffff) : 7; }

/* ------------------------------------------------------------ graphs */
/* Stream capture of kernel launches (one capture at a time), instantiation
 * and launch, as CUPTI reports them: a launch on the capturing stream makes
 * a node inside the launch call (GRAPHNODE_CREATED, no kernel record);
 * instantiation copies every node (GRAPHNODE_CLONED, original -> copy); a
 * graph launch's kernel records carry the launch's correlation id, the
 * graph's id and the copy's node id. */
#define FAKE_GRAPH_NODES 64
struct fake_graph {
	struct fake_graph_obj obj; /* first: the handle points here */
	int n;
	struct fake_graph_obj nodes[FAKE_GRAPH_NODES];
	struct { const void *func; dim3 grid, block; } k[FAKE_GRAPH_NODES];
};
struct fake_exec {
	struct fake_graph_obj obj;
	struct fake_graph *g;
	struct fake_graph_obj nodes[FAKE_GRAPH_NODES];
};
static _Atomic uint64_t next_graph_obj = 1000;
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t capture_stream;
static struct fake_graph *capture_graph;

static void graph_data(CUpti_GraphData *gd, struct fake_graph *g, struct fake_graph_obj *node,
		       struct fake_graph_obj *orig)
{
	memset(gd, 0, sizeof *gd);
	gd->graph = (CUgraph)(void *)g;
	gd->originalGraph = orig ? (CUgraph)(void *)g : NULL;
	gd->node = (CUgraphNode)(void *)node;
	gd->originalNode = (CUgraphNode)(void *)orig;
	gd->nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
}

/* 1 when stream is capturing: the launch became a node */
static int capture_node(const void *func, dim3 grid, dim3 block, cudaStream_t stream)
{
	pthread_mutex_lock(&capture_lock);
	struct fake_graph *g = capture_graph && stream == capture_stream ? capture_graph : NULL;
	int i = g && g->n < FAKE_GRAPH_NODES ? g->n++ : -1;
	pthread_mutex_unlock(&capture_lock);
	if (!g)
		return 0;
	if (i >= 0) {
		g->nodes[i].id = atomic_fetch_add(&next_graph_obj, 1);
		g->k[i].func = func;
		g->k[i].grid = grid;
		g->k[i].block = block;
		CUpti_GraphData gd;
		graph_data(&gd, g, &g->nodes[i], NULL);
		if (cupti.resource_graph)
			cupti.resource_graph(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &gd);
	}
	return 1;
}

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	(void)mode;
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, "cudaStreamBeginCapture", NULL);
	cudaError_t r = cudaErrorIllegalState;
	pthread_mutex_lock(&capture_lock);
	if (!capture_graph) {
		capture_graph = calloc(1, sizeof *capture_graph);
		if (capture_graph) {
			capture_graph->obj.id = atomic_fetch_add(&next_graph_obj, 1);
			capture_stream = stream;
			r = cudaSuccess;
		}
	}
	pthread_mutex_unlock(&capture_lock);
	return rt_exit(&f, r);
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, "cudaStreamEndCapture", NULL);
	cudaError_t r = cudaErrorIllegalState;
	pthread_mutex_lock(&capture_lock);
	if (capture_graph && stream == capture_stream) {
		*graph = (cudaGraph_t)(void *)capture_graph;
		capture_graph = NULL;
		r = cudaSuccess;
	}
	pthread_mutex_unlock(&capture_lock);
	return rt_exit(&f, r);
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
	(void)flags;
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, "cudaGraphInstantiate", NULL);
	struct fake_graph *g = (struct fake_graph *)(void *)graph;
	struct fake_exec *x = g ? calloc(1, sizeof *x) : NULL;
	if (!x)
		return rt_exit(&f, cudaErrorInvalidValue);
	x->obj.id = atomic_fetch_add(&next_graph_obj, 1);
	x->g = g;
	for (int i = 0; i < g->n; i++) {
		x->nodes[i].id = atomic_fetch_add(&next_graph_obj, 1);
		CUpti_GraphData gd;
		graph_data(&gd, g, &x->nodes[i], &g->nodes[i]);
		gd.graphExec = (CUgraphExec)(void *)x;
		if (cupti.resource_graph)
			cupti.resource_graph(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, &gd);
	}
	*exec = (cudaGraphExec_t)(void *)x;
	return rt_exit(&f, cudaSuccess);
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
	struct fake_exec *x = (struct fake_exec *)(void *)exec;
	struct frame f;
	cudaGraphLaunch_v10000_params p = { exec, stream };
	rt_enter_params(&f, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch", NULL, &p);
	drv_call(&f, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch");
	if (!x)
		return rt_exit(&f, cudaErrorInvalidValue);
	uint64_t t = now() + 1000;
	for (int i = 0; cupti.push && i < x->g->n; i++) {
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof k);
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.start = t;
		k.end = t + 2000 + 10ull * x->g->k[i].grid.x;
		t = k.end + 100;
		k.completed = k.end;
		k.contextId = 1;
		k.streamId = stream_id(stream);
		k.gridX = (int32_t)x->g->k[i].grid.x; k.gridY = (int32_t)x->g->k[i].grid.y; k.gridZ = (int32_t)x->g->k[i].grid.z;
		k.blockX = (int32_t)x->g->k[i].block.x; k.blockY = (int32_t)x->g->k[i].block.y; k.blockZ = (int32_t)x->g->k[i].block.z;
		k.registersPerThread = 32;
		k.correlationId = f.rt.correlation_id;
		k.name = kernel_name(x->g->k[i].func);
		k.graphId = (uint32_t)x->g->obj.id;
		k.graphNodeId = x->nodes[i].id;
		cupti.push(&k, sizeof k);
	}
	return rt_exit(&f, cudaSuccess);
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
	free((void *)exec);
	return cudaSuccess;
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	free((void *)graph);
	return cudaSuccess;
}

/* ------------------------------------------------------------ runtime API */
EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				    size_t smem, cudaStream_t stream)
{
	(void)args;
	const char *name = kernel_name(func);
	struct frame f;
	/* functionParams as CUPTI gives them (the shim keys call sites on func) */
	cudaLaunchKernel_v7000_params p = { func, grid, block, args, smem, stream };
	/* FAKE_CUDA_LAUNCH13=1: the callback CUDA 13's runtime gives a <<<>>>
	 * launch, __cudaLaunchKernel (its own id, no params struct) */
	static _Atomic int v13 = -1; /* (the job's threads launch at once: TSan) */
	int is13 = atomic_load_explicit(&v13, memory_order_relaxed);
	if (is13 < 0) {
		is13 = getenv("FAKE_CUDA_LAUNCH13") != NULL;
		atomic_store_explicit(&v13, is13, memory_order_relaxed);
	}
	if (is13)
		rt_enter_params(&f, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel", name, NULL);
	else
		rt_enter_params(&f, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", name, &p);
	drv_call(&f, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel");
	if (capture_node(func, grid, block, stream))
		return rt_exit(&f, cudaSuccess); /* captured: a node, no kernel runs */
	launch_pause();
	if (cupti.push) {
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof k);
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.start = now() + 1000;
		k.end = k.start + 2000 + 10ull * grid.x;
		k.completed = k.end;
		k.deviceId = 0;
		k.contextId = 1;
		k.streamId = stream_id(stream);
		k.gridX = (int32_t)grid.x; k.gridY = (int32_t)grid.y; k.gridZ = (int32_t)grid.z;
		k.blockX = (int32_t)block.x; k.blockY = (int32_t)block.y; k.blockZ = (int32_t)block.z;
		k.registersPerThread = 32;
		k.staticSharedMemory = 1024;
		k.dynamicSharedMemory = (int32_t)smem;
		k.localMemoryPerThread = 16;
		k.correlationId = f.rt.correlation_id;
		k.name = name;
		k.launchType = 0;
		cupti.push(&k, sizeof k);
	}
	return rt_exit(&f, cudaSuccess);
}

static void memcpy_record(struct frame *f, size_t count, enum cudaMemcpyKind kind, cudaStream_t s,
			  int async)
{
	if (!cupti.push)
		return;
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	switch (kind) {
	case cudaMemcpyHostToDevice: m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD; m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE; m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE; break;
	case cudaMemcpyDeviceToHost: m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH; m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE; m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE; break;
	case cudaMemcpyDeviceToDevice: m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD; m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE; break;
	default: m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH; m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE; break;
	}
	m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m.bytes = count;
	m.start = now() + 500;
	m.end = m.start + 100 + count / 10;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = stream_id(s);
	m.correlationId = f->rt.correlation_id;
	cupti.push(&m, sizeof m);
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	struct frame f;
	/* functionParams as CUPTI gives them (the step finder reads size and kind) */
	cudaMemcpy_v3020_params p = { dst, src, count, kind };
	rt_enter_params(&f, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", NULL, &p);
	drv_call(&f, kind == cudaMemcpyDeviceToHost ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2
						    : CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
		 kind == cudaMemcpyDeviceToHost ? "cuMemcpyDtoH_v2" : "cuMemcpyHtoD_v2");
	memmove(dst, src, count);
	memcpy_record(&f, count, kind, NULL, 0);
	return rt_exit(&f, cudaSuccess);
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				   enum cudaMemcpyKind kind, cudaStream_t stream)
{
	struct frame f;
	cudaMemcpyAsync_v3020_params p = { dst, src, count, kind, stream };
	rt_enter_params(&f, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync", NULL, &p);
	memmove(dst, src, count);
	memcpy_record(&f, count, kind, stream, 1);
	return rt_exit(&f, cudaSuccess);
}

EXPORT cudaError_t cudaMemset(void *p, int value, size_t count)
{
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, "cudaMemset", NULL);
	drv_call(&f, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2");
	memset(p, value, count);
	launch_pause();
	if (cupti.push) {
		CUpti_ActivityMemset4 m;
		memset(&m, 0, sizeof m);
		m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		m.value = (uint32_t)value;
		m.bytes = count;
		m.start = now() + 300;
		m.end = m.start + 50 + count / 100;
		m.deviceId = 0;
		m.contextId = 1;
		m.streamId = 7;
		m.correlationId = f.rt.correlation_id;
		m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		cupti.push(&m, sizeof m);
	}
	return rt_exit(&f, cudaSuccess);
}

static void memory_record(struct frame *f, void *p, size_t bytes, int alloc)
{
	if (!cupti.push)
		return;
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
				      : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = f->rt.correlation_id;
	m.address = (uint64_t)(uintptr_t)p;
	m.bytes = bytes;
	m.timestamp = now();
	m.deviceId = 0;
	m.contextId = 1;
	cupti.push(&m, sizeof m);
}

EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
	struct frame f;
	cudaMalloc_v3020_params prm = { p, size }; /* the failed request's size is read from it */
	rt_enter_params(&f, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc", NULL, &prm);
	drv_call(&f, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2");
	/* remember the size in front of the block (cudaFree reports it); more
	 * than 64 GiB is "out of memory" (an error the tests can ask for,
	 * without asking a sanitizer's allocator) */
	size_t *b = size <= ((size_t)64 << 30) ? malloc(size + 16) : NULL;
	cudaError_t r = cudaErrorMemoryAllocation;
	if (b) {
		b[0] = size;
		*p = b + 2;
		r = cudaSuccess;
		memory_record(&f, *p, size, 1);
	}
	return rt_exit(&f, r);
}

EXPORT cudaError_t cudaFree(void *p)
{
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree", NULL);
	drv_call(&f, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, "cuMemFree_v2");
	if (p) {
		size_t *b = (size_t *)p - 2;
		memory_record(&f, p, b[0], 0);
		free(b);
	}
	return rt_exit(&f, cudaSuccess);
}

static void sync_record(struct frame *f, CUpti_ActivitySynchronizationType t, uint32_t stream)
{
	if (!cupti.push)
		return;
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = t;
	s.start = f->rt.start;
	s.end = now();
	s.correlationId = f->rt.correlation_id;
	s.contextId = 1;
	s.streamId = stream;
	/* as CUPTI: not applicable -> CUPTI_SYNCHRONIZATION_INVALID_VALUE */
	s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	cupti.push(&s, sizeof s);
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize", NULL);
	drv_call(&f, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize");
	sync_record(&f, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
	return rt_exit(&f, cudaSuccess);
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize", NULL);
	drv_call(&f, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, "cuStreamSynchronize");
	sync_record(&f, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, stream_id(s));
	return rt_exit(&f, cudaSuccess);
}

EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
	struct frame f;
	rt_enter(&f, CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020, "cudaGetDeviceCount", NULL);
	*n = n_cuda_devices; /* rt_enter ran "cuInit" */
	return rt_exit(&f, cudaSuccess);
}

/* cuInit: loads the injection (InitializeInjection), no context, no
 * callback (CUPTI subscribes during it).  A process that only does this and
 * asks for the device count (OpenMPI's orted, torch.compile's workers)
 * touched CUDA but has nothing to trace. */
EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	ensure_init();
	return CUDA_SUCCESS;
}

/* A driver call made by the application itself (not nested in a runtime
 * call): the default set must record it. */
EXPORT CUresult cuCtxSynchronize(void)
{
	ensure_context();
	struct fake_cupti_call c;
	memset(&c, 0, sizeof c);
	c.domain = CUPTI_CB_DOMAIN_DRIVER_API;
	c.cbid = CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize;
	c.func = "cuCtxSynchronize";
	if (cupti.enter) {
		cupti.enter(&c);
		cupti.exit(&c);
	}
	return CUDA_SUCCESS;
}

/* The CUDA profiler API (capture ranges, GPUPROF_CAPTURE_RANGE): the
 * runtime call makes the driver's underneath, like the real one; the
 * driver's may also be called directly (JAX does). */
static cudaError_t profiler_call(int start)
{
	struct frame f;
	rt_enter(&f, start ? CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
			   : CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000,
		 start ? "cudaProfilerStart" : "cudaProfilerStop", NULL);
	drv_call(&f, start ? CUPTI_DRIVER_TRACE_CBID_cuProfilerStart : CUPTI_DRIVER_TRACE_CBID_cuProfilerStop,
		 start ? "cuProfilerStart" : "cuProfilerStop");
	return rt_exit(&f, cudaSuccess);
}
EXPORT cudaError_t cudaProfilerStart(void) { return profiler_call(1); }
EXPORT cudaError_t cudaProfilerStop(void) { return profiler_call(0); }

static CUresult driver_profiler_call(int start)
{
	ensure_context();
	struct fake_cupti_call c;
	memset(&c, 0, sizeof c);
	c.domain = CUPTI_CB_DOMAIN_DRIVER_API;
	c.cbid = start ? CUPTI_DRIVER_TRACE_CBID_cuProfilerStart : CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
	c.func = start ? "cuProfilerStart" : "cuProfilerStop";
	if (cupti.enter) {
		cupti.enter(&c);
		cupti.exit(&c);
	}
	return CUDA_SUCCESS;
}
EXPORT CUresult cuProfilerStart(void) { return driver_profiler_call(1); }
EXPORT CUresult cuProfilerStop(void) { return driver_profiler_call(0); }

/* Test hook: launches func from a new native thread (no Python thread state
 * there) and waits for it — a Python process whose launch comes from a
 * thread that never ran Python, like PyTorch's autograd workers. */
struct native_launch { const void *func; int n; };
static void *native_launcher(void *arg)
{
	struct native_launch *nl = arg;
	dim3 g = {1, 1, 1}, b = {32, 1, 1};
	for (int i = 0; i < nl->n; i++)
		cudaLaunchKernel(nl->func, g, b, NULL, 0, NULL);
	return NULL;
}
EXPORT int fakeLaunchFromNativeThread(const void *func, int n)
{
	struct native_launch nl = { func, n };
	pthread_t t;
	if (pthread_create(&t, NULL, native_launcher, &nl) != 0)
		return -1;
	pthread_join(t, NULL);
	return 0;
}
