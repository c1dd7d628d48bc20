/* test_reader_threads.c — the reader with decoding threads
 * (gp_reader_opts.threads, read/gp_prefetch.c) hands out the same records in
 * the same order, with the same string/source tables and the same integrity
 * report and messages, as with the caller's thread alone: in file order and
 * in time order, with a time window, on a damaged copy and a truncated one;
 * for a trace in format 2.0 and one in 1.4.  Run under TSAN too (make
 * tsan-test).
 *
 * The trace: strings and sources in source 0, ~120k API calls (thread
 * source 1; tid 0 -> the source's, some explicit), NVTX ranges written at
 * their end, kernels (activity source 2); strings and a stack defined
 * mid-file; source 3 declared mid-file in source 0; source 4 declared
 * inside a chunk of source 1 (so the reader learns its tid only when it
 * reads that chunk: chunks of source 4 decoded ahead before that must be
 * decoded again). */
#include "tl.h"

static uint64_t fnv(uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; }

static uint64_t rec_hash(const gp_record *r)
{
	uint64_t h = fnv(1469598103934665603ull, r->type);
	h = fnv(h, r->source_id);
	unsigned n;
	const struct gp_field *f = gp_rec_fields(r->type, &n);
	for (unsigned i = 0; f && i < n; i++) {
		if (f[i].kind == GP_FK_TEXT) {
			for (uint32_t k = 0; k < r->u.string.len; k++) h = fnv(h, (uint8_t)r->u.string.str[k]);
			continue;
		}
		if (f[i].kind == GP_FK_FRAMES) {
			for (uint32_t k = 0; k < r->u.stack.nframes; k++) h = fnv(h, r->u.stack.frames[k]);
			continue;
		}
		for (unsigned k = 0; k < f[i].count; k++) h = fnv(h, gp_field_get(r, &f[i], k));
	}
	return h;
}

struct run {
	uint64_t n, sum, in_window;
	struct gp_integrity integ;
	char msg[512], desc[1024];
	const char *s77; /* a mid-file string, looked up at the end */
	uint32_t tid3, tid4;
	int rc;
};

static void read_all(const char *path, int threads, int ordered, uint64_t lo, uint64_t hi, struct run *o)
{
	memset(o, 0, sizeof(*o));
	struct gp_reader_opts opts = { .sz = sizeof(opts), .threads = threads };
	gp_reader *r;
	REQUIRE(gp_reader_open_opts(path, &opts, &r) == 0, "open %s: %s", path, gp_reader_errmsg(NULL));
	CHECK(gp_reader_threads(r) == (threads > 1 ? threads : 1), "threads %d", gp_reader_threads(r));
	if (lo || hi != UINT64_MAX) CHECK(gp_reader_set_time_window(r, lo, hi) == 0, "window");
	const gp_record *rec;
	int rc;
	uint64_t h = 1;
	for (int pass = 0; pass < 2; pass++) { /* twice: rewind mid-way, then all */
		o->n = 0;
		h = 1;
		while ((rc = ordered ? gp_reader_next_ordered(r, &rec) : gp_reader_next(r, &rec)) > 0) {
			o->n++;
			h = fnv(h, rec_hash(rec));
			uint64_t t = gp_record_time(rec);
			if (t >= lo && t < hi && t) o->in_window++;
			if (pass == 0 && o->n == 5000) break;
		}
		if (pass == 0) {
			CHECK(gp_reader_rewind(r) == 0, "rewind");
			o->in_window = 0;
		}
	}
	o->rc = rc;
	o->sum = h;
	gp_reader_integrity(r, &o->integ);
	snprintf(o->msg, sizeof(o->msg), "%s", gp_reader_errmsg(r));
	const char *s = gp_reader_string(r, 77);
	o->s77 = s ? "found" : "missing";
	const gp_rec_source *s3 = gp_reader_source(r, 3), *s4 = gp_reader_source(r, 4);
	o->tid3 = s3 ? s3->tid : 0;
	o->tid4 = s4 ? s4->tid : 0;
	gp_reader_describe_integrity(r, o->desc, sizeof(o->desc));
	gp_reader_close(r);
}

static void same(const struct run *a, const struct run *b, const char *what, int threads)
{
	CHECK(a->n == b->n && a->sum == b->sum, "%s, %d threads: %llu records (sum %llx) vs %llu (sum %llx)", what,
	      threads, (unsigned long long)b->n, (unsigned long long)b->sum, (unsigned long long)a->n,
	      (unsigned long long)a->sum);
	CHECK(a->rc == b->rc, "%s, %d threads: rc %d vs %d", what, threads, b->rc, a->rc);
	CHECK(!memcmp(&a->integ, &b->integ, sizeof(a->integ)), "%s, %d threads: integrity differs (ok %llu/%llu, corrupt %llu/%llu)",
	      what, threads, (unsigned long long)b->integ.frames_ok, (unsigned long long)a->integ.frames_ok,
	      (unsigned long long)b->integ.frames_corrupt, (unsigned long long)a->integ.frames_corrupt);
	CHECK(!strcmp(a->msg, b->msg), "%s, %d threads: message '%s' vs '%s'", what, threads, b->msg, a->msg);
	CHECK(!strcmp(a->desc, b->desc), "%s, %d threads: '%s' vs '%s'", what, threads, b->desc, a->desc);
	CHECK(!strcmp(a->s77, b->s77) && a->tid3 == b->tid3 && a->tid4 == b->tid4, "%s, %d threads: tables differ",
	      what, threads);
	CHECK(a->in_window == b->in_window, "%s, %d threads: %llu records in the window vs %llu", what, threads,
	      (unsigned long long)b->in_window, (unsigned long long)a->in_window);
}

static void put(gp_writer *w, uint32_t src, gp_record *r)
{
	REQUIRE(gp_writer_append(w, src, r) == 0, "append");
}

static void string(gp_writer *w, uint32_t id, const char *s)
{
	gp_record r = { .type = GP_REC_STRING };
	r.u.string = (gp_rec_string){ id, (uint32_t)strlen(s), s };
	put(w, 0, &r);
}

static void source(gp_writer *w, uint32_t in, uint32_t id, uint32_t kind, uint32_t tid)
{
	gp_record r = { .type = GP_REC_SOURCE };
	r.u.source = (gp_rec_source){ id, kind, 7, tid, 1 };
	put(w, in, &r);
}

#define T0 1000000ull
#define NCALLS 120000

static void write_trace(const char *path, unsigned major)
{
	gp_header h = { .major = (uint16_t)major, .pid = 7, .clock_id = GP_CLOCK_MONOTONIC, .start_trace_ns = T0, .rank = -1 };
	strcpy(h.producer, "test_reader_threads");
	strcpy(h.host, "testhost");
	gp_writer *w;
	REQUIRE(gp_writer_open(path, &h, 1, &w) == 0, "writer");
	char buf[64];
	for (uint32_t i = 1; i <= 50; i++) {
		snprintf(buf, sizeof(buf), "name_%u", i);
		string(w, i, buf);
	}
	source(w, 0, 1, GP_SOURCE_THREAD, 100);
	source(w, 0, 2, GP_SOURCE_ACTIVITY, 0);
	uint64_t seed = 42, frames[GP_STACK_MAX_FRAMES];
	gp_record r;
	for (uint64_t i = 0; i < NCALLS; i++) {
		uint64_t t = T0 + 1000 + i * 1000;
		if (i == NCALLS / 4) { /* mid-file metadata */
			string(w, 77, "defined mid-file");
			source(w, 0, 3, GP_SOURCE_THREAD, 300);
			tl_make(&r, GP_REC_STACK, 2, 0, frames, "");
			r.u.stack.stack_id = 9;
			put(w, 0, &r);
		}
		if (i == NCALLS / 2) source(w, 1, 4, GP_SOURCE_THREAD, 400); /* in a data chunk */
		uint32_t src = i > NCALLS / 4 && i % 7 == 0 ? 3 : i > NCALLS / 2 && i % 5 == 0 ? 4
											       : 1;
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_API;
		r.u.api = (gp_rec_api){ .start_ns = t, .end_ns = t + 300 + tl_rand(&seed) % 500, .correlation_id = i + 1, .domain = 1, .cbid = 211, .name_id = 1 + (uint32_t)(i % 50), .tid = i % 13 == 0 ? 12345 : 0, .stack_id = i % 11 == 0 ? 9 : 0 };
		put(w, src, &r);
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_KERNEL;
		r.u.kernel.start_ns = t + 2000;
		r.u.kernel.end_ns = t + 2000 + tl_rand(&seed) % 3000;
		r.u.kernel.correlation_id = i + 1;
		r.u.kernel.name_id = 1 + (uint32_t)(i % 50);
		r.u.kernel.stream_id = 7;
		r.u.kernel.grid[0] = (uint32_t)i;
		put(w, 2, &r);
		if (i % 100 == 99) { /* a range over the last 100 calls, written at its end */
			memset(&r, 0, sizeof(r));
			r.type = GP_REC_NVTX_RANGE;
			r.u.nvtx_range = (gp_rec_nvtx_range){ .start_ns = t - 99000, .end_ns = t + 500, .kind = GP_NVTX_PUSHPOP, .message_id = 3, .tid = i % 200 == 99 ? 0 : 100, .end_tid = i % 300 == 99 ? 777 : 100 };
			put(w, src, &r);
		}
	}
	REQUIRE(gp_writer_close(w) == 0, "close");
}

static void copy_file(const char *from, const char *to, long cut)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	REQUIRE(a && b, "copy");
	static char buf[1 << 16];
	size_t n;
	long done = 0;
	while ((n = fread(buf, 1, sizeof(buf), a)) > 0) {
		if (cut >= 0 && done + (long)n > cut) n = (size_t)(cut - done);
		fwrite(buf, 1, n, b);
		done += (long)n;
		if (cut >= 0 && done >= cut) break;
	}
	fclose(a);
	fclose(b);
}

static void damage(const char *path, double at)
{
	FILE *f = fopen(path, "r+b");
	REQUIRE(f, "damage");
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, (long)((double)size * at), SEEK_SET);
	static const char junk[64] = "garbage garbage garbage garbage garbage garbage garbage garbage";
	fwrite(junk, 1, sizeof(junk), f);
	fclose(f);
}

/* The checks on a trace of format `major` (1: 1.4; 2: templates). */
static void check_format(const char *dir, unsigned major)
{
	char path[512], bad[512], cut[512];
	snprintf(path, sizeof(path), "%s/t.gpuprof", dir);
	snprintf(bad, sizeof(bad), "%s/bad.gpuprof", dir);
	snprintf(cut, sizeof(cut), "%s/cut.gpuprof", dir);
	write_trace(path, major);
	copy_file(path, bad, -1);
	damage(bad, 0.3);
	damage(bad, 0.61);
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	copy_file(path, cut, size * 2 / 3);

	static const int threads[] = { 2, 3, 8 };
	const char *files[] = { path, bad, cut }, *names[] = { "intact", "damaged", "truncated" };
	for (int fi = 0; fi < 3; fi++)
		for (int ord = 0; ord < 2; ord++) {
			struct run ref, got;
			read_all(files[fi], 1, ord, 0, UINT64_MAX, &ref);
			if (fi == 0) CHECK(ref.n > 2 * NCALLS, "%s: %llu records", names[fi], (unsigned long long)ref.n);
			char what[64];
			snprintf(what, sizeof(what), "%s, %s order", names[fi], ord ? "time" : "file");
			for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
				read_all(files[fi], threads[k], ord, 0, UINT64_MAX, &got);
				same(&ref, &got, what, threads[k]);
			}
			if (fi == 0) {
				CHECK(ref.tid3 == 300 && ref.tid4 == 400 && !strcmp(ref.s77, "found"), "tables");
				CHECK(ref.integ.frames_ok > 10 && !ref.integ.frames_corrupt, "intact: %llu chunks",
				      (unsigned long long)ref.integ.frames_ok);
			} else {
				CHECK(ref.integ.frames_corrupt || ref.integ.truncated, "%s: damage seen", names[fi]);
			}
		}
	/* a window late in the trace: every record timed inside it, fewer chunks read */
	uint64_t lo = T0 + 1000 + (uint64_t)NCALLS * 1000 * 8 / 10, hi = lo + 5000000;
	for (int ord = 0; ord < 2; ord++) {
		struct run all, win, got;
		read_all(path, 1, ord, 0, UINT64_MAX, &all);
		read_all(path, 1, ord, lo, hi, &win);
		uint64_t want = 0;
		{
			gp_reader *r;
			REQUIRE(gp_reader_open(path, &r) == 0, "open");
			const gp_record *rec;
			while ((ord ? gp_reader_next_ordered(r, &rec) : gp_reader_next(r, &rec)) > 0) {
				uint64_t t = gp_record_time(rec);
				want += t >= lo && t < hi;
			}
			gp_reader_close(r);
		}
		CHECK(win.in_window == want && want > 1000, "window: %llu records inside, want %llu",
		      (unsigned long long)win.in_window, (unsigned long long)want);
		/* four sources: at least a chunk of each (<= 16384 records) */
		CHECK(win.n < all.n * 3 / 10, "window: read %llu of %llu records", (unsigned long long)win.n,
		      (unsigned long long)all.n);
		for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
			read_all(path, threads[k], ord, lo, hi, &got);
			same(&win, &got, ord ? "window, time order" : "window, file order", threads[k]);
		}
	}
	unlink(path);
	unlink(bad);
	unlink(cut);
	printf("format %u: ok\n", major);
}

int main(void)
{
	char *dir = tl_tmpdir();
	check_format(dir, GP_FORMAT_MAJOR);
	check_format(dir, 1);
	rmdir(dir);
	return tl_failures ? 1 : 0;
}
