/* test_range_attr.c — tools/analysis/range_attr: kernels attributed to
 * NVTX ranges under each rule, on a small hand-made sequence whose expected
 * sums are worked out below (not by the code under test).
 *
 * Process 7.  Ranges (as a writer emits push/pop ranges: at their pop, after
 * the calls inside them): A [100, 1000) on thread 1, depth 0, group 1; B
 * [200, 300) on thread 1, depth 1, group 2.  Calls and kernels (ns):
 *   corr 1 cudaLaunchKernel   thread 1 at 250 -> kernel 10 (GPU start 2000)
 *   corr 2 cudaLaunchKernel   thread 1 at 500 -> kernel 20, its record before the call's
 *   corr 3 cudaLaunchKernel   thread 2 at 250 -> kernel 30
 *   corr 4 cudaLaunchHostFunc thread 1 at 400 -> a kernel 40 correlated with it (GPU start 800)
 *   corr 5 (no call)                          -> kernel 50, GPU start 600
 *   corr 6 cudaGraphLaunch    thread 1 at 700 -> kernels 5 (before A ends) and 7 (after)
 * THREAD: A gets 1, 2 and both graph kernels (10+20+5+7 = 42), B gets 1 (10);
 *   thread 2's launch and the calls that are not launches go nowhere.
 * PROCESS: any thread; no launch call -> GPU start.  A gets 1, 2, 3, 4 (at
 *   800), 5 (at 600), 6 (10+20+30+40+50+12 = 162); B gets 1 and 3 (40). */
#include <stdio.h>
#include <string.h>

#include "gp_trace.h"
#include "analysis/range_attr.h"

static uint64_t sum[3];
static unsigned calls;

static void on_attr(void *arg, uint32_t group, uint64_t ref, uint64_t ns)
{
	(void)arg;
	calls++;
	if (group < 3) sum[group] += ns;
	if (ref != ns * 100) { fprintf(stderr, "FAIL: ref %llu for a kernel of %llu ns\n",
				       (unsigned long long)ref, (unsigned long long)ns); sum[0]++; }
}

static void call(struct range_attr *ra, uint32_t tid, uint32_t cbid, uint64_t corr, uint64_t at)
{
	gp_rec_api a;
	memset(&a, 0, sizeof(a));
	a.domain = GP_API_RUNTIME;
	a.cbid = cbid;
	a.correlation_id = corr;
	a.start_ns = at; a.end_ns = at + 5;
	range_attr_call(ra, 7, tid, &a);
}

static void kernel(struct range_attr *ra, uint64_t corr, uint64_t gpu_start, uint64_t ns)
{
	range_attr_kernel(ra, 7, corr, gpu_start, ns, ns * 100);
}

static int run(enum range_rule rule, uint64_t want_a, uint64_t want_b)
{
	memset(sum, 0, sizeof(sum));
	calls = 0;
	struct range_attr *ra = range_attr_new(rule, on_attr, NULL);
	kernel(ra, 2, 2100, 20);               /* ahead of its call */
	call(ra, 1, 211, 1, 250);
	call(ra, 2, 211, 3, 250);
	call(ra, 1, 284, 4, 400);              /* cudaLaunchHostFunc */
	call(ra, 1, 211, 2, 500);
	call(ra, 1, 311, 6, 700);              /* cudaGraphLaunch */
	kernel(ra, 1, 2000, 10);
	kernel(ra, 3, 2200, 30);
	kernel(ra, 4, 800, 40);
	kernel(ra, 5, 600, 50);
	kernel(ra, 6, 2300, 5);
	range_attr_range(ra, 7, 1, 200, 300, 1, 2);
	range_attr_range(ra, 7, 1, 100, 1000, 0, 1);
	kernel(ra, 6, 2400, 7);                /* after the outermost range settled it */
	range_attr_finish(ra);
	range_attr_free(ra);
	int bad = sum[1] != want_a || sum[2] != want_b || sum[0];
	printf("%s rule: A %llu (want %llu), B %llu (want %llu), %u attributions%s\n",
	       rule == RANGE_RULE_THREAD ? "thread" : "process", (unsigned long long)sum[1],
	       (unsigned long long)want_a, (unsigned long long)sum[2], (unsigned long long)want_b, calls,
	       bad ? "  FAIL" : "");
	return bad;
}

int main(void)
{
	int bad = run(RANGE_RULE_THREAD, 42, 10);
	bad |= run(RANGE_RULE_PROCESS, 162, 40);
	return bad;
}
