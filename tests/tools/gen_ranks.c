/* gen_ranks.c — writes the trace of one rank of a 2-rank data-parallel job
 * with gp_writer_*, with NCCL and compute kernels and "step <i>" ranges
 * whose `stats --report comm` figures test_comm.py states by hand.
 *
 *   gen_ranks [--rank 0|1] [--drop-last] [--rename] [--skew NS] OUT
 *   gen_ranks --launcher OUT
 *
 * Rank r: pid 3000+r, header and PROCESS rank r.  Rank 0's trace clock
 * starts at 1 s, rank 1's at 7 s with CLOCK_REALTIME 2 us later, so after
 * `gpuprof merge rank0 rank1` rank 1's trace time T0_1 + x lands at
 * T0_0 + 2000 + x.  Below, every time is on the MERGED axis (ns after
 * rank 0's T0); the generator writes rank 1's records 2000 ns earlier on
 * its own clock.
 *
 * Threads: main (tid P: launches compute kernels, pushes the ranges) and
 * autograd (tid P+1: launches the NCCL kernels, no ranges of its own).
 * Kernels on device 0: compute on stream 7 (and 8), NCCL on stream 9.
 * "launch" = start of the launch call with the kernel's correlation id.
 *
 * rank 0: step 0 [1000,51000), nested forward [1500,9000) (depth 1);
 *         step 1 [60000,110000)
 *   corr launch  kernel                 GPU
 *    1    2000   gemm                   [10000,20000)
 *    2    3000   gemm                   [20000,30000)
 *    8    3500   gemm (stream 8)        [15000,22000)
 *    3    4000   AllReduce (autograd)   [25000,35000)
 *    4   61000   gemm                   [70000,80000)
 *    5   62000   AllReduce (autograd)   [75000,90000)
 *    6  105000   gemm                   [112000,118000)  runs after step 1 ends
 *    7  120000   Broadcast (autograd)   [130000,131000)  outside every step
 * rank 1: step 0 [1500,52000), nested forward [2000,9000); step 1 [60500,100500)
 *    1    2500   gemm                   [11000,24000)
 *    2    3500   AllReduce (autograd)   [28000,35000)
 *   99       -   gemm, no launch call   [40000,45000)    counts by GPU start
 *    3   61000   gemm                   [71000,76000)
 *    4   62000   AllReduce (autograd)   [74000,90000)
 *    5  121000   Broadcast (autograd)   [129000,131000)
 *
 * --drop-last: no Broadcast (rank 1: 2 NCCL kernels against rank 0's 3).
 * --rename: the second AllReduce is a ReduceScatter instead.
 * --skew NS: rank 1's CLOCK_REALTIME NS later still (clocks that disagree:
 *   its records land NS later on the merged axis).
 * --launcher: the torchrun launcher's trace: pid 2999, no rank, no kernels,
 *   no ranges (metadata only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"

static uint64_t T0;
static uint32_t P;
static int64_t shift; /* merged axis -> this trace's clock */

enum {
	S_CMD = 1, S_HOST, S_MAIN, S_AUTOGRAD, S_LAUNCH, S_CULAUNCHEX, S_GEMM, S_ALLREDUCE, S_BCAST,
	S_RSCATTER, S_STEP0, S_STEP1, S_FWD, S_COUNT
};

static uint64_t at(uint64_t merged) { return (uint64_t)((int64_t)(T0 + merged) + shift); }

static void api(uint32_t src, uint32_t tid, uint32_t name, uint64_t corr, uint64_t s)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_API;
	r.u.api.start_ns = at(s); r.u.api.end_ns = at(s + 500);
	r.u.api.correlation_id = corr;
	r.u.api.domain = name == S_CULAUNCHEX ? GP_API_DRIVER : GP_API_RUNTIME;
	r.u.api.cbid = name == S_CULAUNCHEX ? 652 : 211;
	r.u.api.name_id = name;
	r.u.api.tid = tid;
	put(src, &r);
}

static void range(uint32_t msg, uint32_t depth, uint64_t s, uint64_t e)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_NVTX_RANGE;
	r.u.nvtx_range.start_ns = at(s); r.u.nvtx_range.end_ns = at(e);
	r.u.nvtx_range.kind = GP_NVTX_PUSHPOP;
	r.u.nvtx_range.message_id = msg;
	r.u.nvtx_range.depth = depth;
	r.u.nvtx_range.tid = P;
	put(1, &r);
}

struct kdef { uint32_t name, stream; uint64_t corr, s, e; };

static void kernel(const struct kdef *k)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_KERNEL;
	r.u.kernel.start_ns = at(k->s); r.u.kernel.end_ns = at(k->e);
	r.u.kernel.correlation_id = k->corr;
	r.u.kernel.device_id = 0; r.u.kernel.context_id = 1; r.u.kernel.stream_id = k->stream;
	r.u.kernel.grid[0] = 64; r.u.kernel.grid[1] = 1; r.u.kernel.grid[2] = 1;
	r.u.kernel.block[0] = 256; r.u.kernel.block[1] = 1; r.u.kernel.block[2] = 1;
	r.u.kernel.registers = 32;
	r.u.kernel.name_id = k->name;
	put(3, &r);
}

int main(int argc, char **argv)
{
	gen_prog = "gen_ranks";
	int rank = 0, drop_last = 0, rename_coll = 0, launcher = 0, i;
	uint64_t skew = 0;
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--rank") && i + 1 < argc - 1) rank = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--drop-last")) drop_last = 1;
		else if (!strcmp(argv[i], "--rename")) rename_coll = 1;
		else if (!strcmp(argv[i], "--skew") && i + 1 < argc - 1) skew = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--launcher")) launcher = 1;
		else break;
	}
	if (argc < 2 || i != argc - 1 || (rank != 0 && rank != 1)) {
		fprintf(stderr, "usage: gen_ranks [--rank 0|1] [--drop-last] [--rename] [--skew NS] OUT\n"
				"       gen_ranks --launcher OUT\n");
		return 1;
	}
	P = launcher ? 2999 : 3000 + (uint32_t)rank;
	T0 = rank ? 7000000000ULL : 1000000000ULL;
	shift = rank ? -2000 : 0;
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, P, T0, GEN_REALTIME0 + (rank ? 2000ULL + skew : 0), "testhost",
		       launcher ? -1 : rank);
	const char *strs[S_COUNT] = {
		[S_CMD] = "python train_ddp.py", [S_HOST] = "testhost", [S_MAIN] = "main",
		[S_AUTOGRAD] = "autograd", [S_LAUNCH] = "cudaLaunchKernel", [S_CULAUNCHEX] = "cuLaunchKernelEx",
		[S_GEMM] = "ampere_sgemm_128x64_nn",
		[S_ALLREDUCE] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		[S_BCAST] = "ncclKernel_Broadcast_RING_LL_Sum_int8_t",
		[S_RSCATTER] = "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		[S_STEP0] = "step 0", [S_STEP1] = "step 1", [S_FWD] = "forward",
	};
	for (uint32_t s = 1; s < S_COUNT; s++) str_id(s, strs[s]);

	gp_record r;
	/* sources: 1 main thread, 2 autograd thread, 3 GPU activity */
	const uint32_t kinds[4] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY };
	const uint32_t tids[4] = { 0, P, P + 1, 0 }, names[4] = { 0, S_MAIN, S_AUTOGRAD, 0 };
	sources(P, 3, kinds, tids, names);
	process(P, S_CMD, S_HOST, h.rank, T0);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_CLOCK;
	r.u.clock.trace_ns = T0; r.u.clock.realtime_ns = h.start_realtime_ns;
	put(0, &r);

	if (launcher) goto close;
	uint32_t coll2 = rename_coll ? S_RSCATTER : S_ALLREDUCE;
	/* main thread, as the recorder writes it: calls when they return,
	 * ranges when popped */
	if (rank == 0) {
		range(S_FWD, 1, 1500, 9000);
		api(1, P, S_LAUNCH, 1, 2000);
		api(1, P, S_LAUNCH, 2, 3000);
		api(1, P, S_LAUNCH, 8, 3500);
		range(S_STEP0, 0, 1000, 51000);
		api(1, P, S_LAUNCH, 4, 61000);
		api(1, P, S_LAUNCH, 6, 105000);
		range(S_STEP1, 0, 60000, 110000);
		api(2, P + 1, S_CULAUNCHEX, 3, 4000);
		api(2, P + 1, S_CULAUNCHEX, 5, 62000);
		if (!drop_last) api(2, P + 1, S_CULAUNCHEX, 7, 120000);
	} else {
		range(S_FWD, 1, 2000, 9000);
		api(1, P, S_LAUNCH, 1, 2500);
		range(S_STEP0, 0, 1500, 52000);
		api(1, P, S_LAUNCH, 3, 61000);
		range(S_STEP1, 0, 60500, 100500);
		api(2, P + 1, S_CULAUNCHEX, 2, 3500);
		api(2, P + 1, S_CULAUNCHEX, 4, 62000);
		if (!drop_last) api(2, P + 1, S_CULAUNCHEX, 5, 121000);
	}
	static const struct kdef k0[] = {
		{ S_GEMM, 7, 1, 10000, 20000 }, { S_GEMM, 8, 8, 15000, 22000 }, { S_GEMM, 7, 2, 20000, 30000 },
		{ S_ALLREDUCE, 9, 3, 25000, 35000 }, { S_GEMM, 7, 4, 70000, 80000 },
		{ S_ALLREDUCE, 9, 5, 75000, 90000 }, { S_GEMM, 7, 6, 112000, 118000 },
		{ S_BCAST, 9, 7, 130000, 131000 },
	};
	static const struct kdef k1[] = {
		{ S_GEMM, 7, 1, 11000, 24000 }, { S_ALLREDUCE, 9, 2, 28000, 35000 },
		{ S_GEMM, 7, 99, 40000, 45000 }, { S_GEMM, 7, 3, 71000, 76000 },
		{ S_ALLREDUCE, 9, 4, 74000, 90000 }, { S_BCAST, 9, 5, 129000, 131000 },
	};
	const struct kdef *k = rank ? k1 : k0;
	size_t nk = rank ? sizeof(k1) / sizeof(k1[0]) : sizeof(k0) / sizeof(k0[0]);
	for (size_t j = 0; j < nk; j++) {
		if (drop_last && k[j].name == S_BCAST) continue;
		struct kdef d = k[j];
		if (d.name == S_ALLREDUCE && d.s >= 70000) d.name = coll2;
		kernel(&d);
	}
close:
	return gen_close();
}
