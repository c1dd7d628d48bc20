/* Damage: a small 3-chunk trace cut at every byte offset decodes a prefix,
 * never crashes and reports truncation; every byte flipped is detected
 * (open error or a reported corrupt/skipped chunk) and never crashes. */
#include "tl.h"

static gp_record full[4096];
static int nfull;

static int read_all(const char *path, int check_prefix, struct gp_integrity *in, int *open_rc)
{
	gp_reader *r;
	*open_rc = gp_reader_open(path, &r);
	if (*open_rc) return -1;
	const gp_record *rec;
	int n = 0, rc;
	while ((rc = gp_reader_next(r, &rec)) == 1) {
		if (check_prefix == 2) {
			/* damaged input: only must not crash */
		} else if (check_prefix) {
			CHECK(n < nfull && tl_rec_cmp(rec, &full[n]) == 0, "record %d is not the original's record %d", n, n);
		} else if (nfull < 4096) {
			full[nfull] = *rec;
			if (rec->type == GP_REC_STRING) full[nfull].u.string.str = strdup(rec->u.string.str);
			nfull++;
		}
		n++;
	}
	CHECK(rc == 0, "next rc %d", rc);
	int m = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) == 1) m++;
	CHECK(rc == 0, "ordered rc %d", rc);
	CHECK(m == n, "ordered %d vs file order %d records", m, n);
	char buf[1024];
	gp_reader_describe_integrity(r, buf, sizeof(buf));
	gp_reader_integrity(r, in);
	gp_reader_close(r);
	return n;
}

/* One format: the current one (major GP_FORMAT_MAJOR, its templates
 * and two sections) or 1.4. */
static void damage(const char *dir, unsigned major)
{
	char path[512], cut[512];
	snprintf(path, sizeof(path), "%s/small.gpuprof", dir);
	snprintf(cut, sizeof(cut), "%s/cut.gpuprof", dir);
	nfull = 0;
	REQUIRE(tl_write_small_v(path, 40, major) == 0, "write small trace");
	size_t len = 0;
	uint8_t *orig = tl_slurp(path, &len);
	struct gp_integrity in;
	int orc;
	int n = read_all(path, 0, &in, &orc);
	REQUIRE(n == nfull && n > 0 && in.frames_ok == 3 && in.has_footer && !in.truncated,
		"original: %d records, %llu chunks ok (expected 3: metadata + 2 sources)", n, (unsigned long long)in.frames_ok);

	/* 1. every cut */
	uint64_t hdr_end = 0;
	for (size_t c = 0; c <= len; c++) {
		tl_spit(cut, orig, c);
		int k = read_all(cut, 1, &in, &orc);
		if (k < 0) {
			CHECK(orc == GP_ERR_TRUNCATED || orc == GP_ERR_NOT_GPUPROF, "cut %zu: open error %d", c, orc);
			continue;
		}
		if (!hdr_end) hdr_end = c;
		if (c < len) CHECK(in.truncated && !in.has_footer, "cut at %zu of %zu not reported as truncated", c, len);
		else CHECK(!in.truncated && in.has_footer && k == nfull, "full file");
		CHECK(in.frames_corrupt == 0, "cut at %zu: %llu corrupt chunks", c, (unsigned long long)in.frames_corrupt);
	}
	printf("format %u: truncation: %zu-byte trace (%d records, 3 chunks) cut at every offset: header needs %llu bytes, "
	       "every cut after it decodes an exact prefix and reports truncation\n",
	       major, len, nfull, (unsigned long long)hdr_end);

	/* 2. every byte flipped */
	int open_err = 0, detected = 0, undetected = 0;
	for (size_t i = 0; i < len; i++) {
		orig[i] ^= 0xFF;
		tl_spit(cut, orig, len);
		orig[i] ^= 0xFF;
		int k = read_all(cut, 2, &in, &orc);
		if (k < 0) {
			open_err++;
			continue;
		}
		if (in.frames_corrupt || in.bytes_skipped || in.truncated) detected++;
		else {
			undetected++;
			fprintf(stderr, "flip at %zu not detected\n", i);
		}
	}
	CHECK(undetected == 0, "%d flips went unnoticed", undetected);
	printf("format %u: bit flips: all %zu bytes flipped one at a time: %d rejected at open, %d reported as "
	       "corrupt/skipped, %d unnoticed, no crash\n",
	       major, len, open_err, detected, undetected);
	free(orig);
	for (int i = 0; i < nfull; i++)
		if (full[i].type == GP_REC_STRING) free((char *)full[i].u.string.str);
}

/* The one rule the tools go on by after a read: its end and damage in the
 * file leave the intact records worth using, every other error does not. */
static void recoverable(void)
{
	static const int yes[] = { 1, 0, GP_ERR_EOF, GP_ERR_TRUNCATED, GP_ERR_CORRUPT };
	static const int no[] = { GP_ERR_IO, GP_ERR_NOMEM, GP_ERR_NOT_GPUPROF, GP_ERR_VERSION,
				  GP_ERR_INVALID, GP_ERR_FULL, GP_ERR_CLOSED, GP_ERR_TIMEOUT };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(gp_reader_recoverable(yes[i]) == 1, "status %d (%s) not recoverable", yes[i], gp_strerror(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(gp_reader_recoverable(no[i]) == 0, "status %d (%s) recoverable", no[i], gp_strerror(no[i]));
}

int main(void)
{
	recoverable();
	char *dir = tl_tmpdir();
	damage(dir, GP_FORMAT_MAJOR);
	damage(dir, 1);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {}
	if (tl_failures) {
		fprintf(stderr, "%d checks failed\n", tl_failures);
		return 1;
	}
	return 0;
}
