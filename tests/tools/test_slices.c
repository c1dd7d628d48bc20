/* test_slices.c — the slice runner (tools/analysis/core/slices.h) over a trace
 * of N kernels, one every 10 ns (kernel i: correlation id i + 1), for k =
 * 1 to 17 slices: the cuts cover the trace's time end to end (the first
 * from 0, the last to the end, each slice starting where the one before
 * ends); every kernel is read by exactly one slice (its reader windowed to
 * the slice, its records those timed in [from, to)); with a merge, each
 * merge adds the slices right after dst's in time (the ids dst holds end
 * where src's begin), and slice 0 holds every kernel in trace order when
 * slices_wait returns; without, the slices concatenated in order are the
 * trace.  Prints "ok" or the failed checks; exit 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_common.h"
#include "analysis/core/slices.h"
#include "common/tool.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { fails++; printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } while (0)

#define N 20000

/* What a slice read: the kernels' ids in order, and whether whole. */
struct part {
	uint64_t *id;
	size_t n, cap;
	int whole, merged_into; /* merged_into: slice 0 holds it (-1: not merged) */
};

struct run {
	const char *path;
	struct part *p;
	int k, bad_merges;
};

static void read_slice(void *arg, int ix, uint64_t from, uint64_t to)
{
	struct run *u = arg;
	struct part *p = &u->p[ix];
	gp_reader *r = slices_open(u->path, from, to);
	if (!r) return;
	const gp_record *rec;
	int rc;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		uint64_t t = gp_record_time(rec);
		if (rec->type == GP_REC_KERNEL && t >= from && t < to)
			VEC_PUSH(p->id, p->n, p->cap, rec->u.kernel.correlation_id);
	}
	p->whole = slices_whole(r, rc);
	gp_reader_close(r);
}

static void merge_slices(void *arg, int dst, int src)
{
	struct run *u = arg;
	struct part *d = &u->p[dst], *s = &u->p[src];
	/* the next slices in time: dst's ids end where src's begin */
	if (src <= dst || (d->n && s->n && s->id[0] != d->id[d->n - 1] + 1)) u->bad_merges++;
	for (size_t i = 0; i < s->n; i++) VEC_PUSH(d->id, d->n, d->cap, s->id[i]);
	d->whole &= s->whole;
	s->n = 0;
}

/* Whether ids are 1..N in order. */
static int all_in_order(const uint64_t *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (id[i] != i + 1) return 0;
	return n == N;
}

int main(void)
{
	char path[] = "/tmp/test_slices_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) { perror("mkstemp"); return 1; }
	close(fd);
	gp_header h;
	gen_prog = "test_slices";
	gen_open_trace(path, &h, 10, 0, GEN_REALTIME0, "host", -1);
	const uint32_t kinds[2] = { 0, GP_SOURCE_ACTIVITY }, tids[2] = { 0, 0 }, names[2] = { 0, 0 };
	sources(10, 1, kinds, tids, names);
	str_id(1, "k");
	for (uint64_t i = 0; i < N; i++) {
		gp_record rec;
		rec_kernel(&rec, 1, 7, i + 1, 1000 + 10 * i, 1005 + 10 * i, 1);
		put(1, &rec);
	}
	if (gen_close()) return 1;
	gp_reader *r = tool_open(path);
	if (!r) return 1;
	CHECK(slices_count(r, "-", 4) == 0, "a pipe is not cut");
	for (int k = 1; k <= 17; k++) {
		CHECK(slices_count(r, path, k) == k, "k %d: slices_count %d", k, slices_count(r, path, k));
		struct slices *s = slices_new(r, k);
		CHECK(s != NULL, "k %d: slices_new", k);
		if (!s) continue;
		uint64_t prev_to = 0;
		for (int i = 0; i < k; i++) {
			uint64_t from, to;
			slices_bounds(s, i, &from, &to);
			CHECK(from == prev_to && from < to, "k %d slice %d: [%llu, %llu) after %llu", k, i,
			      (unsigned long long)from, (unsigned long long)to, (unsigned long long)prev_to);
			prev_to = to;
		}
		CHECK(prev_to == UINT64_MAX, "k %d: the last slice ends at %llu", k, (unsigned long long)prev_to);
		for (int tree = 0; tree < 2; tree++) {
			struct run u = { path, calloc((size_t)k, sizeof(struct part)), k, 0 };
			struct slice_pass pass = { &u, read_slice, tree ? merge_slices : NULL };
			slices_run(s, &pass);
			if (!tree)
				for (int i = 1; i < k; i++) merge_slices(&u, 0, i);
			CHECK(u.bad_merges == 0, "k %d tree %d: %d merges out of time order", k, tree, u.bad_merges);
			CHECK(u.p[0].whole && all_in_order(u.p[0].id, u.p[0].n), "k %d tree %d: %zu kernels, not 1..%d",
			      k, tree, u.p[0].n, N);
			double sum, max;
			slices_cpu(s, &sum, &max);
			CHECK(sum >= max && max >= 0, "k %d: cpu sum %f max %f", k, sum, max);
			for (int i = 0; i < k; i++) free(u.p[i].id);
			free(u.p);
		}
		slices_free(s);
	}
	gp_reader_close(r);
	unlink(path);
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
