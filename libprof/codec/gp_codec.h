/* gp_codec.h — libprof-internal: records <-> the bytes of one chunk
 * (varints, per-chunk delta state, the thread rule; docs/FORMAT.md
 * "Records").  Hand-written per type for speed; tests/libprof/test_fields.c
 * checks it against the field table (gp_fields.h). */
#ifndef GP_CODEC_H
#define GP_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include "common/gp_format.h"
#include "common/gp_record.h"

/* Format 2.0's record templates (docs/FORMAT.md "Templates"): at most this
 * many per chunk, so an instance's template index takes 1 or 2 bytes and a
 * decoder's table stays bounded (GP_TMPL_MAX x sizeof(gp_record)). */
#define GP_TMPL_MAX 4096u
/* Types with templates: their first three fields are the start (T), end (D)
 * and a third (the correlation id C, or the NVTX range id) at the same
 * offsets of their structs. */
#define GP_TMPL_TYPES ((1u << GP_REC_API) | (1u << GP_REC_KERNEL) | (1u << GP_REC_MEMCPY) | \
		       (1u << GP_REC_MEMSET) | (1u << GP_REC_SYNC) | (1u << GP_REC_NVTX_RANGE))
/* A 2.0 chunk holds at most this many records (writers start a new chunk
 * past it, as past GP_CHUNK_TARGET bytes): a decoded chunk's records stay
 * ~1.8 MB, as 1.x chunks' did at ~21 bytes a record. */
#define GP_CHUNK_MAX_RECORDS 16384u

/* ---- encoder: records -> one chunk's uncompressed bytes */
struct gp_enc_slot; /* the encoder's template table (gp_codec.c) */
struct gp_enc {
	uint8_t *buf; /* 1.x: the records; 2.0: section A's length (4 bytes, set by gp_enc_finish), then A */
	size_t len, cap;
	uint8_t *bbuf; /* 2.0: section B */
	size_t blen, bcap;
	uint32_t source, count;
	uint32_t src_tid; /* tid of the source (thread rule), 0 unknown */
	uint64_t first_ts, last_ts;
	int has_ts;
	uint64_t prev_ts, prev_corr, prev_range;
	unsigned major;            /* the file's format major: 1 plain records only, 2 templates */
	struct gp_enc_slot *slots; /* major 2: cold bytes -> template index, this chunk */
	uint32_t ntmpl;            /* templates defined in this chunk */
};
/* 0 or GP_ERR_NOMEM.  Encodes the current format (GP_FORMAT_MAJOR);
 * gp_enc_set_major(e, 1) before the first record writes 1.x chunks. */
int gp_enc_init(struct gp_enc *e, uint32_t source, uint32_t src_tid);
void gp_enc_set_major(struct gp_enc *e, unsigned major);
void gp_enc_free(struct gp_enc *e);
void gp_enc_reset(struct gp_enc *e); /* new chunk: delta state and templates back to 0 */
/* Encodes one record (pointers in it are read: string bytes, stack frames).
 * 0, GP_ERR_INVALID (type) or GP_ERR_NOMEM. */
int gp_enc_record(struct gp_enc *e, const gp_record *r);
/* Whether the chunk is full: the writer sends it out before the next record
 * (1.x chunks by their bytes alone, as 1.x writers did). */
static inline int gp_enc_full(const struct gp_enc *e)
{
	return e->len + e->blen >= GP_CHUNK_TARGET || (e->major >= 2 && e->count >= GP_CHUNK_MAX_RECORDS);
}
/* Completes the chunk's bytes (2.0: section A's length); returns the
 * chunk's uncompressed size: buf[0, len) then, in 2.0, bbuf[0, blen). */
size_t gp_enc_finish(struct gp_enc *e);

/* ---- decoder: one chunk's bytes -> records */
struct gp_dec_tmpl; /* a template as decoded (gp_codec.c) */
/* The fast decoder may read up to this many bytes past a record's start
 * (20 fields x 10-byte varints); records nearer the readable end are
 * decoded with bounds checks on every byte. */
#define GP_DEC_OVERREAD 256u
struct gp_dec {
	const uint8_t *p, *end;    /* 2.0: in section A */
	const uint8_t *b, *bend;   /* 2.0: section B */
	const uint8_t *fast_lim;   /* records starting before this decode fast */
	const uint8_t *fast_lim_b; /* 2.0: and instances whose B part starts before this */
	uint32_t source, src_tid;
	uint64_t prev_ts, prev_corr, prev_range;
	uint64_t frames[GP_STACK_MAX_FRAMES];
	const char *why;          /* reason after a failure */
	int err;                  /* sticky gp_err: decoding stopped at a malformed record */
	int pext;                 /* the fast decoder gathers varint bits with PEXT (gp_dec_fast_pext()); tests set 0 */
	unsigned major;           /* of the file: 2 and later have templates */
	struct gp_dec_tmpl *tmpl; /* this chunk's templates (kept allocated across chunks) */
	uint32_t ntmpl, tcap;
};
/* Whether this CPU has a fast PEXT instruction (x86-64 BMI2, not AMD Zen 1/2)
 * and AVX2. */
int gp_dec_fast_pext(void);
/* A decoder starts zeroed (`struct gp_dec d = { 0 }`) and is given back with
 * gp_dec_free (its template table); in between, any number of chunks. */
void gp_dec_free(struct gp_dec *d);
/* Starts decoding one chunk of a file of format `major` (1: no templates). */
void gp_dec_start(struct gp_dec *d, const uint8_t *buf, size_t len, uint32_t source, uint32_t src_tid,
		  unsigned major);
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

#endif /* GP_CODEC_H */
