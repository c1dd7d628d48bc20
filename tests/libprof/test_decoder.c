/* test_decoder — the fast record decoder (unchecked varint reads, used when
 * the buffer has read-ahead slack; with and without PEXT) must agree with the careful one (every
 * byte bounds-checked) on every input: valid records of every type with
 * small, random and extreme field values, and damaged ones (record lengths
 * cut short, bytes flipped, varints that never end).  Agreement means the
 * same records, the same fields, the same error at the same byte. */
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

static void decode_all(const uint8_t *buf, size_t len, int fast, int batch, struct run *out)
{
	struct gp_dec d;
	gp_dec_start(&d, buf, len, 3, 4242);
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

int main(void)
{
	struct gp_enc e;
	REQUIRE(gp_enc_init(&e, 3, 4242) == 0, "enc init");
	uint64_t frames[GP_STACK_MAX_FRAMES];
	uint8_t *buf = malloc((64u << 10) + SLACK);
	REQUIRE(buf, "oom");
	int fails = 0;
	long records = 0, damaged = 0;
	for (uint64_t seed = 1; seed <= 3000; seed++) {
		uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
		gp_enc_reset(&e);
		int n = 1 + (int)(tl_rand(&s) % 60);
		for (int i = 0; i < n; i++) {
			gp_record r;
			uint32_t t = 1 + (uint32_t)(tl_rand(&s) % (GP_REC_TYPE_MAX - 1));
			int v = (int)(tl_rand(&s) % 4);
			if (v < 3) tl_make(&r, t, v, 4242, frames, "hello");
			else fill_random(&r, t, &s, frames);
			REQUIRE(gp_enc_record(&e, &r) == 0, "encode type %u", t);
		}
		records += n;
		size_t len = e.len;
		REQUIRE(len <= (64u << 10), "chunk too big");
		for (int pass = 0; pass < 4; pass++) {
			memcpy(buf, e.buf, len);
			memset(buf + len, pass & 1 ? 0xFF : 0x00, SLACK); /* slack contents must not matter */
			if (pass >= 2) {                                  /* damage: flip bytes / cut record lengths / endless varints */
				int k = 1 + (int)(tl_rand(&s) % 4);
				for (int j = 0; j < k; j++) {
					size_t at = (size_t)(tl_rand(&s) % len);
					switch (tl_rand(&s) % 3) {
					case 0: buf[at] ^= (uint8_t)(1u << (tl_rand(&s) % 8)); break;
					case 1:
						if (buf[at] && buf[at] < 0x80) buf[at]--;
						break; /* often a record length */
					default:
						for (size_t z = at; z < len && z < at + 12; z++) buf[z] |= 0x80;
						break;
					}
				}
				damaged++;
			}
			decode_all(buf, len, 0, 0, &A);
			decode_all(buf, len, 1, 0, &B);
			decode_all(buf, len, 1, 1, &C);
			if (same(pass >= 2 ? "damaged" : "valid", seed)) fails++;
			/* again with the portable bit gathering (the above used PEXT
			 * where this CPU has a fast one) */
			decode_all(buf, len, 2, 0, &B);
			decode_all(buf, len, 2, 1, &C);
			if (same(pass >= 2 ? "damaged, no PEXT" : "valid, no PEXT", seed)) fails++;
			if (pass < 2) CHECK(A.rc == 0 && A.n == n, "valid chunk: %d of %d records, rc %d", A.n, n, A.rc);
		}
		if (fails > 5) break;
	}
	CHECK(fails == 0, "%d chunks decoded differently by the fast and careful decoders", fails);
	gp_enc_free(&e);
	free(buf);
	printf("%ld records, %ld damaged chunks compared\n", records, damaged);
	return tl_failures ? 1 : 0;
}
