/* gen_advise.c — traces with one known cause each, for `gpuprof advise`
 * (tests/tools/test_advise.py works every expected figure out by hand from
 * the timelines below).  Records are written in the order the recorder
 * writes them: an API call when it returns, a push/pop range when popped,
 * a GPU operation when it ends.
 *
 *   gen_advise SCENARIO [--stacks] [--pm] [--no-pinned] [--no-nvtx] [--gpu NAME] OUT
 *
 * Process 7000, main thread 7000, device 0 "NVIDIA H200" (--gpu NAME: another
 * name) = 132 SMs, cc 9.0 (H200-like
 * limits).  Every trace is 10 steps, NVTX "step <k>" [s, s + L) with s = k L
 * (no time between steps), after T0 = 1 s; times below are ns after s.
 * "call [a, b)" is a CUDA API call on the main thread, "gpu [a, b)" the
 * operation it launched (stream 7 unless said).  "w0": step 0 also calls
 * cudaMalloc [1000, 2000), which makes it a warm-up step (the steady steps
 * make no allocation call), so steps 1-9 are counted.  A final
 * cudaDeviceSynchronize [10 L + 1000, 10 L + 20 ms) follows the last step.
 * Kernels have 256 threads per block, 264 blocks and are "bf16_gemm"
 * (sm90_xmma_gemm_bf16bf16_bf16f32...) unless said.
 *
 *  healthy   L 1 ms; 4 launch calls [10000 + 10000 j, +5000), kernels of
 *            250 us back to back from 100000: the GPU runs without a gap
 *            from step 0's first kernel on (the host is ahead).
 *  input     L 7 ms; 6 ms with no call (loading), then 4 calls
 *            [6000000 + 10000 j, +5000), kernels of 200 us from 6020000.
 *  input-no  w0; as input but kernels of 1.75 ms: step k's kernels run
 *            while step k+1 loads.
 *  input-copy  L 7 ms; 6 ms with no call (loading), then the batch's copy:
 *            cudaMemcpyAsync HtoD 1 MiB pinned call [6000000, 6005000) gpu
 *            [6010000, 6030000), then 3 calls [6010000 + 10000 j, +5000) of
 *            kernels of 200 us from 6040000, each of another name (bf16_gemm,
 *            vectorized_elementwise_kernel, ampere_sgemm_128x64_nn): with
 *            --no-nvtx the trace method's steps, each starting at its copy.
 *  sync      w0; L 6.03 ms; 2 ms with no call, 4 calls [2000000 + 10000 j,
 *            +5000), kernels of 1 ms from 2020000; cudaMemcpyAsync DtoH to
 *            pageable memory (4 B) call [2050000, 6025000) gpu [6020000,
 *            6022000); cudaStreamSynchronize [6026000, 6028000).
 *  sync-no   w0; as sync without the copy and the stream synchronisation.
 *  pageable  w0; L 7.2 ms; pinned HtoD 16 MiB call [50000, 55000) gpu
 *            [60000, 395544) (50 B/ns); pageable HtoD 64 MiB call [100000,
 *            5100000) gpu [1100000, 4600000); 2 calls [5110000 + 10000 j,
 *            +5000), kernels of 1 ms from 5130000.
 *            --no-pinned leaves the pinned copy out (the trace then has
 *            no pinned copy to measure a bandwidth on).
 *  pageable-no  as pageable, the 64 MiB copy from pinned memory: call
 *            [100000, 105000) gpu [110000, 1452178).
 *  synccopy  w0; L 1.8 ms; cudaMemcpy (synchronous) HtoD 1 MiB pinned call
 *            [10000, 700000) gpu [20000, 470000); call [710000, 715000),
 *            kernel [720000, 1720000).
 *  synccopy-no  as synccopy with a 64 KiB copy (nsys leaves those out).
 *  launch    L 2.01 ms; 200 calls [1000 + 10000 j, +5000) each followed
 *            by its kernel of 2 us at call end + 2000
 *            ("vectorized_elementwise_kernel", 264 blocks of 128 threads).
 *  fp32      L 8.06 ms; 4 calls [10000 + 10000 j, +5000), kernels of 2 ms
 *            from 50000 ("ampere_sgemm_128x64_nn"); cudaStreamSynchronize
 *            [60000, 8052000).
 *  fp32-no   as fp32 with "bf16_gemm".
 *  fp32-host L 2 ms; one call [10000, 15000), "ampere_sgemm_128x64_nn" of
 *            500 us from 20000; no synchronisation (the host is late).
 *  fp32-ahead  L 100 us; 4 calls [10000 + 10000 j, +5000) of
 *            "ampere_sgemm_128x64_nn" kernels of 2 ms, which run back to back
 *            from 50000 after T0: the host runs ahead of the GPU, nothing
 *            makes it wait until the final cudaDeviceSynchronize (which
 *            lasts until 1 ms after the last kernel).
 *  underpar  as fp32 with "one_block_kernel", 1 block of 128 threads;
 *            --pm adds pm.sm_active_pct = 0.8 every 1 ms of the trace.
 *  underpar-no  as underpar with 264 blocks.
 *  alloc     L 2 ms; cudaMalloc [100000, 400000); call [410000, 415000),
 *            kernel [420000, 1420000); cudaFree [1500000, 1800000).
 *  alloc-no  w0 (its cudaMalloc and a cudaFree [3000, 4000)); then as
 *            alloc without the two calls.
 *  alloc-lead  L 2.8 ms, GPU-bound but for the churn (torch.cuda.empty_cache()
 *            after a step the GPU is behind in): call [10000, 15000), kernel
 *            [20000, 220000) ("vectorized_elementwise_kernel"); cudaMalloc
 *            [300000, 500000) amid 400 us of host work; call [620000,
 *            625000), kernel [630000, 2630000); cudaFree [700000, 2700000)
 *            (waits for the GPU, then frees).  Without the free the host
 *            would run ahead and the step would take the GPU's 2.2 ms.
 *  comm      L 2.1 ms; call [10000, 15000) kernel [50000, 1050000); call
 *            [20000, 25000) "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
 *            [1050000, 2050000) on stream 13 (not overlapped).
 *  comm-no   as comm, the NCCL kernel [100000, 900000) (overlapped).
 *  copies    L 3 ms; pinned HtoD 64 MiB (async) call [10000, 15000) gpu
 *            [20000, 1362178) on stream 7; 2 calls [1370000 + 10000 j,
 *            +5000), kernels of 790 us from 1400000 (the copy and the
 *            kernels one after the other on the compute stream).
 *  copies-no as copies, the copy on stream 8 gpu [100000, 1442178) and the
 *            calls [10000 + 10000 j, +5000), kernels from 20000 (the copy
 *            runs beside them).
 *  outlier   L 1 ms, step 5 2 ms (a host pause: no call in [520000,
 *            2000000)); call [10000, 15000), kernel [20000, 520000).
 *  nosteps   no NVTX range; two kernels of different names (no steps to
 *            find).
 *
 * --no-nvtx: the steps' NVTX ranges left out (a job with no hint).
 *
 * --stacks: Python stacks on the launch and copy calls (string frames, no
 * native ones): launches "train.py:42 forward" (under torch's
 * nn/modules/module.py); the DtoH copy "train.py:57 train_step"; the first
 * launch of each input step "train.py:48 train_step" called from torch's
 * utils/data/dataloader.py __next__ and _utils/collate.py. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"

#define T0 1000000000ull
#define PID 7000u
#define NSTEPS 10
#define SYM (1ull << 63)

enum { CB_MALLOC = 20, CB_FREE = 22, CB_MEMCPY = 31, CB_MEMCPY_ASYNC = 41, CB_STREAM_SYNC = 131,
       CB_DEVICE_SYNC = 165, CB_LAUNCH = 211 };

enum {
	S_CMD = 1, S_HOST, S_MAIN, S_GPU, S_LAUNCH, S_MEMCPY_ASYNC, S_MEMCPY, S_SSYNC, S_DSYNC, S_MALLOC, S_FREE,
	S_BF16, S_SGEMM, S_ONEBLOCK, S_ELEM, S_NCCL, S_PM_SM, S_FWD,
	S_PY_FWD, S_PY_MODULE, S_PY_ITEM, S_PY_LOAD, S_PY_NEXT, S_PY_COLLATE, S_STEP0
};

/* records, written by emission time (stable) */
struct item { uint64_t emit; size_t seq; uint32_t src; gp_record r; };
static struct item *items;
static size_t nitems, citems;
static uint64_t corr = 1;
static uint64_t gpu_end;   /* the latest GPU operation end */
static int with_stacks, with_pm, no_pinned, no_nvtx;
static const char *gpu_name = "NVIDIA H200";

static void add(uint64_t emit, uint32_t src, const gp_record *r)
{
	if (nitems == citems) {
		citems = citems ? 2 * citems : 1024;
		items = realloc(items, citems * sizeof(*items));
		if (!items) { perror("gen_advise"); exit(1); }
	}
	items[nitems].emit = emit;
	items[nitems].seq = nitems;
	items[nitems].src = src;
	items[nitems].r = *r;
	nitems++;
}

static int by_emit(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->emit != y->emit) return x->emit < y->emit ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* an API call of the main thread, absolute times after T0 */
static void call(uint32_t name, uint32_t cbid, uint64_t c, uint64_t s, uint64_t e, uint32_t stack)
{
	gp_record r;
	rec_api(&r, PID, 0, name, cbid, c, T0 + s, T0 + e);
	r.u.api.stack_id = with_stacks ? stack : 0;
	add(T0 + e, 1, &r);
}

static void kernel(uint32_t name, uint32_t stream, uint64_t c, uint64_t s, uint64_t e, uint32_t blocks,
		   uint32_t threads)
{
	gp_record r;
	rec_kernel(&r, name, stream, c, T0 + s, T0 + e, blocks);
	if (e > gpu_end) gpu_end = e;
	r.u.kernel.block[0] = threads;
	add(T0 + e, 2, &r);
}

static void copy_on(uint32_t stream, uint32_t kind, uint32_t srck, uint32_t dstk, uint64_t bytes, int async,
		    uint64_t c, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_memcpy(&r, kind, srck, dstk, bytes, stream, c, T0 + s, T0 + e);
	r.u.memcpy.flags = async ? 1 : 0;
	add(T0 + e, 2, &r);
}

static void copy(uint32_t kind, uint32_t srck, uint32_t dstk, uint64_t bytes, int async, uint64_t c, uint64_t s,
		 uint64_t e)
{
	copy_on(7, kind, srck, dstk, bytes, async, c, s, e);
}

/* a launch call [s, s + 5000) and its kernel */
static void launch(uint64_t s, uint32_t name, uint32_t stream, uint64_t ks, uint64_t ke, uint32_t blocks,
		   uint32_t threads, uint32_t stack)
{
	uint64_t c = corr++;
	call(S_LAUNCH, CB_LAUNCH, c, s, s + 5000, stack);
	kernel(name, stream, c, ks, ke, blocks, threads);
}

static void plain(uint32_t name, uint32_t cbid, uint64_t s, uint64_t e)
{
	call(name, cbid, corr++, s, e, 0);
}

static void step_range(uint32_t k, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_range(&r, PID, PID, GP_NVTX_PUSHPOP, 0, S_STEP0 + k, 0, T0 + s, T0 + e, 0);
	add(T0 + e, 1, &r);
}

static void names(void)
{
	static const char *const s[S_STEP0] = {
		[S_CMD] = "python train.py", [S_HOST] = "testhost", [S_MAIN] = "python3", [S_GPU] = "(--gpu)",
		[S_LAUNCH] = "cudaLaunchKernel", [S_MEMCPY_ASYNC] = "cudaMemcpyAsync", [S_MEMCPY] = "cudaMemcpy",
		[S_SSYNC] = "cudaStreamSynchronize", [S_DSYNC] = "cudaDeviceSynchronize", [S_MALLOC] = "cudaMalloc",
		[S_FREE] = "cudaFree",
		[S_BF16] = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_kernel",
		[S_SGEMM] = "ampere_sgemm_128x64_nn", [S_ONEBLOCK] = "one_block_kernel",
		[S_ELEM] = "vectorized_elementwise_kernel", [S_NCCL] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
		[S_PM_SM] = "pm.sm_active_pct", [S_FWD] = "forward",
		[S_PY_FWD] = "py\t/home/user/train.py\t42\tforward",
		[S_PY_MODULE] = "py\t/usr/lib/python3/dist-packages/torch/nn/modules/module.py\t1750\t_call_impl",
		[S_PY_ITEM] = "py\t/home/user/train.py\t57\ttrain_step",
		[S_PY_LOAD] = "py\t/home/user/train.py\t48\ttrain_step",
		[S_PY_NEXT] = "py\t/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py\t708\t__next__",
		[S_PY_COLLATE] = "py\t/usr/lib/python3/dist-packages/torch/utils/data/_utils/collate.py\t141\tcollate",
	};
	for (uint32_t i = 1; i < S_STEP0; i++) str_id(i, i == S_GPU ? gpu_name : s[i]);
	char buf[32];
	for (uint32_t k = 0; k < NSTEPS; k++) {
		snprintf(buf, sizeof(buf), "step %u", k);
		str_id(S_STEP0 + k, buf);
	}
}

static void meta(void)
{
	const uint32_t kinds[3] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY };
	const uint32_t tids[3] = { 0, PID, 0 }, nm[3] = { 0, S_MAIN, 0 };
	sources(PID, 2, kinds, tids, nm);
	process(PID, S_CMD, S_HOST, -1, T0);
	device_h200(S_GPU);
	if (!with_stacks) return;
	gp_record r;
	/* innermost first */
	static const uint64_t st1[] = { SYM | S_PY_MODULE, SYM | S_PY_FWD };
	static const uint64_t st2[] = { SYM | S_PY_ITEM };
	static const uint64_t st3[] = { SYM | S_PY_COLLATE, SYM | S_PY_NEXT, SYM | S_PY_LOAD };
	const uint64_t *fr[3] = { st1, st2, st3 };
	const uint32_t n[3] = { 2, 1, 3 };
	for (uint32_t i = 0; i < 3; i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_STACK;
		r.u.stack.stack_id = i + 1; r.u.stack.nframes = n[i]; r.u.stack.frames = fr[i];
		put(0, &r);
	}
}

enum scenario {
	HEALTHY, INPUT, INPUT_NO, INPUT_COPY, SYNC, SYNC_NO, PAGEABLE, PAGEABLE_NO, SYNCCOPY, SYNCCOPY_NO, LAUNCH, FP32, FP32_NO,
	FP32_HOST, FP32_AHEAD, UNDERPAR, UNDERPAR_NO, ALLOC, ALLOC_NO, ALLOC_LEAD, COMM, COMM_NO, COPIES, COPIES_NO, OUTLIER, NOSTEPS, NSCEN
};
static const char *const scen_names[NSCEN] = {
	"healthy", "input", "input-no", "input-copy", "sync", "sync-no", "pageable", "pageable-no", "synccopy", "synccopy-no",
	"launch", "fp32", "fp32-no", "fp32-host", "fp32-ahead", "underpar", "underpar-no", "alloc", "alloc-no",
	"alloc-lead", "comm", "comm-no", "copies", "copies-no", "outlier", "nosteps",
};

static uint64_t step_len(enum scenario sc, uint32_t k)
{
	switch (sc) {
	case HEALTHY: return 1000000;
	case INPUT: case INPUT_NO: case INPUT_COPY: return 7000000;
	case SYNC: case SYNC_NO: return 6030000;
	case PAGEABLE: case PAGEABLE_NO: return 7200000;
	case SYNCCOPY: case SYNCCOPY_NO: return 1800000;
	case LAUNCH: return 2010000;
	case FP32: case FP32_NO: case UNDERPAR: case UNDERPAR_NO: return 8060000;
	case FP32_HOST: case ALLOC: case ALLOC_NO: return 2000000;
	case FP32_AHEAD: return 100000;
	case ALLOC_LEAD: return 2800000;
	case COMM: case COMM_NO: return 2100000;
	case COPIES: case COPIES_NO: return 3000000;
	case OUTLIER: return k == 5 ? 2000000 : 1000000;
	default: return 1000000;
	}
}

static int warmup_alloc(enum scenario sc)
{
	return sc == INPUT_NO || sc == SYNC || sc == SYNC_NO || sc == PAGEABLE || sc == PAGEABLE_NO ||
	       sc == SYNCCOPY || sc == SYNCCOPY_NO || sc == ALLOC_NO;
}

static void one_step(enum scenario sc, uint32_t k, uint64_t s)
{
	const uint32_t B = 264, TH = 256;
	switch (sc) {
	case HEALTHY:
		for (uint64_t j = 0; j < 4; j++)
			launch(s + 10000 + 10000 * j, S_BF16, 7, s + 100000 + 250000 * j, s + 350000 + 250000 * j, B, TH, 1);
		break;
	case INPUT: case INPUT_NO: {
		const uint64_t D = 6000000, K = sc == INPUT ? 200000 : 1750000;
		for (uint64_t j = 0; j < 4; j++)
			launch(s + D + 10000 * j, S_BF16, 7, s + D + 20000 + K * j, s + D + 20000 + K * (j + 1), B, TH,
			       j ? 1 : 3);
		break;
	}
	case INPUT_COPY: {
		const uint64_t D = 6000000, c = corr++;
		static const uint32_t kn[3] = { S_BF16, S_ELEM, S_SGEMM };
		call(S_MEMCPY_ASYNC, CB_MEMCPY_ASYNC, c, s + D, s + D + 5000, 3);
		copy(GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, 1048576, 1, c, s + D + 10000, s + D + 30000);
		for (uint64_t j = 0; j < 3; j++)
			launch(s + D + 10000 + 10000 * j, kn[j], 7, s + D + 40000 + 200000 * j, s + D + 240000 + 200000 * j,
			       B, TH, 1);
		break;
	}
	case SYNC: case SYNC_NO: {
		const uint64_t P0 = 2000000;
		for (uint64_t j = 0; j < 4; j++)
			launch(s + P0 + 10000 * j, S_BF16, 7, s + P0 + 20000 + 1000000 * j, s + P0 + 1020000 + 1000000 * j,
			       B, TH, 1);
		if (sc == SYNC_NO) break;
		uint64_t c = corr++;
		call(S_MEMCPY_ASYNC, CB_MEMCPY_ASYNC, c, s + P0 + 50000, s + P0 + 4025000, 2);
		copy(GP_COPY_DTOH, GP_MEM_DEVICE, GP_MEM_PAGEABLE, 4, 1, c, s + P0 + 4020000, s + P0 + 4022000);
		plain(S_SSYNC, CB_STREAM_SYNC, s + P0 + 4026000, s + P0 + 4028000);
		break;
	}
	case PAGEABLE: case PAGEABLE_NO: {
		uint64_t c = corr++;
		if (!no_pinned) {
			call(S_MEMCPY_ASYNC, CB_MEMCPY_ASYNC, c, s + 50000, s + 55000, 1);
			copy(GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, 16777216, 1, c, s + 60000, s + 395544);
			c = corr++;
		}
		if (sc == PAGEABLE) {
			call(S_MEMCPY_ASYNC, CB_MEMCPY_ASYNC, c, s + 100000, s + 5100000, 1);
			copy(GP_COPY_HTOD, GP_MEM_PAGEABLE, GP_MEM_DEVICE, 67108864, 1, c, s + 1100000, s + 4600000);
		} else {
			call(S_MEMCPY_ASYNC, CB_MEMCPY_ASYNC, c, s + 100000, s + 105000, 1);
			copy(GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, 67108864, 1, c, s + 110000, s + 1452178);
		}
		for (uint64_t j = 0; j < 2; j++)
			launch(s + 5110000 + 10000 * j, S_BF16, 7, s + 5130000 + 1000000 * j, s + 6130000 + 1000000 * j, B,
			       TH, 1);
		break;
	}
	case SYNCCOPY: case SYNCCOPY_NO: {
		uint64_t c = corr++;
		call(S_MEMCPY, CB_MEMCPY, c, s + 10000, s + 700000, 1);
		copy(GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, sc == SYNCCOPY ? 1048576 : 65536, 0, c, s + 20000,
		     s + 470000);
		launch(s + 710000, S_BF16, 7, s + 720000, s + 1720000, B, TH, 1);
		break;
	}
	case LAUNCH:
		for (uint64_t j = 0; j < 200; j++) {
			uint64_t cs = s + 1000 + 10000 * j;
			launch(cs, S_ELEM, 7, cs + 7000, cs + 9000, B, 128, 1);
		}
		break;
	case FP32: case FP32_NO: case UNDERPAR: case UNDERPAR_NO: {
		uint32_t name = sc == FP32 ? S_SGEMM : sc == FP32_NO ? S_BF16 : S_ONEBLOCK;
		uint32_t blocks = sc == UNDERPAR ? 1 : B, threads = sc == UNDERPAR || sc == UNDERPAR_NO ? 128 : TH;
		for (uint64_t j = 0; j < 4; j++)
			launch(s + 10000 + 10000 * j, name, 7, s + 50000 + 2000000 * j, s + 2050000 + 2000000 * j, blocks,
			       threads, 1);
		plain(S_SSYNC, CB_STREAM_SYNC, s + 60000, s + 8052000);
		break;
	}
	case FP32_HOST:
		launch(s + 10000, S_SGEMM, 7, s + 20000, s + 520000, B, TH, 1);
		break;
	case FP32_AHEAD:
		for (uint64_t j = 0; j < 4; j++) {
			uint64_t ks = 50000 + (4 * k + j) * 2000000;
			launch(s + 10000 + 10000 * j, S_SGEMM, 7, ks, ks + 2000000, B, TH, 1);
		}
		break;
	case ALLOC: case ALLOC_NO:
		if (sc == ALLOC) plain(S_MALLOC, CB_MALLOC, s + 100000, s + 400000);
		launch(s + 410000, S_BF16, 7, s + 420000, s + 1420000, B, TH, 1);
		if (sc == ALLOC) plain(S_FREE, CB_FREE, s + 1500000, s + 1800000);
		else if (k == 0) plain(S_FREE, CB_FREE, s + 3000, s + 4000);
		break;
	case ALLOC_LEAD:
		launch(s + 10000, S_ELEM, 7, s + 20000, s + 220000, B, TH, 1);
		plain(S_MALLOC, CB_MALLOC, s + 300000, s + 500000);
		launch(s + 620000, S_BF16, 7, s + 630000, s + 2630000, B, TH, 1);
		plain(S_FREE, CB_FREE, s + 700000, s + 2700000);
		break;
	case COMM: case COMM_NO:
		launch(s + 10000, S_BF16, 7, s + 50000, s + 1050000, B, TH, 1);
		if (sc == COMM) launch(s + 20000, S_NCCL, 13, s + 1050000, s + 2050000, 4, 512, 1);
		else launch(s + 20000, S_NCCL, 13, s + 100000, s + 900000, 4, 512, 1);
		break;
	case COPIES: case COPIES_NO: {
		uint64_t c = corr++, at = sc == COPIES ? 1370000 : 10000, k0 = sc == COPIES ? 1400000 : 20000;
		call(S_MEMCPY_ASYNC, CB_MEMCPY_ASYNC, c, s + 10000, s + 15000, 1);
		if (sc == COPIES) copy(GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, 67108864, 1, c, s + 20000, s + 1362178);
		else copy_on(8, GP_COPY_HTOD, GP_MEM_PINNED, GP_MEM_DEVICE, 67108864, 1, c, s + 100000, s + 1442178);
		for (uint64_t j = 0; j < 2; j++)
			launch(s + at + 10000 * j, S_BF16, 7, s + k0 + 790000 * j, s + k0 + 790000 * (j + 1), B, TH, 1);
		break;
	}
	case OUTLIER:
		launch(s + 10000, S_BF16, 7, s + 20000, s + 520000, B, TH, 1);
		break;
	default:
		break;
	}
	if (k == 0 && warmup_alloc(sc)) plain(S_MALLOC, CB_MALLOC, s + 1000, s + 2000);
}

int main(int argc, char **argv)
{
	gen_prog = "gen_advise";
	int sc = -1, i;
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--stacks")) with_stacks = 1;
		else if (!strcmp(argv[i], "--pm")) with_pm = 1;
		else if (!strcmp(argv[i], "--no-pinned")) no_pinned = 1;
		else if (!strcmp(argv[i], "--no-nvtx")) no_nvtx = 1;
		else if (!strcmp(argv[i], "--gpu") && i + 2 < argc) gpu_name = argv[++i];
		else if (sc < 0) {
			for (sc = 0; sc < NSCEN && strcmp(argv[i], scen_names[sc]); sc++) ;
			if (sc == NSCEN) break;
		} else break;
	}
	if (argc < 3 || i != argc - 1 || sc < 0 || sc >= NSCEN) {
		fprintf(stderr, "usage: gen_advise SCENARIO [--stacks] [--pm] [--no-pinned] [--no-nvtx] [--gpu NAME] OUT\nscenarios:");
		for (int k = 0; k < NSCEN; k++) fprintf(stderr, " %s", scen_names[k]);
		fprintf(stderr, "\n");
		return 1;
	}
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, PID, T0, GEN_REALTIME0, "testhost", -1);
	names();
	meta();
	uint64_t s = 0;
	if (sc == NOSTEPS) {
		launch(10000, S_BF16, 7, 20000, 120000, 264, 256, 1);
		launch(130000, S_ELEM, 7, 140000, 150000, 264, 256, 1);
		s = 200000;
	}
	for (uint32_t k = 0; k < NSTEPS && sc != NOSTEPS; k++) {
		uint64_t L = step_len((enum scenario)sc, k);
		one_step((enum scenario)sc, k, s);
		if (!no_nvtx) step_range(k, s, s + L);
		s += L;
	}
	plain(S_DSYNC, CB_DEVICE_SYNC, s + 1000, s + 20000000 > gpu_end + 1000000 ? s + 20000000 : gpu_end + 1000000);
	if (with_pm) {
		for (uint64_t t = 0; t <= s; t += 1000000) {
			gp_record r;
			memset(&r, 0, sizeof(r));
			r.type = GP_REC_COUNTER;
			r.u.counter.ts_ns = T0 + t; r.u.counter.name_id = S_PM_SM; r.u.counter.device_id = 0;
			r.u.counter.kind = GP_COUNTER_DOUBLE; r.u.counter.value.d = 0.8;
			add(T0 + t, 1, &r);
		}
	}
	qsort(items, nitems, sizeof(*items), by_emit);
	for (size_t k = 0; k < nitems; k++) put(items[k].src, &items[k].r);
	free(items);
	return gen_close();
}
