/* gp_format.c — CRC-32 and the chunk header (docs/FORMAT.md "Chunks"). */
#include <pthread.h>
#include <zstd.h>
#include "gp_error.h"
#include "gp_format.h"

static uint32_t crc_table[8][256];
static int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

/* CRC-32 (IEEE 802.3, same as zlib's crc32), slice-by-8. */
uint32_t gp_crc32(const void *buf, size_t n)
{
	/* Table init is idempotent and deterministic, so a benign double init
	 * from two threads only writes the same values. */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE)) pthread_once(&once, crc_init);
	const uint8_t *p = buf;
	uint32_t c = 0xFFFFFFFFu;
	while (n >= 8) {
		uint32_t a = gp_get32(p) ^ c, b = gp_get32(p + 4);
		c = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^
		    crc_table[5][(a >> 16) & 0xff] ^ crc_table[4][a >> 24] ^
		    crc_table[3][b & 0xff] ^ crc_table[2][(b >> 8) & 0xff] ^
		    crc_table[1][(b >> 16) & 0xff] ^ crc_table[0][b >> 24];
		p += 8;
		n -= 8;
	}
	while (n--) c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

void gp_chunk_hdr_put(uint8_t o[GP_CHUNK_HDR], const struct gp_chunk_hdr *h)
{
	memcpy(o, gp_magic_chunk, 4);
	gp_put32(o + 4, h->csize);
	gp_put32(o + 8, h->usize);
	gp_put32(o + 12, h->source);
	gp_put32(o + 16, h->count);
	gp_put64(o + 20, h->first_ts);
	gp_put64(o + 28, h->last_ts);
	gp_put32(o + 36, gp_crc32(o, 36));
}

int gp_chunk_hdr_get(const uint8_t in[GP_CHUNK_HDR], struct gp_chunk_hdr *h, const char **why)
{
	if (memcmp(in, gp_magic_chunk, 4)) {
		*why = "bad chunk magic";
		return GP_ERR_CORRUPT;
	}
	if (gp_crc32(in, 36) != gp_get32(in + 36)) {
		*why = "bad chunk header checksum";
		return GP_ERR_CORRUPT;
	}
	h->csize = gp_get32(in + 4);
	h->usize = gp_get32(in + 8);
	h->source = gp_get32(in + 12);
	h->count = gp_get32(in + 16);
	h->first_ts = gp_get64(in + 20);
	h->last_ts = gp_get64(in + 28);
	if (h->usize > GP_CHUNK_MAX_USIZE) {
		*why = "chunk uncompressed size over 16 MiB";
		return GP_ERR_CORRUPT;
	}
	if (h->csize > ZSTD_compressBound(GP_CHUNK_MAX_USIZE) || h->csize == 0) {
		*why = "impossible chunk compressed size";
		return GP_ERR_CORRUPT;
	}
	if ((uint64_t)h->count * 2 > h->usize) {
		*why = "chunk record count larger than its size allows";
		return GP_ERR_CORRUPT;
	}
	return 0;
}
