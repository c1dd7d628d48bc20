/* test_share.c — gp_reader_opts.share: readers of one file open at once
 * keep one chunk table between them (a reader costs ~1 byte a chunk, not
 * ~40: malloc's bytes in use, against readers that do not share), and each
 * gives what a reader of its own gives: the records of every time window,
 * the integrity report and its first problem, on intact and damaged files;
 * the table outlives the reader that scanned it, and a file rewritten since
 * is scanned again; readers opened and closed on many threads at once (as
 * `gpuprof`'s time slices: run under TSan by make tsan-test). */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tl.h"

/* A trace of nsrc sources of 2 API records each: one chunk a source. */
static void write_trace(const char *path, int nsrc)
{
	gp_header h = { .major = GP_FORMAT_MAJOR, .pid = 7, .clock_id = GP_CLOCK_MONOTONIC, .start_trace_ns = 1000 };
	strcpy(h.producer, "gpuprof test");
	gp_writer *w;
	REQUIRE(gp_writer_open(path, &h, 1, &w) == 0, "writer open");
	for (int i = 0; i < nsrc; i++)
		for (int k = 0; k < 2; k++) {
			gp_record r = { .type = GP_REC_API };
			uint64_t t = 2000 + (uint64_t)i * 1000 + (uint64_t)k * 400;
			r.u.api = (gp_rec_api){ .start_ns = t, .end_ns = t + 300, .correlation_id = (uint64_t)i * 2 + k + 1, .domain = 1, .cbid = 13, .name_id = 0 };
			REQUIRE(gp_writer_append(w, (uint32_t)i + 1, &r) == 0, "append");
		}
	REQUIRE(gp_writer_close(w) == 0, "writer close");
}

static gp_reader *open_r(const char *path, int share)
{
	struct gp_reader_opts o = { .sz = sizeof(o), .threads = 1, .share = share };
	gp_reader *r = NULL;
	int rc = gp_reader_open_opts(path, &o, &r);
	return rc == 0 ? r : NULL;
}

/* Every record of r under [from, to) the same as of q; the count. */
static long same_records(gp_reader *r, gp_reader *q, uint64_t from, uint64_t to)
{
	REQUIRE(gp_reader_set_time_window(r, from, to) == 0 && gp_reader_set_time_window(q, from, to) == 0, "window");
	const gp_record *a, *b;
	long n = 0;
	for (;;) {
		int ra = gp_reader_next_ordered(r, &a), rb = gp_reader_next_ordered(q, &b);
		CHECK(ra == rb, "[%llu, %llu) record %ld: status %d vs %d", (unsigned long long)from,
		      (unsigned long long)to, n, ra, rb);
		if (ra != 1 || rb != 1) break;
		if (tl_rec_cmp(a, b)) {
			CHECK(0, "[%llu, %llu) record %ld differs", (unsigned long long)from, (unsigned long long)to, n);
			break;
		}
		n++;
	}
	return n;
}

/* A shared reader of path against one of its own: records, integrity
 * report and its text. */
static void same_reader(const char *path, gp_reader *shared)
{
	gp_reader *own = open_r(path, 0);
	REQUIRE(own, "open %s", path);
	same_records(shared, own, 0, UINT64_MAX);
	same_records(shared, own, 5000, 9000);
	struct gp_integrity a, b;
	gp_reader_integrity(shared, &a);
	gp_reader_integrity(own, &b);
	CHECK(!memcmp(&a, &b, sizeof(a)), "%s: integrity differs", path);
	char da[512], db[512];
	gp_reader_describe_integrity(shared, da, sizeof(da));
	gp_reader_describe_integrity(own, db, sizeof(db));
	CHECK(!strcmp(da, db), "%s: '%s' vs '%s'", path, da, db);
	CHECK(!strcmp(gp_reader_errmsg(shared), gp_reader_errmsg(own)), "%s: errmsg '%s' vs '%s'", path,
	      gp_reader_errmsg(shared), gp_reader_errmsg(own));
	gp_reader_close(own);
}

struct slice_arg {
	const char *path;
	uint64_t from, to;
	long n;
};

/* A time slice's thread: its own sharing reader, its window's records. */
static void *slice_read(void *arg)
{
	struct slice_arg *a = arg;
	gp_reader *r = open_r(a->path, 1);
	if (!r) return NULL;
	const gp_record *rec;
	if (gp_reader_set_time_window(r, a->from, a->to) == 0)
		while (gp_reader_next_ordered(r, &rec) == 1) a->n += rec->type == GP_REC_API;
	gp_reader_close(r);
	return NULL;
}

/* Bytes malloc holds for k more readers of path (share or not). */
static size_t readers_bytes(const char *path, int share, gp_reader **rs, int k)
{
	size_t before = mallinfo2().uordblks;
	for (int i = 0; i < k; i++) REQUIRE((rs[i] = open_r(path, share)), "open %d", i);
	return mallinfo2().uordblks - before;
}

int main(void)
{
	char *dir = tl_tmpdir(), path[512], other[512];
	snprintf(path, sizeof(path), "%s/many.gpuprof", dir);
	snprintf(other, sizeof(other), "%s/other.gpuprof", dir);
	const int nsrc = 8000, k = 16;
	write_trace(path, nsrc);

	/* memory: k readers beside the command's, sharing its table or not */
	gp_reader *base = open_r(path, 1), *rs[16];
	REQUIRE(base, "open base");
	size_t own = readers_bytes(path, 0, rs, k);
	for (int i = 0; i < k; i++) gp_reader_close(rs[i]);
	size_t shared = readers_bytes(path, 1, rs, k);
	printf("%d readers of %d chunks: %zu bytes each on their own, %zu sharing\n", k, nsrc, own / k, shared / k);
	if (!own) {
		printf("memory not checked: malloc keeps no statistics here (a sanitizer's)\n");
	} else {
		CHECK(shared / k + (size_t)nsrc * 32 <= own / k, "a sharing reader holds %zu bytes, one of its own %zu",
		      shared / k, own / k);
		CHECK(shared / k <= (size_t)nsrc * 4 + 512 * 1024, "a sharing reader holds %zu bytes for %d chunks",
		      shared / k, nsrc);
	}

	/* the same records and report; reading one changes no other's */
	same_reader(path, rs[0]);
	same_reader(path, rs[1]);
	/* the scanning reader closed first: the others keep the table */
	gp_reader_close(base);
	same_reader(path, rs[2]);
	for (int i = 0; i < k; i++) gp_reader_close(rs[i]);

	/* k slices' readers on k threads, the base open or not: every record once */
	for (int pass = 0; pass < 2; pass++) {
		gp_reader *b = pass ? open_r(path, 1) : NULL;
		pthread_t th[16];
		struct slice_arg sa[16];
		uint64_t end = 2000 + (uint64_t)nsrc * 1000;
		long n = 0;
		for (int i = 0; i < k; i++) {
			sa[i] = (struct slice_arg){ path, i ? 2000 + (end - 2000) * (uint64_t)i / k : 0,
						    i + 1 < k ? 2000 + (end - 2000) * (uint64_t)(i + 1) / k : UINT64_MAX, 0 };
			REQUIRE(pthread_create(&th[i], NULL, slice_read, &sa[i]) == 0, "thread");
		}
		for (int i = 0; i < k; i++) {
			pthread_join(th[i], NULL);
			n += sa[i].n;
		}
		CHECK(n >= 2L * nsrc, "%d slices gave %ld API records of %d", k, n, 2 * nsrc);
		gp_reader_close(b);
	}

	/* damaged files: each reader its own state of the chunks */
	static const char *bad[] = { "corrupt_chunk_middle", "truncated_chunk", "no_footer", "garbage_after_footer",
				     "bad_chunk_header", "v1.4_corrupt_chunk_middle", "valid" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char p[512];
		snprintf(p, sizeof(p), "tests/data/bad/%s.gpuprof", bad[i]);
		gp_reader *b0 = open_r(p, 1), *b1 = open_r(p, 1);
		REQUIRE(b0 && b1, "open %s", p);
		same_reader(p, b0); /* b0 read first: b1 starts from the scan */
		same_reader(p, b1);
		gp_reader_close(b0);
		gp_reader_close(b1);
	}

	/* a file rewritten while a reader of it is open: scanned again */
	write_trace(other, 10);
	gp_reader *old = open_r(other, 1);
	REQUIRE(old, "open other");
	write_trace(other, 30);
	gp_reader *now = open_r(other, 1);
	REQUIRE(now, "open other again");
	const gp_record *rec;
	long n = 0;
	while (gp_reader_next_ordered(now, &rec) == 1) n += rec->type == GP_REC_API;
	CHECK(n == 60, "the rewritten file: %ld API records, want 60", n);
	gp_reader_close(old);
	gp_reader_close(now);

	unlink(path);
	unlink(other);
	rmdir(dir);
	if (tl_failures) return 1;
	printf("ok\n");
	return 0;
}
