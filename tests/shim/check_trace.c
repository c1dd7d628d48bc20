/* check_trace.c — decodes a trace written by the shim with the libprof
 * reader and checks it against tests/fake/workload.c's fixed script.
 *   check_trace parent FILE   the workload's own trace, exactly
 *   check_trace child FILE    the fork child that used CUDA
 *   check_trace sigterm FILE  "workload sleep" killed by SIGTERM
 *   check_trace sigkill FILE KILL_NS  "workload sleep" killed by SIGKILL at
 *                             KILL_NS (CLOCK_MONOTONIC): GPU and API records
 *                             up to 1 s before the kill are in the trace
 *   check_trace window FILE PERIOD_NS  "workload loop" under
 *                             GPUPROF_GPU_WINDOW=ON/PERIOD: GPU records only
 *                             from launches inside GP_REC_WINDOW spans, API
 *                             records everywhere, windows ordered and apart,
 *                             about one per PERIOD
 *   check_trace nowindow FILE "workload loop" without windows: no
 *                             GP_REC_WINDOW, every launch has its kernel
 *   check_trace now -         prints CLOCK_MONOTONIC ns (the trace clock)
 *   check_trace info FILE     prints "pid=N ppid=N clock=N" (for scripts)
 *   check_trace summary FILE  prints "<type> <count>" and per-name counts
 * Exit 0 when every check holds; each failed check prints one line. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gp_trace.h"

#define MAXR 20000
static gp_record recs[MAXR];
static int nrec;
static gp_reader *rd;
static const gp_header *hdr;
static int failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			failures++;                                          \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fprintf(stderr, "\n");                               \
		}                                                            \
	} while (0)

static const char *S(uint32_t id)
{
	const char *s = id ? gp_reader_string(rd, id) : NULL;
	return s ? s : "";
}

static int load(const char *path)
{
	int rc = gp_reader_open(path, &rd);
	if (rc < 0) {
		fprintf(stderr, "cannot open %s: %s\n", path, gp_strerror(rc));
		return -1;
	}
	hdr = gp_reader_header(rd);
	gp_reader_load_meta(rd);
	const gp_record *r;
	while ((rc = gp_reader_next(rd, &r)) == 1) {
		if (r->type == GP_REC_STRING || r->type == GP_REC_SOURCE)
			continue;
		if (nrec < MAXR)
			recs[nrec++] = *r;
	}
	if (rc < 0) {
		fprintf(stderr, "reader error: %s (%s)\n", gp_strerror(rc), gp_reader_errmsg(rd));
		return -1;
	}
	return 0;
}

static int count_type(uint32_t t)
{
	int n = 0;
	for (int i = 0; i < nrec; i++)
		n += recs[i].type == t;
	return n;
}

static int count_kernel(const char *name)
{
	int n = 0;
	for (int i = 0; i < nrec; i++)
		n += recs[i].type == GP_REC_KERNEL && !strcmp(S(recs[i].u.kernel.name_id), name);
	return n;
}

static int count_api(uint32_t domain, const char *name)
{
	int n = 0;
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_API && recs[i].u.api.domain == domain &&
		    (!name || !strcmp(S(recs[i].u.api.name_id), name)))
			n++;
	return n;
}

static const gp_rec_api *api_by_corr(uint64_t corr)
{
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_API && recs[i].u.api.correlation_id == corr &&
		    recs[i].u.api.domain == GP_API_RUNTIME)
			return &recs[i].u.api;
	return NULL;
}

static const gp_rec_process *process(void)
{
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_PROCESS)
			return &recs[i].u.process;
	return NULL;
}

static void check_common(void)
{
	CHECK(hdr->clock_id == GP_CLOCK_MONOTONIC, "clock_id %u, want MONOTONIC", hdr->clock_id);
	const gp_rec_process *p = process();
	CHECK(p != NULL, "no GP_REC_PROCESS");
	if (p)
		CHECK(p->pid == hdr->pid, "process pid %u != header pid %u", p->pid, hdr->pid);
	CHECK(count_type(GP_REC_CLOCK) >= 2, "clock pairs: %d, want >= 2", count_type(GP_REC_CLOCK));
	int dropped = 0;
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_DROPPED)
			dropped += (int)recs[i].u.dropped.count;
	CHECK(dropped == 0, "dropped %d records", dropped);
	struct gp_integrity in;
	gp_reader_integrity(rd, &in);
	CHECK(in.frames_corrupt == 0, "corrupt frames: %" PRIu64, in.frames_corrupt);
	/* every kernel/memcpy/memset: launched by a runtime call with the same
	 * correlation id, and (one clock) starts after that call began */
	for (int i = 0; i < nrec; i++) {
		uint64_t corr = 0, start = 0, end = 0;
		const char *want = NULL;
		if (recs[i].type == GP_REC_KERNEL) {
			corr = recs[i].u.kernel.correlation_id;
			start = recs[i].u.kernel.start_ns;
			end = recs[i].u.kernel.end_ns;
			want = "cudaLaunchKernel";
		} else if (recs[i].type == GP_REC_MEMCPY) {
			corr = recs[i].u.memcpy.correlation_id;
			start = recs[i].u.memcpy.start_ns;
			end = recs[i].u.memcpy.end_ns;
			want = "cudaMemcpy";
		} else if (recs[i].type == GP_REC_MEMSET) {
			corr = recs[i].u.memset.correlation_id;
			start = recs[i].u.memset.start_ns;
			end = recs[i].u.memset.end_ns;
			want = "cudaMemset";
		} else {
			continue;
		}
		const gp_rec_api *a = api_by_corr(corr);
		CHECK(a != NULL, "%s with correlation id %" PRIu64 " has no runtime API record",
		      gp_rec_type_name(recs[i].type), corr);
		if (!a)
			continue;
		CHECK(!strcmp(S(a->name_id), want), "correlation %" PRIu64 " belongs to %s, want %s",
		      corr, S(a->name_id), want);
		CHECK(start >= a->start_ns && start <= end,
		      "GPU record %" PRIu64 "..%" PRIu64 " vs API start %" PRIu64 " (clocks differ?)",
		      start, end, a->start_ns);
	}
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_API)
			/* a fork child's first call begins before its trace
			 * is created (lazily, at that call's exit) */
			CHECK(recs[i].u.api.start_ns <= recs[i].u.api.end_ns &&
				      recs[i].u.api.start_ns + 10000000000ull >= hdr->start_trace_ns,
			      "API %s times %" PRIu64 "..%" PRIu64, S(recs[i].u.api.name_id),
			      recs[i].u.api.start_ns, recs[i].u.api.end_ns);
}

static const gp_rec_nvtx_range *range(const char *msg, int idx)
{
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_NVTX_RANGE && !strcmp(S(recs[i].u.nvtx_range.message_id), msg))
			if (idx-- == 0)
				return &recs[i].u.nvtx_range;
	return NULL;
}
static int count_range(const char *msg, uint32_t kind, uint32_t depth, uint32_t flags)
{
	int n = 0;
	for (int i = 0; i < nrec; i++) {
		const gp_rec_nvtx_range *r = &recs[i].u.nvtx_range;
		if (recs[i].type == GP_REC_NVTX_RANGE && !strcmp(S(r->message_id), msg) && r->kind == kind &&
		    r->depth == depth && r->flags == flags)
			n++;
	}
	return n;
}

/* all_kinds: traced with GPUPROF_ACTIVITY=all; the default leaves out the
 * SYNCHRONIZATION and MEMORY2 kinds, so no sync or memory records */
static void check_parent(int all_kinds)
{
	check_common();
	/* kernels */
	CHECK(count_type(GP_REC_KERNEL) == 83, "kernels: %d, want 83", count_type(GP_REC_KERNEL));
	CHECK(count_kernel("k_gemm") == 40, "k_gemm: %d, want 40", count_kernel("k_gemm"));
	CHECK(count_kernel("k_relu") == 40, "k_relu: %d, want 40", count_kernel("k_relu"));
	CHECK(count_kernel("k_softmax") == 3, "k_softmax: %d, want 3", count_kernel("k_softmax"));
	int grid[5] = {0};
	for (int i = 0; i < nrec; i++) {
		const gp_rec_kernel *k = &recs[i].u.kernel;
		if (recs[i].type != GP_REC_KERNEL)
			continue;
		CHECK(k->block[0] == 128 && k->block[1] == 1 && k->registers == 32 &&
			      k->static_smem == 1024 && k->local_mem == 16,
		      "kernel %s fields: block %u regs %u smem %u local %u", S(k->name_id), k->block[0],
		      k->registers, k->static_smem, k->local_mem);
		if (!strcmp(S(k->name_id), "k_gemm") && k->grid[0] >= 1 && k->grid[0] <= 4)
			grid[k->grid[0]]++;
	}
	for (int g = 1; g <= 4; g++)
		CHECK(grid[g] == 10, "k_gemm with grid.x=%d: %d, want 10", g, grid[g]);
	/* copies */
	CHECK(count_type(GP_REC_MEMCPY) == 8, "memcpys: %d, want 8", count_type(GP_REC_MEMCPY));
	int htod = 0, dtoh = 0;
	uint64_t htod_bytes = 0;
	for (int i = 0; i < nrec; i++) {
		const gp_rec_memcpy *m = &recs[i].u.memcpy;
		if (recs[i].type != GP_REC_MEMCPY)
			continue;
		if (m->copy_kind == GP_COPY_HTOD) {
			htod++;
			htod_bytes += m->bytes;
			CHECK(m->src_kind == GP_MEM_PAGEABLE && m->dst_kind == GP_MEM_DEVICE, "HtoD mem kinds %u/%u",
			      m->src_kind, m->dst_kind);
		} else if (m->copy_kind == GP_COPY_DTOH) {
			dtoh++;
			CHECK(m->bytes == 1024, "DtoH bytes %" PRIu64, m->bytes);
		}
		CHECK(m->flags == 0, "sync cudaMemcpy flagged async");
	}
	CHECK(htod == 4 && dtoh == 4, "HtoD %d DtoH %d, want 4/4", htod, dtoh);
	CHECK(htod_bytes == 4096 + 8192 + 12288 + 16384, "HtoD bytes %" PRIu64 ", want 40960", htod_bytes);
	CHECK(count_type(GP_REC_MEMSET) == 4, "memsets: %d, want 4", count_type(GP_REC_MEMSET));
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_MEMSET)
			CHECK(recs[i].u.memset.bytes == 512, "memset bytes %" PRIu64, recs[i].u.memset.bytes);
	CHECK(count_type(GP_REC_SYNC) == (all_kinds ? 5 : 0), "sync records: %d, want %d",
	      count_type(GP_REC_SYNC), all_kinds ? 5 : 0);
	CHECK(count_type(GP_REC_MEMORY) == (all_kinds ? 4 : 0), "memory records: %d, want %d",
	      count_type(GP_REC_MEMORY), all_kinds ? 4 : 0);
	CHECK(count_type(GP_REC_DEVICE) == 1, "device records: %d, want 1", count_type(GP_REC_DEVICE));
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_DEVICE)
			CHECK(!strcmp(S(recs[i].u.device.name_id), "Fake H200") &&
				      recs[i].u.device.sm_count == 132 && recs[i].u.device.cc_major == 9 &&
				      recs[i].u.device.max_threads_per_sm == 2048,
			      "device %s sm %u cc %u threads/sm %u", S(recs[i].u.device.name_id),
			      recs[i].u.device.sm_count, recs[i].u.device.cc_major,
			      recs[i].u.device.max_threads_per_sm);
	/* API calls: the default set, driver calls made by the runtime skipped */
	struct { const char *n; int want; } rt[] = {
		{"cudaLaunchKernel", 83}, {"cudaMemcpy", 8}, {"cudaMemset", 4},
		{"cudaStreamSynchronize", 4}, {"cudaDeviceSynchronize", 1}, {"cudaMalloc", 2},
		{"cudaFree", 2}, {"cudaGetDeviceCount", 0},
	};
	for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
		CHECK(count_api(GP_API_RUNTIME, rt[i].n) == rt[i].want, "runtime %s: %d, want %d", rt[i].n,
		      count_api(GP_API_RUNTIME, rt[i].n), rt[i].want);
	CHECK(count_api(GP_API_RUNTIME, NULL) == 104, "runtime API records: %d, want 104",
	      count_api(GP_API_RUNTIME, NULL));
	CHECK(count_api(GP_API_DRIVER, NULL) == 1 && count_api(GP_API_DRIVER, "cuCtxSynchronize") == 1,
	      "driver API records: %d (want exactly the direct cuCtxSynchronize)",
	      count_api(GP_API_DRIVER, NULL));
	/* threads: main + 4 workers made API calls */
	uint32_t tids[16];
	int ntid = 0;
	for (int i = 0; i < nrec; i++) {
		if (recs[i].type != GP_REC_API)
			continue;
		int k;
		for (k = 0; k < ntid && tids[k] != recs[i].u.api.tid; k++)
			;
		if (k == ntid && ntid < 16)
			tids[ntid++] = recs[i].u.api.tid;
	}
	CHECK(ntid == 5, "API calls from %d threads, want 5", ntid);
	int named = 0;
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_THREAD && !strncmp(S(recs[i].u.thread.name_id), "worker-", 7))
			named++;
	CHECK(named >= 1, "no thread named worker-N");
	/* NVTX */
	CHECK(count_range("worker", GP_NVTX_PUSHPOP, 0, 0) == 4, "worker ranges at depth 0: %d, want 4",
	      count_range("worker", GP_NVTX_PUSHPOP, 0, 0));
	CHECK(count_range("iter", GP_NVTX_PUSHPOP, 1, 0) == 40, "iter ranges at depth 1: %d, want 40",
	      count_range("iter", GP_NVTX_PUSHPOP, 1, 0));
	CHECK(count_range("unclosed", GP_NVTX_PUSHPOP, 0, GP_NVTX_UNTERMINATED) == 1,
	      "unclosed range: %d, want 1 unterminated", count_range("unclosed", GP_NVTX_PUSHPOP, 0, GP_NVTX_UNTERMINATED));
	CHECK(count_type(GP_REC_NVTX_RANGE) == 47, "NVTX ranges: %d, want 47", count_type(GP_REC_NVTX_RANGE));
	/* iter ranges nest inside their worker range, on the same thread */
	for (int i = 0; i < 40; i++) {
		const gp_rec_nvtx_range *it = range("iter", i);
		int inside = 0;
		for (int w = 0; w < 4; w++) {
			const gp_rec_nvtx_range *wr = range("worker", w);
			if (it && wr && wr->tid == it->tid && wr->start_ns <= it->start_ns && it->end_ns <= wr->end_ns)
				inside = 1;
		}
		CHECK(inside, "iter range %d not inside a worker range of its thread", i);
	}
	const gp_rec_nvtx_range *ph = range("phase", 0);
	CHECK(ph && ph->kind == GP_NVTX_STARTEND && !strcmp(S(ph->domain_id), "workload") &&
		      ph->color == 0xFF00FF00u && ph->payload == 42 && ph->category == 3 && ph->range_id != 0,
	      "phase range attributes");
	const gp_rec_nvtx_range *cr = range("cross", 0);
	CHECK(cr && cr->kind == GP_NVTX_STARTEND && cr->tid != cr->end_tid && cr->domain_id == 0,
	      "cross range: must start and end on different threads");
	CHECK(count_type(GP_REC_NVTX_MARK) == 2, "marks: %d, want 2", count_type(GP_REC_NVTX_MARK));
	int reg = 0, plain = 0;
	for (int i = 0; i < nrec; i++) {
		if (recs[i].type != GP_REC_NVTX_MARK)
			continue;
		const char *m = S(recs[i].u.nvtx_mark.message_id);
		if (!strcmp(m, "registered-mark") && !strcmp(S(recs[i].u.nvtx_mark.domain_id), "workload"))
			reg++;
		if (!strcmp(m, "plain-mark") && recs[i].u.nvtx_mark.domain_id == 0)
			plain++;
	}
	CHECK(reg == 1 && plain == 1, "marks: registered %d plain %d", reg, plain);
}

static void check_child(void)
{
	check_common();
	CHECK(count_type(GP_REC_KERNEL) == 2 && count_kernel("k_relu") == 2, "child kernels: %d",
	      count_type(GP_REC_KERNEL));
	CHECK(count_type(GP_REC_MEMCPY) == 1, "child memcpys: %d", count_type(GP_REC_MEMCPY));
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_MEMCPY)
			CHECK(recs[i].u.memcpy.bytes == 100 && recs[i].u.memcpy.copy_kind == GP_COPY_HTOD,
			      "child memcpy %" PRIu64 " bytes kind %u", recs[i].u.memcpy.bytes,
			      recs[i].u.memcpy.copy_kind);
	CHECK(count_api(GP_API_RUNTIME, NULL) == 3, "child runtime API: %d, want 3",
	      count_api(GP_API_RUNTIME, NULL));
	CHECK(count_type(GP_REC_NVTX_RANGE) == 0, "child has %d of the parent's NVTX ranges",
	      count_type(GP_REC_NVTX_RANGE));
}

static void check_sigterm(void)
{
	CHECK(count_kernel("k_gemm") >= 10, "k_gemm before SIGTERM: %d, want >= 10", count_kernel("k_gemm"));
	CHECK(count_api(GP_API_RUNTIME, "cudaLaunchKernel") >= 10, "launches: %d",
	      count_api(GP_API_RUNTIME, "cudaLaunchKernel"));
	CHECK(count_range("loop", GP_NVTX_PUSHPOP, 0, GP_NVTX_UNTERMINATED) == 1,
	      "open 'loop' range flushed as unterminated: %d", count_range("loop", GP_NVTX_PUSHPOP, 0, GP_NVTX_UNTERMINATED));
	struct gp_integrity in;
	gp_reader_integrity(rd, &in);
	CHECK(in.has_footer, "no footer: the signal path did not close the trace");
}

static void check_sigkill(uint64_t kill_ns)
{
	/* the footer is missing (nothing runs at SIGKILL): truncated is fine,
	 * corrupt is not */
	struct gp_integrity in;
	gp_reader_integrity(rd, &in);
	CHECK(in.frames_corrupt == 0, "corrupt frames: %" PRIu64, in.frames_corrupt);
	uint64_t last_kernel = 0, last_api = 0;
	int loop_kernels = 0;
	for (int i = 0; i < nrec; i++) {
		if (recs[i].type == GP_REC_KERNEL && !strcmp(S(recs[i].u.kernel.name_id), "k_gemm")) {
			if (recs[i].u.kernel.grid[0] == 2)
				loop_kernels++;
			if (recs[i].u.kernel.start_ns > last_kernel)
				last_kernel = recs[i].u.kernel.start_ns;
		}
		if (recs[i].type == GP_REC_API && recs[i].u.api.end_ns > last_api)
			last_api = recs[i].u.api.end_ns;
	}
	CHECK(count_kernel("k_gemm") >= 10, "k_gemm records: %d, want >= 10", count_kernel("k_gemm"));
	CHECK(loop_kernels >= 1, "no kernel of the launch loop reached the trace");
	/* the loop launches every 10 ms; the shim flushes CUPTI and the writer
	 * every GPUPROF_FLUSH_MS (the test sets 200): records older than 1 s
	 * must be in the file */
	CHECK(last_kernel + 1000000000ull >= kill_ns,
	      "newest kernel record starts %.0f ms before the kill (want < 1000 ms)",
	      (double)(kill_ns - last_kernel) / 1e6);
	CHECK(last_api + 1000000000ull >= kill_ns,
	      "newest API record ends %.0f ms before the kill (want < 1000 ms)",
	      (double)(kill_ns - last_api) / 1e6);
}

static const gp_rec_api *api_any_corr(uint64_t corr, const char *name)
{
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_API && recs[i].u.api.correlation_id == corr &&
		    !strcmp(S(recs[i].u.api.name_id), name))
			return &recs[i].u.api;
	return NULL;
}

static int cmp_window(const void *a, const void *b)
{
	const gp_rec_window *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static void check_window(uint64_t period)
{
	static gp_rec_window w[1000];
	int nw = 0;
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_WINDOW && nw < 1000)
			w[nw++] = recs[i].u.window;
	qsort(w, (size_t)nw, sizeof w[0], cmp_window);
	CHECK(nw >= 2, "window records: %d, want >= 2", nw);
	if (nw < 1)
		return;
	for (int i = 0; i < nw; i++) {
		CHECK(w[i].start_ns < w[i].end_ns, "window %d: start %" PRIu64 " >= end %" PRIu64, i,
		      w[i].start_ns, w[i].end_ns);
		if (i + 1 < nw)
			CHECK(w[i].end_ns <= w[i + 1].start_ns, "windows %d and %d overlap", i, i + 1);
	}
	int launches = count_api(GP_API_RUNTIME, "cudaLaunchKernel");
	int memsets = count_api(GP_API_RUNTIME, "cudaMemset");
	int kernels = count_type(GP_REC_KERNEL), msets = count_type(GP_REC_MEMSET);
	/* every GPU record: its launch call overlaps a window (CUPTI produced the
	 * record while the kinds were on, and the shim stamps a window's start
	 * before enabling and its end after disabling) */
	int in_win[1000] = {0};
	for (int i = 0; i < nrec; i++) {
		const char *want = recs[i].type == GP_REC_KERNEL   ? "cudaLaunchKernel"
				   : recs[i].type == GP_REC_MEMSET ? "cudaMemset"
								   : NULL;
		if (!want)
			continue;
		uint64_t corr = recs[i].type == GP_REC_KERNEL ? recs[i].u.kernel.correlation_id
							      : recs[i].u.memset.correlation_id;
		const gp_rec_api *a = api_any_corr(corr, want);
		CHECK(a != NULL, "%s (correlation %" PRIu64 ") has no %s record",
		      gp_rec_type_name(recs[i].type), corr, want);
		if (!a)
			continue;
		int k = -1;
		for (int j = 0; j < nw && k < 0; j++)
			if (a->start_ns <= w[j].end_ns && a->end_ns >= w[j].start_ns)
				k = j;
		CHECK(k >= 0, "%s from %s at %" PRIu64 "..%" PRIu64 " is outside every window",
		      gp_rec_type_name(recs[i].type), want, a->start_ns, a->end_ns);
		if (k >= 0 && recs[i].type == GP_REC_KERNEL)
			in_win[k]++;
	}
	/* API records everywhere: launches between windows are recorded */
	int outside = 0;
	uint64_t last_api = 0;
	for (int i = 0; i < nrec; i++) {
		if (recs[i].type != GP_REC_API)
			continue;
		const gp_rec_api *a = &recs[i].u.api;
		if (a->end_ns > last_api)
			last_api = a->end_ns;
		if (strcmp(S(a->name_id), "cudaLaunchKernel"))
			continue;
		int in = 0;
		for (int j = 0; j < nw && !in; j++)
			in = a->start_ns <= w[j].end_ns && a->end_ns >= w[j].start_ns;
		outside += !in;
	}
	CHECK(launches > 0 && launches == memsets, "launch calls %d, memset calls %d", launches, memsets);
	CHECK(outside > 0, "no launch call recorded outside the windows (API capture must stay on)");
	CHECK(kernels > 0 && kernels < launches, "kernels %d of %d launches: want some, not all", kernels,
	      launches);
	CHECK(msets > 0 && msets < memsets, "memset records %d of %d calls", msets, memsets);
	/* the launch loop runs through every window but the last (closed at the
	 * final flush, after the loop) */
	for (int j = 0; j + 1 < nw; j++)
		CHECK(in_win[j] > 0, "window %d (%" PRIu64 "..%" PRIu64 ") has no kernel", j, w[j].start_ns,
		      w[j].end_ns);
	/* the first window starts with the trace; one window per period */
	const gp_rec_api *first = NULL;
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_API && (!first || recs[i].u.api.start_ns < first->start_ns))
			first = &recs[i].u.api;
	CHECK(first && w[0].start_ns <= first->start_ns, "first window starts after the first API call");
	uint64_t span = last_api > w[0].start_ns ? last_api - w[0].start_ns : 0;
	int want = (int)(span / period) + 1;
	CHECK(nw >= want - 1 && nw <= want + 1, "windows: %d over %.0f ms at a %.0f ms period, want %d +- 1",
	      nw, (double)span / 1e6, (double)period / 1e6, want);
	int dropped = 0;
	for (int i = 0; i < nrec; i++)
		if (recs[i].type == GP_REC_DROPPED)
			dropped += (int)recs[i].u.dropped.count;
	CHECK(dropped == 0, "dropped %d records", dropped);
}

static void check_nowindow(void)
{
	CHECK(count_type(GP_REC_WINDOW) == 0, "window records: %d, want 0", count_type(GP_REC_WINDOW));
	int launches = count_api(GP_API_RUNTIME, "cudaLaunchKernel");
	CHECK(launches > 0 && count_type(GP_REC_KERNEL) == launches, "kernels %d, launches %d",
	      count_type(GP_REC_KERNEL), launches);
}

static void summary(void)
{
	for (uint32_t t = 1; t < GP_REC_TYPE_MAX; t++) {
		int n = count_type(t);
		if (n)
			printf("%s %d\n", gp_rec_type_name(t), n);
	}
	for (int i = 0; i < nrec; i++) /* first occurrence of each API name */
		if (recs[i].type == GP_REC_API) {
			int seen = 0;
			for (int k = 0; k < i && !seen; k++)
				seen = recs[k].type == GP_REC_API && recs[k].u.api.name_id == recs[i].u.api.name_id &&
				       recs[k].u.api.domain == recs[i].u.api.domain;
			if (!seen)
				printf("api.%s %d\n", S(recs[i].u.api.name_id),
				       count_api(recs[i].u.api.domain, S(recs[i].u.api.name_id)));
		}
	printf("api_domain.runtime %d\napi_domain.driver %d\n", count_api(GP_API_RUNTIME, NULL),
	       count_api(GP_API_DRIVER, NULL));
	printf("clock_id %u\n", hdr->clock_id);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "now")) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%" PRIu64 "\n", (uint64_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec));
		return 0;
	}
	if (argc != 3 && !(argc == 4 && (!strcmp(argv[1], "sigkill") || !strcmp(argv[1], "window")))) {
		fprintf(stderr, "usage: check_trace parent|child|sigterm|nowindow|info|summary FILE\n"
				"       check_trace sigkill FILE KILL_NS | check_trace window FILE PERIOD_NS\n"
				"       check_trace now -\n");
		return 2;
	}
	if (load(argv[2]) != 0)
		return 1;
	const char *m = argv[1];
	if (!strcmp(m, "parent"))
		check_parent(0);
	else if (!strcmp(m, "parent-all"))
		check_parent(1);
	else if (!strcmp(m, "child"))
		check_child();
	else if (!strcmp(m, "sigterm"))
		check_sigterm();
	else if (!strcmp(m, "sigkill"))
		check_sigkill(strtoull(argv[3], NULL, 10));
	else if (!strcmp(m, "window") && argc == 4 && strtoull(argv[3], NULL, 10) > 0)
		check_window(strtoull(argv[3], NULL, 10));
	else if (!strcmp(m, "nowindow"))
		check_nowindow();
	else if (!strcmp(m, "summary"))
		summary();
	else if (!strcmp(m, "info")) {
		const gp_rec_process *p = process();
		printf("pid=%u ppid=%u clock=%u\n", hdr->pid, p ? p->ppid : 0, hdr->clock_id);
	} else {
		fprintf(stderr, "unknown mode %s\n", m);
		return 2;
	}
	gp_reader_close(rd);
	if (failures)
		fprintf(stderr, "%d check(s) failed in %s\n", failures, argv[2]);
	return failures ? 1 : 0;
}
