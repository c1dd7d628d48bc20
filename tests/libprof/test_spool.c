/* The flight recorder's spool (libprof/gp_spool.c) against the real
 * recorder: chunks are read back as the writer appends them and the file's
 * space is released; data chunks older than the horizon are dropped, the
 * metadata never; a capture holds the header, the metadata, the kept chunks
 * from its start on and every chunk polled until its end, and reads back as
 * a complete trace; the byte cap holds; a capture that cannot be created
 * leaves no file; a stretch of garbage between chunks is skipped. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "write/gp_spool.h"
#include "tl.h"

#define SEC 1000000000ull

/* batch b: n API records at b s + i us, correlation ids b*1e6 + i */
static void emit_batch(gp_recorder *rec, int b, int n, uint64_t *seed)
{
	gp_record r = { .type = GP_REC_API };
	for (int i = 0; i < n; i++) {
		r.u.api.start_ns = (uint64_t)b * SEC + (uint64_t)i * 1000;
		r.u.api.end_ns = r.u.api.start_ns + 500;
		/* random ids when seeded: chunks that do not compress away */
		r.u.api.correlation_id = seed ? tl_rand(seed) : (uint64_t)b * 1000000 + (uint64_t)i;
		r.u.api.name_id = gp_intern(rec, "cudaLaunchKernel");
		gp_emit(rec, &r);
	}
	gp_recorder_flush(rec);
}

struct facts {
	uint64_t api, first, last;
	int batches[64];
	int named, footer, corrupt;
};

static int read_facts(const char *path, struct facts *f)
{
	memset(f, 0, sizeof(*f));
	gp_reader *r;
	if (gp_reader_open(path, &r)) return -1;
	const gp_record *rec;
	int rc;
	while ((rc = gp_reader_next(r, &rec)) == 1) {
		if (rec->type != GP_REC_API) continue;
		uint64_t t = rec->u.api.start_ns;
		if (!f->api || t < f->first) f->first = t;
		if (t > f->last) f->last = t;
		f->api++;
		if (t / SEC < 64) f->batches[t / SEC]++;
		const char *n = gp_reader_string(r, rec->u.api.name_id);
		f->named += n && !strcmp(n, "cudaLaunchKernel");
	}
	struct gp_integrity in;
	gp_reader_integrity(r, &in);
	f->footer = in.has_footer && !in.truncated;
	f->corrupt = (int)in.frames_corrupt;
	gp_reader_close(r);
	return rc;
}

static gp_recorder *make_rec(const char *path)
{
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .flush_interval_ms = 3600000 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create %s", path);
	gp_recorder_pause_writer(rec, 1); /* chunks only where the test flushes */
	return rec;
}

/* *keep (when not NULL): a second fd on the file, for the test's fstat */
static gp_spool *make_spool(const char *path, uint64_t max, int *keep)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0, "open %s", path);
	if (keep) *keep = dup(fd);
	struct gp_spool_opts so = { .sz = sizeof(so), .max_bytes = max };
	gp_spool *s;
	REQUIRE(gp_spool_open(fd, &so, &s) == 0, "spool");
	return s;
}

static void history_and_capture(const char *dir)
{
	char path[600], cap[600];
	snprintf(path, sizeof(path), "%s/spool.gpuprof", dir);
	snprintf(cap, sizeof(cap), "%s/cap.gpuprof", dir);
	gp_recorder *rec = make_rec(path);
	int sfd;
	gp_spool *s = make_spool(path, 64u << 20, &sfd);
	unlink(path); /* as the shim does: the file lives on through the two fds */
	for (int b = 1; b <= 10; b++) {
		emit_batch(rec, b, 2000, NULL);
		CHECK(gp_spool_poll(s, 0) >= 1, "poll after batch %d", b);
	}
	/* horizon 6 s: batches 1..5 (last record b s + 2 ms) go, 6..10 stay */
	CHECK(gp_spool_poll(s, 6 * SEC) == 0, "poll with nothing new");
	struct gp_spool_stats st = { .sz = sizeof(st) };
	gp_spool_get_stats(s, &st);
	CHECK(st.dropped_age == 5, "dropped by age %" PRIu64 ", want 5", st.dropped_age);
	CHECK(st.oldest_ns == 6 * SEC, "oldest kept %" PRIu64, st.oldest_ns);
	CHECK(st.meta_bytes > 0 && st.meta_bytes < st.kept_bytes, "meta %" PRIu64 " of %" PRIu64,
	      st.meta_bytes, st.kept_bytes);
	/* the file holds (almost) nothing: its space was released */
	struct stat fs;
	REQUIRE(fstat(sfd, &fs) == 0, "fstat");
	close(sfd);
	if (st.punch_errno)
		fprintf(stderr, "note: PUNCH_HOLE unsupported here (%s): space not released\n", strerror(st.punch_errno));
	else
		CHECK((uint64_t)fs.st_blocks * 512 <= 64 * 1024 && (uint64_t)fs.st_size > st.read_bytes,
		      "spool file: %" PRIu64 " bytes allocated of %" PRIu64, (uint64_t)fs.st_blocks * 512,
		      (uint64_t)fs.st_size);

	/* capture from 8 s: batches 8..10 of the history, then 11 and 12 */
	CHECK(gp_spool_capture_begin(s, cap, 8 * SEC) == 0, "capture begin: %s", strerror(errno));
	CHECK(gp_spool_capture_begin(s, cap, 8 * SEC) == GP_ERR_INVALID, "second capture at once");
	emit_batch(rec, 11, 1000, NULL);
	emit_batch(rec, 12, 1000, NULL);
	CHECK(gp_spool_poll(s, 6 * SEC) == 2, "two chunks polled into the capture");
	CHECK(gp_spool_capture_end(s) == 0, "capture end");
	gp_spool_get_stats(s, &st);
	struct facts f;
	CHECK(read_facts(cap, &f) == 0, "capture readable");
	CHECK(f.footer && !f.corrupt, "capture complete (footer %d, corrupt %d)", f.footer, f.corrupt);
	CHECK(f.api == 3 * 2000 + 2 * 1000 && st.capture_records >= f.api, "capture: %" PRIu64 " API records",
	      f.api);
	CHECK(f.named == (int)f.api, "names resolve: %d of %" PRIu64, f.named, f.api);
	for (int b = 1; b <= 12; b++)
		CHECK(f.batches[b] == (b < 8 ? 0 : b <= 10 ? 2000
							   : 1000),
		      "batch %d: %d records", b, f.batches[b]);
	gp_reader *r;
	REQUIRE(gp_reader_open(cap, &r) == 0, "open capture");
	CHECK(gp_reader_header(r)->pid == (uint32_t)getpid(), "the recorder's header");
	gp_reader_close(r);

	/* the recorder closes: index and footer are not kept, nothing breaks */
	gp_recorder_close(rec);
	CHECK(gp_spool_poll(s, 0) == 0, "poll after close");
	gp_spool_get_stats(s, &st);
	CHECK(st.skipped_bytes == 0, "skipped %" PRIu64, st.skipped_bytes);

	/* an unwritable capture path: an error, no file */
	char bad[700];
	snprintf(bad, sizeof(bad), "%s/nodir/cap.gpuprof", dir);
	CHECK(gp_spool_capture_begin(s, bad, 0) == GP_ERR_IO && errno == ENOENT, "capture into a missing dir");
	CHECK(gp_spool_capture_begin(s, cap, 0) == GP_ERR_IO && errno == EEXIST, "capture over a file");
	gp_spool_close(s);
	unlink(cap);
}

static void cap_bytes(const char *dir)
{
	char path[600], cap[600];
	snprintf(path, sizeof(path), "%s/big.gpuprof", dir);
	snprintf(cap, sizeof(cap), "%s/bigcap.gpuprof", dir);
	gp_recorder *rec = make_rec(path);
	gp_spool *s = make_spool(path, 1u << 20, NULL);
	uint64_t seed = 42;
	for (int b = 1; b <= 40; b++) {
		emit_batch(rec, b, 10000, &seed);
		CHECK(gp_spool_poll(s, 0) >= 1, "poll %d", b);
	}
	struct gp_spool_stats st = { .sz = sizeof(st) };
	gp_spool_get_stats(s, &st);
	CHECK(st.kept_bytes <= 1u << 20, "kept %" PRIu64 " bytes over the 1 MiB cap", st.kept_bytes);
	CHECK(st.dropped_cap > 0 && st.read_bytes > 2u << 20, "dropped %" PRIu64 " of %" PRIu64 " bytes read",
	      st.dropped_cap, st.read_bytes);
	CHECK(gp_spool_capture_begin(s, cap, 0) == 0, "capture");
	CHECK(gp_spool_capture_end(s) == 0, "end");
	struct facts f;
	CHECK(read_facts(cap, &f) == 0 && f.footer, "capped capture readable");
	CHECK(f.batches[40] == 10000 && f.batches[1] == 0 && f.named == (int)f.api,
	      "newest batch kept (%d), oldest dropped (%d), names %d/%" PRIu64, f.batches[40], f.batches[1],
	      f.named, f.api);
	gp_recorder_close(rec);
	gp_spool_close(s);
	unlink(path);
	unlink(cap);
}

/* header + chunks of a real trace with 777 bytes of garbage after the
 * first data chunk: everything but the garbage is kept */
static void garbage(const char *dir)
{
	char path[600], bad[600], cap[600];
	snprintf(path, sizeof(path), "%s/src.gpuprof", dir);
	snprintf(bad, sizeof(bad), "%s/garbled.gpuprof", dir);
	snprintf(cap, sizeof(cap), "%s/gcap.gpuprof", dir);
	gp_recorder *rec = make_rec(path);
	emit_batch(rec, 1, 100, NULL);
	emit_batch(rec, 2, 100, NULL);
	gp_recorder_close(rec);
	FILE *in = fopen(path, "rb");
	REQUIRE(in, "open src");
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	/* find the second chunk that is not metadata: the garbage goes before it */
	uint32_t hlen;
	memcpy(&hlen, buf + 12, 4);
	size_t off = hlen, cut = 0;
	int data = 0;
	while (off + 40 <= n) {
		uint32_t csize, source;
		memcpy(&csize, buf + off + 4, 4);
		memcpy(&source, buf + off + 12, 4);
		if (source != 0 && source != 0xFFFFFFFFu && ++data == 2) {
			cut = off;
			break;
		}
		off += 40 + csize;
	}
	REQUIRE(cut, "no second data chunk");
	FILE *out = fopen(bad, "wb");
	fwrite(buf, 1, cut, out);
	uint8_t junk[777];
	for (size_t i = 0; i < sizeof(junk); i++) junk[i] = (uint8_t)(i * 37 + 11);
	fwrite(junk, 1, sizeof(junk), out);
	fwrite(buf + cut, 1, n - cut, out);
	fclose(out);
	gp_spool *s = make_spool(bad, 0, NULL);
	CHECK(gp_spool_poll(s, 0) >= 3, "chunks around the garbage");
	struct gp_spool_stats st = { .sz = sizeof(st) };
	gp_spool_get_stats(s, &st);
	CHECK(st.skipped_bytes == sizeof(junk), "skipped %" PRIu64 ", want %zu", st.skipped_bytes, sizeof(junk));
	CHECK(gp_spool_capture_begin(s, cap, 0) == 0 && gp_spool_capture_end(s) == 0, "capture");
	struct facts f;
	CHECK(read_facts(cap, &f) == 0 && f.footer && f.api == 200 && !f.corrupt, "both batches: %" PRIu64, f.api);
	gp_spool_close(s);
	unlink(path);
	unlink(bad);
	unlink(cap);
}

int main(void)
{
	char *dir = tl_tmpdir();
	history_and_capture(dir);
	cap_bytes(dir);
	garbage(dir);
	rmdir(dir);
	if (tl_failures) {
		fprintf(stderr, "%d failures\n", tl_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
