/* gen_common.h — what the test trace generators (gen_trace.c, gen_ranks.c,
 * gen_stacks.c, gen_steps.c, gen_advise.c; bench/bigtrace/gen_bigtrace.c) share: the one writer
 * (open/close), an append that exits on error, STRING records, the SOURCE/PROCESS/THREAD records every
 * trace starts with, an H200-like DEVICE record, and builders of the API, kernel, memcpy and NVTX range
 * records (absolute times).
 * Header-only and static inline: each generator is one C file, and a helper
 * a generator does not use costs nothing (and draws no unused warning). */
#ifndef GEN_COMMON_H
#define GEN_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_trace.h"

static gp_writer *w;
static const char *gen_prog = "gen"; /* names the generator in its messages */
static unsigned gen_major = GP_FORMAT_MAJOR; /* 1: write format 1.4 (gp_writer_open) */

static inline void put(uint32_t src, gp_record *r)
{
	int rc = gp_writer_append(w, src, r);
	if (rc < 0) {
		fprintf(stderr, "%s: append: %s\n", gen_prog, gp_strerror(rc));
		exit(1);
	}
}

/* Opens the one writer (zstd level 3) or exits 1 with the cause. */
static inline void gen_open(const char *out, const gp_header *h)
{
	int rc = gp_writer_open(out, h, 3, &w);
	if (rc < 0) {
		fprintf(stderr, "%s: open %s: %s\n", gen_prog, out, gp_strerror(rc));
		exit(1);
	}
}

/* The realtime clock at every generated trace's start (plus an offset). */
#define GEN_REALTIME0 1700000000000000000ull

/* Fills *h (monotonic trace clock starting at t0, producer "<gen_prog>
 * (gpuprof tests)") and opens the writer on it. */
static inline void gen_open_trace(const char *out, gp_header *h, uint32_t pid, uint64_t t0, uint64_t realtime,
				  const char *host, int32_t rank)
{
	memset(h, 0, sizeof(*h));
	h->major = (uint16_t)gen_major; h->minor = GP_FORMAT_MINOR;
	h->pid = pid;
	h->clock_id = GP_CLOCK_MONOTONIC;
	h->start_trace_ns = t0;
	h->start_realtime_ns = realtime;
	snprintf(h->producer, sizeof(h->producer), "%s (gpuprof tests)", gen_prog);
	snprintf(h->host, sizeof(h->host), "%s", host);
	h->rank = rank;
	gen_open(out, h);
}

/* Closes it; the generator's exit status (1 when the close failed). */
static inline int gen_close(void)
{
	int rc = gp_writer_close(w);
	if (rc < 0) {
		fprintf(stderr, "%s: close: %s\n", gen_prog, gp_strerror(rc));
		return 1;
	}
	return 0;
}

/* STRING record `s` with id `id`. */
static inline void str_id(uint32_t id, const char *s)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_STRING;
	r.u.string.id = id;
	r.u.string.len = (uint32_t)strlen(s);
	r.u.string.str = s;
	put(0, &r);
}

/* SOURCE records 1..n of process pid: kinds[s], tids[s], names[s] (string
 * ids, 0 = none); index 0 of each array is unused. */
static inline void sources(uint32_t pid, uint32_t n, const uint32_t *kinds, const uint32_t *tids,
			   const uint32_t *names)
{
	gp_record r;
	for (uint32_t s = 1; s <= n; s++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_SOURCE;
		r.u.source.source_id = s; r.u.source.kind = kinds[s]; r.u.source.pid = pid;
		r.u.source.tid = tids[s]; r.u.source.name_id = names[s];
		put(0, &r);
	}
}

/* API call [s, e) of thread tid (runtime domain, or driver). */
static inline void rec_api(gp_record *r, uint32_t tid, int driver, uint32_t name, uint32_t cbid, uint64_t corr,
			   uint64_t s, uint64_t e)
{
	memset(r, 0, sizeof(*r));
	r->type = GP_REC_API;
	r->u.api.start_ns = s; r->u.api.end_ns = e;
	r->u.api.correlation_id = corr;
	r->u.api.domain = driver ? GP_API_DRIVER : GP_API_RUNTIME;
	r->u.api.cbid = cbid;
	r->u.api.name_id = name;
	r->u.api.tid = tid;
}

/* A STACK record (source 0, as the shim writes it): frames[0..n) innermost first. */
static inline void gen_stack(uint32_t id, const uint64_t *frames, uint32_t n)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_STACK;
	r.u.stack.stack_id = id; r.u.stack.nframes = n; r.u.stack.frames = frames;
	put(0, &r);
}

/* Kernel [s, e) on device 0, context 1: gx x 256 threads, 32 registers,
 * 1024 B of dynamic shared memory. */
static inline void rec_kernel(gp_record *r, uint32_t name, uint32_t stream, uint64_t corr, uint64_t s, uint64_t e,
			      uint32_t gx)
{
	memset(r, 0, sizeof(*r));
	r->type = GP_REC_KERNEL;
	r->u.kernel.start_ns = s; r->u.kernel.end_ns = e;
	r->u.kernel.correlation_id = corr;
	r->u.kernel.device_id = 0; r->u.kernel.context_id = 1; r->u.kernel.stream_id = stream;
	r->u.kernel.grid[0] = gx; r->u.kernel.grid[1] = 1; r->u.kernel.grid[2] = 1;
	r->u.kernel.block[0] = 256; r->u.kernel.block[1] = 1; r->u.kernel.block[2] = 1;
	r->u.kernel.registers = 32; r->u.kernel.static_smem = 0; r->u.kernel.dynamic_smem = 1024;
	r->u.kernel.name_id = name;
}

/* Async memcpy [s, e) on device 0, context 1. */
static inline void rec_memcpy(gp_record *r, uint32_t kind, uint32_t srck, uint32_t dstk, uint64_t bytes,
			      uint32_t stream, uint64_t corr, uint64_t s, uint64_t e)
{
	memset(r, 0, sizeof(*r));
	r->type = GP_REC_MEMCPY;
	r->u.memcpy.start_ns = s; r->u.memcpy.end_ns = e;
	r->u.memcpy.correlation_id = corr; r->u.memcpy.bytes = bytes;
	r->u.memcpy.device_id = 0; r->u.memcpy.context_id = 1; r->u.memcpy.stream_id = stream;
	r->u.memcpy.copy_kind = kind; r->u.memcpy.src_kind = srck; r->u.memcpy.dst_kind = dstk;
	r->u.memcpy.flags = 1;
}

/* NVTX range [s, e) begun on tid, ended on end_tid (push/pop ones green). */
static inline void rec_range(gp_record *r, uint32_t tid, uint32_t end_tid, uint32_t kind, uint32_t dom,
			     uint32_t msg, uint32_t depth, uint64_t s, uint64_t e, uint64_t id)
{
	memset(r, 0, sizeof(*r));
	r->type = GP_REC_NVTX_RANGE;
	r->u.nvtx_range.start_ns = s; r->u.nvtx_range.end_ns = e;
	r->u.nvtx_range.range_id = id;
	r->u.nvtx_range.kind = kind;
	r->u.nvtx_range.domain_id = dom;
	r->u.nvtx_range.message_id = msg;
	r->u.nvtx_range.depth = depth;
	r->u.nvtx_range.tid = tid;
	r->u.nvtx_range.end_tid = end_tid;
	r->u.nvtx_range.color = kind == GP_NVTX_PUSHPOP ? 0xff00ff00u : 0;
}

/* DEVICE record of device 0 named name_id, compute capability 9.0 with
 * 132 SMs and every per-SM limit of an H100/H200 (the occupancy rules need
 * them all); the caller may set more fields before writing it. */
static inline void rec_device_sm90(gp_record *r, uint32_t name_id)
{
	memset(r, 0, sizeof(*r));
	r->type = GP_REC_DEVICE;
	r->u.device.device_id = 0; r->u.device.name_id = name_id;
	r->u.device.cc_major = 9; r->u.device.cc_minor = 0; r->u.device.sm_count = 132;
	r->u.device.max_threads_per_sm = 2048; r->u.device.max_blocks_per_sm = 32;
	r->u.device.max_regs_per_sm = 65536; r->u.device.max_smem_per_sm = 233472;
	r->u.device.max_smem_per_block = 232448; r->u.device.max_threads_per_block = 1024;
	r->u.device.warp_size = 32;
}

/* THREAD record: thread tid of process pid is named by string name_id. */
static inline void thread_rec(uint32_t pid, uint32_t tid, uint32_t name_id)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_THREAD;
	r.u.thread.pid = pid; r.u.thread.tid = tid; r.u.thread.name_id = name_id;
	put(0, &r);
}

/* The DEVICE record of device 0 named `name` (rec_device_sm90: an H200's
 * limits, what the occupancy rules read), written. */
static inline void device_h200(uint32_t name)
{
	gp_record r;
	rec_device_sm90(&r, name);
	put(0, &r);
}

/* The PROCESS record (parent pid 1). */
/* settings_id: the tracer's settings line (0: unknown) */
static inline void process_settings(uint32_t pid, uint32_t cmd_id, uint32_t host_id, int32_t rank, uint64_t start_ns,
				    uint32_t settings_id)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_PROCESS;
	r.u.process.pid = pid; r.u.process.ppid = 1; r.u.process.name_id = cmd_id;
	r.u.process.host_id = host_id; r.u.process.rank = rank; r.u.process.start_ns = start_ns;
	r.u.process.settings_id = settings_id;
	put(0, &r);
}

static inline void process(uint32_t pid, uint32_t cmd_id, uint32_t host_id, int32_t rank, uint64_t start_ns)
{
	process_settings(pid, cmd_id, host_id, rank, start_ns, 0);
}
#endif
