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
 *   gen_steps --steady --steps N --late-kernel K OUT   the same with step
 *                                 K's relu kernel written last (after the
 *                                 record at 10 s: later than 256 steps)
 *   gen_steps --steady --steps N --capture A:B OUT   a flight-recorder
 *                                 capture (docs/FLIGHT.md): steps A..B-1 in
 *                                 one GPU-activity window [s_A, s_B), GPU
 *                                 records only of operations starting inside
 *                                 it; the steps before (the history) and
 *                                 after (written until the capture's file
 *                                 closed) have API calls and NVTX only; step
 *                                 A also makes a cudaMalloc call at s+52000
 *                                 (unlike the steady state, yet not warm-up:
 *                                 it is not at the run's start); its step
 *                                 ranges are "step <k>" (N <= 40)
 *   gen_steps ... --capture A:B --no-history OUT   the same capture with
 *                                 nothing before s_A but the metadata (a
 *                                 history evicted or shorter than a step)
 *   gen_steps --windows OUT       the idle-category trace recorded with
 *                                 --gpu-window: one window [99000,201000]
 *                                 (step 1), GPU records only of operations
 *                                 starting inside it
 *   gen_steps --late-activity OUT the idle-category trace with the GPU
 *                                 operations of step 0 written last, after the
 *                                 record at 10 s (CUPTI returned that buffer
 *                                 late, as on the committed MNIST trace)
 *   gen_steps --workload W OUT    a GPU-bound training job for the trace
 *                                 method (W: cnn, layers, extra10, hf; below)
 *   gen_steps --repeat R OUT      a repeat that is no training step (R:
 *                                 compile, one; write_repeat)
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
 *
 * Workload traces (--workload; pid 6000, main thread 6000, autograd thread
 * 6001, one stream): what the H200 runs of ResNet-50 and the transformer
 * look like to the trace method (issue 20).  NVTX "step <k>" ranges
 * [P k, P k + P - 1000) with P = 600000 after T0 + 1 ms, no other range
 * (test_steps_detect.py forces --method trace and compares).  A step's
 * operations are launched one after the other from s + 2000 on, each call
 * 1000 long, spaced evenly over the step (backward from the autograd
 * thread); the GPU runs them back to back one step (P) later, 100 ns apart,
 * except 3000 ns before the head's gemm (mid-step: the longest GPU idle gap
 * of the step, what the old rule took for the step's start); no host sync.
 * Every step starts with its input: a 1 MiB and a 1 KiB host-to-device copy.
 *  cnn:     23 steps: copies, 4 x (conv, bn, relu), pool, head gemm, loss;
 *           backward: loss_bwd, gemm_bwd, 4 x (relu_bwd, bn_bwd, conv_bwd);
 *           optimizer: 2 x multi_tensor_apply.  Step 0's convolutions are
 *           other kernels (autotuning) and it adds two memsets.
 *  layers:  23 steps: copies, embedding, 6 identical layers of 8 kernels,
 *           head gemm, loss; backward: loss_bwd, head_bwd, 6 layers of 16
 *           kernels, embedding_bwd; optimizer: 3 x multi_tensor_apply.  A
 *           kernel of a backward layer cuts the step into 5 alike segments
 *           and a longer sixth (a sub-loop).
 *  extra10: layers, 33 steps, and a grad_norm kernel at the end of steps 5,
 *           15, 25 (every 10 steps).
 *  hf:      the cnn's kernels without autotuning, the copies and memsets of a
 *           Hugging Face Trainer step (the H100 runs of 2026-12-06): its
 *           input is two 8,192-byte host-to-device copies (not the 1 MiB and
 *           1 KiB ones), two 4-byte memsets (after the pool and after the
 *           loss), a 1-byte device-to-host copy after the loss and two after
 *           the optimizer: no copy or memset occurs once a step; 37
 *           operations. */
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
/* the workload traces' names: kernels, then "step <k>" */
enum {
	W_CONV = S_COUNT, W_CONV_TUNE, W_BN, W_RELU, W_POOL, W_HEAD, W_LOSS, W_LOSS_BWD, W_HEAD_BWD, W_RELU_BWD,
	W_BN_BWD, W_CONV_BWD, W_OPT, W_EMB, W_LN, W_QKV, W_ATTN, W_PROJ, W_ADD, W_FF1, W_GELU, W_FF2,
	W_EMB_BWD, W_LN_BWD, W_QKV_BWD, W_ATTN_BWD, W_PROJ_BWD, W_FF1_BWD, W_GELU_BWD, W_FF2_BWD, W_NORM,
	W_FILL, W_STEP0, W_MAXSTEPS = 40
};

/* records are collected, then written by emission time (stable) */
struct item { uint64_t emit; size_t seq; uint32_t src; gp_record r; };
static struct item *items;
static size_t nitems, citems;
static int ranges_first, late_activity, windows;
static long late_kernel = -1; /* --late-kernel K: the start of step K's relu kernel */
static long capture_a = -1, capture_b = -1; /* --capture A:B */
static int no_history;                       /* --no-history: no record before the window */
/* the window of a windowed trace (--windows, --capture), after T0 */
static uint64_t win_s = 99000, win_e = 201000;

/* the start of step k of the steady trace, after T0 */
static uint64_t steady_start(long k) { return k <= 5 ? 100000ull * (uint64_t)k : 650000 + 100000ull * (uint64_t)(k - 6); }

/* when a GPU operation ending at e is written */
static uint64_t op_emit(uint64_t s, uint64_t e)
{
	if (late_kernel >= 0 && s == (uint64_t)late_kernel) return T0 + 20000000000ull;
	return late_activity && s < 100000 ? T0 + 20000000000ull : T0 + e;
}

static void add(uint64_t emit, uint32_t src, const gp_record *r)
{
	/* a windowed trace has GPU records of what started inside the window */
	uint64_t t = gp_record_time(r) - T0;
	if (windows && (r->type == GP_REC_KERNEL || r->type == GP_REC_MEMCPY) && (t < win_s || t > win_e))
		return;
	if (no_history && t < win_s) return;
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

/* CUPTI's runtime callback id of an API name (cupti_runtime_cbid.h): the
 * tools tell launch calls by it (libprof/gp_launch.h) */
static uint32_t cbid_of(uint32_t name)
{
	switch (name) {
	case S_LAUNCH: return 211;  /* cudaLaunchKernel_v7000 */
	case S_MEMCPY: return 41;   /* cudaMemcpyAsync_v3020 */
	case S_GRAPH: return 311;   /* cudaGraphLaunch_v10000 */
	case S_SSYNC: return 131;   /* cudaStreamSynchronize_v3020 */
	case S_DSYNC: return 165;   /* cudaDeviceSynchronize_v3020 */
	case S_MALLOC: return 20;   /* cudaMalloc_v3020 */
	case S_EVREC: return 135;   /* cudaEventRecord_v3020 */
	case S_EVQUERY: return 138; /* cudaEventQuery_v3020 */
	default: return 0;
	}
}

static void api(uint32_t src, uint32_t tid, uint32_t name, uint64_t corr, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_api(&r, tid, 0, name, cbid_of(name), corr, T0 + s, T0 + e);
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

static void memcpy_op(uint32_t src, uint32_t stream, uint64_t corr, uint64_t bytes, uint32_t kind, uint64_t s,
		      uint64_t e)
{
	gp_record r;
	rec_memcpy(&r, kind, GP_MEM_PINNED, GP_MEM_DEVICE, bytes, stream, corr, T0 + s, T0 + e);
	add(op_emit(s, e), src, &r);
}

static void memset_op(uint32_t src, uint32_t stream, uint64_t corr, uint64_t bytes, uint64_t s, uint64_t e)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEMSET;
	r.u.memset.start_ns = T0 + s; r.u.memset.end_ns = T0 + e;
	r.u.memset.correlation_id = corr; r.u.memset.bytes = bytes;
	r.u.memset.context_id = 1; r.u.memset.stream_id = stream;
	add(op_emit(s, e), src, &r);
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
	static const char *const wn[W_STEP0 - W_CONV] = {
		"implicit_convolve_sgemm", "conv_autotune_probe", "bn_fw_tr_1C11_kernel", "relu_kernel_fwd",
		"max_pool_forward_nchw", "sgemm_largek_lds64", "nll_loss_forward_kernel", "nll_loss_backward_kernel",
		"sgemm_head_backward", "relu_kernel_bwd", "bn_bw_1C11_kernel", "dgrad_engine_kernel",
		"multi_tensor_apply_kernel", "embedding_kernel", "layer_norm_kernel", "gemm_qkv_kernel",
		"flash_fwd_kernel", "gemm_proj_kernel", "vectorized_elementwise_add", "gemm_ff1_kernel",
		"gelu_kernel", "gemm_ff2_kernel", "embedding_backward_kernel", "layer_norm_backward_kernel",
		"gemm_qkv_backward", "flash_bwd_kernel", "gemm_proj_backward", "gemm_ff1_backward",
		"gelu_backward_kernel", "gemm_ff2_backward", "grad_norm_kernel", "fill_kernel",
	};
	for (uint32_t i = W_CONV; i < W_STEP0; i++) str_id(i, wn[i - W_CONV]);
	for (uint32_t k = 0; k < W_MAXSTEPS; k++) {
		snprintf(buf, sizeof(buf), "step %u", k);
		str_id(W_STEP0 + k, buf);
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
		r.u.window.start_ns = T0 + win_s;
		r.u.window.end_ns = T0 + win_e;
		add(T0 + win_e, M, &r);
	}
}

static void write_steady(int nvtx, uint32_t nsteps)
{
	const uint32_t P = 5000, M = 1, G = 2;
	meta(P, 0);
	uint64_t corr = 1;
	for (uint32_t k = 0; k < nsteps; k++) {
		uint64_t s = steady_start(k);
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
		if ((long)k == capture_a) api(M, P, S_MALLOC, corr++, s + 52000, s + 53000);
		if (nvtx) {
			range(M, P, S_TRAIN_STEP, 1, s + 200, s + L - 100);
			/* a capture's steps carry their numbers in the run ("step <k>") */
			range(M, P, capture_a >= 0 ? W_STEP0 + k : S_ITER0 + (k < 8 ? k : 7), 0, s, s + L);
		}
	}
	if (windows) { /* written at the window's end, as the shim's flush thread does */
		gp_record r;
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_WINDOW;
		r.u.window.start_ns = T0 + win_s;
		r.u.window.end_ns = T0 + win_e;
		add(T0 + win_e, M, &r);
	}
}

/* One operation of a workload step: a kernel name, or a host-to-device
 * copy (name 0) of `bytes` (a device-to-host one: name 0 and dtoh), or a
 * memset (name 1); launched from the autograd thread when bwd. */
struct wop { uint32_t name; uint64_t bytes; int bwd, dtoh; };

static size_t wpush(struct wop *v, size_t n, uint32_t name, uint64_t bytes, int bwd)
{
	v[n].name = name; v[n].bytes = bytes; v[n].bwd = bwd; v[n].dtoh = 0;
	return n + 1;
}

static size_t wpush_dtoh(struct wop *v, size_t n, uint64_t bytes)
{
	n = wpush(v, n, 0, bytes, 0);
	v[n - 1].dtoh = 1;
	return n;
}

/* The cnn's 4 x (conv, bn, relu) of forward (conv: its kernel name), and
 * of backward (from the autograd thread) */
static size_t cnn_convs(struct wop *v, size_t n, uint32_t conv)
{
	for (int i = 0; i < 4; i++) {
		n = wpush(v, n, conv, 0, 0);
		n = wpush(v, n, W_BN, 0, 0);
		n = wpush(v, n, W_RELU, 0, 0);
	}
	return n;
}

static size_t cnn_convs_bwd(struct wop *v, size_t n)
{
	for (int i = 0; i < 4; i++) {
		n = wpush(v, n, W_RELU_BWD, 0, 1);
		n = wpush(v, n, W_BN_BWD, 0, 1);
		n = wpush(v, n, W_CONV_BWD, 0, 1);
	}
	return n;
}

/* The operations of step k of workload w (w: 'c' cnn, 'l' layers, 'x' extra10, 'h' hf). */
static size_t workload_step(int w, uint32_t k, struct wop *v)
{
	size_t n = 0;
	if (w == 'h') {
		n = wpush(v, n, 0, 8192, 0);
		n = wpush(v, n, 0, 8192, 0);
		n = cnn_convs(v, n, W_CONV);
		n = wpush(v, n, W_POOL, 0, 0);
		n = wpush(v, n, 1, 4, 0);
		n = wpush(v, n, W_HEAD, 0, 0);
		n = wpush(v, n, W_LOSS, 0, 0);
		n = wpush(v, n, 1, 4, 0);
		n = wpush_dtoh(v, n, 1);
		n = wpush(v, n, W_LOSS_BWD, 0, 1);
		n = wpush(v, n, W_HEAD_BWD, 0, 1);
		n = cnn_convs_bwd(v, n);
		n = wpush(v, n, W_OPT, 0, 0);
		n = wpush_dtoh(v, n, 1);
		n = wpush_dtoh(v, n, 1);
		return n;
	}
	n = wpush(v, n, 0, 1 << 20, 0);
	n = wpush(v, n, 0, 1024, 0);
	if (w == 'c') {
		if (k == 0) { n = wpush(v, n, 1, 4096, 0); n = wpush(v, n, 1, 8192, 0); }
		n = cnn_convs(v, n, k == 0 ? W_CONV_TUNE : W_CONV);
		n = wpush(v, n, W_POOL, 0, 0);
		n = wpush(v, n, W_HEAD, 0, 0);
		n = wpush(v, n, W_LOSS, 0, 0);
		n = wpush(v, n, W_LOSS_BWD, 0, 1);
		n = wpush(v, n, W_HEAD_BWD, 0, 1);
		n = cnn_convs_bwd(v, n);
		n = wpush(v, n, W_OPT, 0, 0);
		n = wpush(v, n, W_OPT, 0, 0);
		return n;
	}
	static const uint32_t fwd[8] = { W_LN, W_QKV, W_ATTN, W_PROJ, W_ADD, W_LN, W_FF1, W_FF2 };
	static const uint32_t bwd[16] = { W_FF2_BWD, W_GELU_BWD, W_FF1_BWD, W_LN_BWD, W_ADD, W_PROJ_BWD,
					  W_ATTN_BWD, W_QKV_BWD, W_LN_BWD, W_ADD, W_FILL, W_FF2_BWD,
					  W_FF1_BWD, W_PROJ_BWD, W_QKV_BWD, W_ADD };
	n = wpush(v, n, W_EMB, 0, 0);
	for (int l = 0; l < 6; l++)
		for (int i = 0; i < 8; i++) n = wpush(v, n, fwd[i], 0, 0);
	n = wpush(v, n, W_HEAD, 0, 0);
	n = wpush(v, n, W_LOSS, 0, 0);
	n = wpush(v, n, W_LOSS_BWD, 0, 1);
	n = wpush(v, n, W_HEAD_BWD, 0, 1);
	for (int l = 0; l < 6; l++)
		for (int i = 0; i < 16; i++) n = wpush(v, n, bwd[i], 0, 1);
	n = wpush(v, n, W_EMB_BWD, 0, 1);
	for (int i = 0; i < 3; i++) n = wpush(v, n, W_OPT, 0, 0);
	if (w == 'x' && k % 10 == 5) n = wpush(v, n, W_NORM, 0, 0);
	return n;
}

/* The repeat traces (--repeat compile|one; pid 7000, one thread, one
 * stream, no NVTX): what advise must not take for a training step.
 *  compile: two long kernels (49.99 ms each, an XLA compilation's
 *           autotuning, from 1 ms), then 10 repeats of 8 short kernels
 *           (90 us each, 100 us apart, a repeat every 1 ms from 102 ms):
 *           the steps found launch 7.2 ms of 107.18 ms of kernel time
 *           (6.7 %).
 *  one:     15 launches of one kernel (1 ms apart, 100 us each): the few
 *           last operations of a job that ran out of memory. */
static void write_repeat(int w)
{
	const uint32_t P = 7000, M = 1, G = 2;
	const uint64_t MS = 1000000;
	meta(P, 0);
	uint64_t corr = 1;
	if (w == 'c') {
		const uint32_t longk[2] = { W_CONV_TUNE, W_FILL };
		for (int i = 0; i < 2; i++) {
			uint64_t s = MS + 50 * MS * (uint64_t)i;
			api(M, P, S_LAUNCH, corr, s, s + 1000);
			kernel(G, longk[i], 7, corr++, s + 2000, s + 2000 + 50 * MS - 10000, 0);
		}
		static const uint32_t small[8] = { W_LN, W_QKV, W_ATTN, W_PROJ, W_ADD, W_FF1, W_GELU, W_FF2 };
		for (uint64_t k = 0; k < 10; k++)
			for (uint64_t i = 0; i < 8; i++) {
				uint64_t s = 102 * MS + k * MS + i * 100000;
				api(M, P, S_LAUNCH, corr, s, s + 1000);
				kernel(G, small[i], 7, corr++, s + 2000, s + 2000 + 90000, 0);
			}
	} else {
		for (uint64_t k = 0; k < 15; k++) {
			uint64_t s = MS + k * MS;
			api(M, P, S_LAUNCH, corr, s, s + 1000);
			kernel(G, W_GELU, 7, corr++, s + 2000, s + 102000, 0);
		}
	}
}

static void write_workload(int w)
{
	const uint32_t P = 6000, M = 1, A = 2, G = 3;
	const uint64_t SP = 600000, S0 = 1000000;
	uint32_t nsteps = w == 'x' ? 33 : 23;
	meta(P, 1);
	struct wop v[256];
	uint64_t corr = 1, gpu = S0 + SP; /* the GPU runs a step behind the host */
	for (uint32_t k = 0; k < nsteps; k++) {
		uint64_t s = S0 + SP * k;
		size_t n = workload_step(w, k, v);
		uint64_t spacing = (SP - 4000) / n, dur = (SP - 3000 - 100 * n) / n;
		if (gpu < s + SP) gpu = s + SP;
		for (size_t i = 0; i < n; i++) {
			uint64_t cs = s + 2000 + spacing * i;
			api(v[i].bwd ? A : M, v[i].bwd ? P + 1 : P, v[i].name > 1 ? S_LAUNCH : S_MEMCPY, corr, cs,
			    cs + 1000);
			gpu += v[i].name == W_HEAD ? 3000 : 100;
			if (v[i].name == 0)
				memcpy_op(G, 7, corr, v[i].bytes, v[i].dtoh ? GP_COPY_DTOH : GP_COPY_HTOD, gpu, gpu + dur);
			else if (v[i].name == 1) memset_op(G, 7, corr, v[i].bytes, gpu, gpu + dur);
			else kernel(G, v[i].name, 7, corr, gpu, gpu + dur, 0);
			gpu += dur;
			corr++;
		}
		range(M, P, W_STEP0 + k, 0, s, s + SP - 1000);
	}
}

int main(int argc, char **argv)
{
	gen_prog = "gen_steps";
	int steady = 0, nvtx = 1, i, workload = 0, repeat = 0;
	uint32_t nsteps = 8;
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--steady")) steady = 1;
		else if (!strcmp(argv[i], "--no-nvtx")) nvtx = 0;
		else if (!strcmp(argv[i], "--ranges-first")) ranges_first = 1;
		else if (!strcmp(argv[i], "--late-activity")) late_activity = 1;
		else if (!strcmp(argv[i], "--windows")) windows = 1;
		else if (!strcmp(argv[i], "--no-history")) no_history = 1;
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc - 1) nsteps = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--capture") && i + 1 < argc - 1 &&
			 sscanf(argv[++i], "%ld:%ld", &capture_a, &capture_b) == 2) {
			windows = 1;
			win_s = steady_start(capture_a);
			win_e = steady_start(capture_b);
		}
		else if (!strcmp(argv[i], "--late-kernel") && i + 1 < argc - 1) {
			long k = atol(argv[++i]); /* write_steady's step start, and its relu's */
			late_kernel = (k <= 5 ? 100000l * k : 650000 + 100000l * (k - 6)) + 45000;
		}
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc - 1) {
			const char *rn = argv[++i];
			repeat = !strcmp(rn, "compile") ? 'c' : !strcmp(rn, "one") ? 'o' : -1;
		}
		else if (!strcmp(argv[i], "--workload") && i + 1 < argc - 1) {
			const char *wn = argv[++i];
			workload = !strcmp(wn, "cnn") ? 'c' : !strcmp(wn, "layers") ? 'l' : !strcmp(wn, "extra10") ? 'x'
				   : !strcmp(wn, "hf") ? 'h' : -1;
		} else break;
	}
	if (argc < 2 || i != argc - 1 || nsteps < 8 || workload < 0 || repeat < 0 ||
	    (capture_a >= 0 && (!steady || capture_a >= capture_b || capture_b > (long)nsteps || nsteps > W_MAXSTEPS)) ||
	    (no_history && capture_a < 0)) {
		fprintf(stderr, "usage: gen_steps [--steady [--no-nvtx] [--steps N>=8] [--late-kernel K] [--capture A:B [--no-history]]] [--ranges-first] [--late-activity] "
			"[--windows] [--workload cnn|layers|extra10|hf] [--repeat compile|one] OUT\n");
		return 1;
	}
	uint32_t pid = repeat ? 7000 : workload ? 6000 : steady ? 5000 : 4000;
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, pid, T0, GEN_REALTIME0, "testhost", -1);
	names();
	if (repeat) write_repeat(repeat);
	else if (workload) write_workload(workload);
	else if (steady) write_steady(nvtx, nsteps);
	else write_categories();
	qsort(items, nitems, sizeof(*items), cmp_item);
	for (size_t k = 0; k < nitems; k++) put(items[k].src, &items[k].r);
	free(items);
	return gen_close();
}
