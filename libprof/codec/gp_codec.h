/* gp_codec.h — libprof-internal: records <-> the bytes of one chunk
 * (varints, per-chunk delta state, the thread rule; docs/FORMAT.md
 * "Records").  Hand-written per type for speed; tests/libprof/test_fields.c
 * checks it against the field table (gp_fields.h). */
#ifndef GP_CODEC_H
#define GP_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include "common/gp_record.h"

/* ---- encoder: records -> one chunk's uncompressed bytes */
struct gp_enc {
	uint8_t *buf;
	size_t len, cap;
	uint32_t source, count;
	uint32_t src_tid; /* tid of the source (thread rule), 0 unknown */
	uint64_t first_ts, last_ts;
	int has_ts;
	uint64_t prev_ts, prev_corr;
};
int gp_enc_init(struct gp_enc *e, uint32_t source, uint32_t src_tid); /* 0 or GP_ERR_NOMEM */
void gp_enc_free(struct gp_enc *e);
void gp_enc_reset(struct gp_enc *e); /* new chunk: delta state back to 0 */
/* Encodes one record (pointers in it are read: string bytes, stack frames).
 * 0, GP_ERR_INVALID (type) or GP_ERR_NOMEM. */
int gp_enc_record(struct gp_enc *e, const gp_record *r);

/* ---- decoder: one chunk's bytes -> records */
/* The fast decoder may read up to this many bytes past a record's start
 * (20 fields x 10-byte varints); records nearer the readable end are
 * decoded with bounds checks on every byte. */
#define GP_DEC_OVERREAD 256u
struct gp_dec {
	const uint8_t *p, *end;
	const uint8_t *fast_lim; /* records starting before this decode fast */
	uint32_t source, src_tid;
	uint64_t prev_ts, prev_corr;
	uint64_t frames[GP_STACK_MAX_FRAMES];
	const char *why; /* reason after a failure */
	int err;         /* sticky gp_err: decoding stopped at a malformed record */
	int pext;        /* the fast decoder gathers varint bits with PEXT (gp_dec_fast_pext()); tests set 0 */
};
/* Whether this CPU has a fast PEXT instruction (x86-64 BMI2, not AMD Zen 1/2). */
int gp_dec_fast_pext(void);
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

#endif /* GP_CODEC_H */
