/* tl.h — helpers shared by the libprof tests: check macros, record
 * generators and a field-by-field record comparison. */
#ifndef TL_H
#define TL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>
#include "gp_trace.h"

static int tl_failures __attribute__((unused));
#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			tl_failures++; \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)
#define REQUIRE(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "FATAL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			exit(1); \
		} \
	} while (0)

static inline char *tl_tmpdir(void)
{
	static char d[256];
	const char *base = getenv("TMPDIR");
	snprintf(d, sizeof(d), "%s/gplibprof.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(d)) {
		perror("mkdtemp");
		exit(1);
	}
	return d;
}

static inline uint64_t tl_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Compares every field of the record's type, as listed in the field table
 * (gp_fields.h), so a field added there is compared too; returns 0 when
 * equal, prints the first difference. */
static inline int tl_rec_cmp(const gp_record *a, const gp_record *b)
{
	if (a->type != b->type) {
		fprintf(stderr, "  type %u vs %u\n", a->type, b->type);
		return 1;
	}
	unsigned n;
	const struct gp_field *f = gp_rec_fields(a->type, &n);
	if (!f) {
		fprintf(stderr, "  unknown type %u\n", a->type);
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		if (f[i].kind == GP_FK_TEXT) {
			if (memcmp(a->u.string.str, b->u.string.str, a->u.string.len)) {
				fprintf(stderr, "  string bytes differ\n");
				return 1;
			}
			continue;
		}
		if (f[i].kind == GP_FK_FRAMES) {
			for (uint32_t k = 0; k < a->u.stack.nframes; k++)
				if (a->u.stack.frames[k] != b->u.stack.frames[k]) {
					fprintf(stderr, "  frame %u differs\n", k);
					return 1;
				}
			continue;
		}
		for (unsigned k = 0; k < f[i].count; k++) {
			uint64_t x = gp_field_get(a, &f[i], k), y = gp_field_get(b, &f[i], k);
			if (x != y) {
				fprintf(stderr, "  field %s.%s[%u] differs: %" PRIu64 " vs %" PRIu64 "\n", gp_rec_type_name(a->type),
					f[i].name, k, x, y);
				return 1;
			}
		}
	}
	return 0;
}

/* Fills r with type t, variant v: 0 = all zero, 1 = all max / negative,
 * 2 = mid values.  tid fields get the given tid.  frames: 128-entry buffer. */
static inline void tl_make(gp_record *r, uint32_t t, int v, uint32_t tid, uint64_t *frames, const char *str)
{
	memset(r, 0, sizeof(*r));
	r->type = t;
	if (v == 0) {
		if (t == GP_REC_API) r->u.api.tid = tid;
		if (t == GP_REC_NVTX_RANGE) {
			r->u.nvtx_range.tid = tid;
			r->u.nvtx_range.end_tid = tid;
		}
		if (t == GP_REC_NVTX_MARK) r->u.nvtx_mark.tid = tid;
		if (t == GP_REC_STRING) r->u.string.str = "";
		return;
	}
	/* fill every byte of the union with a pattern, then fix pointer fields */
	uint8_t *b = (uint8_t *)&r->u;
	for (size_t i = 0; i < sizeof(r->u); i++) b[i] = v == 1 ? 0xFF : (uint8_t)(0x11 * (i % 15) + 3);
	switch (t) {
	case GP_REC_STRING:
		r->u.string.id = v == 1 ? UINT32_MAX : 77;
		r->u.string.len = (uint32_t)strlen(str);
		r->u.string.str = str;
		break;
	case GP_REC_STACK:
		r->u.stack.nframes = GP_STACK_MAX_FRAMES;
		for (int i = 0; i < GP_STACK_MAX_FRAMES; i++) frames[i] = v == 1 ? UINT64_MAX - (uint64_t)i * 977 : 0x7f0000000000ull + (uint64_t)i * 4096 + (uint64_t)(i * i);
		r->u.stack.frames = frames;
		break;
	case GP_REC_COUNTER:
		r->u.counter.kind = v == 1 ? GP_COUNTER_INT : GP_COUNTER_DOUBLE;
		if (v == 2) r->u.counter.value.d = 42.5;
		else r->u.counter.value.i = INT64_MIN;
		break;
	case GP_REC_API:
		r->u.api.tid = v == 1 ? UINT32_MAX : tid;
		r->u.api.status = v == 1 ? -1 : 999;
		break;
	case GP_REC_NVTX_RANGE:
		r->u.nvtx_range.tid = tid;
		r->u.nvtx_range.end_tid = v == 1 ? UINT32_MAX : 12345;
		r->u.nvtx_range.payload = v == 1 ? INT64_MIN : -77;
		break;
	case GP_REC_NVTX_MARK: r->u.nvtx_mark.tid = v == 1 ? 5 : tid; break;
	case GP_REC_PROCESS: r->u.process.rank = v == 1 ? -1 : INT32_MIN; break;
	default: break;
	}
}
#endif

#ifndef TL_NO_TRACE_HELPERS
/* A small valid trace: strings + a source in source 0, then API records in
 * source 1 and kernels in source 2 -> 3 data chunks, index, footer; in
 * format `major` (1: 1.4; GP_FORMAT_MAJOR: the current one). */
static inline int tl_write_small_v(const char *path, int n_per_source, unsigned major)
{
	gp_header h = { .major = (uint16_t)major, .pid = 7, .clock_id = GP_CLOCK_MONOTONIC, .start_trace_ns = 1000, .rank = -1 };
	strcpy(h.producer, "gpuprof test");
	strcpy(h.host, "testhost");
	gp_writer *w;
	if (gp_writer_open(path, &h, 3, &w)) return -1;
	gp_record r = { .type = GP_REC_STRING };
	const char *names[] = { "cudaLaunchKernel", "volta_sgemm_128x64_nn", "step" };
	for (int i = 0; i < 3; i++) {
		r.u.string = (gp_rec_string){ (uint32_t)i + 1, (uint32_t)strlen(names[i]), names[i] };
		gp_writer_append(w, 0, &r);
	}
	r.type = GP_REC_SOURCE;
	r.u.source = (gp_rec_source){ 1, GP_SOURCE_THREAD, 7, 70, 3 };
	gp_writer_append(w, 0, &r);
	r.u.source = (gp_rec_source){ 2, GP_SOURCE_ACTIVITY, 7, 71, 0 };
	gp_writer_append(w, 0, &r);
	for (int i = 0; i < n_per_source; i++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_API;
		r.u.api = (gp_rec_api){ .start_ns = 2000 + (uint64_t)i * 1000, .end_ns = 2500 + (uint64_t)i * 1000, .correlation_id = (uint64_t)i + 1, .domain = 1, .cbid = 211, .name_id = 1 };
		gp_writer_append(w, 1, &r);
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_KERNEL;
		r.u.kernel.start_ns = 2600 + (uint64_t)i * 1000;
		r.u.kernel.end_ns = 3100 + (uint64_t)i * 1000;
		r.u.kernel.correlation_id = (uint64_t)i + 1;
		r.u.kernel.name_id = 2;
		r.u.kernel.grid[0] = 80;
		r.u.kernel.block[0] = 256;
		r.u.kernel.stream_id = 7;
		gp_writer_append(w, 2, &r);
	}
	return gp_writer_close(w);
}

static inline int tl_write_small(const char *path, int n_per_source)
{
	return tl_write_small_v(path, n_per_source, GP_FORMAT_MAJOR);
}

/* Opens and reads everything (both orders); writes the one-line verdict. */
static inline int tl_describe(const char *path, char *buf, size_t n, uint64_t *nrec)
{
	gp_reader *r;
	*nrec = 0;
	int rc = gp_reader_open(path, &r);
	if (rc) {
		snprintf(buf, n, "open failed: %s", gp_reader_errmsg(NULL));
		return rc;
	}
	const gp_record *rec;
	while ((rc = gp_reader_next(r, &rec)) == 1) (*nrec)++;
	while ((rc = gp_reader_next_ordered(r, &rec)) == 1) {}
	gp_reader_describe_integrity(r, buf, n);
	gp_reader_close(r);
	return 0;
}

static inline uint8_t *tl_slurp(const char *path, size_t *len)
{
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) return NULL;
	fseek(f, 0, SEEK_END);
	long L = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)L + 1);
	*len = fread(b, 1, (size_t)L, f);
	fclose(f);
	return b;
}

static inline void tl_spit(const char *path, const void *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	if (len && fwrite(b, 1, len, f) != len) {
		perror("fwrite");
		exit(1);
	}
	fclose(f);
}
#endif
