/* The record field table (common/gp_fields.h) against the structs and the
 * hand-written codec:
 *  - every type has fields, in member order (offsets increase: the compile-
 *    time checks in gp_fields.c cover count, types and sizes), unique names,
 *    known kinds, an END right after its start, DEF only on id kinds, inside
 *    the struct;
 *  - type names round-trip through gp_rec_type_from_name;
 *  - the codec round-trips every field: each element of each number field
 *    set alone to small, large and random values, and all fields random at
 *    once, encoded and decoded (careful and fast decoder; format 1.x, and
 *    2.0 where the record comes twice: a template and, for the template
 *    types, an instance of it) come back equal
 *    field by field (tl_rec_cmp walks the same table), in a chunk of a
 *    source with and without a tid (SRC_TID fields: 0 = the source's
 *    thread).  A field the codec forgot, or decodes into the wrong member,
 *    fails here;
 *  - gp_rec_fields_other leaves out exactly the names given. */
#include "tl.h"
#include "codec/gp_codec.h"
#include "common/gp_format.h"

static void test_structure(void)
{
	for (uint32_t t = 1; t < GP_REC_TYPE_MAX; t++) {
		unsigned n;
		const struct gp_field *f = gp_rec_fields(t, &n);
		const char *tn = gp_rec_type_name(t);
		CHECK(f && n > 0, "type %u has fields", t);
		CHECK(gp_rec_type_from_name(tn) == (int)t, "type name %s round-trips", tn);
		for (unsigned i = 0; f && i < n; i++) {
			CHECK(f[i].kind < GP_FK_COUNT, "%s.%s: kind %u", tn, f[i].name, f[i].kind);
			CHECK(f[i].count >= 1 && (f[i].size == 1 || f[i].size == 4 || f[i].size == 8), "%s.%s: size %u x %u", tn,
			      f[i].name, f[i].size, f[i].count);
			CHECK(f[i].offset + (unsigned)f[i].size * f[i].count <= gp_rec_struct_size[t], "%s.%s inside the struct", tn,
			      f[i].name);
			if (i) CHECK(f[i].offset >= f[i - 1].offset + (unsigned)f[i - 1].size * f[i - 1].count,
				     "%s.%s after %s: member order", tn, f[i].name, f[i - 1].name);
			for (unsigned j = 0; j < i; j++) CHECK(strcmp(f[i].name, f[j].name), "%s.%s twice", tn, f[i].name);
			if (f[i].kind == GP_FK_END) CHECK(i && f[i - 1].kind == GP_FK_TIME, "%s.%s: END after a TIME", tn, f[i].name);
			if (f[i].flags & GP_FIELD_SRC_TID) CHECK(f[i].kind == GP_FK_TID, "%s.%s: SRC_TID on a tid", tn, f[i].name);
			if (f[i].flags & GP_FIELD_DEF)
				CHECK(f[i].kind == GP_FK_STRING || f[i].kind == GP_FK_STACK || f[i].kind == GP_FK_SOURCE,
				      "%s.%s: DEF on an id", tn, f[i].name);
			CHECK(gp_rec_field(t, f[i].name) == &f[i], "lookup %s.%s", tn, f[i].name);
			CHECK(strcmp(gp_field_kind_name(f[i].kind), "unknown"), "kind name");
		}
	}
	CHECK(gp_rec_fields(0, NULL) == NULL && gp_rec_fields(GP_REC_TYPE_MAX, NULL) == NULL, "no table for bad types");
	CHECK(gp_rec_type_from_name("nosuch") == GP_ERR_INVALID && gp_rec_type_from_name(NULL) == GP_ERR_INVALID,
	      "unknown type name");
	CHECK(gp_rec_field(GP_REC_API, "nosuch") == NULL, "unknown field");
	const struct gp_field *f = gp_rec_field(GP_REC_PROCESS, "rank");
	CHECK(f && (f->flags & GP_FIELD_SIGNED), "int32 rank is signed");
	gp_record r = { .type = GP_REC_PROCESS };
	r.u.process.rank = -5;
	CHECK(f && (int64_t)gp_field_get(&r, f, 0) == -5, "signed get sign-extends");
	/* other = the table minus the names given */
	const char *names[] = { "start_ns", "nosuch", "status" };
	const struct gp_field *out[64];
	unsigned n, k = gp_rec_fields_other(GP_REC_API, names, 3, out);
	gp_rec_fields(GP_REC_API, &n);
	CHECK(k == n - 2, "other: %u of %u", k, n);
	for (unsigned i = 0; i < k; i++) CHECK(strcmp(out[i]->name, "start_ns") && strcmp(out[i]->name, "status"), "left out");
	CHECK(k && !strcmp(out[0]->name, "end_ns"), "table order");
}

static char text[4096];
static uint64_t frames[GP_STACK_MAX_FRAMES];

/* A record of type t with every field 0 and its pointers valid. */
static void blank(gp_record *r, uint32_t t)
{
	memset(r, 0, sizeof(*r));
	r->type = t;
	if (t == GP_REC_STRING) r->u.string.str = text;
	if (t == GP_REC_STACK) r->u.stack.frames = frames;
}

/* Encodes r in a chunk (source tid src_tid) and decodes it, careful and
 * fast; 0 when both give r back field for field (a SRC_TID field that is 0
 * comes back as the source's tid).  In each format: 1.x, where r is alone,
 * and 2.0, where r comes twice (of a template type: the template, then an
 * instance of it). */
static int roundtrip(const gp_record *r, uint32_t src_tid, const char *what)
{
	gp_record want = *r;
	unsigned nf;
	const struct gp_field *f = gp_rec_fields(r->type, &nf);
	for (unsigned i = 0; i < nf; i++)
		if ((f[i].flags & GP_FIELD_SRC_TID) && !gp_field_get(r, &f[i], 0)) gp_field_set(&want, &f[i], 0, src_tid);
	int bad = 0;
	for (unsigned major = 1; major <= GP_FORMAT_MAJOR; major++) {
		struct gp_enc e;
		REQUIRE(gp_enc_init(&e, 1, src_tid) == 0, "enc init");
		gp_enc_set_major(&e, major);
		int copies = major >= 2 ? 2 : 1, rc = 0;
		for (int k = 0; k < copies && !rc; k++) rc = gp_enc_record(&e, r);
		if (rc) {
			CHECK(0, "%s: encode: %s", what, gp_strerror(rc));
			gp_enc_free(&e);
			return 1;
		}
		static uint8_t buf[1 << 21];
		size_t len = gp_enc_finish(&e);
		REQUIRE(len + GP_DEC_OVERREAD <= sizeof(buf), "buffer");
		memcpy(buf, e.buf, e.len);
		if (e.blen) memcpy(buf + e.len, e.bbuf, e.blen);
		memset(buf + len, 0, GP_DEC_OVERREAD);
		for (int fast = 0; fast < 2; fast++) {
			struct gp_dec d = { 0 };
			gp_record out;
			gp_dec_start(&d, buf, len, 1, src_tid, major);
			if (fast) gp_dec_set_slack(&d, GP_DEC_OVERREAD);
			for (int k = 0; k < copies; k++) {
				rc = gp_dec_next(&d, &out);
				if (rc != 1) {
					CHECK(0, "%s: format %u, copy %d: decode (%s): %d", what, major, k, fast ? "fast" : "careful", rc);
					bad = 1;
					break;
				}
				if (tl_rec_cmp(&want, &out)) {
					CHECK(0, "%s: format %u, copy %d: %s decoder gives another record", what, major, k,
					      fast ? "fast" : "careful");
					bad = 1;
				}
			}
			CHECK(rc != 1 || gp_dec_next(&d, &out) == 0, "%s: format %u: %d records", what, major, copies);
			gp_dec_free(&d);
		}
		gp_enc_free(&e);
	}
	return bad;
}

static uint64_t value_for(const struct gp_field *f, int which, uint64_t *s)
{
	uint64_t max = f->size == 8 ? UINT64_MAX : (1ull << (8 * f->size)) - 1;
	switch (which) {
	case 0: return 1;
	case 1: return max;
	case 2: return max / 3;
	default: return tl_rand(s) & max;
	}
}

static void test_each_field(void)
{
	uint64_t s = 4242;
	for (uint32_t t = 1; t < GP_REC_TYPE_MAX; t++) {
		unsigned n;
		const struct gp_field *f = gp_rec_fields(t, &n);
		for (unsigned i = 0; i < n; i++) {
			/* string bytes and stack frames (and their lengths): below */
			if (f[i].kind == GP_FK_TEXT || f[i].kind == GP_FK_FRAMES) continue;
			if ((t == GP_REC_STRING && !strcmp(f[i].name, "len")) || (t == GP_REC_STACK && !strcmp(f[i].name, "nframes")))
				continue;
			for (unsigned k = 0; k < f[i].count; k++)
				for (int which = 0; which < 6; which++) {
					gp_record r;
					blank(&r, t);
					gp_field_set(&r, &f[i], k, value_for(&f[i], which, &s));
					char what[128];
					snprintf(what, sizeof(what), "%s.%s[%u] value %d", gp_rec_type_name(t), f[i].name, k, which);
					roundtrip(&r, 0, what);
					/* a source whose tid is set: the thread rule (tid 0 <-> the
					 * source's) must not change any field */
					roundtrip(&r, 4242, what);
				}
		}
	}
	/* the variable-length parts */
	uint64_t st = 9;
	for (uint32_t len = 0; len < sizeof(text); len = len * 3 + 1) {
		for (uint32_t i = 0; i < len; i++) text[i] = (char)tl_rand(&st);
		gp_record r;
		blank(&r, GP_REC_STRING);
		r.u.string.id = 77;
		r.u.string.len = len;
		roundtrip(&r, 0, "string bytes");
	}
	for (uint32_t nf = 0; nf <= GP_STACK_MAX_FRAMES; nf += 17) {
		for (uint32_t i = 0; i < nf; i++) frames[i] = tl_rand(&st);
		gp_record r;
		blank(&r, GP_REC_STACK);
		r.u.stack.stack_id = 5;
		r.u.stack.nframes = nf;
		roundtrip(&r, 0, "stack frames");
	}
}

/* every number field random at once */
static void test_all_fields(void)
{
	uint64_t s = 77;
	for (int rep = 0; rep < 200; rep++)
		for (uint32_t t = 1; t < GP_REC_TYPE_MAX; t++) {
			unsigned n;
			const struct gp_field *f = gp_rec_fields(t, &n);
			gp_record r;
			blank(&r, t);
			for (unsigned i = 0; i < n; i++) {
				if (f[i].kind == GP_FK_TEXT || f[i].kind == GP_FK_FRAMES) continue;
				for (unsigned k = 0; k < f[i].count; k++) gp_field_set(&r, &f[i], k, value_for(&f[i], 3, &s));
			}
			if (t == GP_REC_STRING) r.u.string.len %= sizeof(text);
			if (t == GP_REC_STACK) r.u.stack.nframes %= GP_STACK_MAX_FRAMES + 1;
			char what[64];
			snprintf(what, sizeof(what), "%s, all fields random", gp_rec_type_name(t));
			roundtrip(&r, (uint32_t)(rep % 3 ? tl_rand(&s) : 0), what);
		}
}

int main(void)
{
	test_structure();
	test_each_field();
	test_all_fields();
	if (tl_failures) {
		fprintf(stderr, "%d check(s) failed\n", tl_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
