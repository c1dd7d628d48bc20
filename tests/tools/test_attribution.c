/* test_attribution.c — the one attribution rule (tools/analysis/join/opjoin.h +
 * attribution.h) on a hand-made sequence: GPU operations joined to their
 * launch call by (pid, correlation id) — runtime and driver record of one
 * launch merged, a graph launch's kernels, an operation that arrives before
 * its call, one without a call, a failed launch, the same correlation id in
 * another process — then the NVTX ranges each belongs to, any-thread and
 * same-thread.  Prints "ok" or the failed checks; exit 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_common.h"
#include "analysis/join/attribution.h"
#include "analysis/join/opjoin.h"
#include "common/tool.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { fails++; printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { S_GEMM = 1, S_NCCL, S_LAUNCH, S_CULAUNCH, S_GRAPH };

#define MAXOPS 16
static struct gpu_op ops[MAXOPS];
static size_t nops;
static struct launch_call calls[MAXOPS];
static size_t ncalls;

static void on_op(void *ctx, const struct gpu_op *op)
{
	if (nops < MAXOPS) ops[nops++] = *op;
}

static void on_call(void *ctx, const struct launch_call *c)
{
	if (ncalls < MAXOPS) calls[ncalls++] = *c;
}

static void api(struct opjoin *j, uint32_t pid, uint32_t tid, int driver, uint32_t cbid, uint32_t name, uint64_t corr,
		uint64_t s, uint64_t e, uint32_t stack, int32_t status)
{
	gp_rec_api a;
	memset(&a, 0, sizeof(a));
	a.start_ns = s; a.end_ns = e; a.correlation_id = corr;
	a.domain = driver ? GP_API_DRIVER : GP_API_RUNTIME;
	a.cbid = cbid; a.name_id = name; a.tid = tid; a.stack_id = stack; a.status = status;
	opjoin_api(j, pid, tid, &a, 1);
}

static void kernel(struct opjoin *j, uint32_t pid, uint32_t name, uint64_t corr, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_kernel(&r, name, 7, corr, s, e, 1);
	opjoin_gpu(j, pid, &r);
}

static uint32_t range(struct attribution *a, uint32_t pid, uint32_t tid, int kind, uint32_t depth, uint64_t s,
		      uint64_t e, const char *name)
{
	gp_rec_nvtx_range n;
	memset(&n, 0, sizeof(n));
	n.start_ns = s; n.end_ns = e; n.kind = (uint32_t)kind; n.depth = depth; n.tid = tid;
	return attribution_add_range(a, pid, tid, &n, name);
}

static const struct gpu_op *find(uint32_t pid, uint64_t corr, uint64_t s)
{
	for (size_t i = 0; i < nops; i++)
		if (ops[i].pid == pid && ops[i].corr == corr && ops[i].s == s) return &ops[i];
	return NULL;
}

/* The ranges op belongs to as a bit set of range ids. */
static unsigned ranges_of(const struct attribution *a, const struct gpu_op *op)
{
	uint32_t *buf = NULL;
	size_t cap = 0, n = op ? attribution_op(a, op, &buf, &cap) : 0;
	unsigned bits = 0;
	for (size_t i = 0; i < n; i++) bits |= 1u << buf[i];
	free(buf);
	return bits;
}

int main(void)
{
	char path[] = "/tmp/test_attribution_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) { perror("mkstemp"); return 1; }
	close(fd);
	gp_header h;
	gen_prog = "test_attribution";
	gen_open_trace(path, &h, 10, 0, GEN_REALTIME0, "host", -1);
	str_id(S_GEMM, "sm90_gemm");
	str_id(S_NCCL, "ncclDevKernel_AllReduce");
	str_id(S_LAUNCH, "cudaLaunchKernel");
	str_id(S_CULAUNCH, "cuLaunchKernel");
	str_id(S_GRAPH, "cudaGraphLaunch");
	if (gen_close()) return 1;
	gp_reader *r = tool_open(path);   /* strings loaded: kernel classes by name */
	if (!r) return 1;
	unlink(path);

	/* the join, in the order a recorder writes: a call when it returns */
	struct opjoin_opts jo = { 0, on_call, 0, 0 };
	struct opjoin *j = opjoin_new(r, &jo, on_op, NULL);
	/* corr 1: the driver call inside the runtime call (written first), stack on the runtime record */
	api(j, 10, 10, 1, 307, S_CULAUNCH, 1, 160, 162, 0, 0);
	api(j, 10, 10, 0, 211, S_LAUNCH, 1, 158, 165, 7, 0);
	kernel(j, 10, S_GEMM, 1, 300, 310);
	/* corr 2: the autograd thread 12, an NCCL kernel */
	api(j, 10, 12, 0, 211, S_LAUNCH, 2, 170, 171, 0, 0);
	kernel(j, 10, S_NCCL, 2, 320, 330);
	/* corr 3: a graph launch, two kernels */
	api(j, 10, 10, 0, 311, S_GRAPH, 3, 120, 121, 0, 0);
	kernel(j, 10, S_GEMM, 3, 400, 410);
	kernel(j, 10, S_GEMM, 3, 410, 420);
	/* corr 4: the kernel's record before its call's */
	kernel(j, 10, S_GEMM, 4, 210, 215);
	api(j, 10, 10, 0, 211, S_LAUNCH, 4, 205, 206, 0, 0);
	/* no call recorded */
	kernel(j, 10, S_GEMM, 0, 500, 510);
	/* a failed launch */
	api(j, 10, 10, 0, 211, S_LAUNCH, 5, 600, 601, 0, 1);
	/* corr 1 again, in process 11 */
	api(j, 11, 11, 0, 211, S_LAUNCH, 1, 110, 111, 0, 0);
	kernel(j, 11, S_GEMM, 1, 130, 140);
	opjoin_finish(j);

	CHECK(nops == 7, "7 operations delivered, got %zu", nops);
	const struct gpu_op *k1 = find(10, 1, 300), *k2 = find(10, 2, 320), *g1 = find(10, 3, 400),
			    *g2 = find(10, 3, 410), *k4 = find(10, 4, 210), *k0 = find(10, 0, 500),
			    *p11 = find(11, 1, 130);
	CHECK(k1 && k2 && g1 && g2 && k4 && k0 && p11, "every operation delivered once");
	if (fails) goto out;
	CHECK(k1->has_call && k1->call_s == 158 && k1->call_e == 165 && k1->tid == 10 && k1->stack_id == 7,
	      "runtime + driver record: one call [158,165) on thread 10, stack 7 (got [%llu,%llu) tid %u stack %u)",
	      (unsigned long long)k1->call_s, (unsigned long long)k1->call_e, k1->tid, k1->stack_id);
	CHECK(k1->cls == OPC_COMPUTE && k2->cls == OPC_COMM, "kernel classes: compute, NCCL");
	CHECK(k2->tid == 12, "autograd thread's call");
	CHECK(g1->has_call && g2->has_call && g1->graph && g2->graph && g1->call_s == 120,
	      "both graph kernels join the graph launch");
	CHECK(k4->has_call && k4->call_s == 205, "an operation before its call still joins it");
	CHECK(!k0->has_call, "no call recorded: none");
	CHECK(p11->has_call && p11->call_s == 110, "the same correlation id in another process is its own");
	int seen_graph = 0, seen_failed = 0;
	for (size_t i = 0; i < ncalls; i++) {
		if (calls[i].pid == 10 && calls[i].corr == 3) { seen_graph = 1; CHECK(calls[i].ops == 2, "graph call: 2 ops"); }
		if (calls[i].corr == 5) { seen_failed = 1; CHECK(!calls[i].ok && !calls[i].ops, "failed launch: not ok, no ops"); }
		if (calls[i].pid == 10 && calls[i].corr == 1) CHECK(calls[i].stack_id == 7 && calls[i].ops == 1, "call 1");
	}
	CHECK(ncalls == 6 && seen_graph && seen_failed, "6 launch calls leave the join (got %zu)", ncalls);
	struct opjoin_counts oc;
	opjoin_counts(j, &oc);
	CHECK(oc.ops == 7 && oc.ops_no_call == 1 && oc.calls_no_op == 0, "counts");

	/* the ranges: step [100,200) and backward [150,190) inside it on thread
	 * 10, a start/end epoch [50,500) begun on thread 10, and process 11's
	 * own step */
	for (int rule = 0; rule < 2; rule++) {
		struct attribution *a = attribution_new(rule ? ATTR_SAME_THREAD : ATTR_ANY_THREAD);
		uint32_t step = range(a, 10, 10, GP_NVTX_PUSHPOP, 0, 100, 200, "step 0");
		uint32_t bwd = range(a, 10, 10, GP_NVTX_PUSHPOP, 1, 150, 190, "backward");
		uint32_t epoch = range(a, 10, 10, GP_NVTX_STARTEND, 0, 50, 500, "epoch");
		uint32_t other = range(a, 11, 11, GP_NVTX_PUSHPOP, 0, 100, 200, "step 0");
		attribution_index(a);
		unsigned S = 1u << step, B = 1u << bwd, E = 1u << epoch, O = 1u << other;
		const char *rn = attr_rule_name(attribution_rule(a));
		CHECK(ranges_of(a, k1) == (S | B | E), "%s: call at 158: step, backward, epoch", rn);
		CHECK(ranges_of(a, k2) == (rule ? 0 : S | B | E), "%s: autograd thread's call at 170", rn);
		CHECK(ranges_of(a, g1) == (S | E) && ranges_of(a, g2) == (S | E), "%s: graph launch at 120", rn);
		CHECK(ranges_of(a, k4) == E, "%s: call at 205, after the step", rn);
		CHECK(ranges_of(a, k0) == 0, "%s: no call: no range", rn);
		CHECK(ranges_of(a, p11) == O, "%s: process 11: its own step only", rn);
		attribution_free(a);
	}
out:
	opjoin_free(j);
	gp_reader_close(r);
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
