/* test_attribution_index.c — the attribution index (tools/analysis/
 * attribution.c, its compact storage) against the rule computed by brute
 * force, on random traces of ranges: per process and thread properly nested
 * push/pop ranges (deep ones too) and overlapping start/end ranges, some of
 * them 4.3 s or longer (past the 32-bit length), zero-length and reversed
 * ones, kinds other than push/pop and start/end (a damaged trace), added in
 * pop order interleaved across threads; queries at random times, in no
 * order and in a mostly rising sweep (the search gallops from its last
 * answer), any-thread and same-thread, half of them through attribution_op
 * (asked twice: its kept answer; also through two views that share one
 * query state, attribution_view_sharing, one freed before the other).  Checks every range read back
 * (attribution_range), every query's set of ranges and its count when the
 * buffer is too small; a trace of more than 65536 names and lanes; then
 * the memory: the bytes malloc holds for an index of 2^20 ranges and of
 * 2^22, queried through the part on disk (at most 1 MiB more for 2^22:
 * the former 16 bytes a range in memory would fail it, 48 MiB more).
 * Prints "ok" or the failed checks; exit 1 on failure. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/join/attribution.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

struct ref { uint32_t pid, tid, depth, kind; uint64_t s, e; char name[16]; };

static struct ref *refs;
static size_t nrefs, crefs;
static uint64_t rng = 12345;

static uint64_t rnd(uint64_t n) { return n ? sm_next(&rng) % n : 0; }

static void push_ref(uint32_t pid, uint32_t tid, uint32_t kind, uint32_t depth, uint64_t s, uint64_t e)
{
	if (nrefs == crefs) {
		crefs = crefs ? crefs * 2 : 1024;
		refs = realloc(refs, crefs * sizeof(*refs));
	}
	struct ref *r = &refs[nrefs++];
	r->pid = pid; r->tid = tid; r->kind = kind; r->depth = depth; r->s = s; r->e = e;
	snprintf(r->name, sizeof(r->name), "r%u", (unsigned)rnd(40));
}

/* Nested push/pop ranges inside [s, e) at depth d, children first (pop order). */
static void nest(uint32_t pid, uint32_t tid, uint32_t d, uint64_t s, uint64_t e)
{
	uint64_t t = s;
	int kids = d < 6 ? (int)rnd(4) : 0;
	for (int k = 0; k < kids && t < e; k++) {
		uint64_t cs = t + rnd((e - t) / 4 + 1), ce = cs + rnd((e - cs) / 2 + 1);
		if (ce <= cs) break;
		nest(pid, tid, d + 1, cs, ce);
		t = ce;
	}
	push_ref(pid, tid, 1 /* GP_NVTX_PUSHPOP */, d, s, e);
}

static void gen(void)
{
	const uint64_t T = 20000000000ull;   /* 20 s */
	for (uint32_t pid = 100; pid < 103; pid++)
		for (uint32_t tid = 1; tid < 4; tid++) {
			/* top-level push/pop ranges one after the other */
			uint64_t t = rnd(1000);
			while (t < T) {
				uint64_t len = rnd(5) == 0 ? 4300000000ull + rnd(1000000000) : rnd(300000000);
				nest(pid, tid, 0, t, t + len);
				t += len + rnd(50000000);
			}
			/* overlapping start/end ranges, some long, some empty or reversed */
			for (int k = 0; k < 300; k++) {
				uint64_t s = rnd(T), len = rnd(8) == 0 ? 5000000000ull + rnd(T) : rnd(200000000);
				uint32_t kind = rnd(50) == 0 ? 7 : 2;
				if (rnd(40) == 0) push_ref(pid, tid, kind, 0, s, s > 10 ? s - 10 : 0);
				else push_ref(pid, tid, kind, 0, s, s + len);
			}
		}
	/* a very deep push/pop nesting (depth clamped at 65534) */
	push_ref(100, 9, 1, 70000, 5, 9000000000ull);
	push_ref(100, 9, 1, 65534, 6, 8000000000ull);
	/* interleave: a random swap pass keeps each thread's pop order mostly */
	for (size_t i = 1; i < nrefs; i++)
		if (rnd(3) == 0) { struct ref x = refs[i]; refs[i] = refs[i - 1]; refs[i - 1] = x; }
}

static struct attribution *build(enum attr_rule rule)
{
	struct attribution *a = attribution_new(rule);
	for (size_t i = 0; i < nrefs; i++) {
		gp_rec_nvtx_range n;
		memset(&n, 0, sizeof(n));
		n.start_ns = refs[i].s; n.end_ns = refs[i].e; n.kind = refs[i].kind; n.depth = refs[i].depth;
		n.tid = refs[i].tid;
		uint32_t id = attribution_add_range(a, refs[i].pid, refs[i].tid, &n, refs[i].name);
		CHECK(id == i, "id %u for range %zu", id, i);
	}
	attribution_index(a);
	return a;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void check_ranges(const struct attribution *a)
{
	CHECK(attribution_nranges(a) == nrefs, "nranges %zu != %zu", attribution_nranges(a), nrefs);
	for (size_t i = 0; i < nrefs; i++) {
		const struct ref *r = &refs[i];
		struct attr_range x = attribution_range(a, (uint32_t)i);
		uint64_t e = r->e > r->s ? r->e : r->s;
		uint32_t depth = r->kind != 1 ? 65535 : r->depth < 65535 ? r->depth : 65534;
		CHECK(x.s == r->s && x.e == e, "range %zu: [%llu, %llu) != [%llu, %llu)", i, (unsigned long long)x.s,
		      (unsigned long long)x.e, (unsigned long long)r->s, (unsigned long long)e);
		CHECK(x.pid == r->pid && x.tid == r->tid, "range %zu: pid/tid", i);
		CHECK(x.depth == depth && x.kind == r->kind, "range %zu: depth %u kind %u != %u %u", i, x.depth, x.kind,
		      depth, r->kind);
		CHECK(!strcmp(attribution_name(a, x.name), r->name), "range %zu: name", i);
	}
}

/* sweep: the queries' times mostly rise (as a trace's launch calls come,
 * with now and then a step back), so attribution_at's search from its
 * last answer gallops forward in short steps; else they are in no order.
 * Every other query asks attribution_op, whose last answer is kept: twice
 * for the same call, the second answer must be the first's. */
static void check_queries2(const struct attribution *a, const struct attribution *b, enum attr_rule rule, int nq,
			   int sweep)
{
	uint32_t *want = malloc(nrefs * sizeof(*want)), *got = malloc(nrefs * sizeof(*got)), small[2];
	uint32_t *obuf = NULL;
	size_t ocap = 0;
	uint64_t sweep_t = 0;
	for (int q = 0; q < nq; q++) {
		const struct ref *pick = &refs[rnd(nrefs)];
		uint32_t pid = rnd(8) ? pick->pid : 100 + (uint32_t)rnd(4), tid = rnd(8) ? pick->tid : 1 + (uint32_t)rnd(4);
		uint64_t t = rnd(4) == 0 ? pick->s + rnd(3) : rnd(4) == 0 ? pick->e - rnd(2) : rnd(26000000000ull);
		if (rnd(10) == 0) { pid = 100; tid = 9; t = rnd(9000000000ull); }
		if (sweep) {
			sweep_t += rnd(3000000);
			t = rnd(20) == 0 && sweep_t > 50000000 ? sweep_t - rnd(50000000) : sweep_t;
		}
		/* every fourth query asks attribution_open_on: the thread's own
		 * push/pop ranges, whatever the rule */
		int own = q % 4 == 2;
		size_t nw = 0;
		for (size_t i = 0; i < nrefs; i++) {
			const struct ref *r = &refs[i];
			uint64_t e = r->e > r->s ? r->e : r->s;
			int thread_ok = own ? r->tid == tid && r->kind == GP_NVTX_PUSHPOP : rule == ATTR_ANY_THREAD || r->tid == tid;
			if (r->pid == pid && thread_ok && r->s <= t && t < e) want[nw++] = (uint32_t)i;
		}
		size_t ng;
		if (own) {
			ng = attribution_open_on(a, pid, tid, t, got, nrefs);
		} else if (q & 1) {
			struct gpu_op op;
			memset(&op, 0, sizeof(op));
			op.has_call = 1; op.pid = pid; op.tid = tid; op.call_s = t;
			ng = attribution_op(a, &op, &obuf, &ocap);
			if (ng) memcpy(got, obuf, (ng < nrefs ? ng : nrefs) * sizeof(*got));
			/* asked again: through b, when it shares a's state */
			size_t again = attribution_op(b, &op, &obuf, &ocap);
			CHECK(again == ng && (!ng || !memcmp(got, obuf, (ng < nrefs ? ng : nrefs) * sizeof(*got))),
			      "attribution_op asked twice: %zu then %zu ranges", ng, again);
		} else {
			ng = attribution_at(a, pid, tid, t, got, nrefs);
		}
		qsort(got, ng < nrefs ? ng : nrefs, sizeof(*got), cmp_u32);
		int same = ng == nw;
		for (size_t i = 0; same && i < nw; i++) same = got[i] == want[i];
		CHECK(same, "%s%s query pid %u tid %u t %llu: %zu ranges, want %zu", attr_rule_name(rule),
		      own ? " open_on" : "", pid, tid, (unsigned long long)t, ng, nw);
		CHECK((own ? attribution_open_on : attribution_at)(a, pid, tid, t, small, 2) == nw,
		      "count with a small buffer");
	}
	free(want); free(got); free(obuf);
}

static void check_queries(const struct attribution *a, enum attr_rule rule, int nq, int sweep)
{
	check_queries2(a, a, rule, nq, sweep);
}

/* Bytes malloc holds for an index of n ranges (one thread, back-to-back
 * ranges as a training loop's, two depths) after queries through its
 * spills' readers: range i is [1000 i, 1000 i + 900), so a time t is in
 * range t / 1000 alone or in none; the queries (a rising sweep, then
 * random times) check that through the part of the index on disk. */
static size_t index_bytes(size_t n)
{
	struct mallinfo2 m0 = mallinfo2();
	struct attribution *a = attribution_new(ATTR_ANY_THREAD);
	for (size_t i = 0; i < n; i++) {
		gp_rec_nvtx_range r;
		memset(&r, 0, sizeof(r));
		r.start_ns = 1000 * i; r.end_ns = 1000 * i + 900; r.kind = 1; r.depth = i % 3 ? 1 : 0;
		attribution_add_range(a, 7, 7, &r, i % 3 ? "layer" : "step");
	}
	attribution_index(a);
	uint32_t got[4];
	for (int q = 0; q < 40000; q++) {
		uint64_t t = q < 20000 ? (uint64_t)q * (n / 20000) * 1000 + rnd(1000) : rnd(1000 * n);
		size_t ng = attribution_at(a, 7, 7, t, got, 4);
		int in = t % 1000 < 900;
		CHECK(ng == (size_t)in && (!in || got[0] == t / 1000), "%zu ranges: t %llu in %zu ranges", n,
		      (unsigned long long)t, ng);
	}
	struct attr_range x = attribution_range(a, (uint32_t)(n - 1));
	CHECK(x.s == 1000 * (n - 1) && x.depth == ((n - 1) % 3 ? 1 : 0), "%zu ranges: the last one read back", n);
	struct mallinfo2 m1 = mallinfo2();
	size_t b = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);
	attribution_free(a);
	return b;
}

int main(void)
{
	gen();
	struct attribution *any = build(ATTR_ANY_THREAD), *same = build(ATTR_SAME_THREAD);
	check_ranges(any);
	check_queries(any, ATTR_ANY_THREAD, 20000, 0);
	check_queries(same, ATTR_SAME_THREAD, 20000, 0);
	check_queries(any, ATTR_ANY_THREAD, 20000, 1);
	check_queries(same, ATTR_SAME_THREAD, 20000, 1);
	/* two views sharing one query state (attribution_view_sharing: a
	 * slice's steps' engine and its reports), each asked in turn; the
	 * state outlives the view freed first (ASan: make stats-asan-test's
	 * build runs this too via the slices) */
	struct attribution *v = attribution_view(same), *w = attribution_view_sharing(v);
	check_queries2(v, w, ATTR_SAME_THREAD, 20000, 1);
	check_queries2(w, v, ATTR_SAME_THREAD, 2000, 0);
	attribution_free(v);
	check_queries(w, ATTR_SAME_THREAD, 2000, 1);
	struct attribution *x = attribution_view_sharing(any); /* of the index itself */
	check_queries2(any, x, ATTR_ANY_THREAD, 2000, 1);
	attribution_free(x);
	attribution_free(w);
	attribution_free(any);
	attribution_free(same);
	/* the memory does not grow with the ranges: past the spills' caps
	 * (16 MiB) their records are on disk; 4 bytes a lane's 32 ranges stay */
	size_t b20 = index_bytes((size_t)1 << 20), b22 = index_bytes((size_t)1 << 22);
	if (!b20) /* an allocator without mallinfo2's figures (ASan's) */
		printf("index bytes: not measurable with this allocator\n");
	else
		CHECK(b22 <= b20 + (1u << 20) && b22 <= (24u << 20),
		      "an index of 2^22 ranges holds %zu bytes, of 2^20 %zu (at most 1 MiB more, 24 MiB)", b22, b20);
	/* more than 65536 names and lanes: one range each, on threads of their own */
	nrefs = 0;
	for (uint32_t i = 0; i < 70000; i++) {
		push_ref(200 + i % 3, 1000 + i, i % 5 ? 1 : 2, i % 4, 1000000ull * i, 1000000ull * i + 5000000 + rnd(3));
		snprintf(refs[nrefs - 1].name, sizeof(refs[0].name), "n%u", i);
	}
	any = build(ATTR_ANY_THREAD);
	check_ranges(any);
	check_queries(any, ATTR_ANY_THREAD, 2000, 0);
	check_queries(any, ATTR_ANY_THREAD, 2000, 1);
	attribution_free(any);
	printf("162000 queries; an index of 2^20 ranges holds %.1f MiB, of 2^22 %.1f MiB\n", b20 / 1048576.0,
	       b22 / 1048576.0);
	free(refs);
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
