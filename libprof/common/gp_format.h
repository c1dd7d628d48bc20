/* gp_format.h — libprof-internal (not installed): the file layout's
 * constants and magics, little-endian fields, varints, CRC-32 and the chunk
 * header, plus the in-memory size of each record struct (the ring entries
 * and the metadata queue copy them).  The byte layout is specified in
 * docs/FORMAT.md. */
#ifndef GP_FORMAT_H
#define GP_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "gp_record.h"

#define GP_LIKELY(x) __builtin_expect(!!(x), 1)
#define GP_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define GP_HEADER_FIXED 48u /* bytes before the producer string */
#define GP_HEADER_MIN 56u   /* fixed + 2 empty strings + crc */
#define GP_HEADER_MAX 65536u
#define GP_CHUNK_HDR 40u
#define GP_FOOTER_SIZE 36u
#define GP_CHUNK_TARGET (256u << 10) /* encoder flushes a chunk past this */
#define GP_CHUNK_MAX_USIZE (16u << 20)
#define GP_MAX_RECORD_PAYLOAD (GP_MAX_STRING_LEN + 64u)
#define GP_INDEX_MAX_ENTRIES (1u << 20)
#define GP_HDR_FLAG_RECORDER 1u

static const uint8_t gp_magic_file[8] = { 'G', 'P', 'U', 'P', 'R', 'O', 'F', 0 };
static const uint8_t gp_magic_chunk[4] = { 'G', 'P', 'C', 'K' };
static const uint8_t gp_magic_footer[8] = { 'G', 'P', 'F', 'O', 'O', 'T', 'E', 'R' };

/* CRC-32 (IEEE 802.3, zlib's crc32). */
uint32_t gp_crc32(const void *p, size_t n);

/* ---- little-endian fixed fields */
static inline void gp_put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void gp_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void gp_put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t gp_get16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}
static inline uint32_t gp_get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static inline uint64_t gp_get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* ---- varints */
static inline uint64_t gp_zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t gp_unzz(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline uint8_t *gp_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* ---- chunk header (decoded) */
struct gp_chunk_hdr {
	uint32_t csize, usize, source, count;
	uint64_t first_ts, last_ts;
};
void gp_chunk_hdr_put(uint8_t out[GP_CHUNK_HDR], const struct gp_chunk_hdr *h);
/* 0 ok; else GP_ERR_CORRUPT with a static reason in *why. */
int gp_chunk_hdr_get(const uint8_t in[GP_CHUNK_HDR], struct gp_chunk_hdr *h, const char **why);

/* ---- gp_record_time, inlined where libprof orders by time: every timed
 * type has its primary timestamp first in its struct (checked in
 * gp_record.c), so the time is one load behind one bit test, no switch (a
 * jump per record for every caller that orders or filters by time). */
#define GP_TIMED_TYPES ((1u << GP_REC_API) | (1u << GP_REC_KERNEL) | (1u << GP_REC_MEMCPY) | (1u << GP_REC_MEMSET) | \
			(1u << GP_REC_NVTX_RANGE) | (1u << GP_REC_NVTX_MARK) | (1u << GP_REC_SYNC) | \
			(1u << GP_REC_MEMORY) | (1u << GP_REC_DROPPED) | (1u << GP_REC_CLOCK) | (1u << GP_REC_COUNTER) | \
			(1u << GP_REC_MODULE) | (1u << GP_REC_WINDOW) | (1u << GP_REC_GRAPH_NODE) | \
			(1u << GP_REC_ALLOC_FAIL))
static inline uint64_t gp_rec_time(const gp_record *r)
{
	if (r->type >= 32 || !((GP_TIMED_TYPES >> r->type) & 1)) return 0;
	uint64_t t;
	memcpy(&t, &r->u, 8);
	return t;
}

/* ---- in memory: sizeof each record type's struct (the gp_record union
 * member), 0 = invalid type */
extern const uint16_t gp_rec_struct_size[GP_REC_TYPE_MAX];

#endif /* GP_FORMAT_H */
