/* gen_edge.c — a trace of edge values for the SQLite, Parquet and CSV
 * exports (test_parquet.py and test_csv.py compare what they hold):
 *
 *   gen_edge OUT            the trace below
 *   gen_edge --empty OUT    a header and no record
 *
 * The trace clock starts at 2^62 + 123 ns (so --abs-time times need 63
 * bits); one record starts before it (a negative time since the start).
 * Strings: quotes, backslash, comma, newline, tab, a control byte,
 * multi-byte UTF-8 (é, CJK, an emoji), an empty message, and bytes that
 * are not UTF-8 (a stray 0xff, a truncated sequence, an encoded
 * surrogate, an overlong '/').  64-bit values: memory addresses and bytes
 * past 2^63, correlation ids up to 2^64 - 1, NVTX payloads INT64_MIN and
 * INT64_MAX, a start/end range id 2^64 - 1.  Counters: NaN (NULL in both
 * exports), +-inf, -0.0, a denormal, DBL_MAX, an integer counter of
 * INT64_MIN.  Process 9000 is written twice (its row is the second's in
 * every export) and before process 10. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"

#define T0 ((1ull << 62) + 123)
enum { P = 9000 };

enum {
	S_CMD = 1, S_CMD2, S_CMD10, S_HOST, S_MAIN, S_GPU, S_LAUNCH, S_K1, S_K2, S_K3, S_R1, S_R2, S_R3, S_R4,
	S_R5, S_EMPTY, S_DOM, S_C1, S_C2, S_COUNT
};

static const char *const strs[S_COUNT] = {
	[S_CMD] = "python 'train.py' --tag=\"a,b\"",
	[S_CMD2] = "python train.py (restarted)",
	[S_CMD10] = "helper",
	[S_HOST] = "h\xc3\xb4te-\xe6\xa0\xb8",
	[S_MAIN] = "main\tthread",
	[S_GPU] = "NVIDIA H100 80GB HBM3",
	[S_LAUNCH] = "cudaLaunchKernel",
	[S_K1] = "_Z6vecAddPKfS0_Pfi",
	[S_K2] = "kernel,with \"quotes\" and 'single' \\ backslash",
	[S_K3] = "\xe6\xa0\xb8\xe5\x87\xbd\xe6\x95\xb0_\xf0\x9f\x9a\x80",
	[S_R1] = "line one\nline two\r\n",
	[S_R2] = "ctl\x01\x1f del\x7f",
	[S_R3] = "bad \xff stray, \xe2\x82 cut, \xed\xa0\x80 surrogate",
	[S_R4] = "overlong \xc0\xaf slash, ok \xc3\xa9",
	[S_R5] = "semi;colon|pipe%percent_under",
	[S_EMPTY] = "",
	[S_DOM] = "dom\xc3\xa4in",
	[S_C1] = "nvml.edge",
	[S_C2] = "nvml.int",
};

static void counter(uint32_t name, uint64_t t, int dbl, double d, int64_t i)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_COUNTER;
	r.u.counter.ts_ns = T0 + t;
	r.u.counter.name_id = name;
	r.u.counter.kind = dbl ? GP_COUNTER_DOUBLE : GP_COUNTER_INT;
	if (dbl) r.u.counter.value.d = d;
	else r.u.counter.value.i = i;
	put(3, &r);
}

static void memory(uint64_t t, uint64_t corr, uint64_t addr, uint64_t bytes, uint32_t op)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEMORY;
	r.u.memory.ts_ns = T0 + t;
	r.u.memory.correlation_id = corr;
	r.u.memory.address = addr;
	r.u.memory.bytes = bytes;
	r.u.memory.device_id = 0;
	r.u.memory.context_id = 1;
	r.u.memory.stream_id = 7;
	r.u.memory.op = op;
	r.u.memory.mem_kind = GP_MEM_DEVICE;
	put(2, &r);
}

int main(int argc, char **argv)
{
	gen_prog = "gen_edge";
	int empty = argc == 3 && !strcmp(argv[1], "--empty");
	if (argc != 2 && !empty) {
		fprintf(stderr, "usage: gen_edge [--empty] OUT\n");
		return 1;
	}
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, P, T0, GEN_REALTIME0, "edgehost", 3);
	if (empty) return gen_close();
	for (uint32_t i = 1; i < S_COUNT; i++) str_id(i, strs[i]);
	/* sources: 1 main thread, 2 GPU activity, 3 sampler */
	const uint32_t kinds[4] = { 0, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY, GP_SOURCE_TOOL };
	const uint32_t tids[4] = { 0, P, 0, 0 }, names[4] = { 0, S_MAIN, 0, 0 };
	sources(P, 3, kinds, tids, names);
	process(P, S_CMD, S_HOST, 3, T0);
	process(10, S_CMD10, S_HOST, -1, T0 - 5);
	process(P, S_CMD2, S_HOST, 3, T0 + 7); /* replaces the first */
	thread_rec(P, P, S_MAIN);
	device_h200(S_GPU);

	gp_record r;
	/* launches and their kernels; corr 2^64 - 1 and 2^63 + 1 */
	static const struct { uint64_t corr; uint32_t name; uint64_t s, e; uint32_t gx; } k[] = {
		{ 1, S_K1, 1000, 3000, 4096 },
		{ 0xffffffffffffffffull, S_K2, 4000, 9000, 0x7fffffff },
		{ (1ull << 63) + 1, S_K3, 9000, 9500, 1 },
		{ 4, S_K1, 10000, 13000, 2 },
		{ 5, S_K2, 14000, 14001, 3 },
	};
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		rec_api(&r, P, 0, S_LAUNCH, 211, k[i].corr, T0 + k[i].s - 500, T0 + k[i].s - 100);
		put(1, &r);
		rec_kernel(&r, k[i].name, 7, k[i].corr, T0 + k[i].s, T0 + k[i].e, k[i].gx);
		put(2, &r);
	}
	/* a call that started before the trace did: a negative time */
	rec_api(&r, P, 0, S_LAUNCH, 211, 6, T0 - 700, T0 + 50);
	put(1, &r);

	/* NVTX: odd messages, payload extremes, a start/end id of 2^64 - 1 */
	rec_range(&r, P, P, GP_NVTX_PUSHPOP, 0, S_R1, 0, T0 + 100, T0 + 20000, 0);
	r.u.nvtx_range.payload = INT64_MIN;
	put(1, &r);
	rec_range(&r, P, P, GP_NVTX_PUSHPOP, S_DOM, S_R2, 1, T0 + 200, T0 + 5000, 0);
	r.u.nvtx_range.payload = INT64_MAX;
	put(1, &r);
	rec_range(&r, P, P, GP_NVTX_PUSHPOP, 0, S_R3, 1, T0 + 6000, T0 + 7000, 0);
	r.u.nvtx_range.payload = -1;
	put(1, &r);
	rec_range(&r, P, P, GP_NVTX_STARTEND, S_DOM, S_R4, 0, T0 + 300, T0 + 19000, 0xffffffffffffffffull);
	r.u.nvtx_range.flags = GP_NVTX_UNTERMINATED;
	put(1, &r);
	static const uint32_t marks[] = { S_R5, S_EMPTY, S_R3 };
	for (unsigned i = 0; i < 3; i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_NVTX_MARK;
		r.u.nvtx_mark.ts_ns = T0 + 15000 + i;
		r.u.nvtx_mark.message_id = marks[i];
		r.u.nvtx_mark.domain_id = i == 1 ? S_DOM : 0;
		r.u.nvtx_mark.color = 0xffffffffu;
		r.u.nvtx_mark.tid = P;
		put(1, &r);
	}

	/* memory: addresses and sizes past 2^63 */
	memory(11000, 7, 0xffffffffffff0000ull, (1ull << 63) + 5, 1);
	memory(12000, 0xffffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull, 1);
	memory(13000, 9, 0xffffffffffff0000ull, (1ull << 63) + 5, 2);

	/* counters */
	counter(S_C1, 100, 1, NAN, 0);
	counter(S_C1, 200, 1, INFINITY, 0);
	counter(S_C1, 300, 1, -INFINITY, 0);
	counter(S_C1, 400, 1, -0.0, 0);
	counter(S_C1, 500, 1, 4.9406564584124654e-324, 0);
	counter(S_C1, 600, 1, DBL_MAX, 0);
	counter(S_C1, 700, 1, 0.1, 0);
	counter(S_C2, 800, 0, 0, INT64_MIN);
	counter(S_C2, 900, 0, 0, (1ll << 53) + 1);
	return gen_close();
}
