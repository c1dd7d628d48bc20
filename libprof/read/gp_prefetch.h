/* gp_prefetch.h — libprof-internal (read/): chunks decoded ahead by worker
 * threads for the reader.  Chunks are independent (one zstd frame each, all
 * delta state reset per chunk), so workers decompress and decode them into
 * records in parallel, in the order the reader predicts it will read them
 * (its schedule); the reader takes each one when it gets there and hands
 * the records out in the same order as when decoding on its own thread.
 * What only the reader's thread may do stays there: the string and source
 * tables, the integrity counts and messages.  Memory: at most `window`
 * chunks decoded ahead, plus those the reader holds (a chunk's compressed
 * and decompressed bytes and its records, 112 bytes each).
 *
 * Threads: every function is called by the reader's thread; the workers
 * only decode jobs (gp_job_decode) and touch nothing else of the reader. */
#ifndef GP_PREFETCH_H
#define GP_PREFETCH_H

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>
#include "codec/gp_codec.h"
#include "common/gp_record.h"

/* Where a chunk is and how to decode it. */
struct gp_chunk_ref {
	uint64_t off; /* of the chunk header */
	uint32_t csize, usize, source;
	uint32_t src_tid; /* the thread rule's tid for its source */
	unsigned major;   /* the file's format major (how its chunks are coded) */
};

/* One chunk, decoded. */
struct gp_job {
	size_t idx; /* the reader's chunk index */
	struct gp_chunk_ref ref;
	int state; /* private to gp_prefetch.c */
	/* results: rc 0, or GP_ERR_IO (read failed), GP_ERR_CORRUPT (zstd: zerr),
	 * GP_ERR_NOMEM; then the records decoded, and if decoding stopped at a
	 * malformed record: dec_err, why, and its offset in the chunk's bytes */
	int rc;
	const char *zerr;
	gp_record *recs;
	size_t nrec, crec;
	int dec_err;
	const char *why;
	size_t err_at;
	/* storage: string records point into ubuf, stack records into frames */
	uint8_t *cbuf, *ubuf;
	size_t ccap, ucap;
	uint64_t *frames;
	size_t nfr, cfr;
	struct gp_dec dec; /* kept for its template table */
	struct gp_job *next_free;
};

/* pread() of exactly n bytes at off (EINTR retried): 0, or GP_ERR_IO. */
int gp_pread_all(int fd, void *buf, size_t n, uint64_t off);

/* Reads and decodes chunk `ref` into j (sets every result field). */
void gp_job_decode(struct gp_job *j, int fd, ZSTD_DCtx *dctx);

/* Describes chunk idx for decoding ahead: fills *ref, returns 1; 0 when it
 * is not to be decoded (already known to be corrupt). */
typedef int (*gp_prefetch_describe_fn)(void *arg, size_t idx, struct gp_chunk_ref *ref);

struct gp_prefetch;

/* nworkers >= 1 threads, at most `window` chunks ahead.  0 or GP_ERR_NOMEM
 * (also when a thread cannot be started). */
int gp_prefetch_new(int fd, int nworkers, size_t window, gp_prefetch_describe_fn describe, void *arg,
		    struct gp_prefetch **out);
void gp_prefetch_free(struct gp_prefetch *p); /* NULL ok; stops the workers */
/* The predicted order of the coming loads (copied); drops what was decoded
 * ahead and not taken. */
int gp_prefetch_schedule(struct gp_prefetch *p, const size_t *idx, size_t n);
/* Chunk idx, decoded with ref (from describe): the one decoded ahead if
 * there is one (waited for; redone here if the source's tid changed since),
 * else decoded now on this thread.  NULL only when out of memory. */
struct gp_job *gp_prefetch_take(struct gp_prefetch *p, size_t idx, const struct gp_chunk_ref *ref,
				ZSTD_DCtx *dctx);
/* Done with a taken job (NULL ok). */
void gp_prefetch_release(struct gp_prefetch *p, struct gp_job *j);

#endif
