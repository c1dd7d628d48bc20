/* test_comm_memory.c — `stats --report comm` (tools/reports/stats_comm.c)
 * on many steps, as the bench trace has them: one rank, per step a
 * `train_step` range on the main thread and a `backward` range on the
 * autograd thread (both top-level), two NCCL kernels and one compute
 * kernel launched while both are open.  Fed straight to the report (no
 * trace), with every spill's blocks but the cached ones in the file
 * (GPUPROF_SPILL_MEM=0).  Checks the bytes malloc holds per step more
 * between half way and the end (the bounded parts are full by then): what the comm state promises is ~8 bytes per step range in its
 * map from range to step and 4 in its ranks' logs (2 step ranges a step),
 * the kernels and their pairs in spills; the former arrays of kernels (40
 * bytes each) and pairs (8) and the u64map (17 bytes a slot) held ~190 a
 * step and fail it.  Then the fill: the per-rank row (NCCL and other
 * kernels counted) and one row per step range.
 * Prints "ok" or the failed checks; exit 1 on failure. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join/attribution.h"
#include "common/report.h"
#include "reports/stats_report.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

#define NSTEPS ((size_t)1 << 17)
#define STEP_NS 1000000ull
#define PID 7
#define MAIN_TID 7
#define GRAD_TID 8

/* The report (reports/registry.c declares each one so). */
extern const struct stats_report stats_report_comm;

/* The selection: the whole trace (selection.c is not linked). */
int selection_has(const struct selection *s, uint64_t t) { return 1; }

static double held(struct mallinfo2 m) { return (double)(m.uordblks + m.hblkhd); }

static void add(struct attribution *a, uint32_t tid, uint64_t s, uint64_t e, const char *name)
{
	gp_rec_nvtx_range r;
	memset(&r, 0, sizeof(r));
	r.start_ns = s; r.end_ns = e; r.kind = GP_NVTX_PUSHPOP; r.depth = 0;
	attribution_add_range(a, PID, tid, &r, name);
}

static struct gpu_op kernel(size_t i, int k, int nccl)
{
	uint64_t s = i * STEP_NS;
	struct gpu_op op;
	memset(&op, 0, sizeof(op));
	op.call_s = s + 500000 + (uint64_t)k * 1000;
	op.call_e = op.call_s + 500;
	op.s = s + 600000 + (uint64_t)k * 100000;
	op.e = op.s + 50000;
	op.corr = 3 * i + (uint64_t)k + 1;
	op.pid = PID; op.tid = nccl ? GRAD_TID : MAIN_TID;
	op.kind = OP_KERNEL; op.cls = nccl ? OPC_COMM : OPC_COMPUTE;
	op.has_call = 1;
	op.name_id = (uint32_t)(1 + nccl);
	return op;
}

int main(void)
{
	setenv("GPUPROF_SPILL_MEM", "0", 1);
	struct attribution *a = attribution_new(ATTR_ANY_THREAD);
	for (size_t i = 0; i < NSTEPS; i++) {
		uint64_t s = i * STEP_NS;
		add(a, GRAD_TID, s + 400000, s + 900000, "backward");
		add(a, MAIN_TID, s, s + 950000, "train_step");
	}
	attribution_index(a);
	struct stats_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.pipe.attr = a;
	/* the index's query state (its readers' caches, bounded) is made at
	 * its first reads: made here, so that only the report is counted */
	struct gpu_op first = kernel(0, 0, 1);
	uint32_t *ids = NULL; size_t cids = 0;
	CHECK(attribution_op(a, &first, &ids, &cids) == 2, "a kernel of step 0 in both its ranges");
	free(ids);
	for (uint32_t id = 0; id < attribution_nranges(a); id++) (void)attribution_range(a, id);
	void *c = stats_report_comm.new(&ctx);
	struct mallinfo2 m0 = { 0 };
	for (size_t i = 0; i < NSTEPS; i++) {
		/* what is bounded (the ranks' unions' lag, the spills' caches,
		 * the open steps) is full by half way: the second half's growth
		 * is what grows with the steps */
		if (i == NSTEPS / 2) m0 = mallinfo2();
		for (int k = 0; k < 3; k++) {
			struct gpu_op op = kernel(i, k, k < 2);
			stats_report_comm.op(c, &ctx, &op);
		}
	}
	struct mallinfo2 m1 = mallinfo2();
	double b = (held(m1) - held(m0)) / (double)(NSTEPS / 2);
	if (m0.uordblks + m0.hblkhd == 0) /* an allocator without mallinfo2's figures (ASan's) */
		printf("bytes per step: not measurable with this allocator\n");
	else
		CHECK(b <= 64, "the comm state holds %.1f bytes per step (at most 64)", b);
	struct report t[2];
	report_init(&t[0], "comm");
	report_init(&t[1], "comm_steps");
	stats_report_comm.fill(c, &ctx, t);
	CHECK(t[0].nrows == 1, "%zu rank rows (1 wanted)", t[0].nrows);
	CHECK(t[1].nrows == 2 * NSTEPS, "%zu step rows (%zu wanted)", t[1].nrows, 2 * NSTEPS);
	char *txt = NULL; size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	struct report_style style = { .fmt = FMT_CSV, .unit = TU_NS };
	report_print(f, &t[0], &style);
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want), ",%zu,", 2 * NSTEPS); /* NCCL kernels */
	CHECK(strstr(txt, want) != NULL, "rank row: %s (%s wanted)", txt, want);
	snprintf(want, sizeof(want), ",%zu,", NSTEPS); /* other kernels */
	CHECK(strstr(txt, want) != NULL, "rank row: %s (%s wanted)", txt, want);
	free(txt);
	report_free(&t[0]);
	report_free(&t[1]);
	stats_report_comm.free(c);
	attribution_free(a);
	if (fails) return 1;
	printf("ok (comm: %.1f bytes a step)\n", b);
	return 0;
}
