/* gp_out.c — the output side of a trace file: header, compressed chunks,
 * index chunk and footer, with write-error accounting (never fatal). */
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "common/gp_error.h"
#include "common/gp_format.h"
#include "gp_out.h"

size_t gp_write_all(int fd, const void *buf, size_t n, int guard, int *err)
{
	sigset_t guard_set, old;
	int pipe_pending = 0, xfsz_pending = 0;
	if (guard) {
		/* A write to a pipe without reader raises SIGPIPE, and a write past
		 * RLIMIT_FSIZE raises SIGXFSZ: either would kill the traced job.
		 * Block both around the write and eat the ones we cause (a signal
		 * already pending for the job's own reasons is left alone). */
		sigset_t pend;
		sigemptyset(&guard_set);
		sigaddset(&guard_set, SIGPIPE);
		sigaddset(&guard_set, SIGXFSZ);
		pthread_sigmask(SIG_BLOCK, &guard_set, &old);
		sigpending(&pend);
		pipe_pending = sigismember(&pend, SIGPIPE);
		xfsz_pending = sigismember(&pend, SIGXFSZ);
	}
	const uint8_t *p = buf;
	size_t done = 0;
	*err = 0;
	while (done < n) {
		ssize_t w = write(fd, p + done, n - done);
		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR) continue;
		*err = w < 0 ? errno : EIO;
		break;
	}
	if (guard) {
		struct timespec z = { 0, 0 };
		sigset_t one;
		if (*err == EPIPE && !pipe_pending) {
			sigemptyset(&one);
			sigaddset(&one, SIGPIPE);
			sigtimedwait(&one, NULL, &z);
		}
		if (*err == EFBIG && !xfsz_pending) {
			sigemptyset(&one);
			sigaddset(&one, SIGXFSZ);
			sigtimedwait(&one, NULL, &z);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return done;
}

int gp_out_init(struct gp_out *o, int fd, int level)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->level = level;
	ZSTD_CCtx *c = ZSTD_createCCtx();
	if (!c) return GP_ERR_NOMEM;
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
	o->cctx = c;
	/* format 2.0's section B (start deltas and durations: nearly random
	 * bytes) in a frame of its own at a negative level, where zstd stores
	 * literals as they are: Huffman would save little and cost the reader
	 * most of its decompression time */
	c = ZSTD_createCCtx();
	if (!c) {
		gp_out_free(o);
		return GP_ERR_NOMEM;
	}
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, -1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
	o->cctx_b = c;
	return 0;
}

void gp_out_free(struct gp_out *o)
{
	ZSTD_freeCCtx(o->cctx);
	ZSTD_freeCCtx(o->cctx_b);
	o->cctx = o->cctx_b = NULL;
	free(o->cbuf);
	o->cbuf = NULL;
	free(o->idx);
	o->idx = NULL;
}

static void note_write_error(struct gp_out *o, int err)
{
	o->write_errors++;
	o->last_errno = err;
}

/* The header's bytes into b (room for the largest); returns its size. */
static size_t header_bytes(uint8_t *b, const gp_header *h, uint32_t flags)
{
	size_t plen = strnlen(h->producer, sizeof(h->producer) - 1);
	size_t hlen = strnlen(h->host, sizeof(h->host) - 1);
	memcpy(b, gp_magic_file, 8);
	/* major 1 asked for: the last 1.x format (chunks without templates) */
	gp_put16(b + 8, h->major == 1 ? 1 : GP_FORMAT_MAJOR);
	gp_put16(b + 10, h->major == 1 ? GP_FORMAT_V1_MINOR : GP_FORMAT_MINOR);
	size_t total = GP_HEADER_FIXED + 2 + plen + 2 + hlen + 4;
	gp_put32(b + 12, (uint32_t)total);
	gp_put32(b + 16, h->pid);
	gp_put32(b + 20, h->clock_id);
	gp_put64(b + 24, h->start_trace_ns);
	gp_put64(b + 32, h->start_realtime_ns);
	gp_put32(b + 40, (uint32_t)h->rank);
	gp_put32(b + 44, flags);
	uint8_t *p = b + GP_HEADER_FIXED;
	gp_put16(p, (uint16_t)plen);
	memcpy(p + 2, h->producer, plen);
	p += 2 + plen;
	gp_put16(p, (uint16_t)hlen);
	memcpy(p + 2, h->host, hlen);
	p += 2 + hlen;
	gp_put32(p, gp_crc32(b, total - 4));
	return total;
}

#define HEADER_ROOM (GP_HEADER_FIXED + 2 + 64 + 2 + 256 + 4)

int gp_out_header(struct gp_out *o, const gp_header *h, uint32_t flags)
{
	uint8_t b[HEADER_ROOM];
	size_t total = header_bytes(b, h, flags);
	int err;
	size_t w = gp_write_all(o->fd, b, total, o->sigpipe_guard, &err);
	o->off += w;
	if (w != total) {
		note_write_error(o, err);
		return GP_ERR_IO;
	}
	return 0;
}

int gp_out_header_rewrite(struct gp_out *o, const gp_header *h, uint32_t flags)
{
	uint8_t b[HEADER_ROOM];
	size_t total = header_bytes(b, h, flags);
	return pwrite(o->fd, b, total, 0) == (ssize_t)total ? 0 : GP_ERR_IO;
}

/* Compresses [src, src+n) into o->cbuf after room for a chunk header, and
 * [src2, src2+n2) after it as a second frame (compressed by o->cctx_b). */
static int compress_into(struct gp_out *o, const void *src, size_t n, const void *src2, size_t n2, size_t *csize)
{
	size_t need = GP_CHUNK_HDR + ZSTD_compressBound(n) + (n2 ? ZSTD_compressBound(n2) : 0);
	if (need > o->ccap) {
		uint8_t *nb = realloc(o->cbuf, need);
		if (!nb) return GP_ERR_NOMEM;
		o->cbuf = nb;
		o->ccap = need;
	}
	size_t c = ZSTD_compress2(o->cctx, o->cbuf + GP_CHUNK_HDR, o->ccap - GP_CHUNK_HDR, src, n);
	if (ZSTD_isError(c)) return GP_ERR_CORRUPT;
	if (n2) {
		size_t c2 = ZSTD_compress2(o->cctx_b, o->cbuf + GP_CHUNK_HDR + c, o->ccap - GP_CHUNK_HDR - c, src2, n2);
		if (ZSTD_isError(c2)) return GP_ERR_CORRUPT;
		c += c2;
	}
	*csize = c;
	return 0;
}

/* A chunk written at `at`: counted, and in the index (which stops growing,
 * flagged, at GP_INDEX_MAX_ENTRIES or when memory runs out). */
static void idx_add(struct gp_out *o, uint64_t at, const struct gp_chunk_hdr *h)
{
	o->chunks++;
	o->records += h->count;
	if (o->nidx == o->idx_cap) {
		if (o->idx_cap >= GP_INDEX_MAX_ENTRIES) {
			o->idx_capped = 1;
			return;
		}
		size_t nc = o->idx_cap ? o->idx_cap * 2 : 256;
		struct gp_idx_ent *ni = realloc(o->idx, nc * sizeof(*ni));
		if (!ni) {
			o->idx_capped = 1;
			return;
		}
		o->idx = ni;
		o->idx_cap = nc;
	}
	o->idx[o->nidx++] = (struct gp_idx_ent){ at, h->first_ts, h->last_ts, h->source, h->count };
}

int gp_out_chunk(struct gp_out *o, struct gp_enc *e)
{
	if (e->count == 0) {
		gp_enc_reset(e);
		return 0;
	}
	size_t csize;
	uint32_t count = e->count;
	size_t usize = gp_enc_finish(e);
	int rc = compress_into(o, e->buf, e->len, e->bbuf, e->blen, &csize);
	if (rc) {
		o->lost_records += count;
		gp_enc_reset(e);
		return rc;
	}
	struct gp_chunk_hdr h = { (uint32_t)csize, (uint32_t)usize, e->source, count,
				  e->has_ts ? e->first_ts : 0, e->has_ts ? e->last_ts : 0 };
	gp_chunk_hdr_put(o->cbuf, &h);
	uint64_t at = o->off;
	int err;
	size_t w = gp_write_all(o->fd, o->cbuf, GP_CHUNK_HDR + csize, o->sigpipe_guard, &err);
	o->off += w;
	gp_enc_reset(e);
	if (w != GP_CHUNK_HDR + csize) {
		/* A partial chunk stays in the file; readers resync past it. */
		note_write_error(o, err);
		o->lost_records += count;
		return GP_ERR_IO;
	}
	idx_add(o, at, &h);
	return 0;
}

int gp_out_raw_chunk(struct gp_out *o, const uint8_t *chunk, size_t len)
{
	struct gp_chunk_hdr h;
	const char *why;
	if (len < GP_CHUNK_HDR || gp_chunk_hdr_get(chunk, &h, &why) || len != GP_CHUNK_HDR + (size_t)h.csize)
		return GP_ERR_INVALID;
	uint64_t at = o->off;
	int err;
	size_t w = gp_write_all(o->fd, chunk, len, o->sigpipe_guard, &err);
	o->off += w;
	if (w != len) {
		note_write_error(o, err);
		o->lost_records += h.count;
		return GP_ERR_IO;
	}
	idx_add(o, at, &h);
	return 0;
}

int gp_out_finish(struct gp_out *o)
{
	size_t cap = 2 + o->nidx * 50;
	uint8_t *b = malloc(cap);
	if (!b) return GP_ERR_NOMEM;
	uint8_t *p = b;
	*p++ = 1;
	*p++ = o->idx_capped ? 1 : 0;
	uint64_t prev_off = 0, prev_first = 0, gmin = 0, gmax = 0;
	int any = 0;
	for (size_t i = 0; i < o->nidx; i++) {
		const struct gp_idx_ent *x = &o->idx[i];
		p = gp_put_varint(p, x->off - prev_off);
		p = gp_put_varint(p, x->source);
		p = gp_put_varint(p, x->count);
		p = gp_put_varint(p, gp_zz((int64_t)(x->first_ts - prev_first)));
		p = gp_put_varint(p, x->last_ts - x->first_ts);
		prev_off = x->off;
		prev_first = x->first_ts;
		if (x->first_ts || x->last_ts) {
			if (!any || x->first_ts < gmin) gmin = x->first_ts;
			if (!any || x->last_ts > gmax) gmax = x->last_ts;
			any = 1;
		}
	}
	size_t csize;
	int rc = compress_into(o, b, (size_t)(p - b), NULL, 0, &csize);
	size_t ulen = (size_t)(p - b);
	free(b);
	if (rc) return rc;
	struct gp_chunk_hdr h = { (uint32_t)csize, (uint32_t)ulen, GP_SOURCE_INDEX, (uint32_t)o->nidx, gmin, gmax };
	/* count <= usize/2 must hold for readers' sanity check: 5 varints >= 5 bytes each entry */
	gp_chunk_hdr_put(o->cbuf, &h);
	uint64_t at = o->off;
	int err;
	size_t w = gp_write_all(o->fd, o->cbuf, GP_CHUNK_HDR + csize, o->sigpipe_guard, &err);
	o->off += w;
	if (w != GP_CHUNK_HDR + csize) {
		note_write_error(o, err);
		return GP_ERR_IO;
	}
	uint8_t f[GP_FOOTER_SIZE];
	memcpy(f, gp_magic_footer, 8);
	gp_put64(f + 8, at);
	gp_put64(f + 16, o->chunks);
	gp_put64(f + 24, o->records);
	gp_put32(f + 32, gp_crc32(f, 32));
	w = gp_write_all(o->fd, f, sizeof(f), o->sigpipe_guard, &err);
	o->off += w;
	if (w != sizeof(f)) {
		note_write_error(o, err);
		return GP_ERR_IO;
	}
	return 0;
}

uint32_t gp_pick_mode(const char *path, uint32_t want)
{
	char *copy = strdup(path);
	uint32_t mode = want ? want : 0640;
	if (copy) {
		struct stat st;
		/* other users could read a 0640 file we create in /tmp via group */
		if (stat(dirname(copy), &st) == 0 && (st.st_mode & S_IWOTH)) mode = 0600;
		free(copy);
	}
	return mode;
}
