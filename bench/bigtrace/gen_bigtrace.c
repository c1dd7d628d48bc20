/* gen_bigtrace.c — a benchmark trace: a realistic training mix of N events,
 * the same for the same seed (`make bigtrace N=... OUT=...`; bench/offline/
 * measures the offline tool on it).
 *
 *   gen_bigtrace [--seed S] [--numbered] [--names K] [--no-settings] [--late]
 *                [--memory] [--no-nvtx [--batch-varies]] [--format-1] N OUT
 *
 * One process (pid 7000) on one H100-like device (132 SMs).  The model is a
 * fixed program drawn once from the seed: `--names` kernel names (default
 * 300: ATen elementwise/reduce/softmax/norm kernels as mangled C++, cuBLAS
 * GEMMs, two NCCL kernels), each with a launch shape and a log-normal
 * duration around its own median (2 us .. 2 ms, GEMMs the longest, spread
 * sigma 0.1 .. 0.6); a slot of the program picks its name with a Zipf law,
 * so a few names run tens of times a step and most a few times.  Every step
 * then runs that program:
 *
 *   main thread (tid 7000):   NVTX "train_step" (depth 0; "step <k>" with
 *     --numbered) > "forward" (1) > "layer_<i>" (2, 12 of them), then
 *     "optimizer.step" (1); cudaMemcpyAsync of the batch (HtoD, pinned, copy
 *     stream 8), cudaStreamWaitEvent, a cudaLaunchKernel per forward kernel
 *     (compute stream 7) with cudaGetDevice calls between, cudaMemsetAsync
 *     x4 (zero_grad), the optimizer's kernels, and a synchronous cudaMemcpy
 *     of the loss (DtoH) that waits for the stream: the step ends there.
 *   autograd thread (tid 7001): NVTX "backward" (depth 0) > "layer_<i>_grad"
 *     (1) and twice the forward's launches, while main waits; halfway and at
 *     the end of backward a gradient all-reduce (the NCCL kernels) on its
 *     own stream 9, which overlaps the rest of backward (as DDP's buckets).
 *   GPU: each operation starts when its stream is free and its launch call
 *     has returned (+2 us); memcpys at 25 GB/s.
 *   sampler (source 4): nvml.gpu_util, nvml.mem_used_bytes, nvml.power_mw
 *     every 10 ms of trace time.
 *
 * --late: one GPU record in 100,000 is written 150,000 GPU records after
 * its turn (a CUPTI buffer returned very late), for the tools' handling of
 * records that arrive after their time was summed.
 *
 * --memory: memory records (GP_REC_MEMORY, as `--activity=default,memory`
 * writes them) on the GPU source: each forward layer allocates its
 * activations on the device, each backward layer frees them (but layer 0's
 * of every 7th step: a leak, so the peak grows), the batch's
 * pinned buffer is allocated before its copy and freed after the step, and
 * every 5th step frees a pinned buffer allocated before the trace (the
 * tools' in use stays at 0 there).  Their time: when the last GPU
 * operation emitted before them ended.  Not events of N.
 *
 * --no-nvtx: no NVTX range at all (a job as it is, with no hint from us): the
 * tools find the steps by the trace method.  N counts the same records but
 * the ranges, so a step holds 28 events fewer; the batch's copy and the
 * zero_grad memsets have one size each, every step (a job of fixed-size
 * batches: the trace method finds its steps with the sizes); with --batch-varies
 * the batch's size is drawn per step (4..16 MiB), as an input padded to its
 * longest sequence, and each forward layer's first kernel is another one
 * for a batch of 10 MiB or more (cuBLAS picks a GEMM kernel by shape: no
 * step runs alike with the sizes left out either, only like).
 *
 * The process record carries the settings string of a default `gpuprof
 * run` (format 1.2), unless --no-settings (as a 1.0/1.1 trace).
 *
 * --format-1: the file in format 1.4 (no templates, one zstd frame a chunk)
 * rather than the current format: the same records, for comparing how fast
 * each format reads (bench/offline/).
 *
 * Records go to their source in the order the recorder writes them: API
 * calls when they return, push/pop ranges when popped (inner before outer),
 * GPU operations in launch order.  Events = every record but the metadata
 * (strings, sources, process, threads, device); the generator stops after
 * the step in which the count reached N, and says how many it wrote. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"
#include "splitmix.h"

#define P 7000u
#define T0 1000000000ull
#define NLAYERS 12
#define MAXNAMES 4000

enum { SRC_MAIN = 1, SRC_AUTOGRAD, SRC_GPU, SRC_SAMPLER };
enum { STREAM_COMPUTE = 7, STREAM_COPY = 8, STREAM_NCCL = 9 };

/* string ids: fixed ones, then layer range names, then kernel names */
enum {
	S_CMD = 1, S_HOST, S_MAIN, S_AUTOGRAD, S_GPU, S_LAUNCH, S_MEMCPYASYNC, S_MEMCPY, S_MEMSET,
	S_GETDEV, S_EVREC, S_WAITEV, S_STEP, S_FWD, S_BWD, S_OPT, S_UTIL, S_MEMUSED, S_POWER,
	S_SETTINGS, S_LAYER0, S_LAYERG0 = S_LAYER0 + NLAYERS, S_KERN0 = S_LAYERG0 + NLAYERS
};

/* ---------------------------------------------------------------- random */
static uint64_t rng;
static uint64_t rnd(void) { return sm_next(&rng); }
static double unif(void) { return sm_unif(&rng); }
static double normal(void) { return sm_normal(&rng); }
static uint64_t between(uint64_t lo, uint64_t hi) { return lo + rnd() % (hi - lo + 1); }

/* ---------------------------------------------------------------- the model */
struct kname {
	double med_ns, sigma;
	uint32_t grid, block, regs, smem;
};
static struct kname names[MAXNAMES];
static uint32_t nnames = 300;

static const char *const aten[] = {
	"elementwise_kernel", "vectorized_elementwise_kernel", "unrolled_elementwise_kernel", "reduce_kernel",
	"softmax_warp_forward", "softmax_warp_backward", "layer_norm_kernel", "index_select_kernel",
	"cunn_SoftMaxForward", "embedding_backward_kernel", "multi_tensor_apply_kernel", "cat_kernel",
};

/* Kernel name i (deterministic; no randomness, so every seed shares them). */
static void kernel_name(uint32_t i, char *buf, size_t n)
{
	if (i < 2) {
		snprintf(buf, n, "ncclDevKernel_AllReduce_Sum_%s_RING_LL", i ? "bf16" : "f32");
	} else if (i % 5 == 0) {
		snprintf(buf, n, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize%ux%ux64_warpgroupsize1x1x1_"
			 "execute_segment_k_off_kernel__5x_cublas", 64u << (i % 3), 64u << (i / 5 % 3));
	} else {
		const char *fam = aten[i % (sizeof(aten) / sizeof(aten[0]))];
		/* void at::native::FAM<A, B>(int) */
		snprintf(buf, n, "_ZN2at6native%zu%sILi%uELi%uEEEvi", strlen(fam), fam, 32u << (i % 4), i);
	}
}

static void make_names(void)
{
	for (uint32_t i = 0; i < nnames; i++) {
		struct kname *k = &names[i];
		int gemm = i >= 2 && i % 5 == 0, nccl = i < 2;
		/* medians log-uniform: elementwise 2..200 us, GEMM 20 us..2 ms */
		double lo = gemm || nccl ? log(20e3) : log(2e3), hi = gemm || nccl ? log(2e6) : log(200e3);
		k->med_ns = exp(lo + (hi - lo) * unif());
		k->sigma = 0.1 + 0.5 * unif();
		k->grid = (uint32_t)between(1, 4096);
		k->block = 32u << between(0, 5);
		k->regs = (uint32_t)between(16, 255);
		k->smem = gemm ? (uint32_t)between(32, 200) * 1024 : (uint32_t)between(0, 48) * 1024;
	}
}

/* Zipf(s = 1.1) over the names, by inversion of the cumulative weights. */
static double *zipf_cum;
static uint32_t zipf(void)
{
	double u = unif() * zipf_cum[nnames - 1];
	uint32_t lo = 0, hi = nnames - 1;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (zipf_cum[mid] < u) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

/* the program: kernels per layer, forward and backward, and the optimizer */
#define FWD_PER_LAYER 10
#define BWD_PER_LAYER 20
#define OPT_KERNELS 16
static uint32_t fwd[NLAYERS][FWD_PER_LAYER], bwd[NLAYERS][BWD_PER_LAYER], opt[OPT_KERNELS];

static void make_program(void)
{
	zipf_cum = calloc(nnames, sizeof(double));
	double c = 0;
	for (uint32_t i = 0; i < nnames; i++) zipf_cum[i] = c += 1.0 / pow(i + 1, 1.1);
	for (int l = 0; l < NLAYERS; l++) {
		for (int j = 0; j < FWD_PER_LAYER; j++) fwd[l][j] = 2 + zipf() % (nnames - 2);
		for (int j = 0; j < BWD_PER_LAYER; j++) bwd[l][j] = 2 + zipf() % (nnames - 2);
	}
	for (int j = 0; j < OPT_KERNELS; j++) opt[j] = 2 + zipf() % (nnames - 2);
}

/* ---------------------------------------------------------------- emission */
static uint64_t nevents, corr;
static uint64_t stream_free[3];   /* compute, copy, NCCL: when the stream is idle again */
static uint64_t next_sample = 0;

static int late_mode, memory_mode;
static uint64_t ngpu, late_due;
static gp_record late_rec;

static void event(uint32_t src, gp_record *r)
{
	if (src == SRC_GPU && late_mode) {
		ngpu++;
		if (late_due && ngpu >= late_due) { put(SRC_GPU, &late_rec); late_due = 0; }
		if (!late_due && ngpu % 100000 == 50000) { /* held back */
			late_rec = *r;
			late_due = ngpu + 150000;
			nevents++;
			return;
		}
	}
	put(src, r);
	nevents++;
}

static uint64_t api_call(uint32_t src, uint32_t tid, uint32_t name, uint32_t cbid, uint64_t s, uint64_t dur)
{
	gp_record r;
	rec_api(&r, tid, 0, name, cbid, ++corr, T0 + s, T0 + s + dur);
	event(src, &r);
	return s + dur;
}

static uint64_t *stream_slot(uint32_t stream)
{
	return &stream_free[stream == STREAM_COPY ? 1 : stream == STREAM_NCCL ? 2 : 0];
}

/* GPU start of an operation launched by a call returning at `ret`. */
static uint64_t gpu_start(uint32_t stream, uint64_t ret)
{
	uint64_t s = ret + 2000, f = *stream_slot(stream);
	return s > f ? s : f;
}

/* A kernel launch from thread tid at host time t on a stream; returns when
 * the call returned. */
static uint64_t launch_on(uint32_t src, uint32_t tid, uint32_t k, uint64_t t, uint32_t stream)
{
	uint64_t ret = api_call(src, tid, S_LAUNCH, 211, t, between(2500, 8000));
	const struct kname *kn = &names[k];
	double d = kn->med_ns * exp(kn->sigma * normal());
	uint64_t dur = d < 1000 ? 1000 : (uint64_t)d;
	uint64_t s = gpu_start(stream, ret);
	gp_record r;
	rec_kernel(&r, S_KERN0 + k, stream, corr, T0 + s, T0 + s + dur, kn->grid);
	r.u.kernel.block[0] = kn->block;
	r.u.kernel.registers = kn->regs;
	r.u.kernel.dynamic_smem = kn->smem;
	event(SRC_GPU, &r);
	*stream_slot(stream) = s + dur;
	return ret;
}

static uint64_t launch(uint32_t src, uint32_t tid, uint32_t k, uint64_t t)
{
	return launch_on(src, tid, k, t, STREAM_COMPUTE);
}

static uint64_t copy(uint32_t src, uint32_t tid, uint32_t kind, uint64_t bytes, uint32_t stream, int sync,
		     uint64_t t)
{
	uint64_t dur_call = between(3000, 9000);
	uint64_t s = gpu_start(stream, t + dur_call);
	if (sync) /* a synchronous copy waits for everything launched before it */
		for (int i = 0; i < 3; i++)
			if (stream_free[i] > s) s = stream_free[i];
	uint64_t dur = bytes / 25 + 1500;   /* 25 GB/s */
	uint64_t ret = sync ? s + dur + between(1000, 3000) : t + dur_call;
	api_call(src, tid, sync ? S_MEMCPY : S_MEMCPYASYNC, sync ? 31 : 41, t, ret - t);
	gp_record r;
	int h2d = kind == GP_COPY_HTOD;
	rec_memcpy(&r, kind, h2d ? GP_MEM_PINNED : GP_MEM_DEVICE, h2d ? GP_MEM_DEVICE : GP_MEM_PAGEABLE, bytes,
		   stream, corr, T0 + s, T0 + s + dur);
	event(SRC_GPU, &r);
	*stream_slot(stream) = s + dur;
	return ret;
}

static uint64_t memset_op(uint32_t src, uint32_t tid, uint64_t bytes, uint64_t t)
{
	uint64_t ret = api_call(src, tid, S_MEMSET, 51, t, between(2000, 5000));
	uint64_t s = gpu_start(STREAM_COMPUTE, ret), dur = bytes / 1000 + 1000;
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEMSET;
	r.u.memset.start_ns = T0 + s; r.u.memset.end_ns = T0 + s + dur;
	r.u.memset.correlation_id = corr; r.u.memset.bytes = bytes;
	r.u.memset.context_id = 1; r.u.memset.stream_id = STREAM_COMPUTE;
	r.u.memset.mem_kind = GP_MEM_DEVICE; r.u.memset.flags = 1;
	event(SRC_GPU, &r);
	*stream_slot(STREAM_COMPUTE) = s + dur;
	return ret;
}

static int no_nvtx, batch_varies;

static void range(uint32_t src, uint32_t tid, uint32_t msg, uint32_t depth, uint64_t s, uint64_t e)
{
	if (no_nvtx) return;
	gp_record r;
	rec_range(&r, tid, tid, GP_NVTX_PUSHPOP, 0, msg, depth, T0 + s, T0 + e, 0);
	event(src, &r);
}

/* --memory: an alloc (op 1) or free (2) of a buffer of the step, its time
 * the latest end of the GPU operations emitted so far */
static void mem_op(uint32_t op, uint32_t kind, uint64_t addr, uint64_t bytes)
{
	if (!memory_mode) return;
	uint64_t ts = 0;
	for (int i = 0; i < 3; i++)
		if (stream_free[i] > ts) ts = stream_free[i];
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEMORY;
	r.u.memory.ts_ns = T0 + ts; r.u.memory.correlation_id = corr;
	r.u.memory.address = addr; r.u.memory.bytes = bytes; r.u.memory.op = op;
	r.u.memory.mem_kind = kind; r.u.memory.context_id = 1;
	put(SRC_GPU, &r);
}

/* Python between two calls: 5..30 us, now and then a cudaGetDevice */
static uint64_t host_gap(uint32_t src, uint32_t tid, uint64_t t)
{
	t += between(5000, 30000);
	if (rnd() % 4 == 0) t = api_call(src, tid, S_GETDEV, 17, t, between(300, 900)) + between(500, 2000);
	return t;
}

static void counters_until(uint64_t t)
{
	static const uint32_t cname[3] = { S_UTIL, S_MEMUSED, S_POWER };
	for (; next_sample < t; next_sample += 10000000) {
		for (int i = 0; i < 3; i++) {
			gp_record r;
			memset(&r, 0, sizeof(r));
			r.type = GP_REC_COUNTER;
			r.u.counter.ts_ns = T0 + next_sample + (uint64_t)i * 1000;
			r.u.counter.name_id = cname[i];
			r.u.counter.kind = GP_COUNTER_INT;
			r.u.counter.value.i = i == 0 ? (int64_t)between(60, 100)
					    : i == 1 ? (int64_t)between(40, 60) * 1000000000
						     : (int64_t)between(300000, 700000);
			event(SRC_SAMPLER, &r);
		}
	}
}

/* One training step from host time t; returns when it ended. */
static uint64_t step(uint64_t k, uint64_t t, uint32_t step_msg)
{
	const uint32_t M = P, A = P + 1;
	uint64_t s0 = t;
	t += between(2000, 10000);
	uint64_t fwd_s = t;
	/* without NVTX, a batch (but --batch-varies) and the zero_grad
	 * memsets of one size every step: a job of fixed-size batches */
	uint64_t batch = no_nvtx && !batch_varies ? 8u << 20 : between(4, 16) << 20, act[NLAYERS];
	if (k % 5 == 4) mem_op(2, GP_MEM_PINNED, 0x10000000ull, 1u << 20); /* allocated before the trace */
	mem_op(1, GP_MEM_PINNED, 0x20000000ull, batch);
	t = copy(SRC_MAIN, M, GP_COPY_HTOD, batch, STREAM_COPY, 0, t);
	t = api_call(SRC_MAIN, M, S_EVREC, 135, host_gap(SRC_MAIN, M, t), between(1500, 3000));
	t = api_call(SRC_MAIN, M, S_WAITEV, 147, host_gap(SRC_MAIN, M, t), between(1500, 3000));
	/* the compute stream waits for the batch */
	if (stream_free[0] < stream_free[1]) stream_free[0] = stream_free[1];
	for (int l = 0; l < NLAYERS; l++) {
		uint64_t ls = t + 500;
		t = ls;
		act[l] = memory_mode ? between(1, 256) << 16 : 0;
		mem_op(1, GP_MEM_DEVICE, 0x7f0000000000ull + ((uint64_t)l << 32), act[l]);
		for (int j = 0; j < FWD_PER_LAYER; j++) {
			/* --batch-varies: a layer's first kernel (its GEMM) is another
			 * for the larger batches, as cuBLAS picks by shape */
			uint32_t kn = batch_varies && !j && batch >= 10u << 20 ? 2 + (fwd[l][0] - 1) % (nnames - 2) : fwd[l][j];
			t = launch(SRC_MAIN, M, kn, host_gap(SRC_MAIN, M, t));
		}
		t += 1000;
		range(SRC_MAIN, M, S_LAYER0 + l, 2, ls, t);
	}
	t += 1000;
	range(SRC_MAIN, M, S_FWD, 1, fwd_s, t);
	/* backward on the autograd thread; main waits */
	uint64_t b = t + between(20000, 60000), bs = b;
	for (int l = NLAYERS - 1; l >= 0; l--) {
		uint64_t ls = b + 500;
		b = ls;
		for (int j = 0; j < BWD_PER_LAYER; j++) b = launch(SRC_AUTOGRAD, A, bwd[l][j], host_gap(SRC_AUTOGRAD, A, b));
		b += 1000;
		range(SRC_AUTOGRAD, A, S_LAYERG0 + l, 1, ls, b);
		if (l || k % 7 != 3) /* every 7th step leaks layer 0's */
			mem_op(2, GP_MEM_DEVICE, 0x7f0000000000ull + ((uint64_t)l << 32), act[l]);
		if (l == NLAYERS / 2 || l == 0) /* a gradient bucket is ready: all-reduce it */
			b = launch_on(SRC_AUTOGRAD, A, l ? 0 : 1, host_gap(SRC_AUTOGRAD, A, b), STREAM_NCCL);
	}
	b += 1000;
	range(SRC_AUTOGRAD, A, S_BWD, 0, bs, b);
	/* optimizer on main */
	t = b + between(10000, 30000);
	uint64_t os = t;
	for (int j = 0; j < 4; j++)
		t = memset_op(SRC_MAIN, M, no_nvtx ? (uint64_t)(j + 1) << 22 : between(1, 64) << 20, host_gap(SRC_MAIN, M, t));
	for (int j = 0; j < OPT_KERNELS; j++) t = launch(SRC_MAIN, M, opt[j], host_gap(SRC_MAIN, M, t));
	t += 1000;
	range(SRC_MAIN, M, S_OPT, 1, os, t);
	/* loss.item(): waits for the GPU */
	t = copy(SRC_MAIN, M, GP_COPY_DTOH, 4, STREAM_COMPUTE, 1, host_gap(SRC_MAIN, M, t));
	t += between(2000, 8000);
	range(SRC_MAIN, M, step_msg ? step_msg : S_STEP, 0, s0, t);
	mem_op(2, GP_MEM_PINNED, 0x20000000ull, batch);
	counters_until(t);
	return t;
}

static void usage(void)
{
	fprintf(stderr, "usage: gen_bigtrace [--seed S] [--numbered] [--names K] [--no-settings] [--late] [--memory] "
			"[--no-nvtx [--batch-varies]] [--format-1] N OUT\n"
			"  N events (rounded up to a whole step), deterministic for a seed\n");
	exit(1);
}

int main(int argc, char **argv)
{
	gen_prog = "gen_bigtrace";
	uint64_t seed = 1;
	int numbered = 0, settings = 1, i;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--numbered")) numbered = 1;
		else if (!strcmp(argv[i], "--no-settings")) settings = 0;
		else if (!strcmp(argv[i], "--late")) late_mode = 1;
		else if (!strcmp(argv[i], "--memory")) memory_mode = 1;
		else if (!strcmp(argv[i], "--no-nvtx")) no_nvtx = 1;
		else if (!strcmp(argv[i], "--batch-varies")) batch_varies = 1;
		else if (!strcmp(argv[i], "--format-1")) gen_major = 1;
		else if (!strcmp(argv[i], "--names") && i + 1 < argc) nnames = (uint32_t)strtoul(argv[++i], NULL, 0);
		else break;
	}
	if (argc - i != 2 || nnames < 8 || nnames > MAXNAMES) usage();
	char *end;
	double nd = strtod(argv[i], &end);
	if (*end || nd < 1 || nd > 1e12) usage();
	uint64_t n = (uint64_t)nd;
	const char *out = argv[i + 1];
	rng = seed;

	gp_header h;
	gen_open_trace(out, &h, P, T0, GEN_REALTIME0, "benchhost", -1);
	static const char *const fixed[S_LAYER0] = {
		[S_CMD] = "python train.py --bench", [S_HOST] = "benchhost", [S_MAIN] = "python",
		[S_AUTOGRAD] = "pt_autograd_0", [S_GPU] = "NVIDIA H100 80GB HBM3",
		[S_LAUNCH] = "cudaLaunchKernel", [S_MEMCPYASYNC] = "cudaMemcpyAsync", [S_MEMCPY] = "cudaMemcpy",
		[S_MEMSET] = "cudaMemsetAsync", [S_GETDEV] = "cudaGetDevice", [S_EVREC] = "cudaEventRecord",
		[S_WAITEV] = "cudaStreamWaitEvent", [S_STEP] = "train_step", [S_FWD] = "forward",
		[S_BWD] = "backward", [S_OPT] = "optimizer.step", [S_UTIL] = "nvml.gpu_util",
		[S_MEMUSED] = "nvml.mem_used_bytes", [S_POWER] = "nvml.power_mw",
		[S_SETTINGS] = "activity=kernel,memcpy,memset,peer,device api=default api_mode=callback "
			       "api_driver=1 stacks=off clock=auto gpu_metrics_hz=100",
	};
	for (uint32_t s = 1; s < S_LAYER0; s++) str_id(s, fixed[s]);
	char buf[256];
	for (uint32_t l = 0; l < NLAYERS; l++) {
		snprintf(buf, sizeof(buf), "layer_%u", l);
		str_id(S_LAYER0 + l, buf);
		snprintf(buf, sizeof(buf), "layer_%u_grad", l);
		str_id(S_LAYERG0 + l, buf);
	}
	for (uint32_t k = 0; k < nnames; k++) {
		kernel_name(k, buf, sizeof(buf));
		str_id(S_KERN0 + k, buf);
	}
	const uint32_t kinds[5] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY,
				    GP_SOURCE_TOOL };
	const uint32_t tids[5] = { 0, P, P + 1, 0, 0 }, tnames[5] = { 0, S_MAIN, S_AUTOGRAD, 0, 0 };
	sources(P, 4, kinds, tids, tnames);
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_PROCESS;
	r.u.process.pid = P; r.u.process.ppid = 1; r.u.process.name_id = S_CMD;
	r.u.process.host_id = S_HOST; r.u.process.rank = -1; r.u.process.start_ns = T0;
	r.u.process.settings_id = settings ? S_SETTINGS : 0;
	put(0, &r);
	thread_rec(P, P, S_MAIN);
	thread_rec(P, P + 1, S_AUTOGRAD);
	rec_device_sm90(&r, S_GPU);
	r.u.device.global_mem_bytes = 85899345920ull;
	r.u.device.clock_khz = 1980000; r.u.device.mem_clock_khz = 2619000; r.u.device.mem_bus_width = 5120;
	put(0, &r);

	make_names();
	make_program();
	uint64_t t = 1000000, k = 0;
	uint32_t next_str = S_KERN0 + nnames;
	while (nevents < n) {
		uint32_t msg = 0;
		if (numbered) {
			snprintf(buf, sizeof(buf), "step %llu", (unsigned long long)k);
			str_id(msg = next_str++, buf);
		}
		t = step(k++, t, msg);
	}
	if (late_due) put(SRC_GPU, &late_rec);
	int rc = gen_close();
	if (!rc)
		fprintf(stderr, "gen_bigtrace: %s: %llu events, %llu steps, %.3f s of trace\n", out,
			(unsigned long long)nevents, (unsigned long long)k, (double)t / 1e9);
	return rc;
}
