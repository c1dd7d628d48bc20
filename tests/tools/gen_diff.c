/* gen_diff.c — training-step traces whose differences are known, for
 * `gpuprof diff` (test_diff.py works every delta out from the timeline
 * below) and `gpuprof report` (--counters: sampled counters and memory
 * records too).  Records are written in the order the recorder writes them:
 * an API call when it returns, a push/pop range when it is popped, a GPU
 * operation when it ends.
 *
 *   gen_diff [options] OUT
 *     --steps N        steps (default 30), NVTX "step <k>", k = 0..N-1
 *     --warmup         step 0 is a warm-up step: 800 us more loading, two
 *                      cudaMalloc calls and an "autotune_probe" kernel (20 us)
 *     --warmup-steps N steps 0 .. N-1 are such warm-up steps (a warm-up run longer
 *                      than advise takes back, advise_facts.h adv_facts_settle)
 *     --load-ns N      host time before the first call of a step (default 200000)
 *     --jitter N       plus j_k ns, j_k uniform in [0, N) from an LCG seeded by
 *                      --seed (default 0: none); the same seed gives the same j_k
 *     --seed N         (default 1)
 *     --gemm-ns N      "gemm_fwd_kernel" (default 100000); "gemm_bwd_kernel"
 *                      takes 1.5 x as long
 *     --attn flash     "flash_fwd_kernel" (15000 ns) instead of "softmax_kernel"
 *                      (50000 ns)
 *     --device-sync    a cudaDeviceSynchronize after the step's stream sync,
 *                      10000 ns long
 *     --dtoh           a cudaMemcpyAsync DtoH of 4 bytes (2000 ns on the GPU)
 *                      after the optimizer kernel
 *     --graph-copies   a cudaGraphLaunch instead, whose graph copies 4096 bytes
 *                      DtoH (1000 ns) then 64 bytes HtoD (500 ns): both copies
 *                      carry the call's correlation id; the call's record is
 *                      written 10 s late (both copies wait for it)
 *     --counters       nvml.gpu_util, pm.sm_active_pct and nvml.power_mw samples
 *                      every 100 us of the run, and memory records (below)
 *     --anon-ns        flash_fwd_kernel is named as PyTorch's kernels are,
 *                      "void at::native::(anonymous namespace)::
 *                      flash_fwd_kernel<float>(float const*, int)"
 *     --odd-name       relu_kernel is named "relu</script><!--<script>x(1)//" (a page
 *                      that inlines names must still parse)
 *     --cmd STR        the process's command line (default "python train.py")
 *     --settings STR   the tracer's settings line in the process record
 *                      (default: none)
 *     --threads N      N threads record (SOURCE records; default 1, the main
 *                      thread; the others record nothing else)
 *     --pid P --rank R pid (default 6000) and rank (default -1: none); rank R's
 *                      clock starts R x 3 s later with CLOCK_REALTIME 1000 ns
 *                      later, so `gpuprof merge` puts its step k 1000 ns after
 *                      rank 0's
 *
 * A step k starts at s_k (s_0 = 0, s_{k+1} = e_k + 50000: the time between
 * steps belongs to none); times below are ns after t = s_k + load + j_k
 * (+ 800000 in a warm-up step 0).  Threads: main (tid P).  Stream 7.
 *   cudaMemcpyAsync HtoD 1 MiB    call [0, 3000)       GPU [5000, 25000)
 *   "forward" range [3000, 11000):
 *     cudaLaunchKernel gemm_fwd   call [4000, 6000)    GPU after the copy, G
 *     cudaLaunchKernel relu       call [7000, 8000)    GPU next, 20000
 *     cudaLaunchKernel attention  call [9000, 10000)   GPU next, A (50000 or 15000)
 *   "backward" range [11000, 14000):
 *     cudaLaunchKernel gemm_bwd   call [12000, 13000)  GPU next, 1.5 G
 *   "optimizer" range [14000, 16000):
 *     cudaLaunchKernel adam       call [14500, 15500)  GPU next, 30000
 *     (--dtoh) cudaMemcpyAsync DtoH call [15600, 15800) GPU next, 2000
 *     (--graph-copies) cudaGraphLaunch call [15600, 15800) GPU next, 1000 + 500
 *   cudaStreamSynchronize         call [16000, E + 2000)   E: the GPU's last end
 *   (--device-sync) cudaDeviceSynchronize [E + 2000, E + 12000)
 *   the step ends 5000 after the last call: e_k = end of that call + 5000.
 * So E = t + 5000 + 20000 + G + 20000 + A + 1.5 G + 30000 (+ 2000 with
 * --dtoh): the GPU never waits for a launch, and a step's time is
 * load + j_k + E' + 7000 (+ 10000 with --device-sync), E' = E - t.
 * A warm-up step 0 also has cudaMalloc calls [-799000, -798000) and
 * [-797900, -797500) (inside its longer loading time), and autotune_probe
 * launched [15600, 15700), on the GPU after adam (before any DtoH copy),
 * 20000 long.
 *
 * --counters: at every 100 us from s_0 to the last step's end:
 * nvml.gpu_util = 50 + 10 x (i mod 3), pm.sm_active_pct = 40, nvml.power_mw
 * = 300000 + 1000 x (i mod 5) (device 0); memory: at s_0 + 1000 an alloc of
 * 64 MiB (device) at 0x7f0000000000 and 1 MiB (pinned) at 0x10000, at the
 * end of step 1 an alloc of 32 MiB (device) at 0x7f0010000000, at the end
 * of the last step a free of the 64 MiB one (size not given: taken from
 * the allocation). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"

#define T0 2000000000ull

enum {
	S_CMD = 1, S_HOST, S_MAIN, S_LAUNCH, S_MEMCPY, S_SSYNC, S_DSYNC, S_MALLOC, S_GEMM_F, S_GEMM_B, S_RELU,
	S_SOFTMAX, S_FLASH, S_ADAM, S_AUTOTUNE, S_FWD, S_BWD, S_OPT, S_UTIL, S_SMACT, S_POWER, S_GPU, S_SETTINGS,
	S_GRAPH, S_STEP0
};

struct item { uint64_t emit; size_t seq; uint32_t src; gp_record r; };
static struct item *items;
static size_t nitems, citems;
static uint64_t clock0; /* this trace's clock at s_0 */

static void add(uint64_t emit, uint32_t src, const gp_record *r)
{
	if (nitems == citems) {
		citems = citems ? 2 * citems : 1024;
		items = realloc(items, citems * sizeof(*items));
		if (!items) { perror("gen_diff"); exit(1); }
	}
	items[nitems] = (struct item){ emit, nitems, src, *r };
	nitems++;
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->emit != y->emit) return x->emit < y->emit ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint32_t P;
static uint64_t corr = 1;

/* The runtime API's callback ids (the launch join pairs GPU work only with
 * calls whose cbid launches some). */
static uint32_t cbid_of(uint32_t name)
{
	switch (name) {
	case S_LAUNCH: return 211;  /* cudaLaunchKernel_v7000 */
	case S_MEMCPY: return 41;   /* cudaMemcpyAsync_v3020 */
	case S_SSYNC: return 131;   /* cudaStreamSynchronize_v3020 */
	case S_DSYNC: return 165;   /* cudaDeviceSynchronize_v3020 */
	case S_MALLOC: return 20;   /* cudaMalloc_v3020 */
	case S_GRAPH: return 311;   /* cudaGraphLaunch_v10000 */
	default: return 0;
	}
}

static void api(uint32_t name, uint64_t c, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_api(&r, P, 0, name, cbid_of(name), c, clock0 + s, clock0 + e);
	add(clock0 + e, 1, &r);
}

/* a launch call and its kernel; returns the kernel's end */
static uint64_t launch(uint32_t name, uint64_t cs, uint64_t ce, uint64_t gs, uint64_t dur)
{
	gp_record r;
	uint64_t c = corr++;
	api(S_LAUNCH, c, cs, ce);
	rec_kernel(&r, name, 7, c, clock0 + gs, clock0 + gs + dur, 264);
	add(clock0 + gs + dur, 2, &r);
	return gs + dur;
}

static uint64_t copy(uint32_t kind, uint64_t bytes, uint64_t cs, uint64_t ce, uint64_t gs, uint64_t dur)
{
	gp_record r;
	uint64_t c = corr++;
	api(S_MEMCPY, c, cs, ce);
	rec_memcpy(&r, kind, kind == GP_COPY_HTOD ? GP_MEM_PINNED : GP_MEM_DEVICE,
		   kind == GP_COPY_HTOD ? GP_MEM_DEVICE : GP_MEM_PINNED, bytes, 7, c, clock0 + gs, clock0 + gs + dur);
	add(clock0 + gs + dur, 2, &r);
	return gs + dur;
}

/* a graph launch whose graph copies 4096 bytes device-to-host, then 64
 * host-to-device: both copies carry the launch call's correlation id, and
 * the call's record comes 10 s later in its source (a late buffer), so
 * both wait in the launch join for it */
static uint64_t graph_copies(uint64_t cs, uint64_t ce, uint64_t gs)
{
	gp_record r;
	uint64_t c = corr++;
	rec_api(&r, P, 0, S_GRAPH, cbid_of(S_GRAPH), c, clock0 + cs, clock0 + ce);
	add(clock0 + ce + 10000000000ull, 1, &r);
	rec_memcpy(&r, GP_COPY_DTOH, GP_MEM_DEVICE, GP_MEM_PINNED, 4096, 7, c, clock0 + gs, clock0 + gs + 1000);
	add(clock0 + gs + 1000, 2, &r);
	rec_memcpy(&r, GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, 64, 7, c, clock0 + gs + 1000, clock0 + gs + 1500);
	add(clock0 + gs + 1500, 2, &r);
	return gs + 1500;
}

static void range(uint32_t msg, uint32_t depth, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_range(&r, P, P, GP_NVTX_PUSHPOP, 0, msg, depth, clock0 + s, clock0 + e, 0);
	add(clock0 + e, 1, &r);
}

static void counter(uint32_t name, uint64_t t, int64_t v)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_COUNTER;
	r.u.counter.ts_ns = clock0 + t;
	r.u.counter.name_id = name;
	r.u.counter.device_id = 0;
	r.u.counter.kind = GP_COUNTER_INT;
	r.u.counter.value.i = v;
	add(clock0 + t, 3, &r);
}

static void memory(uint64_t t, uint32_t op, uint64_t addr, uint64_t bytes, uint32_t kind)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEMORY;
	r.u.memory.ts_ns = clock0 + t;
	r.u.memory.address = addr;
	r.u.memory.bytes = bytes;
	r.u.memory.op = op;
	r.u.memory.mem_kind = kind;
	add(clock0 + t, 2, &r);
}

static uint64_t lcg;
static uint64_t next_jitter(uint64_t n)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return n ? (lcg >> 33) % n : 0;
}

int main(int argc, char **argv)
{
	gen_prog = "gen_diff";
	uint32_t nsteps = 30;
	uint64_t load = 200000, jitter = 0, seed = 1, G = 100000;
	uint32_t warmup = 0;
	int flash = 0, dsync = 0, dtoh = 0, gcopies = 0, counters = 0, odd = 0, anon = 0, rank = -1, i;
	const char *cmd = "python train.py", *settings = NULL;
	uint32_t nthreads = 1;
	P = 6000;
	for (i = 1; i < argc - 1; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc - 1;
		if (!strcmp(a, "--steps") && more) nsteps = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--warmup")) warmup = 1;
		else if (!strcmp(a, "--warmup-steps") && more) warmup = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--load-ns") && more) load = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(a, "--jitter") && more) jitter = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(a, "--seed") && more) seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(a, "--gemm-ns") && more) G = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(a, "--attn") && more) flash = !strcmp(argv[++i], "flash");
		else if (!strcmp(a, "--device-sync")) dsync = 1;
		else if (!strcmp(a, "--dtoh")) dtoh = 1;
		else if (!strcmp(a, "--graph-copies")) gcopies = 1;
		else if (!strcmp(a, "--counters")) counters = 1;
		else if (!strcmp(a, "--odd-name")) odd = 1;
		else if (!strcmp(a, "--anon-ns")) anon = 1;
		else if (!strcmp(a, "--cmd") && more) cmd = argv[++i];
		else if (!strcmp(a, "--settings") && more) settings = argv[++i];
		else if (!strcmp(a, "--threads") && more) nthreads = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--pid") && more) P = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--rank") && more) rank = atoi(argv[++i]);
		else break;
	}
	if (argc < 2 || i != argc - 1 || nsteps < 2 || nsteps > 1000000 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "usage: gen_diff [--steps N] [--warmup] [--warmup-steps N] [--load-ns N] [--jitter N] [--seed N]\n"
				"                [--gemm-ns N] [--attn flash] [--device-sync] [--dtoh] [--graph-copies] [--counters]\n"
				"                [--odd-name] [--anon-ns]\n"
				"                [--cmd STR] [--settings STR] [--threads N] [--pid P] [--rank R] OUT\n");
		return 1;
	}
	lcg = seed;
	uint64_t r0 = rank > 0 ? (uint64_t)rank : 0;
	clock0 = T0 + r0 * 3000000000ull + 100000; /* s_0 is 100 us after the trace start */
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, P, clock0 - 100000, GEN_REALTIME0 + r0 * 1000, "testhost", rank);
	static const char *names[] = {
		[S_CMD] = "python train.py", [S_SETTINGS] = "", [S_HOST] = "testhost", [S_MAIN] = "python3",
		[S_LAUNCH] = "cudaLaunchKernel", [S_MEMCPY] = "cudaMemcpyAsync", [S_SSYNC] = "cudaStreamSynchronize",
		[S_DSYNC] = "cudaDeviceSynchronize", [S_MALLOC] = "cudaMalloc", [S_GEMM_F] = "gemm_fwd_kernel",
		[S_GEMM_B] = "gemm_bwd_kernel", [S_RELU] = "relu_kernel", [S_SOFTMAX] = "softmax_kernel",
		[S_FLASH] = "flash_fwd_kernel", [S_ADAM] = "adam_kernel", [S_AUTOTUNE] = "autotune_probe",
		[S_FWD] = "forward", [S_BWD] = "backward", [S_OPT] = "optimizer", [S_UTIL] = "nvml.gpu_util",
		[S_SMACT] = "pm.sm_active_pct", [S_POWER] = "nvml.power_mw", [S_GPU] = "NVIDIA H200 (test)",
		[S_GRAPH] = "cudaGraphLaunch",
	};
	names[S_CMD] = cmd;
	if (settings) names[S_SETTINGS] = settings;
	if (odd) names[S_RELU] = "relu</script><!--<script>x(1)//";
	if (anon) names[S_FLASH] = "void at::native::(anonymous namespace)::flash_fwd_kernel<float>(float const*, int)";
	for (uint32_t k = 1; k < S_STEP0; k++) str_id(k, names[k]);
	const uint32_t kinds[4] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY, GP_SOURCE_TOOL };
	const uint32_t tids[4] = { 0, P, 0, 0 }, nm[4] = { 0, S_MAIN, 0, 0 };
	sources(P, 3, kinds, tids, nm);
	for (uint32_t t = 1; t < nthreads; t++) { /* more threads: a SOURCE record each, nothing else */
		gp_record r;
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_SOURCE;
		r.u.source = (gp_rec_source){ 100 + t, GP_SOURCE_THREAD, P, P + t, S_MAIN };
		put(0, &r);
	}
	process_settings(P, S_CMD, S_HOST, rank, clock0 - 100000, settings ? S_SETTINGS : 0);
	{
		gp_record d;
		memset(&d, 0, sizeof(d));
		d.type = GP_REC_DEVICE;
		d.u.device.device_id = 0;
		d.u.device.name_id = S_GPU;
		d.u.device.sm_count = 132;
		d.u.device.cc_major = 9;
		d.u.device.global_mem_bytes = 150000000000ull;
		put(0, &d);
	}
	uint64_t s = 0, end = 0;
	char buf[32];
	for (uint32_t k = 0; k < nsteps; k++) {
		snprintf(buf, sizeof(buf), "step %u", k);
		str_id(S_STEP0 + k, buf);
	}
	uint64_t A = flash ? 15000 : 50000;
	for (uint32_t k = 0; k < nsteps; k++) {
		uint64_t t = s + load + next_jitter(jitter) + (k < warmup ? 800000 : 0);
		if (k < warmup) {
			api(S_MALLOC, corr++, t - 800000 + 1000, t - 800000 + 2000);
			api(S_MALLOC, corr++, t - 800000 + 2100, t - 800000 + 2500);
		}
		uint64_t g = copy(GP_COPY_HTOD, 1 << 20, t, t + 3000, t + 5000, 20000);
		g = launch(S_GEMM_F, t + 4000, t + 6000, g, G);
		g = launch(S_RELU, t + 7000, t + 8000, g, 20000);
		g = launch(flash ? S_FLASH : S_SOFTMAX, t + 9000, t + 10000, g, A);
		range(S_FWD, 1, t + 3000, t + 11000);
		g = launch(S_GEMM_B, t + 12000, t + 13000, g, G + G / 2);
		range(S_BWD, 1, t + 11000, t + 14000);
		g = launch(S_ADAM, t + 14500, t + 15500, g, 30000);
		if (k < warmup) g = launch(S_AUTOTUNE, t + 15600, t + 15700, g, 20000);
		if (dtoh) g = copy(GP_COPY_DTOH, 4, t + 15600, t + 15800, g, 2000);
		if (gcopies) g = graph_copies(t + 15600, t + 15800, g);
		range(S_OPT, 1, t + 14000, t + 16000);
		api(S_SSYNC, corr++, t + 16000, g + 2000);
		uint64_t last = g + 2000;
		if (dsync) {
			api(S_DSYNC, corr++, g + 2000, g + 12000);
			last = g + 12000;
		}
		uint64_t e = last + 5000;
		range(S_STEP0 + k, 0, s, e);
		if (counters && k == 1) memory(e, 1, 0x7f0010000000ull, 32ull << 20, GP_MEM_DEVICE);
		end = e;
		s = e + 50000;
	}
	if (counters) {
		memory(1000, 1, 0x7f0000000000ull, 64ull << 20, GP_MEM_DEVICE);
		memory(1000, 1, 0x10000, 1ull << 20, GP_MEM_PINNED);
		memory(end, 2, 0x7f0000000000ull, 0, GP_MEM_DEVICE);
		for (uint64_t t = 0, n = 0; t <= end; t += 100000, n++) {
			counter(S_UTIL, t, 50 + 10 * (int64_t)(n % 3));
			counter(S_SMACT, t, 40);
			counter(S_POWER, t, 300000 + 1000 * (int64_t)(n % 5));
		}
	}
	qsort(items, nitems, sizeof(*items), cmp_item);
	for (size_t k = 0; k < nitems; k++) put(items[k].src, &items[k].r);
	free(items);
	return gen_close();
}
