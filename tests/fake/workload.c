/* workload.c — a scripted "training job" for the shim tests, linked against
 * the fake libcudart and the real (header-only) NVTX v3.  Its script is fixed,
 * so the tests derive exact expected counts from it (tests/shim/check_trace.c
 * keeps the numbers next to the assertions):
 *
 *   main: cudaMalloc x2, NVTX domain "workload" + registered string,
 *         domain mark (registered msg) + nvtxMarkA("plain-mark"),
 *         domain start/end "phase" (color, payload 42, category 3),
 *         start "cross" (ended by worker 0), push "unclosed" (never popped)
 *   4 workers (w = 0..3): push "worker" { 10 x (push "iter" {k_gemm grid w+1,
 *         k_relu} pop) } pop, cudaMemcpy HtoD 4096*(w+1) B, DtoH 1024 B,
 *         cudaMemset 512 B, cudaStreamSynchronize
 *   main: 3 x k_softmax, cudaDeviceSynchronize, cuCtxSynchronize (driver,
 *         called directly), cudaGetDeviceCount (not in the default set)
 *   fork child 1: no CUDA, exits;  fork child 2: 2 x k_relu + 1 HtoD of 100 B
 *   main: cudaFree x2; prints a checksum on stdout.
 *
 * "workload sleep READYFILE": 10 x k_gemm, push "loop", create READYFILE,
 * then launch + sleep 10 ms forever (the SIGTERM test).
 *
 * "workload loop MS [RANGE]": for MS milliseconds, k_gemm + a 256-byte
 * cudaMemset every ~1 ms, then cudaDeviceSynchronize; prints "loop N"
 * (launches).  The windowed-mode test (GPUPROF_GPU_WINDOW).  With RANGE each
 * iteration is inside nvtxRangePushA(RANGE) (the status-file test).
 *
 * "workload initonly": cuInit and cudaGetDeviceCount only (no context, no
 * recorded call), like OpenMPI's orted or torch.compile's compile workers:
 * must leave no trace file.  Prints "devices=N".
 *
 * "workload initlate": cuInit, cudaGetDeviceCount, 400 ms of sleep (CUDA's
 * DEVICE records may be handed over meanwhile, before there is a trace),
 * then 3 x k_gemm: the trace has the device record once and 3 kernels.
 *
 * "workload forkidle": 5 x k_gemm, then a fork child that never uses CUDA
 * (CUPTI still holds the parent's records: no flush yet) and ends with
 * exit(); the parent waits for it, launches 5 more and ends: one trace, the
 * parent's, with 10 kernels.  Prints "forkidle N" (the child's status).
 *
 * "workload exit N": N x k_gemm, cudaDeviceSynchronize, 600 ms of sleep (the
 * flush thread writes the records), then _exit(0) as Python's os._exit()
 * does: no atexit handler, no final flush (gpuprof run's last line).
 *
 * "workload forkstress ROUNDS": fork/lock-order stress (the fork test).  Two
 * threads launch while main forks ROUNDS children; in each child one thread
 * makes the child's first CUDA call (the shim creates the child's trace and
 * releases the inherited recorder) while another thread forks grandchildren
 * that exit at once.  Prints "forkstress ok N" when every child exited 0;
 * a lock-order bug shows up as a hang (the test's timeout).
 *
 * "workload stacks N": main -> stk_level_a -> stk_level_b -> stk_level_c ->
 * cudaLaunchKernel(k_gemm) N times, then N x cudaMemset from stk_level_c's
 * sibling stk_memset; prints "stacks N" (the call-stack tests).
 *
 * "workload capture N": the capture-range test (GPUPROF_CAPTURE_RANGE).
 *   3 x k_relu + mark "before" (no range yet); then N rounds of:
 *   cudaProfilerStart, push "in" { 5 x k_gemm + 1 cudaMemset } pop,
 *   mark "inside", push "spans" (popped in the next paused gap),
 *   cudaProfilerStop, 4 x k_softmax + mark "outside", pop "spans"
 *   (ends outside: kept, it began inside); then push "around"
 *   (begins paused), cuProfilerStart (the driver's, called directly),
 *   2 x k_gemm, cuProfilerStop, pop "around" (kept: a range ran inside
 *   it); a second cudaProfilerStop (no effect); finally cudaProfilerStart
 *   and 2 x k_gemm with no stop (the range ends at exit); prints
 *   "capture N".
 *
 * "workload steps N MS": the flight-recorder tests.  N training steps, step
 *   i = push "step i" { k_gemm with grid i+1, k_relu with grid i+1 (so a
 *   kernel names its step), a 256-byte cudaMemset, ~MS ms of host work }
 *   pop; prints "steps N".  Knobs (environment):
 *   WL_STALL=I:MS[,I:MS...]  step I takes MS ms more (a host stall)
 *   WL_GAP=I:MS[,I:MS...]    MS ms of host work before step I's push (a stall
 *                            in the data loading between two step ranges)
 *   WL_ERROR_AT=I            step I makes a failing cudaMalloc (1 TiB), in
 *                            wl_oom_alloc (a call site of its own for --stacks)
 *   WL_LEAK=BYTES            every step makes a cudaMalloc of BYTES it never
 *                            frees, in wl_leak_alloc (a leak's call site)
 *   WL_TEMP=BYTES            every step makes a cudaMalloc of BYTES in
 *                            wl_temp_alloc and frees it in the same step
 *   WL_RANGE_AT=I:NAME       step I holds a range NAME
 *   WL_READY=I:FILE          FILE is created when step I begins
 *   WL_GATE=I:FILE           step I waits (at most 20 s) until FILE exists
 *   WL_STEP_TIMES=FILE       "I T" per step at the end, T = CLOCK_MONOTONIC s at
 *                            step I's start (as examples/steploop.py --step-times)
 *   WL_PROFILE=A:B[:teardown][:early][:twice] the job's own CUPTI profiler over
 *                            steps A..B, driving CUPTI as Kineto does (see
 *                            profiler_* below); WL_PROFILE_CUPTI=PATH is the
 *                            libcupti it loads before any CUDA call (as
 *                            libtorch_cuda links it); A = -1: it starts
 *                            before the first CUDA call; early: it registers
 *                            its buffer callbacks before the first CUDA call
 *                            and enables its kind only at A; twice: it
 *                            registers them again after enabling.  Prints "profile
 *                            A..B subscribe RC callbacks N kernels K,K,...
 *                            unknown-buffers U" (kernels per step of the
 *                            window, from its own activity buffers) before
 *                            "steps N".  WL_PROFILE_AGAIN=C:D: a second
 *                            window (Kineto's next profile: no new
 *                            subscription), "again C..D kernels K,K,...".
 *
 * "workload plain N MS": the same loop without NVTX (the step finder's
 *   tests): first a "model load" of 24 host-to-device copies (sizes 4096,
 *   8192, 12288, 16384 in turn: alike but no step), then N steps, step i =
 *   cudaMemcpy host-to-device of WL_BATCH bytes (default 65536: the input),
 *   k_gemm and k_relu with grid i+1, a 256-byte cudaMemset, a 4-byte
 *   device-to-host cudaMemcpy (the loss), cudaStreamSynchronize, ~MS ms
 *   of host work.  Knobs: WL_STALL, WL_READY, WL_GATE, WL_STEP_TIMES as
 *   above, and
 *   WL_WARMUP=K              steps < K copy 1000 + i bytes more and run a k_softmax
 *   WL_NVTX_FROM=I           steps >= I are NVTX ranges "step i" too
 *   WL_IRREGULAR=1           no structure: each step's copy sizes, kernels and
 *                            their counts are drawn at random (a fixed seed)
 *   WL_BATCH_FROM=I:BYTES    from step I on the input copy has BYTES (a new phase)
 *   WL_TWIN=1                as an HF Trainer's step: two alike input copies, each
 *                            followed by a synchronisation, and three loss copies
 *                            with theirs (no call occurs once a step)
 *   WL_PAD=1                 the input copies' size is drawn per step (WL_BATCH
 *                            minus 0..255 times 8 bytes: a batch padded to its
 *                            longest sample)
 *   WL_STEP_THREAD=1         the steps run on a thread of their own, the main
 *                            thread waiting after the model load (a job that
 *                            loads its model on one thread and trains on
 *                            another)
 *   WL_STEP_THREAD=2         the same, the main thread meanwhile making a
 *                            host-to-device copy of a size drawn at random
 *                            every 1.5 to 2.5 step times (the finder's
 *                            first thread, busy with calls that repeat in
 *                            no step)
 *   WL_GRAPH_STEP=1          a step is one launch of a CUDA graph of k_gemm and
 *                            k_relu, captured before the first (as JAX's)
 *   WL_KERNELS_ONLY=1        a step is k_gemm and k_relu only (no copy, no sync:
 *                            the step's boundary can only be a kernel launch)
 *   WL_CALLBACKS=I:FILE      at step I's start FILE gets "memcpy E sync E" (E: 1
 *                            when the fake CUPTI's callback of cudaMemcpy /
 *                            cudaStreamSynchronize is on, -1 no fake CUPTI) */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <cuda_profiler_api.h>
#include <cudaProfiler.h>
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"

/* kernel "functions": only their addresses matter */
static void k_gemm(void) {}
static void k_relu(void) {}
static void k_softmax(void) {}

#define NWORKERS 4
#define ITERS 10

static void *dev_a, *dev_b;
static nvtxRangeId_t cross_id;
static unsigned long checksum;
static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;

static void launch(void (*k)(void), unsigned gx)
{
	dim3 g = {gx, 1, 1}, b = {128, 1, 1};
	cudaLaunchKernel((const void *)k, g, b, NULL, 0, NULL);
}

static void *worker(void *arg)
{
	int w = (int)(long)arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%d", w);
	pthread_setname_np(pthread_self(), name);
	nvtxRangePushA("worker");
	for (int i = 0; i < ITERS; i++) {
		nvtxRangePushA("iter");
		launch(k_gemm, (unsigned)w + 1);
		launch(k_relu, 64);
		nvtxRangePop();
	}
	nvtxRangePop();
	size_t n = 4096 * (size_t)(w + 1);
	unsigned char *h = malloc(n);
	for (size_t i = 0; i < n; i++)
		h[i] = (unsigned char)(i * 7 + (size_t)w);
	void *d = (char *)dev_a + (size_t)w * 16384;
	cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
	unsigned char back[1024];
	cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost);
	cudaMemset((char *)dev_b + w * 512, w, 512);
	cudaStreamSynchronize(NULL);
	unsigned long s = 0;
	for (size_t i = 0; i < sizeof back; i++)
		s += back[i];
	pthread_mutex_lock(&sum_lock);
	checksum += s;
	pthread_mutex_unlock(&sum_lock);
	if (w == 0)
		nvtxRangeEnd(cross_id);
	free(h);
	return NULL;
}

static int sleep_mode(const char *ready)
{
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	for (int i = 0; i < 10; i++)
		launch(k_gemm, 1);
	cudaDeviceSynchronize();
	nvtxRangePushA("loop");
	int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	struct timespec ts = {0, 10 * 1000 * 1000};
	for (;;) {
		launch(k_gemm, 2);
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* A DataLoader-like fork child: no CUDA at all; exit() runs the inherited
 * atexit handlers (the tracer's and CUDA's). */
static void idle_child(void)
{
	volatile unsigned long x = 0;
	for (int i = 0; i < 1000; i++)
		x += (unsigned long)i;
	exit(0);
}

static void launch_n(void (*k)(void), int n)
{
	for (int i = 0; i < n; i++)
		launch(k, 1);
}

static int initonly_mode(void)
{
	cuInit(0);
	int n = 0;
	cudaGetDeviceCount(&n);
	printf("devices=%d\n", n);
	return 0;
}

static int initlate_mode(void)
{
	cuInit(0);
	int n = 0;
	cudaGetDeviceCount(&n);
	struct timespec ts = {0, 400 * 1000 * 1000};
	nanosleep(&ts, NULL);
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	launch_n(k_gemm, 3);
	cudaDeviceSynchronize();
	printf("initlate %d\n", n);
	return 0;
}

static int forkidle_mode(void)
{
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	launch_n(k_gemm, 5);
	fflush(stdout);
	pid_t c = fork();
	if (c == 0)
		idle_child();
	int st = -1;
	waitpid(c, &st, 0);
	launch_n(k_gemm, 5);
	cudaDeviceSynchronize();
	printf("forkidle %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

static int exit_mode(int n)
{
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	for (int i = 0; i < n; i++)
		launch(k_gemm, 1);
	cudaDeviceSynchronize();
	struct timespec ts = {0, 600 * 1000 * 1000};
	nanosleep(&ts, NULL);
	_exit(0);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* WL_STEP_TIMES (the steps and plain modes): each step's start, CLOCK_MONOTONIC s */
static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "I T" per step into FILE (as examples/steploop.py --step-times); frees t0 */
static void write_step_times(const char *file, double *t0, long n)
{
	FILE *f = t0 ? fopen(file, "w") : NULL;
	for (long i = 0; f && i < n; i++)
		fprintf(f, "%ld %.9f\n", i, t0[i]);
	if (f)
		fclose(f);
	free(t0);
}

static int loop_mode(long ms, const char *range)
{
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	void *d = NULL;
	cudaMalloc(&d, 4096);
	uint64_t end = mono_ms() + (uint64_t)ms;
	long n = 0;
	struct timespec ts = {0, 1000 * 1000};
	while (mono_ms() < end) {
		if (range)
			nvtxRangePushA(range);
		launch(k_gemm, 1);
		cudaMemset(d, 0, 256);
		if (range)
			nvtxRangePop();
		n++;
		nanosleep(&ts, NULL);
	}
	cudaDeviceSynchronize();
	cudaFree(d);
	printf("loop %ld\n", n);
	return 0;
}

static volatile int stress_stop;

static void *stress_launcher(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 50 * 1000}; /* a few thousand records: check_trace reads 20000 */
	while (!stress_stop) {
		launch(k_relu, 3);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void *stress_first_cuda(void *arg)
{
	(void)arg;
	launch(k_relu, 4); /* the child's first CUDA call: trace created here */
	launch(k_relu, 4);
	return NULL;
}

static void *stress_forker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 8; i++) {
		pid_t g = fork();
		if (g == 0)
			_exit(0);
		if (g > 0)
			waitpid(g, NULL, 0);
	}
	return NULL;
}

static int forkstress(int rounds)
{
	fakeRegisterKernel((const void *)k_relu, "k_relu");
	launch(k_relu, 1);
	pthread_t l[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&l[i], NULL, stress_launcher, NULL);
	int ok = 0;
	for (int r = 0; r < rounds; r++) {
		pid_t c = fork();
		if (c == 0) {
			pthread_t a, b;
			pthread_create(&b, NULL, stress_forker, NULL);
			pthread_create(&a, NULL, stress_first_cuda, NULL);
			pthread_join(a, NULL);
			pthread_join(b, NULL);
			exit(0);
		}
		int st = -1;
		if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	stress_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(l[i], NULL);
	printf("forkstress ok %d\n", ok);
	return ok == rounds ? 0 : 1;
}

/* A known call chain for GPUPROF_STACKS: noinline, and each call is
 * followed by work so that no call becomes a tail jump (which would drop
 * the caller's frame from the stack). */
static volatile int stk_sink;
static __attribute__((noinline)) void stk_level_c(int n)
{
	dim3 g = {1, 1, 1}, b = {32, 1, 1};
	for (int i = 0; i < n; i++) {
		cudaLaunchKernel((const void *)k_gemm, g, b, NULL, 0, NULL);
		stk_sink++;
	}
}
static __attribute__((noinline)) void stk_memset(void *d, int n)
{
	for (int i = 0; i < n; i++) {
		cudaMemset(d, i, 64);
		stk_sink++;
	}
}
static __attribute__((noinline)) void stk_level_b(int n)
{
	stk_level_c(n);
	stk_sink++;
}
static __attribute__((noinline)) void stk_level_a(int n)
{
	stk_level_b(n);
	stk_sink++;
}

static int stacks_mode(int n)
{
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	void *d = NULL;
	cudaMalloc(&d, 4096);
	stk_level_a(n);
	stk_memset(d, n);
	cudaFree(d);
	printf("stacks %d\n", n);
	return 0;
}

static int capture_mode(int n)
{
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	fakeRegisterKernel((const void *)k_relu, "k_relu");
	fakeRegisterKernel((const void *)k_softmax, "k_softmax");
	void *d = NULL;
	cudaMalloc(&d, 4096);
	launch_n(k_relu, 3);
	nvtxMarkA("before");
	for (int r = 0; r < n; r++) {
		cudaProfilerStart();
		nvtxRangePushA("in");
		launch_n(k_gemm, 5);
		cudaMemset(d, r, 256);
		nvtxRangePop();
		nvtxMarkA("inside");
		nvtxRangePushA("spans");
		cudaProfilerStop();
		launch_n(k_softmax, 4);
		nvtxMarkA("outside");
		nvtxRangePop();
	}
	nvtxRangePushA("around");
	cuProfilerStart();
	launch_n(k_gemm, 2);
	cuProfilerStop();
	nvtxRangePop();
	cudaProfilerStop();
	cudaProfilerStart();
	launch_n(k_gemm, 2);
	cudaDeviceSynchronize();
	printf("capture %d\n", n);
	return 0;
}

/* "I:VALUE" of environment variable v for step i (entries separated by
 * ','): VALUE, else NULL */
/* WL_CALLBACKS: which of the step's marker callbacks the tracer keeps on,
 * asked of the fake CUPTI the tracer loaded */
static void write_callbacks(const char *path)
{
	void *lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	int (*on)(int, uint32_t) = lib ? (int (*)(int, uint32_t))dlsym(lib, "fake_cupti_callback_enabled") : NULL;
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "memcpy %d sync %d\n",
			on ? on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) : -1,
			on ? on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020) : -1);
		fclose(f);
	}
	if (lib)
		dlclose(lib);
}

static const char *step_knob(const char *v, long i)
{
	static char val[256];
	const char *e = getenv(v);
	while (e && *e) {
		char *end;
		long at = strtol(e, &end, 10);
		if (*end != ':')
			return NULL;
		if (at == i) {
			size_t n = strcspn(end + 1, ",");
			snprintf(val, sizeof val, "%.*s", (int)n, end + 1);
			return val;
		}
		e = strchr(end, ',');
		if (e)
			e++;
	}
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ------------------------------------------------------------ WL_PROFILE */
/* The job's own profiler, Kineto's CUPTI calls in Kineto's order
 * (libkineto/src/init.cpp, CuptiCallbackApi.cpp, CuptiActivityApi.cpp): at
 * its first start cuptiSubscribe (refused: it records no GPU activity at all,
 * as libkineto_init turns itself CPU-only) and a launch callback; at each
 * start cuptiActivityRegisterCallbacks, cuptiActivityEnable; at its stop
 * cuptiActivityDisable and a forced cuptiActivityFlushAll that hands its
 * buffers back; with teardown cuptiUnsubscribe and cuptiFinalize.  Its calls
 * are looked up in the global scope (RTLD_DEFAULT), as a library linked
 * against libcupti resolves them: a preloaded definition comes first. */
#define PROF_BUF 65536
#define PROF_MAX_BUFS 256
static struct {
	long a, b, c, d; /* the windows: A..B, C..D (c = -2: none) */
	int teardown, early, twice, on;
	CUptiResult sub_rc;
	CUpti_SubscriberHandle sub;
	long callbacks;
	long kernels[64], kernels2[64];
	long unknown; /* buffers handed to it that it never gave out */
	uint8_t *bufs[PROF_MAX_BUFS];
	pthread_mutex_t lock;
} prof = {.a = -2, .c = -2, .d = -2, .lock = PTHREAD_MUTEX_INITIALIZER};
#define PROF_FN(name) ((__typeof__(name) *)dlsym(RTLD_DEFAULT, #name))

static void CUPTIAPI prof_buf_req(uint8_t **buf, size_t *size, size_t *maxrec)
{
	*buf = malloc(PROF_BUF);
	*size = PROF_BUF;
	*maxrec = 0;
	pthread_mutex_lock(&prof.lock);
	for (int i = 0; i < PROF_MAX_BUFS; i++)
		if (!prof.bufs[i]) {
			prof.bufs[i] = *buf;
			break;
		}
	pthread_mutex_unlock(&prof.lock);
}

static void CUPTIAPI prof_buf_done(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	int mine = 0;
	pthread_mutex_lock(&prof.lock);
	for (int i = 0; i < PROF_MAX_BUFS; i++)
		if (prof.bufs[i] == buf) {
			prof.bufs[i] = NULL;
			mine = 1;
		}
	if (!mine) { /* Kineto: "bufferCompleted called with unknown buffer" */
		prof.unknown++;
		pthread_mutex_unlock(&prof.lock);
		return;
	}
	CUpti_Activity *r = NULL;
	while (PROF_FN(cuptiActivityGetNextRecord)(buf, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		long step = (long)((CUpti_ActivityKernel10 *)r)->gridX - 1;
		if (step >= prof.a && step <= prof.b && step - prof.a < 64)
			prof.kernels[step - prof.a]++;
		if (step >= prof.c && step <= prof.d && step - prof.c < 64)
			prof.kernels2[step - prof.c]++;
	}
	pthread_mutex_unlock(&prof.lock);
	free(buf);
}

static void CUPTIAPI prof_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	(void)ud;
	(void)cbid;
	const CUpti_CallbackData *cd = data;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && cd->callbackSite == CUPTI_API_EXIT)
		prof.callbacks++;
}

static void profiler_setup(void)
{
	const char *e = getenv("WL_PROFILE"), *lib = getenv("WL_PROFILE_CUPTI");
	if (!e || !lib || sscanf(e, "%ld:%ld", &prof.a, &prof.b) != 2) {
		prof.a = -2;
		return;
	}
	prof.teardown = strstr(e, ":teardown") != NULL;
	prof.early = strstr(e, ":early") != NULL;
	prof.twice = strstr(e, ":twice") != NULL;
	const char *again = getenv("WL_PROFILE_AGAIN");
	if (!again || sscanf(again, "%ld:%ld", &prof.c, &prof.d) != 2)
		prof.c = prof.d = -2;
	if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "workload: cannot load %s\n", lib);
		exit(3);
	}
	if (prof.early) /* before its subscription: the activity API needs none */
		PROF_FN(cuptiActivityRegisterCallbacks)(prof_buf_req, prof_buf_done);
}

static void profiler_start(int first)
{
	if (first)
		prof.sub_rc = PROF_FN(cuptiSubscribe)(&prof.sub, (CUpti_CallbackFunc)prof_callback, NULL);
	if (prof.sub_rc != CUPTI_SUCCESS)
		return; /* CPU-only */
	prof.on = 1;
	if (prof.sub_rc == CUPTI_SUCCESS)
		PROF_FN(cuptiEnableCallback)(1, prof.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	if (!prof.early)
		PROF_FN(cuptiActivityRegisterCallbacks)(prof_buf_req, prof_buf_done);
	PROF_FN(cuptiActivityEnable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (prof.twice)
		PROF_FN(cuptiActivityRegisterCallbacks)(prof_buf_req, prof_buf_done);
}

static void profiler_stop(void)
{
	prof.on = 0;
	cudaDeviceSynchronize();
	PROF_FN(cuptiActivityDisable)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	PROF_FN(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (prof.sub_rc == CUPTI_SUCCESS)
		PROF_FN(cuptiEnableCallback)(0, prof.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	if (prof.teardown) {
		if (prof.sub_rc == CUPTI_SUCCESS)
			PROF_FN(cuptiUnsubscribe)(prof.sub);
		PROF_FN(cuptiFinalize)();
	}
}

static void profiler_report(void)
{
	if (prof.a < -1)
		return;
	printf("profile %ld..%ld subscribe %d callbacks %ld kernels", prof.a, prof.b, (int)prof.sub_rc, prof.callbacks);
	for (long i = prof.a < 0 ? 0 : prof.a; i <= prof.b && i - prof.a < 64; i++)
		printf("%s%ld", i == (prof.a < 0 ? 0 : prof.a) ? " " : ",", prof.kernels[i - prof.a]);
	printf(" unknown-buffers %ld\n", prof.unknown);
	if (prof.c < 0)
		return;
	printf("again %ld..%ld kernels", prof.c, prof.d);
	for (long i = prof.c; i <= prof.d && i - prof.c < 64; i++)
		printf("%s%ld", i == prof.c ? " " : ",", prof.kernels2[i - prof.c]);
	printf("\n");
}

/* WL_LEAK's and WL_ERROR_AT's allocations, each a function of its own: the
 * call sites the memory view names from their stacks */
static __attribute__((noinline, noclone)) void *wl_leak_alloc(size_t bytes)
{
	void *p = NULL;
	cudaMalloc(&p, bytes);
	__asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays on the stack */
	return p;
}
static __attribute__((noinline, noclone)) void *wl_temp_alloc(size_t bytes)
{
	void *p = NULL;
	cudaMalloc(&p, bytes);
	__asm__ volatile("" ::: "memory");
	return p;
}
static __attribute__((noinline, noclone)) void wl_oom_alloc(void)
{
	void *big = NULL;
	cudaMalloc(&big, (size_t)1 << 40);
	__asm__ volatile("" ::: "memory");
}

static int steps_mode(long n, long ms)
{
	profiler_setup();
	if (prof.a == -1)
		profiler_start(1);
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	fakeRegisterKernel((const void *)k_relu, "k_relu");
	void *d = NULL;
	cudaMalloc(&d, 4096);
	const char *err_at = getenv("WL_ERROR_AT"), *times = getenv("WL_STEP_TIMES"), *leak = getenv("WL_LEAK"),
		   *temp = getenv("WL_TEMP");
	double *t0 = times ? calloc((size_t)n, sizeof *t0) : NULL;
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "step %ld", i);
		if (t0)
			t0[i] = mono_s();
		const char *gap = step_knob("WL_GAP", i);
		if (gap)
			sleep_ms(atol(gap));
		const char *ready = step_knob("WL_READY", i), *gate = step_knob("WL_GATE", i);
		nvtxRangePushA(name);
		if (i == prof.a || i == prof.c)
			profiler_start(i == prof.a);
		if (ready) {
			int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd >= 0)
				close(fd);
		}
		for (int k = 0; gate && k < 2000 && access(gate, F_OK) != 0; k++)
			sleep_ms(10);
		launch(k_gemm, (unsigned)i + 1);
		launch(k_relu, (unsigned)i + 1);
		cudaMemset(d, (int)i, 256);
		const char *range = step_knob("WL_RANGE_AT", i);
		if (range) {
			nvtxRangePushA(range);
			nvtxRangePop();
		}
		if (leak)
			wl_leak_alloc((size_t)atoll(leak)); /* kept: the leak */
		if (temp)
			cudaFree(wl_temp_alloc((size_t)atoll(temp))); /* freed: not live at a failure */
		if (err_at && atol(err_at) == i)
			wl_oom_alloc();
		const char *stall = step_knob("WL_STALL", i);
		sleep_ms(ms + (stall ? atol(stall) : 0));
		if ((i == prof.b || i == prof.d) && prof.on)
			profiler_stop();
		nvtxRangePop();
	}
	cudaDeviceSynchronize();
	cudaFree(d);
	write_step_times(times, t0, n);
	profiler_report();
	printf("steps %ld\n", n);
	return 0;
}

/* "plain": the loop as most jobs run it, no NVTX (see the file comment) */
static int plain_mode(long n, long ms);
static int plain_on_thread; /* WL_STEP_THREAD: this call is the step thread's (no model load) */
static long plain_n, plain_ms;
static atomic_int plain_done;
static void *plain_thread(void *arg)
{
	(void)arg;
	plain_on_thread = 1;
	plain_mode(plain_n, plain_ms);
	atomic_store(&plain_done, 1);
	return NULL;
}

static int plain_mode(long n, long ms)
{
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	fakeRegisterKernel((const void *)k_relu, "k_relu");
	fakeRegisterKernel((const void *)k_softmax, "k_softmax");
	const char *b = getenv("WL_BATCH"), *wu = getenv("WL_WARMUP"), *nf = getenv("WL_NVTX_FROM");
	const char *irr = getenv("WL_IRREGULAR"), *times = getenv("WL_STEP_TIMES");
	int kernels_only = getenv("WL_KERNELS_ONLY") != NULL, twin = getenv("WL_TWIN") != NULL;
	cudaGraphExec_t step_graph = NULL;
	int pad = getenv("WL_PAD") != NULL;
	size_t batch = b ? (size_t)atol(b) : 65536;
	long warmup = wu ? atol(wu) : 0, nvtx_from = nf ? atol(nf) : -1;
	size_t cap = batch + 1000 + (size_t)n + 65536;
	unsigned char *h = calloc(cap, 1);
	void *d = NULL;
	cudaMalloc(&d, cap);
	for (int j = 0; j < 24 && !plain_on_thread; j++)
		cudaMemcpy(d, h, 4096 * (size_t)(1 + j % 4), cudaMemcpyHostToDevice);
	if (getenv("WL_STEP_THREAD") && !plain_on_thread) {
		pthread_t th;
		plain_n = n;
		plain_ms = ms;
		if (pthread_create(&th, NULL, plain_thread, NULL) == 0) {
			unsigned r = 777;
			int busy = atoi(getenv("WL_STEP_THREAD")) == 2; /* copies beside the steps */
			while (busy && !atomic_load(&plain_done)) {
				r = r * 1103515245u + 12345u;
				sleep_ms(ms + ms / 2 + (long)((r >> 16) % (unsigned)(ms + 1)));
				cudaMemcpy(d, h, 1 + (r >> 8) % 60000, cudaMemcpyHostToDevice);
			}
			pthread_join(th, NULL);
		}
		cudaFree(d);
		free(h);
		return 0;
	}
	if (getenv("WL_GRAPH_STEP")) {
		cudaGraph_t g = NULL;
		cudaStreamBeginCapture(NULL, cudaStreamCaptureModeGlobal);
		launch(k_gemm, 1);
		launch(k_relu, 1);
		if (cudaStreamEndCapture(NULL, &g) != cudaSuccess || cudaGraphInstantiate(&step_graph, g, 0) != cudaSuccess)
			step_graph = NULL;
	}
	double *t0 = times ? calloc((size_t)n, sizeof *t0) : NULL;
	unsigned rnd = 12345;
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "step %ld", i);
		if (t0)
			t0[i] = mono_s();
		int nvtx = nvtx_from >= 0 && i >= nvtx_from;
		if (nvtx)
			nvtxRangePushA(name);
		const char *ready = step_knob("WL_READY", i), *gate = step_knob("WL_GATE", i);
		if (ready) {
			int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd >= 0)
				close(fd);
		}
		for (int k = 0; gate && k < 2000 && access(gate, F_OK) != 0; k++)
			sleep_ms(10);
		const char *cbs = step_knob("WL_CALLBACKS", i);
		if (cbs)
			write_callbacks(cbs);
		unsigned char loss[4];
		if (step_graph) {
			cudaGraphLaunch(step_graph, NULL);
		} else if (kernels_only) {
			launch(k_gemm, (unsigned)i + 1);
			launch(k_relu, (unsigned)i + 1);
		} else if (irr) {
			/* no structure: sizes, kernels and counts at random */
			rnd = rnd * 1103515245u + 12345u;
			cudaMemcpy(d, h, 1 + (rnd >> 8) % 60000, cudaMemcpyHostToDevice);
			for (unsigned k = 0, nk = 1 + (rnd >> 20) % 5; k < nk; k++) {
				rnd = rnd * 1103515245u + 12345u;
				unsigned which = (rnd >> 16) % 3;
				launch(which == 0 ? k_gemm : which == 1 ? k_relu : k_softmax, (unsigned)i + 1);
			}
			if ((rnd >> 12) % 3 == 0)
				cudaStreamSynchronize(NULL);
		} else {
			const char *bf = getenv("WL_BATCH_FROM");
			size_t b_now = bf && i >= atol(bf) && strchr(bf, ':') ? (size_t)atol(strchr(bf, ':') + 1) : batch;
			if (pad) {
				rnd = rnd * 1103515245u + 12345u;
				b_now -= 8 * ((rnd >> 16) % 256);
			}
			cudaMemcpy(d, h, b_now + (i < warmup ? 1000 + (size_t)i : 0), cudaMemcpyHostToDevice);
			if (twin) { /* an HF Trainer's step: input_ids and labels, alike, each synchronised */
				cudaStreamSynchronize(NULL);
				cudaMemcpy(d, h, b_now + (i < warmup ? 1000 + (size_t)i : 0), cudaMemcpyHostToDevice);
				cudaStreamSynchronize(NULL);
			}
			if (i < warmup)
				launch(k_softmax, 1);
			launch(k_gemm, (unsigned)i + 1);
			launch(k_relu, (unsigned)i + 1);
			cudaMemset(d, (int)i, 256);
			for (int r = 0; r < (twin ? 3 : 1); r++) {
				cudaMemcpy(loss, d, sizeof loss, cudaMemcpyDeviceToHost);
				cudaStreamSynchronize(NULL);
			}
		}
		const char *stall = step_knob("WL_STALL", i);
		sleep_ms(ms + (stall ? atol(stall) : 0));
		if (nvtx)
			nvtxRangePop();
	}
	cudaDeviceSynchronize();
	cudaFree(d);
	free(h);
	write_step_times(times, t0, n);
	printf("steps %ld\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "plain"))
		return plain_mode(atol(argv[2]), atol(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "steps"))
		return steps_mode(atol(argv[2]), atol(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "capture"))
		return capture_mode(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "stacks")) {
		int rc = stacks_mode(atoi(argv[2]));
		stk_sink++;
		return rc;
	}
	if (argc >= 3 && !strcmp(argv[1], "forkstress"))
		return forkstress(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "loop"))
		return loop_mode(atol(argv[2]), argc >= 4 ? argv[3] : NULL);
	if (argc >= 3 && !strcmp(argv[1], "sleep"))
		return sleep_mode(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "exit"))
		return exit_mode(atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "initonly"))
		return initonly_mode();
	if (argc >= 2 && !strcmp(argv[1], "forkidle"))
		return forkidle_mode();
	if (argc >= 2 && !strcmp(argv[1], "initlate"))
		return initlate_mode();
	fakeRegisterKernel((const void *)k_gemm, "k_gemm");
	fakeRegisterKernel((const void *)k_relu, "k_relu");
	fakeRegisterKernel((const void *)k_softmax, "k_softmax");

	cudaMalloc(&dev_a, 1 << 20);
	cudaMalloc(&dev_b, 4096);

	nvtxDomainHandle_t dom = nvtxDomainCreateA("workload");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered-mark");
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxDomainMarkEx(dom, &a);
	nvtxMarkA("plain-mark");

	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xFF00FF00u;
	a.category = 3;
	a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
	a.payload.llValue = 42;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "phase";
	nvtxRangeId_t phase = nvtxDomainRangeStartEx(dom, &a);
	cross_id = nvtxRangeStartA("cross");
	nvtxRangePushA("unclosed");

	pthread_t th[NWORKERS];
	for (long w = 0; w < NWORKERS; w++)
		pthread_create(&th[w], NULL, worker, (void *)w);
	for (int w = 0; w < NWORKERS; w++)
		pthread_join(th[w], NULL);

	for (int i = 0; i < 3; i++)
		launch(k_softmax, 8);
	cudaDeviceSynchronize();
	cuCtxSynchronize();
	int ndev = 0;
	cudaGetDeviceCount(&ndev);
	nvtxDomainRangeEnd(dom, phase);

	fflush(stdout);
	pid_t c1 = fork();
	if (c1 == 0)
		idle_child();
	pid_t c2 = fork();
	if (c2 == 0) {
		launch(k_relu, 5);
		launch(k_relu, 6);
		char buf[100];
		memset(buf, 1, sizeof buf);
		cudaMemcpy(dev_b, buf, sizeof buf, cudaMemcpyHostToDevice);
		exit(0);
	}
	int st1 = -1, st2 = -1;
	waitpid(c1, &st1, 0);
	waitpid(c2, &st2, 0);

	cudaFree(dev_a);
	cudaFree(dev_b);
	printf("devices=%d\n", ndev);
	printf("checksum=%lu\n", checksum);
	printf("children=%d,%d\n", WIFEXITED(st1) ? WEXITSTATUS(st1) : -1,
	       WIFEXITED(st2) ? WEXITSTATUS(st2) : -1);
	return 0;
}
