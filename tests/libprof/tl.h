/* tl.h — helpers shared by the libprof tests: check macros, record
 * generators and a field-by-field record comparison. */
#ifndef TL_H
#define TL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>
#include "gp_trace.h"

static int tl_failures __attribute__((unused));
#define CHECK(cond, ...) do { if (!(cond)) { tl_failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define REQUIRE(cond, ...) do { if (!(cond)) { fprintf(stderr, "FATAL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

static inline char *tl_tmpdir(void)
{
	static char d[256];
	const char *base = getenv("TMPDIR");
	snprintf(d, sizeof(d), "%s/gplibprof.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(d)) { perror("mkdtemp"); exit(1); }
	return d;
}

static inline uint64_t tl_rand(uint64_t *s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }

/* Compares every field; returns 0 when equal, prints the first difference. */
static inline int tl_rec_cmp(const gp_record *a, const gp_record *b)
{
#define C(f) do { if ((uint64_t)(a->u.f) != (uint64_t)(b->u.f)) { fprintf(stderr, "  field %s differs: %" PRIu64 " vs %" PRIu64 "\n", #f, (uint64_t)(a->u.f), (uint64_t)(b->u.f)); return 1; } } while (0)
	if (a->type != b->type) { fprintf(stderr, "  type %u vs %u\n", a->type, b->type); return 1; }
	switch (a->type) {
	case GP_REC_STRING:
		C(string.id); C(string.len);
		if (memcmp(a->u.string.str, b->u.string.str, a->u.string.len)) { fprintf(stderr, "  string bytes differ\n"); return 1; }
		break;
	case GP_REC_SOURCE: C(source.source_id); C(source.kind); C(source.pid); C(source.tid); C(source.name_id); break;
	case GP_REC_PROCESS: C(process.pid); C(process.ppid); C(process.name_id); C(process.host_id); C(process.rank); C(process.start_ns); C(process.settings_id); break;
	case GP_REC_THREAD: C(thread.pid); C(thread.tid); C(thread.name_id); break;
	case GP_REC_DEVICE:
		C(device.device_id); C(device.name_id); C(device.cc_major); C(device.cc_minor); C(device.sm_count);
		C(device.max_threads_per_sm); C(device.max_blocks_per_sm); C(device.max_regs_per_sm);
		C(device.max_smem_per_sm); C(device.max_smem_per_block); C(device.max_threads_per_block);
		C(device.warp_size); C(device.clock_khz); C(device.mem_clock_khz); C(device.mem_bus_width);
		C(device.global_mem_bytes); C(device.pci_bus_id);
		if (memcmp(a->u.device.uuid, b->u.device.uuid, 16)) { fprintf(stderr, "  uuid differs\n"); return 1; }
		break;
	case GP_REC_API: C(api.start_ns); C(api.end_ns); C(api.correlation_id); C(api.domain); C(api.cbid); C(api.name_id); C(api.tid); C(api.stack_id); C(api.status); break;
	case GP_REC_KERNEL:
		C(kernel.start_ns); C(kernel.end_ns); C(kernel.correlation_id); C(kernel.device_id); C(kernel.context_id); C(kernel.stream_id);
		C(kernel.grid[0]); C(kernel.grid[1]); C(kernel.grid[2]); C(kernel.block[0]); C(kernel.block[1]); C(kernel.block[2]);
		C(kernel.registers); C(kernel.static_smem); C(kernel.dynamic_smem); C(kernel.local_mem); C(kernel.name_id);
		C(kernel.launch_type); C(kernel.graph_id); C(kernel.graph_node_id);
		break;
	case GP_REC_MEMCPY:
		C(memcpy.start_ns); C(memcpy.end_ns); C(memcpy.correlation_id); C(memcpy.bytes); C(memcpy.device_id); C(memcpy.context_id);
		C(memcpy.stream_id); C(memcpy.copy_kind); C(memcpy.src_kind); C(memcpy.dst_kind); C(memcpy.flags); C(memcpy.src_device);
		C(memcpy.dst_device); C(memcpy.graph_node_id);
		break;
	case GP_REC_MEMSET:
		C(memset.start_ns); C(memset.end_ns); C(memset.correlation_id); C(memset.bytes); C(memset.device_id); C(memset.context_id);
		C(memset.stream_id); C(memset.value); C(memset.mem_kind); C(memset.flags); C(memset.graph_node_id);
		break;
	case GP_REC_NVTX_RANGE:
		C(nvtx_range.start_ns); C(nvtx_range.end_ns); C(nvtx_range.range_id); C(nvtx_range.kind); C(nvtx_range.flags);
		C(nvtx_range.domain_id); C(nvtx_range.message_id); C(nvtx_range.category); C(nvtx_range.color); C(nvtx_range.depth);
		C(nvtx_range.tid); C(nvtx_range.end_tid); C(nvtx_range.payload);
		break;
	case GP_REC_NVTX_MARK: C(nvtx_mark.ts_ns); C(nvtx_mark.domain_id); C(nvtx_mark.message_id); C(nvtx_mark.category); C(nvtx_mark.color); C(nvtx_mark.tid); break;
	case GP_REC_SYNC: C(sync.start_ns); C(sync.end_ns); C(sync.correlation_id); C(sync.type); C(sync.context_id); C(sync.stream_id); C(sync.event_id); break;
	case GP_REC_MEMORY: C(memory.ts_ns); C(memory.correlation_id); C(memory.address); C(memory.bytes); C(memory.device_id); C(memory.context_id); C(memory.stream_id); C(memory.op); C(memory.mem_kind); break;
	case GP_REC_DROPPED: C(dropped.ts_ns); C(dropped.count); C(dropped.where); C(dropped.source_id); break;
	case GP_REC_CLOCK: C(clock.trace_ns); C(clock.realtime_ns); C(clock.gpu_ns); break;
	case GP_REC_COUNTER: C(counter.ts_ns); C(counter.name_id); C(counter.device_id); C(counter.kind); C(counter.value.i); break;
	case GP_REC_MODULE: C(module.ts_ns); C(module.base); C(module.size); C(module.file_offset); C(module.path_id); break;
	case GP_REC_STACK:
		C(stack.stack_id); C(stack.nframes);
		for (uint32_t i = 0; i < a->u.stack.nframes; i++)
			if (a->u.stack.frames[i] != b->u.stack.frames[i]) { fprintf(stderr, "  frame %u differs\n", i); return 1; }
		break;
	case GP_REC_WINDOW: C(window.start_ns); C(window.end_ns); C(window.device_id); break;
	default: fprintf(stderr, "  unknown type %u\n", a->type); return 1;
	}
	return 0;
#undef C
}

/* Fills r with type t, variant v: 0 = all zero, 1 = all max / negative,
 * 2 = mid values.  tid fields get the given tid.  frames: 128-entry buffer. */
static inline void tl_make(gp_record *r, uint32_t t, int v, uint32_t tid, uint64_t *frames, const char *str)
{
	memset(r, 0, sizeof(*r));
	r->type = t;
	if (v == 0) {
		if (t == GP_REC_API) r->u.api.tid = tid;
		if (t == GP_REC_NVTX_RANGE) { r->u.nvtx_range.tid = tid; r->u.nvtx_range.end_tid = tid; }
		if (t == GP_REC_NVTX_MARK) r->u.nvtx_mark.tid = tid;
		if (t == GP_REC_STRING) r->u.string.str = "";
		return;
	}
	/* fill every byte of the union with a pattern, then fix pointer fields */
	uint8_t *b = (uint8_t *)&r->u;
	for (size_t i = 0; i < sizeof(r->u); i++) b[i] = v == 1 ? 0xFF : (uint8_t)(0x11 * (i % 15) + 3);
	switch (t) {
	case GP_REC_STRING: r->u.string.id = v == 1 ? UINT32_MAX : 77; r->u.string.len = (uint32_t)strlen(str); r->u.string.str = str; break;
	case GP_REC_STACK:
		r->u.stack.nframes = GP_STACK_MAX_FRAMES;
		for (int i = 0; i < GP_STACK_MAX_FRAMES; i++) frames[i] = v == 1 ? UINT64_MAX - (uint64_t)i * 977 : 0x7f0000000000ull + (uint64_t)i * 4096 + (uint64_t)(i * i);
		r->u.stack.frames = frames;
		break;
	case GP_REC_COUNTER: r->u.counter.kind = v == 1 ? GP_COUNTER_INT : GP_COUNTER_DOUBLE; if (v == 2) r->u.counter.value.d = 42.5; else r->u.counter.value.i = INT64_MIN; break;
	case GP_REC_API: r->u.api.tid = v == 1 ? UINT32_MAX : tid; r->u.api.status = v == 1 ? -1 : 999; break;
	case GP_REC_NVTX_RANGE: r->u.nvtx_range.tid = tid; r->u.nvtx_range.end_tid = v == 1 ? UINT32_MAX : 12345; r->u.nvtx_range.payload = v == 1 ? INT64_MIN : -77; break;
	case GP_REC_NVTX_MARK: r->u.nvtx_mark.tid = v == 1 ? 5 : tid; break;
	case GP_REC_PROCESS: r->u.process.rank = v == 1 ? -1 : INT32_MIN; break;
	default: break;
	}
}
#endif

#ifndef TL_NO_TRACE_HELPERS
/* A small valid trace: strings + a source in source 0, then API records in
 * source 1 and kernels in source 2 -> 3 data chunks, index, footer. */
static inline int tl_write_small(const char *path, int n_per_source)
{
	gp_header h = { .major = 1, .pid = 7, .clock_id = GP_CLOCK_MONOTONIC, .start_trace_ns = 1000, .rank = -1 };
	strcpy(h.producer, "gpuprof test"); strcpy(h.host, "testhost");
	gp_writer *w;
	if (gp_writer_open(path, &h, 3, &w)) return -1;
	gp_record r = { .type = GP_REC_STRING };
	const char *names[] = { "cudaLaunchKernel", "volta_sgemm_128x64_nn", "step" };
	for (int i = 0; i < 3; i++) {
		r.u.string = (gp_rec_string){ (uint32_t)i + 1, (uint32_t)strlen(names[i]), names[i] };
		gp_writer_append(w, 0, &r);
	}
	r.type = GP_REC_SOURCE;
	r.u.source = (gp_rec_source){ 1, GP_SOURCE_THREAD, 7, 70, 3 };
	gp_writer_append(w, 0, &r);
	r.u.source = (gp_rec_source){ 2, GP_SOURCE_ACTIVITY, 7, 71, 0 };
	gp_writer_append(w, 0, &r);
	for (int i = 0; i < n_per_source; i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_API;
		r.u.api = (gp_rec_api){ .start_ns = 2000 + (uint64_t)i * 1000, .end_ns = 2500 + (uint64_t)i * 1000,
					.correlation_id = (uint64_t)i + 1, .domain = 1, .cbid = 211, .name_id = 1 };
		gp_writer_append(w, 1, &r);
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_KERNEL;
		r.u.kernel.start_ns = 2600 + (uint64_t)i * 1000; r.u.kernel.end_ns = 3100 + (uint64_t)i * 1000;
		r.u.kernel.correlation_id = (uint64_t)i + 1; r.u.kernel.name_id = 2;
		r.u.kernel.grid[0] = 80; r.u.kernel.block[0] = 256; r.u.kernel.stream_id = 7;
		gp_writer_append(w, 2, &r);
	}
	return gp_writer_close(w);
}

/* Opens and reads everything (both orders); writes the one-line verdict. */
static inline int tl_describe(const char *path, char *buf, size_t n, uint64_t *nrec)
{
	gp_reader *r;
	*nrec = 0;
	int rc = gp_reader_open(path, &r);
	if (rc) { snprintf(buf, n, "open failed: %s", gp_reader_errmsg(NULL)); return rc; }
	const gp_record *rec;
	while ((rc = gp_reader_next(r, &rec)) == 1) (*nrec)++;
	while ((rc = gp_reader_next_ordered(r, &rec)) == 1) {}
	gp_reader_describe_integrity(r, buf, n);
	gp_reader_close(r);
	return 0;
}

static inline uint8_t *tl_slurp(const char *path, size_t *len)
{
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) return NULL;
	fseek(f, 0, SEEK_END);
	long L = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)L + 1);
	*len = fread(b, 1, (size_t)L, f);
	fclose(f);
	return b;
}

static inline void tl_spit(const char *path, const void *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f) { perror(path); exit(1); }
	if (len && fwrite(b, 1, len, f) != len) { perror("fwrite"); exit(1); }
	fclose(f);
}
#endif
