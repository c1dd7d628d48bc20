/* mkbad — regenerates the golden bad inputs (tests/data/bad/NAME.gpuprof +
 * NAME.expected, the reader's verdict) and the fuzz seed corpus: NAME in
 * the current format, v1.4_NAME in 1.4.  Run via `make regen-bad-data`
 * after a deliberate format/message change, then review the .expected
 * diffs by eye.  The v1.0_ files are format 1.0 traces kept as they were
 * written (by this program in 1.0 days): not regenerated. */
#include <sys/stat.h>
#include "tl.h"

static char bad_dir[512];

static void emit(const char *name, const uint8_t *b, size_t len)
{
	char p[700], e[700], msg[1024];
	snprintf(p, sizeof(p), "%s/%s.gpuprof", bad_dir, name);
	snprintf(e, sizeof(e), "%s/%s.expected", bad_dir, name);
	tl_spit(p, b, len);
	uint64_t n;
	tl_describe(p, msg, sizeof(msg), &n);
	size_t L = strlen(msg);
	printf("%-22s %s\n", name, msg);
	msg[L] = '\n';
	tl_spit(e, msg, L + 1);
}

static void fix_header_crc(uint8_t *b)
{
	uint32_t hs;
	memcpy(&hs, b + 12, 4);
	/* crc32 is internal: recompute with the same IEEE polynomial here */
	uint32_t crc = 0xFFFFFFFFu;
	for (uint32_t i = 0; i < hs - 4; i++) {
		crc ^= b[i];
		for (int k = 0; k < 8; k++) crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
	}
	crc ^= 0xFFFFFFFFu;
	memcpy(b + hs - 4, &crc, 4);
}

/* The bad inputs made from a valid trace of format `major`, named
 * prefix + NAME, and its fuzz seeds. */
static int emit_all(const char *prefix, unsigned major, const char *corpus)
{
	char tmp[700];
	snprintf(tmp, sizeof(tmp), "%s/.valid.tmp", corpus);
	if (tl_write_small_v(tmp, 40, major)) {
		fprintf(stderr, "write failed\n");
		return 1;
	}
	size_t len;
	uint8_t *v = tl_slurp(tmp, &len);
	unlink(tmp);
	uint32_t hs;
	memcpy(&hs, v + 12, 4);
	/* chunk offsets: walk the headers */
	size_t offs[8];
	int nch = 0;
	for (size_t p = hs; p + 40 <= len && nch < 8 && !memcmp(v + p, "GPCK", 4);) {
		uint32_t cs;
		memcpy(&cs, v + p + 4, 4);
		offs[nch++] = p;
		p += 40 + cs;
	}
	uint8_t *b = malloc(len + 64);
	char name[64];
#define NAME(n) (snprintf(name, sizeof(name), "%s%s", prefix, n), name)
	memcpy(b, v, len);
	b[6] = 'X';
	emit(NAME("bad_magic"), b, len);
	memcpy(b, v, len);
	b[8] = GP_FORMAT_MAJOR + 1;
	fix_header_crc(b);
	emit(NAME("newer_major"), b, len);
	emit(NAME("truncated_header"), v, hs - 10);
	emit(NAME("truncated_chunk"), v, offs[2] + 50);
	memcpy(b, v, len);
	b[offs[1] + 40 + 20] ^= 0x55;
	emit(NAME("corrupt_chunk_middle"), b, len);
	memcpy(b, v, len);
	b[offs[1] + 8] ^= 0x01;
	emit(NAME("bad_chunk_header"), b, len);
	memcpy(b, v, len);
	memcpy(b + len, "GARBAGE AFTER THE FOOTER", 24);
	emit(NAME("garbage_after_footer"), b, len + 24);
	emit(NAME("no_footer"), v, len - 36);
	emit(NAME("valid"), v, len);
#undef NAME

	/* fuzz seeds */
	char p[700];
	snprintf(p, sizeof(p), "%s/%svalid.gpuprof", corpus, prefix);
	tl_spit(p, v, len);
	snprintf(p, sizeof(p), "%s/%struncated.gpuprof", corpus, prefix);
	tl_spit(p, v, offs[2] + 50);
	memcpy(b, v, len);
	b[offs[1] + 40 + 20] ^= 0x55;
	snprintf(p, sizeof(p), "%s/%scorrupt.gpuprof", corpus, prefix);
	tl_spit(p, b, len);
	snprintf(p, sizeof(p), "%s/%sheader_only.gpuprof", corpus, prefix);
	tl_spit(p, v, hs);
	free(b);
	free(v);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: mkbad BAD_DIR CORPUS_DIR\n");
		return 2;
	}
	snprintf(bad_dir, sizeof(bad_dir), "%s", argv[1]);
	mkdir(argv[1], 0755);
	mkdir(argv[2], 0755);
	emit("empty", (const uint8_t *)"", 0);
	static const uint8_t png[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
				       0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89 };
	emit("foreign_png", png, sizeof(png));
	/* the current format, and 1.4 (the last 1.x: readers must keep
	 * reading it) */
	return emit_all("", GP_FORMAT_MAJOR, argv[2]) || emit_all("v1.4_", 1, argv[2]);
}
