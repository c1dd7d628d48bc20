/* gen_window.c — a trace written by the in-process recorder (as the shim
 * writes one) for the time-window reads of export and dump
 * (test_window_read.py):
 *
 *   gen_window OUT
 *
 * Times in ns after T0 = the trace start (1 s on the trace clock).  Before
 * any step, at 1..5 us, the main thread (named "trainer") emits what the
 * tools show whatever the time selected: a process, a device, a module, three
 * stacks, a clock and two graph nodes (made, then cloned); a sampler thread
 * ("sampler") a GPU-activity window [5 ms, 70 ms) and a counter per step.
 * Then 60 steps, step k in [10 ms + k ms, 10 ms + k ms + 900 us): an NVTX
 * push/pop range "step k" with 200 cudaLaunchKernel calls (2 us each, 4 us
 * apart, stacks 1..3 in turn) on the main thread, and on an activity thread
 * the kernels (3 us, 5 us after their call) and a memory alloc per step.  The
 * activity thread emits the steps from 20 on in swapped pairs (21 before 20,
 * 23 before 22, ...): a source out of time order, as late CUPTI buffers make
 * one.  A flush after each step of each thread: one chunk per step and
 * thread, so a window reads a few of ~190 chunks. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gp_trace.h"

#define T0 1000000000ull
#define MS 1000000ull
#define US 1000ull
#define NSTEPS 60
#define CALLS 200

static gp_recorder *rec;

static uint64_t step_start(int k) { return T0 + 10 * MS + (uint64_t)k * MS; }
static uint64_t call_start(int k, int i) { return step_start(k) + 10 * US + (uint64_t)i * 4 * US; }
static uint64_t corr_of(int k, int i) { return (uint64_t)k * CALLS + (uint64_t)i + 1; }

static void emit(gp_record *r)
{
	if (gp_emit(rec, r)) {
		fprintf(stderr, "gen_window: emit of a %s record failed\n", gp_rec_type_name(r->type));
		exit(1);
	}
}

static void name_thread(const char *name)
{
	gp_record r = { .type = GP_REC_THREAD };
	r.u.thread = (gp_rec_thread){ (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid), gp_intern(rec, name) };
	emit(&r);
}

static void *activity_main(void *arg)
{
	(void)arg;
	gp_recorder_set_thread_kind(rec, GP_SOURCE_ACTIVITY);
	uint32_t kname = gp_intern(rec, "_Z6vecAddPfS_S_i");
	for (int j = 0; j < NSTEPS; j++) {
		int k = j >= 20 ? (j % 2 ? j - 1 : j + 1) : j; /* 21, 20, 23, 22, ... */
		for (int i = 0; i < CALLS; i++) {
			gp_record r = { .type = GP_REC_KERNEL };
			uint64_t s = call_start(k, i) + 5 * US;
			r.u.kernel = (gp_rec_kernel){ .start_ns = s, .end_ns = s + 3 * US, .correlation_id = corr_of(k, i),
						      .stream_id = 7, .grid = { 64, 1, 1 }, .block = { 256, 1, 1 },
						      .registers = 32, .name_id = kname };
			emit(&r);
		}
		gp_record m = { .type = GP_REC_MEMORY };
		m.u.memory = (gp_rec_memory){ .ts_ns = step_start(k) + 20 * US, .correlation_id = corr_of(k, 0),
					      .address = 0x7f0000000000ull + (uint64_t)k * 4096, .bytes = 4096, .op = 1,
					      .mem_kind = 2 };
		emit(&m);
		gp_recorder_flush(rec);
	}
	return NULL;
}

static void *sampler_main(void *arg)
{
	(void)arg;
	gp_recorder_set_thread_kind(rec, GP_SOURCE_TOOL);
	name_thread("sampler");
	gp_record w = { .type = GP_REC_WINDOW };
	w.u.window = (gp_rec_window){ T0 + 5 * MS, T0 + 70 * MS, 0 };
	emit(&w);
	uint32_t cname = gp_intern(rec, "nvml.gpu_util");
	for (int k = 0; k < NSTEPS; k++) {
		gp_record c = { .type = GP_REC_COUNTER };
		c.u.counter = (gp_rec_counter){ .ts_ns = step_start(k) + 500 * US, .name_id = cname,
						.kind = GP_COUNTER_INT };
		c.u.counter.value.i = 50 + k;
		emit(&c);
		if (k % 10 == 9) gp_recorder_flush(rec);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_window OUT\n");
		return 2;
	}
	unlink(argv[1]);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = argv[1], .clock_id = GP_CLOCK_MONOTONIC,
				      .start_trace_ns = T0, .start_realtime_ns = 1700000000ull * 1000000000ull,
				      .rank = -1, .flush_interval_ms = 3600000 };
	if (gp_recorder_create(&o, &rec)) {
		fprintf(stderr, "gen_window: cannot create %s\n", argv[1]);
		return 1;
	}
	uint32_t pid = (uint32_t)getpid();
	name_thread("trainer");
	gp_record r = { .type = GP_REC_PROCESS };
	r.u.process = (gp_rec_process){ .pid = pid, .ppid = 1, .name_id = gp_intern(rec, "python train.py"),
					.rank = -1, .start_ns = T0 };
	emit(&r);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_DEVICE;
	r.u.device.name_id = gp_intern(rec, "NVIDIA H200");
	r.u.device.sm_count = 132;
	r.u.device.cc_major = 9;
	emit(&r);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MODULE;
	r.u.module = (gp_rec_module){ T0 + 1 * US, 0x400000, 0x10000, 0, gp_intern(rec, "/opt/app/train") };
	emit(&r);
	static uint64_t frames[3][3];
	for (uint32_t s = 0; s < 3; s++) {
		frames[s][0] = 0x401000 + s * 0x100;
		frames[s][1] = 0x402000 + s * 0x100;
		char py[64];
		snprintf(py, sizeof(py), "py\t/opt/app/train.py\t%u\tlayer%u", 10 + s, s);
		frames[s][2] = (1ull << 63) | gp_intern(rec, py);
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_STACK;
		r.u.stack = (gp_rec_stack){ s + 1, 3, frames[s] };
		emit(&r);
	}
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_CLOCK;
	r.u.clock = (gp_rec_clock){ T0 + 2 * US, 1700000000ull * 1000000000ull + 2 * US, 0 };
	emit(&r);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_GRAPH_NODE;
	r.u.graph_node = (gp_rec_graph_node){ .ts_ns = T0 + 3 * US, .graph_id = 1, .node_id = 11 };
	emit(&r);
	r.u.graph_node = (gp_rec_graph_node){ .ts_ns = T0 + 4 * US, .graph_id = 2, .node_id = 21, .origin_node_id = 11 };
	emit(&r);
	gp_recorder_flush(rec);

	pthread_t sampler;
	if (pthread_create(&sampler, NULL, sampler_main, NULL)) return 1;
	pthread_join(sampler, NULL);

	uint32_t launch = gp_intern(rec, "cudaLaunchKernel");
	for (int k = 0; k < NSTEPS; k++) {
		char name[32];
		snprintf(name, sizeof(name), "step %d", k);
		for (int i = 0; i < CALLS; i++) {
			memset(&r, 0, sizeof(r));
			r.type = GP_REC_API;
			r.u.api = (gp_rec_api){ .start_ns = call_start(k, i), .end_ns = call_start(k, i) + 2 * US,
						.correlation_id = corr_of(k, i), .domain = GP_API_RUNTIME, .cbid = 211,
						.name_id = launch, .stack_id = (uint32_t)(i % 3) + 1 };
			emit(&r);
		}
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_NVTX_RANGE;
		r.u.nvtx_range = (gp_rec_nvtx_range){ .start_ns = step_start(k), .end_ns = step_start(k) + 900 * US,
						      .kind = GP_NVTX_PUSHPOP, .message_id = gp_intern(rec, name) };
		emit(&r);
		gp_recorder_flush(rec);
	}
	pthread_t act;
	if (pthread_create(&act, NULL, activity_main, NULL)) return 1;
	pthread_join(act, NULL);
	gp_recorder_close(rec);
	return 0;
}
