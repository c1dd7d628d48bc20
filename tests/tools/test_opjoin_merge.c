/* test_opjoin_merge.c — the correlation-id join in time shards
 * (analysis/join/opjoin.h: opjoin_merge): a random launch sequence read by one
 * join, and read in slices of time (each record to the slice of its time,
 * in the one join's order), one join per slice, merged in time order — in
 * sequence and as stats_shards.c's tree — then finished.  The operations
 * delivered (with their call), the launch calls that leave (with their
 * operation counts) and the counts must be the same multisets as the one
 * join's.  The sequence has kernel launches (runtime record around a driver
 * record), graph launches of 1 to 3 kernels, operations whose record comes
 * before their call's, failed launches, operations without a correlation
 * id, and GPU lags of up to 4 slices (an operation whose call is 3 cuts
 * back); every operation comes within the join's grace of its call's
 * previous one (past it, one join and the merge may differ: opjoin.h).
 * Prints "ok" or the failed checks; exit 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_common.h"
#include "analysis/join/opjoin.h"
#include "common/tool.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { fails++; printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { S_GEMM = 1, S_LAUNCH, S_CULAUNCH, S_GRAPH };
/* the join's grace: past it, a joined call leaves (its slices ~1000 ns) */
#define GRACE 5000

/* One record of the sequence: an API call or a kernel. */
struct ev {
	uint64_t t;            /* its time: the call's start, the kernel's */
	int api;
	gp_record rec;
};

/* What a join delivered, flattened for comparison. */
struct got { uint64_t v[8]; };
struct out { struct got *v; size_t n, cap; };

static int cmp_got(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct got));
}

static void on_op(void *ctx, const struct gpu_op *op)
{
	struct out *o = ctx;
	struct got g = { { 1, op->corr, op->s, op->e, op->has_call, op->call_s, op->call_e, op->tid } };
	VEC_PUSH(o->v, o->n, o->cap, g);
}

static void on_call(void *ctx, const struct launch_call *c)
{
	struct out *o = ctx;
	struct got g = { { 2, c->corr, c->s, c->e, c->ops, c->graph, c->ok, c->tid } };
	VEC_PUSH(o->v, o->n, o->cap, g);
}

static struct ev *evs;
static size_t nev, cev;

static void push_api(uint64_t corr, int driver, uint32_t cbid, uint32_t name, uint64_t s, uint64_t e, int32_t status)
{
	struct ev x;
	memset(&x, 0, sizeof(x));
	x.t = s;
	x.api = 1;
	rec_api(&x.rec, 10, driver, name, cbid, corr, s, e);
	x.rec.u.api.status = status;
	VEC_PUSH(evs, nev, cev, x);
}

static void push_kernel(uint64_t corr, uint64_t s, uint64_t e)
{
	struct ev x;
	memset(&x, 0, sizeof(x));
	x.t = s;
	rec_kernel(&x.rec, S_GEMM, 7, corr, s, e, 1);
	VEC_PUSH(evs, nev, cev, x);
}

/* Records into j as stats_ctx_add does (step_pass2_add): each, then the
 * stream's time. */
static void feed(struct opjoin *j, const struct ev *x, uint64_t *now)
{
	if (x->api) opjoin_api(j, 10, 10, &x->rec.u.api, 1);
	else opjoin_gpu(j, 10, &x->rec);
	if (x->t > *now) {
		*now = x->t;
		opjoin_advance(j, x->t);
	}
}

/* The sequence in slices [cut[i], cut[i+1]), merged in sequence (tree 0)
 * or as the shards' tree (tree 1); into *o. */
static void sliced(gp_reader *r, const uint64_t *cut, int k, int tree, struct out *o, struct opjoin_counts *cnt)
{
	struct opjoin **j = xcalloc((size_t)k, sizeof(*j));
	for (int i = 0; i < k; i++) {
		struct opjoin_opts jo = { GRACE, on_call, cut[i], 0 };
		j[i] = opjoin_new(r, &jo, on_op, o);
		uint64_t now = 0;
		for (size_t e = 0; e < nev; e++)
			if (evs[e].t >= cut[i] && evs[e].t < cut[i + 1]) feed(j[i], &evs[e], &now);
	}
	if (tree) {
		for (int step = 1; step < k; step *= 2)
			for (int i = 0; i + step < k; i += 2 * step) opjoin_merge(j[i], j[i + step]);
	} else {
		for (int i = 1; i < k; i++) opjoin_merge(j[0], j[i]);
	}
	opjoin_finish(j[0]);
	opjoin_counts(j[0], cnt);
	for (int i = 0; i < k; i++) opjoin_free(j[i]);
	free(j);
}

static int slice_of(const uint64_t *cut, int k, uint64_t t)
{
	int i = 0;
	while (i + 1 < k && t >= cut[i + 1]) i++;
	return i;
}

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

int main(void)
{
	char path[] = "/tmp/test_opjoin_merge_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) { perror("mkstemp"); return 1; }
	close(fd);
	gp_header h;
	gen_prog = "test_opjoin_merge";
	gen_open_trace(path, &h, 10, 0, GEN_REALTIME0, "host", -1);
	str_id(S_GEMM, "sm90_gemm");
	str_id(S_LAUNCH, "cudaLaunchKernel");
	str_id(S_CULAUNCH, "cuLaunchKernel");
	str_id(S_GRAPH, "cudaGraphLaunch");
	if (gen_close()) return 1;
	gp_reader *r = tool_open(path);
	if (!r) return 1;
	unlink(path);

	uint64_t seed = 25;
	size_t cases = 0, across = 0;
	for (int round = 0; round < 40; round++) {
		nev = 0;
		uint64_t t = 1000, corr = 1;
		size_t n = 200 + sm_next(&seed) % 800;
		for (size_t i = 0; i < n; i++, corr++) {
			t += 20 + sm_next(&seed) % 200;
			unsigned kind = (unsigned)(sm_next(&seed) % 10);
			uint64_t lag = sm_next(&seed) % 4000; /* slices below are ~1000 ns and more */
			if (kind == 0) { /* a failed launch: no operation */
				push_api(corr, 0, 211, S_LAUNCH, t, t + 5, 1);
			} else if (kind == 1) { /* no correlation id */
				push_kernel(0, t + lag, t + lag + 30);
			} else if (kind == 2) { /* a graph launch */
				push_api(corr, 0, 311, S_GRAPH, t, t + 8, 0);
				unsigned nk = 1 + (unsigned)(sm_next(&seed) % 3);
				for (unsigned k = 0; k < nk; k++) push_kernel(corr, t + lag + 50 * k, t + lag + 50 * k + 40);
			} else if (kind == 3) { /* a driver call alone (as Triton launches) */
				push_api(corr, 1, 307, S_CULAUNCH, t, t + 3, 0);
				push_kernel(corr, t + lag, t + lag + 30);
			} else { /* runtime record around the driver's */
				push_api(corr, 1, 307, S_CULAUNCH, t + 1, t + 3, 0);
				push_api(corr, 0, 211, S_LAUNCH, t, t + 5, 0);
				push_kernel(corr, t + lag, t + lag + 30);
			}
		}
		/* time order (qsort is not stable: records of one time may swap,
		 * which the join takes either way) */
		qsort(evs, nev, sizeof(*evs), cmp_ev);
		uint64_t *call_t = xcalloc(corr + 1, sizeof(*call_t));
		for (size_t e = 0; e < nev; e++)
			if (evs[e].api && !call_t[evs[e].rec.u.api.correlation_id]) call_t[evs[e].rec.u.api.correlation_id] = evs[e].t;
		/* some kernels' records before their call's in the stream: a
		 * kernel moved in front of the record before it */
		for (size_t e = 1; e < nev; e++)
			if (!evs[e].api && evs[e - 1].api && sm_next(&seed) % 4 == 0) {
				struct ev x = evs[e];
				evs[e] = evs[e - 1];
				evs[e - 1] = x;
			}

		struct out one = { 0 };
		struct opjoin_opts jo = { GRACE, on_call, 0, 0 };
		struct opjoin *j = opjoin_new(r, &jo, on_op, &one);
		uint64_t now = 0;
		for (size_t e = 0; e < nev; e++) feed(j, &evs[e], &now);
		opjoin_finish(j);
		struct opjoin_counts c1;
		opjoin_counts(j, &c1);
		opjoin_free(j);
		qsort(one.v, one.n, sizeof(*one.v), cmp_got);

		for (int k = 2; k <= 16; k *= 2)
			for (int tree = 0; tree < 2; tree++) {
				uint64_t *cut = xcalloc((size_t)k + 1, sizeof(*cut));
				uint64_t first = evs[0].t, last = evs[nev - 1].t;
				cut[0] = 0;
				cut[k] = UINT64_MAX;
				for (int i = 1; i < k; i++) cut[i] = first + (last - first) * (uint64_t)i / (uint64_t)k;
				struct out many = { 0 };
				struct opjoin_counts ck;
				sliced(r, cut, k, tree, &many, &ck);
				qsort(many.v, many.n, sizeof(*many.v), cmp_got);
				CHECK(many.n == one.n && !memcmp(many.v, one.v, one.n * sizeof(*one.v)),
				      "round %d, %d slices (%s): %zu deliveries against %zu, or different ones", round, k,
				      tree ? "tree" : "in sequence", many.n, one.n);
				CHECK(ck.ops == c1.ops && ck.ops_no_call == c1.ops_no_call && ck.calls_no_op == c1.calls_no_op,
				      "round %d, %d slices: counts %lu/%lu/%lu against %lu/%lu/%lu", round, k,
				      (unsigned long)ck.ops, (unsigned long)ck.ops_no_call, (unsigned long)ck.calls_no_op,
				      (unsigned long)c1.ops, (unsigned long)c1.ops_no_call, (unsigned long)c1.calls_no_op);
				/* operations whose call is in an earlier slice */
				for (size_t e = 0; e < nev; e++) {
					uint64_t c = evs[e].api ? 0 : evs[e].rec.u.kernel.correlation_id;
					if (c && slice_of(cut, k, call_t[c]) < slice_of(cut, k, evs[e].t)) across++;
				}
				cases++;
				free(many.v);
				free(cut);
			}
		free(one.v);
		free(call_t);
	}
	CHECK(across > 1000, "operations whose call is in an earlier slice: %zu (want many)", across);
	free(evs);
	gp_reader_close(r);
	if (fails) return 1;
	printf("ok (%zu cases, %zu operations joined across a cut)\n", cases, across);
	return 0;
}
