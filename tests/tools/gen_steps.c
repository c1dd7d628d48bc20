/* gen_steps.c — traces for the steps analysis (tests/tools/test_steps.py has
 * every figure worked out by hand from the timelines below).  Records are
 * written in the order the recorder writes them: an API call when it
 * returns, a push/pop range when it is popped, a GPU operation when it ends
 * (--ranges-first: ranges at their start instead).
 *
 *   gen_steps OUT                 the idle-category trace (pid 4000)
 *   gen_steps --steady OUT        8 steps: a warm-up step, an outlier (pid 5000)
 *   gen_steps --steady --no-nvtx OUT   the same without NVTX ranges
 *   gen_steps --steady --steps N OUT   N >= 8 steps: steps 8.. like step 7,
 *                                 100000 apart (a long trace, for memory)
 *   gen_steps --windows OUT       the idle-category trace recorded with
 *                                 --gpu-window: one window [99000,201000]
 *                                 (step 1), GPU records only of operations
 *                                 starting inside it
 *   gen_steps --late-activity OUT the idle-category trace with the GPU
 *                                 operations of step 0 written last, after the
 *                                 record at 10 s (CUPTI returned that buffer
 *                                 late, as on the committed MNIST trace)
 *
 * Idle-category trace: T0 = 1 s; main thread 4000, autograd-style thread
 * 4001 (launches during "backward"); stream 7 unless said; times in ns after
 * T0; "call" = the API call's [start, end), "gpu" = the operation's.
 *  step 0 [0,100000)  forward [1000,40000)  backward [40000,90000)
 *   K1 gemm   main call [2000,5000)     gpu [10000,30000)
 *   K2 gemm   main call [6000,9000)     gpu [30000,45000)
 *   K3 gemm   main call [40000,48000)   gpu [50000,60000)
 *   K4 relu   auto call [55000,57000)   gpu [62000,70000)
 *   K5 relu   auto call [63000,64000)   gpu [90000,95000) stream 8
 *   M1 memcpy main call [91000,94000)   gpu [95000,97000)
 *   cudaStreamSynchronize main [94500,99000)
 *  step 1 [100000,200000)
 *   K6 gemm   main call [101000,103000) gpu [105000,125000)
 *   N1 nccl   main call [104000,106000) gpu [110000,140000) stream 9
 *   M2 memcpy main call [107000,108000) gpu [115000,145000) stream 10
 *   cudaDeviceSynchronize main [140000,148000)
 *   cudaGraphLaunch main [150000,152000): G1 [160000,170000), G2
 *     [170000,180000) stream 11 (one correlation id)
 *  step 2 [200000,300000)
 *   K7 gemm   main call [205000,206000) gpu [210000,230000)
 *   cudaMalloc main [231000,232000)
 *   K8 gemm   main call [240000,241000) gpu [250000,280000)
 *   K9 stray  no call recorded          gpu [282000,284000)
 *  cudaDeviceSynchronize main [10 s, 10 s + 1000): the stream goes on long
 *  after the steps (they must be finalized while streaming).
 *
 * Steady trace: T0 = 1 s, pid 5000 one thread, steps s_k = 100000 k for
 * k <= 5, s_6 = 650000, s_7 = 750000; NVTX "iteration <k>" [s, s+L) with
 * "train_step" [s+200, s+L-100) inside and "forward" [s+500, s+4500) inside
 * that; L = 60000, except L_0 = 95000 and L_5 = 95000.  Each step:
 *   gemm call [s+1000,s+2000) gpu [s+5000,s+45000); relu call [s+3000,s+4000)
 *   gpu [s+45000,s+50000); cudaEventRecord [s+20000,s+21000);
 *   cudaEventQuery [s+40000,s+41000); cudaStreamSynchronize [s+48000,s+52000)
 *  except step 0: no cudaStreamSynchronize, but autotune call
 *  [s+50000,s+51000) gpu [s+55000,s+60000) and cudaMalloc [s+52000,s+53000).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"

#define T0 1000000000ull

enum {
	S_CMD = 1, S_HOST, S_MAIN, S_AUTOGRAD, S_LAUNCH, S_MEMCPY, S_SSYNC, S_DSYNC, S_GRAPH, S_MALLOC,
	S_EVREC, S_EVQUERY, S_GEMM, S_RELU, S_NCCL, S_GK1, S_GK2, S_STRAY, S_AUTOTUNE, S_FWD, S_BWD,
	S_STEP0, S_STEP1, S_STEP2, S_TRAIN_STEP, S_ITER0, S_COUNT = S_ITER0 + 8
};

/* records are collected, then written by emission time (stable) */
struct item { uint64_t emit; size_t seq; uint32_t src; gp_record r; };
static struct item *items;
static size_t nitems, citems;
static int ranges_first, late_activity, windows;
#define WIN_S 99000ull
#define WIN_E 201000ull

/* when a GPU operation ending at e is written */
static uint64_t op_emit(uint64_t s, uint64_t e)
{
	return late_activity && s < 100000 ? T0 + 20000000000ull : T0 + e;
}

static void add(uint64_t emit, uint32_t src, const gp_record *r)
{
	/* a windowed trace has GPU records of what started inside the window */
	uint64_t t = gp_record_time(r) - T0;
	if (windows && (r->type == GP_REC_KERNEL || r->type == GP_REC_MEMCPY) && (t < WIN_S || t > WIN_E))
		return;
	if (nitems == citems) {
		citems = citems ? 2 * citems : 256;
		items = realloc(items, citems * sizeof(*items));
		if (!items) { perror("gen_steps"); exit(1); }
	}
	items[nitems].emit = emit;
	items[nitems].seq = nitems;
	items[nitems].src = src;
	items[nitems].r = *r;
	nitems++;
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->emit != y->emit) return x->emit < y->emit ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq; /* ties: the order of adding */
}

static void api(uint32_t src, uint32_t tid, uint32_t name, uint64_t corr, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_api(&r, tid, 0, name, name, corr, T0 + s, T0 + e);
	add(T0 + e, src, &r);
}

static void kernel(uint32_t src, uint32_t name, uint32_t stream, uint64_t corr, uint64_t s, uint64_t e, uint64_t graph)
{
	gp_record r;
	rec_kernel(&r, name, stream, corr, T0 + s, T0 + e, 132);
	r.u.kernel.graph_id = graph;
	r.u.kernel.graph_node_id = graph ? s : 0;
	add(op_emit(s, e), src, &r);
}

static void copy(uint32_t src, uint32_t stream, uint64_t corr, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_memcpy(&r, GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, 1 << 20, stream, corr, T0 + s, T0 + e);
	add(op_emit(s, e), src, &r);
}

/* a push/pop range, popped after the calls inside: written at its end */
static void range(uint32_t src, uint32_t tid, uint32_t msg, uint32_t depth, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_range(&r, tid, tid, GP_NVTX_PUSHPOP, 0, msg, depth, T0 + s, T0 + e, 0);
	add(ranges_first ? T0 + s : T0 + e, src, &r);
}

static void names(void)
{
	static const char *const s[S_COUNT] = {
		[S_CMD] = "python train.py", [S_HOST] = "testhost", [S_MAIN] = "python3",
		[S_AUTOGRAD] = "pt_autograd_0", [S_LAUNCH] = "cudaLaunchKernel", [S_MEMCPY] = "cudaMemcpyAsync",
		[S_SSYNC] = "cudaStreamSynchronize", [S_DSYNC] = "cudaDeviceSynchronize",
		[S_GRAPH] = "cudaGraphLaunch", [S_MALLOC] = "cudaMalloc", [S_EVREC] = "cudaEventRecord",
		[S_EVQUERY] = "cudaEventQuery", [S_GEMM] = "sm90_xmma_gemm_f32f32_kernel",
		[S_RELU] = "relu_kernel", [S_NCCL] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
		[S_GK1] = "graph_node_a", [S_GK2] = "graph_node_b", [S_STRAY] = "stray_kernel",
		[S_AUTOTUNE] = "autotune_probe", [S_FWD] = "forward", [S_BWD] = "backward",
		[S_STEP0] = "step 0", [S_STEP1] = "step 1", [S_STEP2] = "step 2", [S_TRAIN_STEP] = "train_step",
	};
	for (uint32_t i = 1; i < S_ITER0; i++) str_id(i, s[i]);
	char buf[32];
	for (uint32_t k = 0; k < 8; k++) {
		snprintf(buf, sizeof(buf), "iteration %u", k);
		str_id(S_ITER0 + k, buf);
	}
}

static void meta(uint32_t pid, int two_threads)
{
	const uint32_t kinds[4] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY };
	const uint32_t tids[4] = { 0, pid, pid + 1, 0 }, nm[4] = { 0, S_MAIN, S_AUTOGRAD, 0 };
	if (two_threads) {
		sources(pid, 3, kinds, tids, nm);
	} else {
		const uint32_t k2[3] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY };
		const uint32_t t2[3] = { 0, pid, 0 }, n2[3] = { 0, S_MAIN, 0 };
		sources(pid, 2, k2, t2, n2);
	}
	process(pid, S_CMD, S_HOST, -1, T0);
}

/* the idle-category trace: sources 1 main, 2 autograd, 3 GPU */
static void write_categories(void)
{
	const uint32_t P = 4000, M = 1, A = 2, G = 3;
	meta(P, 1);
	/* step 0 */
	api(M, P, S_LAUNCH, 1, 2000, 5000);     kernel(G, S_GEMM, 7, 1, 10000, 30000, 0);
	api(M, P, S_LAUNCH, 2, 6000, 9000);     kernel(G, S_GEMM, 7, 2, 30000, 45000, 0);
	range(M, P, S_FWD, 1, 1000, 40000);
	api(M, P, S_LAUNCH, 3, 40000, 48000);   kernel(G, S_GEMM, 7, 3, 50000, 60000, 0);
	api(A, P + 1, S_LAUNCH, 4, 55000, 57000); kernel(G, S_RELU, 7, 4, 62000, 70000, 0);
	api(A, P + 1, S_LAUNCH, 5, 63000, 64000); kernel(G, S_RELU, 8, 5, 90000, 95000, 0);
	range(M, P, S_BWD, 1, 40000, 90000);
	api(M, P, S_MEMCPY, 6, 91000, 94000);   copy(G, 7, 6, 95000, 97000);
	api(M, P, S_SSYNC, 7, 94500, 99000);
	range(M, P, S_STEP0, 0, 0, 100000);
	/* step 1 */
	api(M, P, S_LAUNCH, 8, 101000, 103000); kernel(G, S_GEMM, 7, 8, 105000, 125000, 0);
	api(M, P, S_LAUNCH, 9, 104000, 106000); kernel(G, S_NCCL, 9, 9, 110000, 140000, 0);
	api(M, P, S_MEMCPY, 10, 107000, 108000); copy(G, 10, 10, 115000, 145000);
	api(M, P, S_DSYNC, 11, 140000, 148000);
	api(M, P, S_GRAPH, 12, 150000, 152000);
	kernel(G, S_GK1, 11, 12, 160000, 170000, 77);
	kernel(G, S_GK2, 11, 12, 170000, 180000, 77);
	range(M, P, S_STEP1, 0, 100000, 200000);
	/* step 2 */
	api(M, P, S_LAUNCH, 13, 205000, 206000); kernel(G, S_GEMM, 7, 13, 210000, 230000, 0);
	api(M, P, S_MALLOC, 14, 231000, 232000);
	api(M, P, S_LAUNCH, 15, 240000, 241000); kernel(G, S_GEMM, 7, 15, 250000, 280000, 0);
	kernel(G, S_STRAY, 7, 999, 282000, 284000, 0);
	range(M, P, S_STEP2, 0, 200000, 300000);
	api(M, P, S_DSYNC, 16, 10000000000ull, 10000001000ull);
	if (windows) { /* written at the window's end, as the shim's flush thread does */
		gp_record r;
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_WINDOW;
		r.u.window.start_ns = T0 + WIN_S;
		r.u.window.end_ns = T0 + WIN_E;
		add(T0 + WIN_E, M, &r);
	}
}

static void write_steady(int nvtx, uint32_t nsteps)
{
	const uint32_t P = 5000, M = 1, G = 2;
	meta(P, 0);
	uint64_t corr = 1;
	for (uint32_t k = 0; k < nsteps; k++) {
		uint64_t s = k <= 5 ? 100000ull * k : 650000 + 100000ull * (k - 6);
		uint64_t L = k == 0 || k == 5 ? 95000 : 60000;
		api(M, P, S_LAUNCH, corr, s + 1000, s + 2000);
		kernel(G, S_GEMM, 7, corr++, s + 5000, s + 45000, 0);
		api(M, P, S_LAUNCH, corr, s + 3000, s + 4000);
		kernel(G, S_RELU, 7, corr++, s + 45000, s + 50000, 0);
		if (nvtx) range(M, P, S_FWD, 2, s + 500, s + 4500);
		api(M, P, S_EVREC, corr++, s + 20000, s + 21000);
		api(M, P, S_EVQUERY, corr++, s + 40000, s + 41000);
		if (k == 0) {
			api(M, P, S_LAUNCH, corr, s + 50000, s + 51000);
			kernel(G, S_AUTOTUNE, 7, corr++, s + 55000, s + 60000, 0);
			api(M, P, S_MALLOC, corr++, s + 52000, s + 53000);
		} else {
			api(M, P, S_SSYNC, corr++, s + 48000, s + 52000);
		}
		if (nvtx) {
			range(M, P, S_TRAIN_STEP, 1, s + 200, s + L - 100);
			range(M, P, S_ITER0 + (k < 8 ? k : 7), 0, s, s + L);
		}
	}
}

int main(int argc, char **argv)
{
	gen_prog = "gen_steps";
	int steady = 0, nvtx = 1, i;
	uint32_t nsteps = 8;
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--steady")) steady = 1;
		else if (!strcmp(argv[i], "--no-nvtx")) nvtx = 0;
		else if (!strcmp(argv[i], "--ranges-first")) ranges_first = 1;
		else if (!strcmp(argv[i], "--late-activity")) late_activity = 1;
		else if (!strcmp(argv[i], "--windows")) windows = 1;
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc - 1) nsteps = (uint32_t)atoi(argv[++i]);
		else break;
	}
	if (argc < 2 || i != argc - 1 || nsteps < 8) {
		fprintf(stderr, "usage: gen_steps [--steady [--no-nvtx] [--steps N>=8]] [--ranges-first] [--late-activity] [--windows] OUT\n");
		return 1;
	}
	uint32_t pid = steady ? 5000 : 4000;
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, pid, T0, GEN_REALTIME0, "testhost", -1);
	names();
	if (steady) write_steady(nvtx, nsteps);
	else write_categories();
	qsort(items, nitems, sizeof(*items), cmp_item);
	for (size_t k = 0; k < nitems; k++) put(items[k].src, &items[k].r);
	free(items);
	return gen_close();
}
