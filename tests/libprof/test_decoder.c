/* test_decoder — the fast record decoder (unchecked varint reads, used when
 * the buffer has read-ahead slack; with and without PEXT) must agree with the careful one (every
 * byte bounds-checked) on every input: valid records of every type with
 * small, random and extreme field values, and damaged ones (record lengths
 * cut short, bytes flipped, varints that never end).  Agreement means the
 * same records, the same fields, the same error at the same byte.  Both
 * formats: 1.x chunks, and 2.0 chunks (templates and their instances, the
 * two sections; damage also to section B, to an instance's template index
 * and to the sections' length). */
#include "tl.h"
#include "codec/gp_codec.h"
#include "common/gp_format.h"

#define SLACK GP_DEC_OVERREAD

/* Decodes buf[0,len) to the end; writes a transcript: for each record its
 * type and fields (via tl_rec_cmp against the other run), then the end
 * status.  fast=0 forces the careful path for every record. */
struct run {
	gp_record recs[4096];
	uint64_t frames[64][GP_STACK_MAX_FRAMES];
	int n, rc;
	size_t stop;
	const char *why;
};

static unsigned major; /* of the chunks under test */

static void decode_all(const uint8_t *buf, size_t len, int fast, int batch, struct run *out)
{
	struct gp_dec d = { 0 };
	gp_dec_start(&d, buf, len, 3, 4242, major);
	if (fast) gp_dec_set_slack(&d, SLACK);
	else d.fast_lim = buf;     /* no record qualifies for the fast path */
	if (fast == 2) d.pext = 0; /* the fast decoder's portable bit gathering */
	out->n = 0;
	out->rc = 0;
	out->why = NULL;
	int nstack = 0;
	for (;;) {
		int rc;
		if (batch) {
			gp_record tmp[7];
			int meta;
			int k = gp_dec_batch(&d, tmp, 7, &meta);
			for (int i = 0; i < k && out->n < 4096; i++) {
				out->recs[out->n] = tmp[i];
				if (tmp[i].type == GP_REC_STACK && nstack < 64) {
					memcpy(out->frames[nstack], tmp[i].u.stack.frames, tmp[i].u.stack.nframes * 8u);
					out->recs[out->n].u.stack.frames = out->frames[nstack++];
				}
				out->n++;
			}
			if (k) continue;
			rc = d.err;
		} else {
			gp_record r;
			rc = gp_dec_next(&d, &r);
			if (rc == 1 && out->n < 4096) {
				out->recs[out->n] = r;
				if (r.type == GP_REC_STACK && nstack < 64) {
					memcpy(out->frames[nstack], r.u.stack.frames, r.u.stack.nframes * 8u);
					out->recs[out->n].u.stack.frames = out->frames[nstack++];
				}
				out->n++;
			}
			if (rc == 1) continue;
		}
		out->rc = rc;
		out->stop = (size_t)(d.p - buf);
		out->why = d.why;
		gp_dec_free(&d);
		return;
	}
}

static struct run A, B, C;

static int same(const char *what, uint64_t seed)
{
	int bad = 0;
	if (A.n != B.n || A.rc != B.rc || A.stop != B.stop || (A.why == NULL) != (B.why == NULL) ||
	    (A.why && strcmp(A.why, B.why))) {
		fprintf(stderr, "  %s seed %llu: careful n=%d rc=%d stop=%zu why=%s / fast n=%d rc=%d stop=%zu why=%s\n",
			what, (unsigned long long)seed, A.n, A.rc, A.stop, A.why ? A.why : "-",
			B.n, B.rc, B.stop, B.why ? B.why : "-");
		bad = 1;
	}
	for (int i = 0; !bad && i < A.n; i++)
		if (tl_rec_cmp(&A.recs[i], &B.recs[i]) || A.recs[i].source_id != B.recs[i].source_id) {
			fprintf(stderr, "  %s seed %llu: record %d differs\n", what, (unsigned long long)seed, i);
			bad = 1;
		}
	if (!bad && (C.n != A.n || C.rc != A.rc || C.stop != A.stop)) {
		fprintf(stderr, "  %s seed %llu: batch decode differs (n %d vs %d)\n", what, (unsigned long long)seed, C.n, A.n);
		bad = 1;
	}
	for (int i = 0; !bad && i < A.n; i++)
		if (tl_rec_cmp(&A.recs[i], &C.recs[i])) {
			fprintf(stderr, "  batch record %d differs\n", i);
			bad = 1;
		}
	return bad;
}

/* random value of a random byte length: varints of 1..10 bytes */
static uint64_t rval(uint64_t *s)
{
	uint64_t x = tl_rand(s);
	unsigned bits = (unsigned)(tl_rand(s) % 65);
	return bits == 64 ? x : x & ((1ull << bits) - 1);
}

static void fill_random(gp_record *r, uint32_t t, uint64_t *s, uint64_t *frames)
{
	memset(r, 0, sizeof(*r));
	r->type = t;
	uint64_t *w = (uint64_t *)&r->u;
	for (size_t i = 0; i < sizeof(r->u) / 8; i++) w[i] = rval(s) | (rval(s) << 32);
	if (t == GP_REC_STRING) {
		r->u.string.str = "abcdefghijklmnopqrstuvwxyz";
		r->u.string.len = (uint32_t)(tl_rand(s) % 27);
	}
	if (t == GP_REC_STACK) {
		r->u.stack.nframes = (uint32_t)(tl_rand(s) % 20);
		for (uint32_t i = 0; i < r->u.stack.nframes; i++) frames[i] = rval(s);
		r->u.stack.frames = frames;
	}
	if (t == GP_REC_COUNTER) r->u.counter.kind = (uint32_t)(tl_rand(s) % 3);
	/* tids near the source tid exercise the thread rule */
	if (t == GP_REC_API && (tl_rand(s) & 1)) r->u.api.tid = 4242;
	if (t == GP_REC_NVTX_RANGE && (tl_rand(s) & 1)) r->u.nvtx_range.tid = r->u.nvtx_range.end_tid = 4242;
	if (t == GP_REC_NVTX_MARK && (tl_rand(s) & 1)) r->u.nvtx_mark.tid = 4242;
}

/* A template type's start, end and third field (where the API record has
 * them) set to values whose deltas take every width. */
static void vary_hot(gp_record *r, uint64_t *s)
{
	uint32_t t = r->type;
	if (t != GP_REC_API && t != GP_REC_KERNEL && t != GP_REC_MEMCPY && t != GP_REC_MEMSET && t != GP_REC_SYNC &&
	    t != GP_REC_NVTX_RANGE)
		return;
	static uint64_t base = 1u << 30;
	base += tl_rand(s) % 5000;
	r->u.api.start_ns = tl_rand(s) % 8 ? base : rval(s);
	r->u.api.end_ns = r->u.api.start_ns + (tl_rand(s) % 8 ? tl_rand(s) % 100000 : rval(s));
	r->u.api.correlation_id = tl_rand(s) % 8 ? base / 100 : rval(s);
}

static gp_record in[64];
static uint64_t in_frames[64][GP_STACK_MAX_FRAMES];

/* One chunk of n random records in format `major`, damaged or not (pass),
 * decoded by each decoder; returns 1 when they disagree or when, undamaged,
 * the careful one does not give back the records encoded. */
static int one(struct gp_enc *e, uint8_t *buf, uint64_t seed, uint64_t *s, int pass, long *records, long *damaged)
{
	gp_enc_reset(e);
	int n = 1 + (int)(tl_rand(s) % 60), fails = 0;
	for (int i = 0; i < n; i++) {
		gp_record *r = &in[i];
		uint32_t t = 1 + (uint32_t)(tl_rand(s) % (GP_REC_TYPE_MAX - 1));
		int v = (int)(tl_rand(s) % 4);
		if (v < 3) tl_make(r, t, v, 4242, in_frames[i], "hello");
		else fill_random(r, t, s, in_frames[i]);
		if (major >= 2 && v < 3 && (tl_rand(s) & 1)) vary_hot(r, s); /* an instance of the same template */
		REQUIRE(gp_enc_record(e, r) == 0, "encode type %u", t);
	}
	*records += n;
	size_t len = gp_enc_finish(e);
	REQUIRE(len <= (64u << 10), "chunk too big");
	memcpy(buf, e->buf, e->len);
	if (e->blen) memcpy(buf + e->len, e->bbuf, e->blen);
	memset(buf + len, pass & 1 ? 0xFF : 0x00, SLACK); /* slack contents must not matter */
	if (pass >= 2) {                                  /* damage: flip bytes / cut record lengths / endless varints */
		int k = 1 + (int)(tl_rand(s) % 4);
		for (int j = 0; j < k; j++) {
			size_t at = (size_t)(tl_rand(s) % len);
			switch (tl_rand(s) % 4) {
			case 0: buf[at] ^= (uint8_t)(1u << (tl_rand(s) % 8)); break;
			case 1:
				if (buf[at] && buf[at] < 0x80) buf[at]--;
				break; /* often a record length */
			case 2:
				for (size_t z = at; z < len && z < at + 12; z++) buf[z] |= 0x80;
				break;
			default: /* 2.0: a template index or section A's length */
				if (major >= 2 && len > 4) buf[tl_rand(s) & 1 ? 1 + tl_rand(s) % 3 : 4 + tl_rand(s) % (len - 4)] += 1;
				break;
			}
		}
		(*damaged)++;
	}
	for (int px = 1; px >= 0; px--) {
		/* with the bit gathering this CPU does best (PEXT where it is
		 * fast), then with the portable one */
		decode_all(buf, len, 0, 0, &A);
		decode_all(buf, len, px ? 1 : 2, 0, &B);
		decode_all(buf, len, px ? 1 : 2, 1, &C);
		char what[64];
		snprintf(what, sizeof(what), "format %u, %s%s", major, pass >= 2 ? "damaged" : "valid", px ? "" : ", no PEXT");
		if (same(what, seed)) fails = 1;
	}
	if (pass < 2) {
		CHECK(A.rc == 0 && A.n == n, "valid chunk: %d of %d records, rc %d", A.n, n, A.rc);
		for (int i = 0; i < n && i < A.n; i++) {
			/* what reading gives: a tid field stored 0 is the source's */
			gp_record x = in[i];
			unsigned nf;
			const struct gp_field *f = gp_rec_fields(x.type, &nf);
			for (unsigned k = 0; k < nf; k++)
				if ((f[k].flags & GP_FIELD_SRC_TID) && !gp_field_get(&x, &f[k], 0)) gp_field_set(&x, &f[k], 0, 4242);
			if (tl_rec_cmp(&A.recs[i], &x)) {
				fprintf(stderr, "  format %u seed %llu: record %d (%s) is not the one encoded\n", major,
					(unsigned long long)seed, i, gp_rec_type_name(x.type));
				fails = 1;
			}
		}
	}
	return fails;
}

/* A chunk with more distinct API records than GP_TMPL_MAX, then each of
 * them again: those within the limit come back as instances, the others as
 * records again (the encoder and the decoder count templates the same way). */
static void many_templates(void)
{
	struct gp_enc e;
	REQUIRE(gp_enc_init(&e, 3, 4242) == 0, "enc init");
	enum {
		N = GP_TMPL_MAX + 300
	};
	static gp_record want[2 * N];
	int n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < N; i++) {
			gp_record *r = &want[n++];
			memset(r, 0, sizeof(*r));
			r->type = GP_REC_API;
			r->u.api = (gp_rec_api){ .start_ns = 1000u * (uint32_t)n, .end_ns = 1000u * (uint32_t)n + 7 + pass, .correlation_id = (uint64_t)n, .cbid = i, .tid = 4242 };
			REQUIRE(gp_enc_record(&e, r) == 0, "encode");
		}
	size_t len = gp_enc_finish(&e);
	static uint8_t buf[1 << 20];
	REQUIRE(len + SLACK <= sizeof(buf), "chunk too big");
	memcpy(buf, e.buf, e.len);
	memcpy(buf + e.len, e.bbuf, e.blen);
	memset(buf + len, 0, SLACK);
	size_t alen = e.len;
	gp_enc_free(&e);
	for (int fast = 0; fast < 2; fast++) {
		struct gp_dec d = { 0 };
		gp_dec_start(&d, buf, len, 3, 4242, GP_FORMAT_MAJOR);
		if (fast) gp_dec_set_slack(&d, SLACK);
		gp_record r;
		int k = 0, bad = 0;
		while (gp_dec_next(&d, &r) == 1 && k < 2 * N) bad += tl_rec_cmp(&r, &want[k++]) != 0;
		CHECK(k == 2 * N && !bad && !d.err, "%s: %d of %d records, %d differ", fast ? "fast" : "careful", k, 2 * N, bad);
		CHECK(d.ntmpl == GP_TMPL_MAX, "%u templates", d.ntmpl);
		gp_dec_free(&d);
	}
	/* section A: N records, then GP_TMPL_MAX instances of 2 bytes and 300
	 * records again; so its length tells the two apart */
	CHECK(alen < 4 + (size_t)N * 40 + 3 * GP_TMPL_MAX + 300 * 40, "instances written (section A %zu bytes)", alen);
	printf("format %u: %d API records of %d kinds in one chunk: %u templates, the rest records\n", GP_FORMAT_MAJOR,
	       2 * N, N, GP_TMPL_MAX);
}

int main(void)
{
	many_templates();
	uint8_t *buf = malloc((64u << 10) + SLACK);
	REQUIRE(buf, "oom");
	int fails = 0;
	for (major = GP_FORMAT_MAJOR; major >= 1; major--) {
		struct gp_enc e;
		REQUIRE(gp_enc_init(&e, 3, 4242) == 0, "enc init");
		gp_enc_set_major(&e, major);
		long records = 0, damaged = 0;
		for (uint64_t seed = 1; seed <= 3000 && fails <= 5; seed++) {
			uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
			for (int pass = 0; pass < 4; pass++) {
				uint64_t s1 = s + (uint64_t)pass * 77; /* each pass its own chunk */
				fails += one(&e, buf, seed, &s1, pass, &records, &damaged);
			}
		}
		gp_enc_free(&e);
		printf("format %u: %ld records, %ld damaged chunks compared\n", major, records, damaged);
	}
	CHECK(fails == 0, "%d chunks decoded differently by the fast and careful decoders", fails);
	free(buf);
	return tl_failures ? 1 : 0;
}
