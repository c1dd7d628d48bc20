/* test_step_plan.c — step detection's NVTX plans (tools/analysis/steps/
 * step_detect.c), and the steps engine made from them (steps.c), on many
 * steps: two processes, each with 2^18 numbered
 * step ranges ("step <i>", start/end ranges, some of them overlapping the one before, which
 * the plan leaves out) and two layer ranges inside each.  Checks that
 * every step the plan gives (step_plan_step) is the range expected, in
 * time order, with its number and the overlapping ones counted; then the
 * bytes malloc holds for the plans per step: what this storage promises
 * is a range id a step (4 bytes; the former 32-byte struct step_def per
 * step would fail it); then the bytes the steps engine holds per step with
 * its rows in the file (GPUPROF_SPILL_MEM=0): its lookup from a range to
 * its row, a u32map sized at once, is ~11 bytes a step (a u64map held ~34
 * and fails).
 * Prints "ok" or the failed checks; exit 1 on failure. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps/step_detect.h"
#include "analysis/steps/steps.h"

static double held(struct mallinfo2 m) { return (double)(m.uordblks + m.hblkhd); }

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

#define NSTEPS ((size_t)1 << 18)
#define STEP_NS 1000000ull

static int overlaps(size_t i) { return i % 1000 == 999; } /* starts before step i-1 ends */

static void add(struct attribution *a, uint32_t pid, uint32_t kind, uint64_t s, uint64_t e, const char *name)
{
	gp_rec_nvtx_range r;
	memset(&r, 0, sizeof(r));
	r.start_ns = s; r.end_ns = e; r.kind = kind; r.depth = kind == GP_NVTX_PUSHPOP;
	attribution_add_range(a, pid, pid, &r, name);
}

int main(void)
{
	struct attribution *a = attribution_new(ATTR_ANY_THREAD);
	char name[32];
	for (uint32_t pid = 1; pid <= 2; pid++)
		for (size_t i = 0; i < NSTEPS; i++) {
			uint64_t s = i * STEP_NS - (overlaps(i) ? STEP_NS / 2 : 0);
			add(a, pid, GP_NVTX_PUSHPOP, s + 10, s + 400000, "layer");
			add(a, pid, GP_NVTX_PUSHPOP, s + 500000, s + 900000, "layer");
			snprintf(name, sizeof(name), "step %zu", i);
			add(a, pid, GP_NVTX_STARTEND, s, s + 950000, name); /* they may overlap */
		}
	attribution_index(a);
	/* the index's own query state (its readers' caches, bounded) is made
	 * at its first reads: made here, so that only the plans are counted */
	for (uint32_t id = 0; id < attribution_nranges(a); id++) (void)attribution_range(a, id);
	struct mallinfo2 m0 = mallinfo2();
	struct step_detect *d = step_detect_new(NULL, NULL);
	step_detect_plan_ranges(d, a);
	struct mallinfo2 m1 = mallinfo2();
	double b = (held(m1) - held(m0)) / (double)(2 * NSTEPS);
	CHECK(step_detect_nplans(d) == 2, "%zu plans (2 wanted)", step_detect_nplans(d));
	size_t nover = NSTEPS / 1000;
	for (size_t p = 0; p < step_detect_nplans(d); p++) {
		const struct step_plan *pl = step_detect_plan(d, p);
		CHECK(pl->method == STEP_NVTX && !strcmp(pl->group, "step"), "pid %u: method %d group %s", pl->pid,
		      pl->method, pl->group ? pl->group : "-");
		CHECK(pl->nsteps == NSTEPS - nover && pl->overlapping == nover, "pid %u: %zu steps, %zu overlapping",
		      pl->pid, pl->nsteps, pl->overlapping);
		for (size_t k = 0, i = 0; k < pl->nsteps && i < NSTEPS; k++, i++) {
			if (overlaps(i)) i++;
			const struct step_def sd = step_plan_step(pl, a, k);
			const struct attr_range x = attribution_range(a, sd.range_id);
			CHECK(sd.s == i * STEP_NS && sd.e == sd.s + 950000 && sd.number == (int64_t)i && x.s == sd.s &&
				      x.pid == pl->pid,
			      "pid %u step %zu: %llu..%llu number %lld (step %zu wanted)", pl->pid, k,
			      (unsigned long long)sd.s, (unsigned long long)sd.e, (long long)sd.number, i);
		}
	}
	if (m0.uordblks + m0.hblkhd == 0) /* an allocator without mallinfo2's figures (ASan's) */
		printf("bytes per step: not measurable with this allocator\n");
	else
		CHECK(b <= 4.5, "the plans hold %.1f bytes per step (at most 4.5)", b);
	/* every spill's block but the cached ones in the file: what stays is
	 * the lookup and the caches (2 spills x 2 processes x 8 x 64 KiB, ~4
	 * bytes a step here) */
	setenv("GPUPROF_SPILL_MEM", "0", 1);
	struct mallinfo2 m2 = mallinfo2();
	struct steps *st = steps_new(NULL, a, d, NULL);
	struct mallinfo2 m3 = mallinfo2();
	double e = (held(m3) - held(m2)) / (double)(2 * NSTEPS);
	CHECK(steps_nprocs(st) == 2 && steps_proc(st, 0)->nrows == NSTEPS - nover, "the engine: %zu processes",
	      steps_nprocs(st));
	if (m0.uordblks + m0.hblkhd)
		CHECK(e <= 16, "the steps engine holds %.1f bytes per step (at most 16)", e);
	steps_free(st);
	step_detect_free(d);
	attribution_free(a);
	if (fails) return 1;
	printf("ok (plans: %.1f bytes a step, steps engine: %.1f)\n", b, e);
	return 0;
}
