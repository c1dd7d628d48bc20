/* test_window.c — what a time window may rely on (format 1.4,
 * GP_HDR_FLAG_META_APART): the offline writer sets the flag exactly when
 * every metadata record went to source 0, keeps the rest of the header, and
 * leaves it unset otherwise; an empty window (from == to) reads the metadata
 * chunks only; gp_reader_time_window gives back the window set; a window
 * late in a trace decodes fewer chunks, and a chunk's last_ts covers the end
 * of a window record in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tl.h"

/* A trace of n API records in source 1 (the writer cuts a chunk past 256
 * KiB or 16384 records), a thread record in source `thread_src` (5: a source declared a
 * metadata source, as `gpuprof merge` makes one), a GPU-activity window
 * [1500, 1000 * n) with one record in source 2. */
static void write_trace(const char *path, int n, uint32_t thread_src)
{
	gp_header h = { .major = GP_FORMAT_MAJOR, .pid = 7, .clock_id = GP_CLOCK_MONOTONIC, .start_trace_ns = 1000, .rank = 3 };
	strcpy(h.producer, "gpuprof test");
	strcpy(h.host, "testhost");
	gp_writer *w;
	REQUIRE(gp_writer_open(path, &h, 3, &w) == 0, "writer open");
	gp_record r = { .type = GP_REC_STRING };
	r.u.string = (gp_rec_string){ 1, 4, "main" };
	gp_writer_append(w, 0, &r);
	r.type = GP_REC_SOURCE;
	r.u.source = (gp_rec_source){ 1, GP_SOURCE_THREAD, 7, 70, 1 };
	gp_writer_append(w, 0, &r);
	r.u.source = (gp_rec_source){ 2, GP_SOURCE_TOOL, 7, 71, 0 };
	gp_writer_append(w, 0, &r);
	r.u.source = (gp_rec_source){ 5, GP_SOURCE_META, 8, 0, 0 }; /* as merge declares a later input's */
	gp_writer_append(w, 0, &r);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_THREAD;
	r.u.thread = (gp_rec_thread){ 7, 70, 1 };
	gp_writer_append(w, thread_src, &r);
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_WINDOW;
	r.u.window = (gp_rec_window){ 1500, 1000 * (uint64_t)n, 0 };
	gp_writer_append(w, 2, &r);
	for (int i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_API;
		r.u.api = (gp_rec_api){ .start_ns = 2000 + (uint64_t)i * 1000, .end_ns = 2500 + (uint64_t)i * 1000, .correlation_id = (uint64_t)i + 1, .domain = 1, .cbid = (uint32_t)(i * 7919u), .name_id = 1, .status = i };
		gp_writer_append(w, 1, &r);
	}
	REQUIRE(gp_writer_close(w) == 0, "writer close");
}

/* Records read under [from, to): count of all, of source 0, and whether
 * the window record came. */
static int read_window(gp_reader *r, uint64_t from, uint64_t to, int *n0, int *win)
{
	REQUIRE(gp_reader_set_time_window(r, from, to) == 0, "set window");
	const gp_record *rec;
	int n = 0;
	*n0 = *win = 0;
	while (gp_reader_next_ordered(r, &rec) == 1) {
		n++;
		*n0 += rec->source_id == 0;
		*win += rec->type == GP_REC_WINDOW;
	}
	return n;
}

int main(void)
{
	char *dir = tl_tmpdir(), path[512], mixed[512];
	snprintf(path, sizeof(path), "%s/apart.gpuprof", dir);
	snprintf(mixed, sizeof(mixed), "%s/mixed.gpuprof", dir);
	const int n = 200000;
	write_trace(path, n, 0);
	write_trace(mixed, 1000, 1);

	gp_reader *r;
	REQUIRE(gp_reader_open(mixed, &r) == 0, "open mixed");
	CHECK(!gp_reader_meta_apart(r), "a thread record in a data source: the flag is not set");
	gp_reader_close(r);
	write_trace(mixed, 1000, 5);
	REQUIRE(gp_reader_open(mixed, &r) == 0, "open meta-source trace");
	CHECK(gp_reader_meta_apart(r), "a thread record in a declared metadata source: the flag is set");
	int n0, win, nthr = 0;
	REQUIRE(gp_reader_set_time_window(r, 900000, UINT64_MAX) == 0, "window");
	const gp_record *rec;
	while (gp_reader_next_ordered(r, &rec) == 1) nthr += rec->type == GP_REC_THREAD;
	CHECK(nthr == 1, "a late window reads the metadata source's chunk (%d thread records)", nthr);
	gp_reader_close(r);

	REQUIRE(gp_reader_open(path, &r) == 0, "open: %s", gp_reader_errmsg(NULL));
	const gp_header *h = gp_reader_header(r);
	CHECK(gp_reader_meta_apart(r) && (h->flags & GP_HDR_FLAG_META_APART), "every metadata record in source 0: the flag is set");
	CHECK(h->major == GP_FORMAT_MAJOR && h->minor == GP_FORMAT_MINOR && h->pid == 7 && h->rank == 3 && h->start_trace_ns == 1000 &&
		      !strcmp(h->producer, "gpuprof test") && !strcmp(h->host, "testhost"),
	      "the header rewritten at close keeps its fields");
	struct gp_footer_info fi;
	REQUIRE(gp_reader_footer(r, &fi) == 0 && fi.chunk_count >= 6, "several chunks (%llu)",
		(unsigned long long)fi.chunk_count);

	uint64_t from, to;
	gp_reader_time_window(r, &from, &to);
	CHECK(from == 0 && to == UINT64_MAX, "no window at open");
	int all = read_window(r, 0, UINT64_MAX, &n0, &win);
	CHECK(all == n + 6 && win == 1, "whole read: %d records", all);
	int meta = read_window(r, 0, 0, &n0, &win);
	CHECK(meta == n0 && n0 == 5, "from == to: the metadata chunks only (%d records, %d of source 0)", meta, n0);

	/* the last 100 calls: fewer chunks, the window record (it spans them,
	 * but its chunk's records start at 1500) */
	uint64_t lo = 2000 + (uint64_t)(n - 100) * 1000;
	int late = read_window(r, lo, UINT64_MAX, &n0, &win);
	gp_reader_time_window(r, &from, &to);
	CHECK(from == lo && to == UINT64_MAX, "the window set comes back");
	CHECK(late > 100 && late < n / 2, "a late window reads a few chunks (%d records)", late);
	CHECK(win == 1, "the window record overlapping the late window is read (its chunk's last_ts is its end)");
	gp_reader_close(r);

	unlink(path);
	unlink(mixed);
	rmdir(dir);
	if (tl_failures) return 1;
	printf("window: the writer's flag, metadata-only and late windows, a window record's span\n");
	return 0;
}
