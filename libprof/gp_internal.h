/* gp_internal.h — pieces shared inside libprof (not installed): varints,
 * CRC, the chunk encoder/decoder and the chunk output (compress + write +
 * index).  The byte layout is specified in docs/FORMAT.md. */
#ifndef GP_INTERNAL_H
#define GP_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "gp_trace.h"

#define GP_LIKELY(x) __builtin_expect(!!(x), 1)
#define GP_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define GP_HEADER_FIXED 48u          /* bytes before the producer string */
#define GP_HEADER_MIN 56u            /* fixed + 2 empty strings + crc */
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

uint32_t gp_crc32(const void *p, size_t n);

/* ---- little-endian fixed fields */
static inline void gp_put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void gp_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void gp_put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t gp_get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t gp_get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t gp_get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* ---- varints */
static inline uint64_t gp_zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t gp_unzz(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline uint8_t *gp_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
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

/* ---- encoder: records -> one chunk's uncompressed bytes */
struct gp_enc {
	uint8_t *buf;
	size_t len, cap;
	uint32_t source, count;
	uint32_t src_tid;          /* tid of the source (thread rule), 0 unknown */
	uint64_t first_ts, last_ts;
	int has_ts;
	uint64_t prev_ts, prev_corr;
};
int gp_enc_init(struct gp_enc *e, uint32_t source, uint32_t src_tid);
void gp_enc_free(struct gp_enc *e);
void gp_enc_reset(struct gp_enc *e);   /* new chunk: delta state back to 0 */
/* Encodes one record (pointers in it are read: string bytes, stack frames). */
int gp_enc_record(struct gp_enc *e, const gp_record *r);

/* ---- decoder: one chunk's bytes -> records */
/* The fast decoder may read up to this many bytes past a record's start
 * (20 fields x 10-byte varints); records nearer the readable end are
 * decoded with bounds checks on every byte. */
#define GP_DEC_OVERREAD 256u
struct gp_dec {
	const uint8_t *p, *end;
	const uint8_t *fast_lim;   /* records starting before this decode fast */
	uint32_t source, src_tid;
	uint64_t prev_ts, prev_corr;
	uint64_t frames[GP_STACK_MAX_FRAMES];
	const char *why;           /* reason after a failure */
	int err;                   /* sticky: decoding stopped at a malformed record */
};
void gp_dec_start(struct gp_dec *d, const uint8_t *buf, size_t len, uint32_t source, uint32_t src_tid);
/* After gp_dec_start: the buffer is readable `slack` bytes past its end
 * (contents irrelevant), so every record may take the fast path. */
void gp_dec_set_slack(struct gp_dec *d, size_t slack);
/* 1 record decoded, 0 end of chunk, GP_ERR_CORRUPT on a malformed record.
 * Unknown types are skipped.  String records point into the chunk (not
 * NUL-terminated: use r->u.string.len). */
int gp_dec_next(struct gp_dec *d, gp_record *r);
/* Decodes up to max records into out[] (stops after a STACK record: its
 * frames live in the decoder).  Returns how many; fewer than max and
 * d->err != 0: the next record is malformed (d->why), else the chunk
 * ended.  *meta: nonzero if a STRING or SOURCE record is among them. */
int gp_dec_batch(struct gp_dec *d, gp_record *out, int max, int *meta);

/* ---- output file: header, chunks, index, footer */
struct gp_idx_ent { uint64_t off, first_ts, last_ts; uint32_t source, count; };
struct gp_out {
	int fd;
	int sigpipe_guard;         /* fd is a pipe/socket: keep SIGPIPE from killing us */
	uint64_t off;              /* bytes successfully written */
	void *cctx;                /* ZSTD_CCtx */
	int level;
	uint8_t *cbuf;
	size_t ccap;
	struct gp_idx_ent *idx;
	size_t nidx, idx_cap;
	int idx_capped;
	uint64_t chunks, records;
	uint64_t lost_records;     /* records in chunks that could not be written */
	uint64_t write_errors;
	int last_errno;
};
int gp_out_init(struct gp_out *o, int fd, int level);
void gp_out_free(struct gp_out *o);  /* does not close fd */
int gp_out_header(struct gp_out *o, const gp_header *h, uint32_t flags);
/* Compresses and writes e's chunk (if it has records), then resets e. */
int gp_out_chunk(struct gp_out *o, struct gp_enc *e);
/* Writes one chunk already compressed (header + payload, as read from a
 * trace: the flight recorder's spool) and indexes it. */
int gp_out_raw_chunk(struct gp_out *o, const uint8_t *chunk, size_t len);
int gp_out_finish(struct gp_out *o);  /* index chunk + footer */
/* Writes all n bytes (EINTR retried); returns bytes written, *err = errno if short. */
size_t gp_write_all(int fd, const void *buf, size_t n, int sigpipe_guard, int *err);

/* Mode of a new trace file at path: want (default 0640), 0600 in a
 * directory others can write to (/tmp: a 0640 file there is readable through
 * its group).  gp_recorder.c; the flight recorder's captures too. */
uint32_t gp_pick_mode(const char *path, uint32_t want);

/* per-type raw struct sizes (the union member), 0 = invalid type */
extern const uint16_t gp_rec_struct_size[GP_REC_TYPE_MAX];

#endif
