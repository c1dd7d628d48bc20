/* Round trip of every record type (zero, max/negative and mid values, long
 * strings, 128-frame stacks) through gp_writer (format 2.0 and 1.4) and
 * through the recorder, read back in file order and in time order.  The
 * types with templates (format 2.0) come again with other start, end and
 * third fields: instances of every width. */
#include <sys/syscall.h>
#include "tl.h"

#define NV 3
static uint64_t frames[GP_REC_TYPE_MAX][NV][GP_STACK_MAX_FRAMES];
static gp_record expect[GP_REC_TYPE_MAX * NV * 6 + 8];
static int nexpect;
static char *longstr;

static void build(uint32_t tid)
{
	nexpect = 0;
	for (uint32_t t = 1; t < GP_REC_TYPE_MAX; t++)
		for (int v = 0; v < NV; v++)
			tl_make(&expect[nexpect++], t, v, tid, frames[t][v], v == 1 ? longstr : "mid string");
	/* a record given tid 0 must read back with its source's tid */
	gp_record *a = &expect[nexpect++];
	tl_make(a, GP_REC_API, 2, 0, NULL, NULL);
	/* the same records of the template types again, but for their start,
	 * end and third field: values whose deltas take 1, 2, 3 and 8 bytes,
	 * negative ones, an end before the start, the 3-byte limits */
	static const int64_t hot[5][3] = { { 5, 3, 1 }, { -200, 30000, -70000 }, { 1ll << 40, -1, 8000000 }, { INT64_MIN, INT64_MAX, -1 }, { (1 << 23) - 1, -(1 << 23), 1 << 23 } };
	int base = nexpect;
	for (int i = 0; i < base; i++) {
		uint32_t t = expect[i].type;
		if (t != GP_REC_API && t != GP_REC_KERNEL && t != GP_REC_MEMCPY && t != GP_REC_MEMSET && t != GP_REC_SYNC &&
		    t != GP_REC_NVTX_RANGE)
			continue;
		for (int k = 0; k < 5; k++) {
			gp_record *x = &expect[nexpect++];
			*x = expect[i];
			gp_rec_api *h = &x->u.api; /* the three fields sit where the API record has them */
			h->start_ns = expect[i].u.api.start_ns + (uint64_t)hot[k][0];
			h->end_ns = h->start_ns + (uint64_t)hot[k][1];
			h->correlation_id = expect[i].u.api.correlation_id + (uint64_t)hot[k][2];
		}
	}
}

/* what the recorder routes to source 0: stacks and modules are shared by all
 * threads; clocks and graph nodes since format 1.4 (a time window reads them) */
static int is_meta(uint32_t t)
{
	return (t >= GP_REC_STRING && t <= GP_REC_DEVICE) || t == GP_REC_MODULE || t == GP_REC_STACK ||
	       t == GP_REC_CLOCK || t == GP_REC_GRAPH_NODE;
}

/* expected value after reading: tid 0 -> source tid */
static gp_record fixed(const gp_record *e, uint32_t tid)
{
	gp_record x = *e;
	unsigned n;
	const struct gp_field *f = gp_rec_fields(x.type, &n);
	for (unsigned i = 0; f && i < n; i++)
		if ((f[i].flags & GP_FIELD_SRC_TID) && gp_field_get(&x, &f[i], 0) == 0) gp_field_set(&x, &f[i], 0, tid);
	return x;
}

static void compare_stream(const char *what, gp_record *got, int ngot, gp_record *exp, int nexp, uint32_t tid)
{
	CHECK(ngot == nexp, "%s: %d records read, %d expected", what, ngot, nexp);
	for (int i = 0; i < ngot && i < nexp; i++) {
		gp_record x = fixed(&exp[i], tid);
		if (tl_rec_cmp(&got[i], &x)) { CHECK(0, "%s: record %d (%s) differs", what, i, gp_rec_type_name(x.type)); }
	}
}

/* Reads path; returns the records of source `src` (deep copies of pointers) */
static int read_source(const char *path, uint32_t src, gp_record *out, int max, int ordered, int *total)
{
	gp_reader *r;
	int rc = gp_reader_open(path, &r);
	REQUIRE(rc == 0, "open %s: %s", path, gp_reader_errmsg(NULL));
	const gp_record *rec;
	int n = 0;
	*total = 0;
	while ((rc = ordered ? gp_reader_next_ordered(r, &rec) : gp_reader_next(r, &rec)) == 1) {
		(*total)++;
		if (rec->source_id != src || n >= max) continue;
		out[n] = *rec;
		if (rec->type == GP_REC_STRING) {
			char *c = malloc(rec->u.string.len + 1);
			memcpy(c, rec->u.string.str, rec->u.string.len);
			out[n].u.string.str = c;
		}
		if (rec->type == GP_REC_STACK) {
			uint64_t *f = malloc(8 * (rec->u.stack.nframes + 1));
			memcpy(f, rec->u.stack.frames, 8 * rec->u.stack.nframes);
			out[n].u.stack.frames = f;
		}
		n++;
	}
	CHECK(rc == 0, "iteration ended with %d", rc);
	struct gp_integrity in;
	gp_reader_integrity(r, &in);
	CHECK(in.has_footer && !in.truncated && in.frames_corrupt == 0, "integrity of %s: footer %d trunc %d corrupt %llu",
	      path, in.has_footer, in.truncated, (unsigned long long)in.frames_corrupt);
	gp_reader_close(r);
	return n;
}

static void free_copies(gp_record *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (v[i].type == GP_REC_STRING) free((void *)v[i].u.string.str);
		if (v[i].type == GP_REC_STACK) free((void *)v[i].u.stack.frames);
	}
}

static gp_record got[GP_REC_TYPE_MAX * NV * 6 + 64];

static void test_writer(const char *dir, unsigned major)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/w.gpuprof", dir);
	const uint32_t T = 4242;
	build(T);
	gp_header h = { .major = (uint16_t)major, .pid = 99, .clock_id = GP_CLOCK_MONOTONIC, .start_trace_ns = 5, .rank = 3 };
	strcpy(h.producer, "test");
	strcpy(h.host, "hostx");
	gp_writer *w;
	REQUIRE(gp_writer_open(path, &h, 3, &w) == 0, "writer open");
	gp_record s = { .type = GP_REC_SOURCE };
	s.u.source = (gp_rec_source){ 1, GP_SOURCE_THREAD, 99, T, 0 };
	CHECK(gp_writer_append(w, 0, &s) == 0, "append source");
	for (int i = 0; i < nexpect; i++) CHECK(gp_writer_append(w, 1, &expect[i]) == 0, "append %d", i);
	CHECK(gp_writer_close(w) == 0, "writer close");

	for (int ord = 0; ord < 2; ord++) {
		int total;
		int n = read_source(path, 1, got, (int)(sizeof(got) / sizeof(got[0])), ord, &total);
		if (!ord) compare_stream("writer/file-order", got, n, expect, nexpect, T);
		else CHECK(n == nexpect, "writer/ordered: %d records of source 1, expected %d", n, nexpect);
		CHECK(total == nexpect + 1, "total %d", total);
		free_copies(got, n);
	}
	gp_reader *r;
	REQUIRE(gp_reader_open(path, &r) == 0, "open");
	const gp_header *rh = gp_reader_header(r);
	CHECK(rh->pid == 99 && rh->rank == 3 && rh->start_trace_ns == 5 && !strcmp(rh->host, "hostx") && !strcmp(rh->producer, "test"), "header fields");
	CHECK(rh->major == major && rh->minor == (major == 1 ? GP_FORMAT_V1_MINOR : GP_FORMAT_MINOR), "format %u.%u written",
	      rh->major, rh->minor);
	CHECK(gp_reader_load_meta(r) == 0, "load_meta");
	const gp_rec_source *src = gp_reader_source(r, 1);
	CHECK(src && src->tid == T, "source 1 known with tid");
	struct gp_footer_info f;
	CHECK(gp_reader_footer(r, &f) == 0 && f.record_count == (uint64_t)nexpect + 1, "footer record count %llu", (unsigned long long)f.record_count);
	gp_reader_close(r);
	printf("writer, format %u: %d records of %d types (zero/max/mid, %zu-byte string, 128 frames) round-trip in file and "
	       "time order\n",
	       major, nexpect, GP_REC_TYPE_MAX - 1, strlen(longstr));
}

static void test_recorder(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/r.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "recorder create");
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	build(tid);
	/* metadata first (source 0, in order), then data (this thread's source) */
	static gp_record meta[sizeof(expect) / sizeof(expect[0])], data[sizeof(expect) / sizeof(expect[0])];
	int nm = 0, nd = 0;
	for (int i = 0; i < nexpect; i++) {
		if (is_meta(expect[i].type)) meta[nm++] = expect[i];
		else data[nd++] = expect[i];
	}
	for (int i = 0; i < nm; i++) CHECK(gp_emit(rec, &meta[i]) == 0, "emit meta %d", i);
	for (int i = 0; i < nd; i++) CHECK(gp_emit(rec, &data[i]) == 0, "emit %d (%s)", i, gp_rec_type_name(data[i].type));
	/* interning: same bytes -> same id, new bytes in the same buffer -> new id */
	char buf[32];
	strcpy(buf, "cudaLaunchKernel");
	uint32_t id1 = gp_intern(rec, buf), id2 = gp_intern(rec, "cudaLaunchKernel");
	strcpy(buf, "cudaMemcpyAsync");
	uint32_t id3 = gp_intern(rec, buf);
	uint32_t idl = gp_intern(rec, longstr);
	CHECK(id1 && id1 == id2 && id3 && id3 != id1 && idl && idl != id1, "intern ids %u %u %u %u", id1, id2, id3, idl);
	gp_recorder_close(rec);

	int total;
	int n = read_source(path, 1, got, (int)(sizeof(got) / sizeof(got[0])), 0, &total);
	compare_stream("recorder/data", got, n, data, nd, tid);
	free_copies(got, n);
	n = read_source(path, 0, got, (int)(sizeof(got) / sizeof(got[0])), 0, &total);
	CHECK(n >= nm, "source 0 has %d records, expected >= %d", n, nm);
	compare_stream("recorder/meta", got, nm, meta, nm, tid);
	free_copies(got, n);

	gp_reader *r;
	REQUIRE(gp_reader_open(path, &r) == 0, "open");
	gp_reader_load_meta(r);
	const char *s1 = gp_reader_string(r, id1), *s3 = gp_reader_string(r, id3), *sl = gp_reader_string(r, idl);
	CHECK(s1 && !strcmp(s1, "cudaLaunchKernel"), "string %u", id1);
	CHECK(s3 && !strcmp(s3, "cudaMemcpyAsync"), "string %u", id3);
	CHECK(sl && !strcmp(sl, longstr), "long interned string");
	const gp_rec_source *src = gp_reader_source(r, 1);
	CHECK(src && src->tid == tid && src->kind == GP_SOURCE_THREAD && src->pid == (uint32_t)getpid(), "source record of the ring");
	gp_reader_close(r);
	printf("recorder: %d data + %d metadata records round-trip; interning gives stable ids (incl. %zu-byte string)\n",
	       nd, nm, strlen(longstr));
}

int main(void)
{
	size_t L = 100000;
	longstr = malloc(L + 1);
	for (size_t i = 0; i < L; i++) longstr[i] = (char)('a' + (i * 7) % 26);
	longstr[L] = 0;
	char *dir = tl_tmpdir();
	test_writer(dir, GP_FORMAT_MAJOR);
	test_writer(dir, 1);
	test_recorder(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {}
	free(longstr);
	if (tl_failures) {
		fprintf(stderr, "%d checks failed\n", tl_failures);
		return 1;
	}
	printf("roundtrip: all checks passed\n");
	return 0;
}
