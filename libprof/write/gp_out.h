/* gp_out.h — libprof-internal: the output side of a trace file (header,
 * compressed chunks, index chunk, footer) with write-error accounting:
 * a failed write costs records (counted), never the process. */
#ifndef GP_OUT_H
#define GP_OUT_H

#include <stddef.h>
#include <stdint.h>
#include "codec/gp_codec.h"
#include "common/gp_record.h"

struct gp_idx_ent {
	uint64_t off, first_ts, last_ts;
	uint32_t source, count;
};
struct gp_out {
	int fd;
	int sigpipe_guard; /* fd is a pipe/socket: keep SIGPIPE from killing us */
	uint64_t off;      /* bytes successfully written */
	void *cctx;        /* ZSTD_CCtx */
	void *cctx_b;      /* ZSTD_CCtx of format 2.0's section B */
	int level;
	uint8_t *cbuf;
	size_t ccap;
	struct gp_idx_ent *idx;
	size_t nidx, idx_cap;
	int idx_capped;
	uint64_t chunks, records;
	uint64_t lost_records; /* records in chunks that could not be written */
	uint64_t write_errors;
	int last_errno;
};
/* All return 0 or a gp_err. */
int gp_out_init(struct gp_out *o, int fd, int level);
void gp_out_free(struct gp_out *o); /* does not close fd */
int gp_out_header(struct gp_out *o, const gp_header *h, uint32_t flags);
/* Writes the header again at offset 0 with other flags (same size: the
 * offline writer learns at close whether GP_HDR_FLAG_META_APART holds);
 * GP_ERR_IO where the output cannot seek (a pipe). */
int gp_out_header_rewrite(struct gp_out *o, const gp_header *h, uint32_t flags);
/* Compresses and writes e's chunk (if it has records), then resets e. */
int gp_out_chunk(struct gp_out *o, struct gp_enc *e);
/* Writes one chunk already compressed (header + payload, as read from a
 * trace: the flight recorder's spool, write/gp_spool.h) and indexes it. */
int gp_out_raw_chunk(struct gp_out *o, const uint8_t *chunk, size_t len);
int gp_out_finish(struct gp_out *o); /* index chunk + footer */
/* Writes all n bytes (EINTR retried); returns bytes written, *err = errno if short. */
size_t gp_write_all(int fd, const void *buf, size_t n, int sigpipe_guard, int *err);

/* Mode of a new trace file at path: want (default 0640), 0600 in a
 * directory others can write to (/tmp: a 0640 file there is readable through
 * its group).  The recorder's file and the flight recorder's captures. */
uint32_t gp_pick_mode(const char *path, uint32_t want);

#endif /* GP_OUT_H */
