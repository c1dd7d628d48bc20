/* gen_trace.c — writes a small deterministic trace with gp_writer_* whose
 * statistics can be computed by hand (see tests/tools/test_stats.sh).
 *
 *   gen_trace OUT            variant a: pid 1000, trace clock starts at 1 s
 *   gen_trace --b OUT        variant b: pid 2000, rank 1, trace clock starts
 *                            at 5 s, realtime 1 ms later than variant a
 *   --ranges-first           write NVTX ranges at their start instead of
 *                            where the recorder writes them (at the pop,
 *                            after the calls inside), to test both orders
 *   --occ                    a different trace for the occupancy and util
 *                            figures (test_occupancy.py): an H200-like
 *                            device with every per-SM limit and kernels of
 *                            known launch shapes (see write_occ below)
 *   --windows                a windowed trace (`gpuprof run --gpu-window`):
 *                            GP_REC_WINDOW [0,130000] and [200000,250000]
 *                            (every GPU record starts inside one)
 *
 * Timeline (ns after T0 = start_trace_ns), process pid P, device 0:
 *  main thread (tid P):
 *   NVTX push/pop  train_step [0,100000)  depth 0
 *                    forward  [1000,40000)   depth 1
 *                    backward [50000,90000)  depth 1
 *                  train_step [200000,260000) depth 0
 *                    forward  [201000,230000) depth 1
 *   NVTX start/end mydomain:epoch [500,300000) begun on main, ended on worker
 *   runtime API  corr  call              [start,end)      -> GPU work
 *     1 cudaMemcpyAsync        [2000,5000)     memcpy HtoD 1e6 B  s7 [6000,26000)
 *     2 cudaLaunchKernel       [10000,14000)   vecAdd          s7 [30000,40000)
 *     3 cudaLaunchKernel       [20000,22000)   my_plain_kernel s7 [40000,60000)
 *     4 cudaLaunchKernel       [55000,58000)   vecAdd          s8 [70000,76000)
 *     5 cudaMemsetAsync        [60000,61000)   memset 2e6 B    s7 [72000,74000)
 *     6 cudaDeviceSynchronize  [92000,99000)   -
 *     7 cudaLaunchKernel       [202000,206000) vecAdd          s7 [210000,218000)
 *     8 cudaMemcpyAsync        [240000,243000) memcpy DtoH 3e6 B s7 [244000,256000)
 *  worker thread (tid P+1):
 *     9 cuLaunchKernel (driver)[100000,101000) my_plain_kernel s8 [120000,125000)
 *   NVTX mark "checkpoint" at 150000; a mark with awkward bytes at 160000
 *  counter nvml.gpu_util device 0: 50 at 100000, 75 at 200000
 *  dropped: 3 records (ring, source 2) at 280000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"

static uint64_t T0;
static uint32_t P;

enum {
	S_CMD = 1, S_HOST, S_MAIN, S_WORKER, S_GPU, S_LAUNCH, S_MEMCPY, S_MEMSET, S_SYNC,
	S_VECADD, S_PLAIN, S_STEP, S_FWD, S_BWD, S_EPOCH, S_CKPT, S_CULAUNCH, S_UTIL, S_DOMAIN,
	S_WEIRD, S_COUNT
};

static void api(uint32_t src, uint32_t tid, int driver, uint32_t name, uint32_t cbid, uint64_t corr,
		uint64_t s, uint64_t e)
{
	gp_record r;
	rec_api(&r, tid, driver, name, cbid, corr, T0 + s, T0 + e);
	put(src, &r);
}

static void kernel(uint32_t name, uint32_t stream, uint64_t corr, uint64_t s, uint64_t e, uint32_t gx)
{
	gp_record r;
	rec_kernel(&r, name, stream, corr, T0 + s, T0 + e, gx);
	put(3, &r);
}

static void memcpy_rec(uint32_t kind, uint32_t srck, uint32_t dstk, uint64_t bytes, uint64_t corr,
		       uint64_t s, uint64_t e)
{
	gp_record r;
	rec_memcpy(&r, kind, srck, dstk, bytes, 7, corr, T0 + s, T0 + e);
	put(3, &r);
}

static void range(uint32_t src, uint32_t tid, uint32_t end_tid, uint32_t kind, uint32_t dom,
		  uint32_t msg, uint32_t depth, uint64_t s, uint64_t e, uint64_t id)
{
	gp_record r;
	rec_range(&r, tid, end_tid, kind, dom, msg, depth, T0 + s, T0 + e, id);
	put(src, &r);
}

static void mark(uint32_t src, uint32_t tid, uint32_t msg, uint64_t ts)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_NVTX_MARK;
	r.u.nvtx_mark.ts_ns = T0 + ts;
	r.u.nvtx_mark.message_id = msg;
	r.u.nvtx_mark.tid = tid;
	put(src, &r);
}

/* --occ: one process, one H200-like device (cc 9.0, 132 SMs, 2048 threads,
 * 32 blocks, 65536 registers and 233472 B shared memory per SM, warp 32), and
 * kernels back to back on stream 7 from T0+1000 (span 20000 ns), each with a
 * shape whose figures test_occupancy.py states by hand.  The first four are
 * the paper's microbenchmark shapes (blocks x threads).  Counters:
 * nvml.gpu_util 100 at 1000/11000/21000 (busy all the time, as nvidia-smi
 * would say); nvml.power_mw 300000 at 1000, 500000 at 5000, 400000 at 21000. */
static void write_occ(void)
{
	static const struct { const char *name; uint32_t grid, block, regs, smem; uint64_t dur; } k[] = {
		{ "mb_1x1", 1, 1, 16, 0, 1000 },
		{ "mb_131072x1", 131072, 1, 16, 0, 2000 },
		{ "mb_1024x1024", 1024, 1024, 32, 0, 4000 },
		{ "mb_131072x1024", 131072, 1024, 32, 0, 8000 },
		{ "k_256t_32r", 264, 256, 32, 0, 1000 },
		{ "k_1024t_64r", 132, 1024, 64, 0, 2000 },
		{ "k_128t_smem100000", 66, 128, 32, 100000, 1000 },
		{ "k_96t_37r", 1000, 96, 37, 0, 1000 },
	};
	const uint32_t nk = sizeof(k) / sizeof(k[0]), S0 = 100; /* string ids past S_COUNT */
	gp_record r;
	for (uint32_t i = 0; i < nk; i++) str_id(S0 + i, k[i].name);
	str_id(S0 + nk, "nvml.power_mw");
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_SOURCE;
	r.u.source.source_id = 3; r.u.source.kind = GP_SOURCE_ACTIVITY; r.u.source.pid = P;
	put(0, &r);
	r.u.source.source_id = 4; r.u.source.kind = GP_SOURCE_TOOL;
	put(0, &r);
	device_h200(S_GPU);
	uint64_t t = 1000;
	for (uint32_t i = 0; i < nk; i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_KERNEL;
		r.u.kernel.start_ns = T0 + t; r.u.kernel.end_ns = T0 + t + k[i].dur;
		r.u.kernel.correlation_id = 1 + i;
		r.u.kernel.device_id = 0; r.u.kernel.context_id = 1; r.u.kernel.stream_id = 7;
		r.u.kernel.grid[0] = k[i].grid; r.u.kernel.grid[1] = 1; r.u.kernel.grid[2] = 1;
		r.u.kernel.block[0] = k[i].block; r.u.kernel.block[1] = 1; r.u.kernel.block[2] = 1;
		r.u.kernel.registers = k[i].regs;
		r.u.kernel.static_smem = k[i].smem / 2; r.u.kernel.dynamic_smem = k[i].smem - k[i].smem / 2;
		r.u.kernel.name_id = S0 + i;
		put(3, &r);
		t += k[i].dur;
	}
	static const struct { uint32_t name; uint64_t t; int64_t v; } c[] = {
		{ S_UTIL, 1000, 100 }, { S_UTIL, 11000, 100 }, { S_UTIL, 21000, 100 },
		{ 0, 1000, 300000 }, { 0, 5000, 500000 }, { 0, 21000, 400000 },
	};
	for (uint32_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_COUNTER;
		r.u.counter.ts_ns = T0 + c[i].t;
		r.u.counter.name_id = c[i].name ? c[i].name : S0 + nk; r.u.counter.device_id = 0;
		r.u.counter.kind = GP_COUNTER_INT; r.u.counter.value.i = c[i].v;
		put(4, &r);
	}
}

int main(int argc, char **argv)
{
	gen_prog = "gen_trace";
	int b = 0, ranges_first = 0, windows = 0, occ = 0, i;
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--b")) b = 1;
		else if (!strcmp(argv[i], "--ranges-first")) ranges_first = 1;
		else if (!strcmp(argv[i], "--windows")) windows = 1;
		else if (!strcmp(argv[i], "--occ")) occ = 1;
		else break;
	}
	if (argc < 2 || i != argc - 1) {
		fprintf(stderr, "usage: gen_trace [--b] [--ranges-first] [--windows] [--occ] OUT\n");
		return 1;
	}
	const char *out = argv[argc - 1];
	P = b ? 2000 : 1000;
	T0 = b ? 5000000000ULL : 1000000000ULL;
	gp_header h;
	gen_open_trace(out, &h, P, T0, GEN_REALTIME0 + (b ? 1000000ULL : 0), b ? "testhost-b" : "testhost", b ? 1 : -1);

	const char *strs[S_COUNT] = {
		[S_CMD] = b ? "python train.py --rank 1" : "python train.py",
		[S_HOST] = b ? "testhost-b" : "testhost",
		[S_MAIN] = "main", [S_WORKER] = "worker", [S_GPU] = "NVIDIA H200",
		[S_LAUNCH] = "cudaLaunchKernel", [S_MEMCPY] = "cudaMemcpyAsync",
		[S_MEMSET] = "cudaMemsetAsync", [S_SYNC] = "cudaDeviceSynchronize",
		[S_VECADD] = "_Z6vecAddPKfS0_Pfi", [S_PLAIN] = "my_plain_kernel",
		[S_STEP] = "train_step", [S_FWD] = "forward", [S_BWD] = "backward",
		[S_EPOCH] = "epoch", [S_CKPT] = "checkpoint", [S_CULAUNCH] = "cuLaunchKernel",
		[S_UTIL] = "nvml.gpu_util", [S_DOMAIN] = "mydomain",
		[S_WEIRD] = "odd \"quoted\"\ttab\x01 ctl \xff bad utf8 \xc3\xa9",
	};
	for (uint32_t i = 1; i < S_COUNT; i++)
		str_id(i, strs[i]);
	if (occ) {
		write_occ();
		goto close;
	}

	gp_record r;
	/* sources: 1 main, 2 worker, 3 GPU activity, 4 tool (counters) */
	const uint32_t kinds[5] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_THREAD,
				    GP_SOURCE_ACTIVITY, GP_SOURCE_TOOL };
	const uint32_t tids[5] = { 0, P, P + 1, 0, 0 }, names[5] = { 0, S_MAIN, S_WORKER, 0, 0 };
	sources(P, 4, kinds, tids, names);
	process(P, S_CMD, S_HOST, b ? 1 : -1, T0);
	thread_rec(P, P, S_MAIN);
	thread_rec(P, P + 1, S_WORKER);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_DEVICE;
	r.u.device.device_id = 0; r.u.device.name_id = S_GPU;
	r.u.device.cc_major = 9; r.u.device.cc_minor = 0; r.u.device.sm_count = 132;
	r.u.device.global_mem_bytes = 150000000000ULL;
	r.u.device.warp_size = 32; r.u.device.max_threads_per_block = 1024;
	r.u.device.clock_khz = 1980000; r.u.device.mem_clock_khz = 2619000; r.u.device.mem_bus_width = 5120;
	put(0, &r);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_CLOCK;
	r.u.clock.trace_ns = T0; r.u.clock.realtime_ns = h.start_realtime_ns;
	put(0, &r);

	if (ranges_first) {
		/* ranges written at push time (start order) */
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_STEP, 0, 0, 100000, 0);
		range(1, P, P + 1, GP_NVTX_STARTEND, S_DOMAIN, S_EPOCH, 0, 500, 300000, 42);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_FWD, 1, 1000, 40000, 0);
		api(1, P, 0, S_MEMCPY, 41, 1, 2000, 5000);
		api(1, P, 0, S_LAUNCH, 211, 2, 10000, 14000);
		api(1, P, 0, S_LAUNCH, 211, 3, 20000, 22000);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_BWD, 1, 50000, 90000, 0);
		api(1, P, 0, S_LAUNCH, 211, 4, 55000, 58000);
		api(1, P, 0, S_MEMSET, 47, 5, 60000, 61000);
		api(1, P, 0, S_SYNC, 165, 6, 92000, 99000);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_STEP, 0, 200000, 260000, 0);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_FWD, 1, 201000, 230000, 0);
		api(1, P, 0, S_LAUNCH, 211, 7, 202000, 206000);
		api(1, P, 0, S_MEMCPY, 41, 8, 240000, 243000);
	} else {
		/* as the recorder writes them: an API call when it returns, a
		 * push/pop range when it is popped (after the calls inside it) */
		api(1, P, 0, S_MEMCPY, 41, 1, 2000, 5000);
		api(1, P, 0, S_LAUNCH, 211, 2, 10000, 14000);
		api(1, P, 0, S_LAUNCH, 211, 3, 20000, 22000);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_FWD, 1, 1000, 40000, 0);
		api(1, P, 0, S_LAUNCH, 211, 4, 55000, 58000);
		api(1, P, 0, S_MEMSET, 47, 5, 60000, 61000);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_BWD, 1, 50000, 90000, 0);
		api(1, P, 0, S_SYNC, 165, 6, 92000, 99000);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_STEP, 0, 0, 100000, 0);
		api(1, P, 0, S_LAUNCH, 211, 7, 202000, 206000);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_FWD, 1, 201000, 230000, 0);
		api(1, P, 0, S_MEMCPY, 41, 8, 240000, 243000);
		range(1, P, P, GP_NVTX_PUSHPOP, 0, S_STEP, 0, 200000, 260000, 0);
	}

	/* worker thread */
	api(2, P + 1, 1, S_CULAUNCH, 307, 9, 100000, 101000);
	mark(2, P + 1, S_CKPT, 150000);
	mark(2, P + 1, S_WEIRD, 160000);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_DROPPED;
	r.u.dropped.ts_ns = T0 + 280000; r.u.dropped.count = 3;
	r.u.dropped.where = GP_DROP_RING; r.u.dropped.source_id = 2;
	put(2, &r);
	if (!ranges_first) /* ended on the worker: written there */
		range(2, P, P + 1, GP_NVTX_STARTEND, S_DOMAIN, S_EPOCH, 0, 500, 300000, 42);

	/* GPU activity, time order */
	memcpy_rec(GP_COPY_HTOD, GP_MEM_PAGEABLE, GP_MEM_DEVICE, 1000000, 1, 6000, 26000);
	kernel(S_VECADD, 7, 2, 30000, 40000, 4096);
	kernel(S_PLAIN, 7, 3, 40000, 60000, 128);
	kernel(S_VECADD, 8, 4, 70000, 76000, 4096);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEMSET;
	r.u.memset.start_ns = T0 + 72000; r.u.memset.end_ns = T0 + 74000;
	r.u.memset.correlation_id = 5; r.u.memset.bytes = 2000000;
	r.u.memset.device_id = 0; r.u.memset.context_id = 1; r.u.memset.stream_id = 7;
	r.u.memset.value = 0; r.u.memset.mem_kind = GP_MEM_DEVICE; r.u.memset.flags = 1;
	put(3, &r);
	kernel(S_PLAIN, 8, 9, 120000, 125000, 64);
	kernel(S_VECADD, 7, 7, 210000, 218000, 4096);
	memcpy_rec(GP_COPY_DTOH, GP_MEM_DEVICE, GP_MEM_PINNED, 3000000, 8, 244000, 256000);

	/* windows, written like the shim's flush thread does: at each window end */
	for (int k = 0; windows && k < 2; k++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_WINDOW;
		r.u.window.start_ns = T0 + (k ? 200000 : 0);
		r.u.window.end_ns = T0 + (k ? 250000 : 130000);
		put(1, &r);
	}

	/* counters */
	for (int i = 0; i < 2; i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_COUNTER;
		r.u.counter.ts_ns = T0 + (i ? 200000 : 100000);
		r.u.counter.name_id = S_UTIL; r.u.counter.device_id = 0;
		r.u.counter.kind = GP_COUNTER_INT; r.u.counter.value.i = i ? 75 : 50;
		put(4, &r);
	}

close:
	return gen_close();
}
