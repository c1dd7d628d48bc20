/* gp_spool.c — the flight recorder's in-memory history and its captures
 * (gp_spool.h).  The file's byte layout is docs/FORMAT.md's; this reads it
 * the way a reader resyncs (chunk headers with their own checksum), and
 * writes captures with the writer's output code (gp_out). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/gp_error.h"
#include "common/gp_format.h"
#include "gp_out.h"
#include "gp_spool.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

#define PAGE 4096u
#define RESYNC_BLOCK 65536u

struct chunk {
	struct chunk *next;
	uint64_t first_ts, last_ts;
	uint32_t source;
	size_t len; /* header + payload */
	uint8_t data[];
};

struct gp_spool {
	int fd;
	uint64_t rd;      /* next file offset to read */
	uint64_t punched; /* [0, punched) released */
	uint8_t *hdr;     /* the file header, once read */
	size_t hdr_len;
	struct chunk *head, *tail;
	uint64_t max_bytes;
	uint64_t kept_bytes, meta_bytes, kept_chunks;
	uint64_t dropped_age, dropped_cap, read_bytes, skipped_bytes;
	int punch_errno;
	/* the capture */
	int cap_open;
	struct gp_out cap;
	char *cap_path;
	int cap_errno;
	uint64_t cap_records, cap_bytes;
};

GP_API int gp_spool_open(int fd, const struct gp_spool_opts *o, gp_spool **out)
{
	*out = NULL;
	if (fd < 0 || !o || o->sz < sizeof(size_t) + sizeof(uint64_t)) {
		if (fd >= 0) close(fd);
		return GP_ERR_INVALID;
	}
	gp_spool *s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return GP_ERR_NOMEM;
	}
	s->fd = fd;
	s->max_bytes = o->max_bytes ? o->max_bytes : (64u << 20);
	*out = s;
	return 0;
}

static void free_chunks(gp_spool *s)
{
	for (struct chunk *c = s->head, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	s->head = s->tail = NULL;
}

static void cap_close(gp_spool *s, int remove)
{
	if (!s->cap_open) return;
	close(s->cap.fd);
	if (remove && s->cap_path) unlink(s->cap_path);
	gp_out_free(&s->cap);
	s->cap_open = 0;
}

GP_API void gp_spool_close(gp_spool *s)
{
	if (!s) return;
	cap_close(s, 1);
	free(s->cap_path);
	free_chunks(s);
	free(s->hdr);
	close(s->fd);
	free(s);
}

GP_API void gp_spool_forget_after_fork(gp_spool *s)
{
	if (!s) return;
	if (s->cap_open) {
		/* the parent's capture: its file, its offset; never written here */
		close(s->cap.fd);
		gp_out_free(&s->cap);
		s->cap_open = 0;
	}
	free(s->cap_path);
	free_chunks(s);
	free(s->hdr);
	close(s->fd);
	free(s);
}

/* ------------------------------------------------------------ reading */
static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return -1;
		got += (size_t)r;
	}
	return 0;
}

/* The file header: its length is at offset 12 (docs/FORMAT.md). 1 when
 * read, 0 when not all there yet, <0 error. */
static int read_header(gp_spool *s, uint64_t size)
{
	uint8_t fixed[16];
	if (size < sizeof(fixed)) return 0;
	if (read_at(s->fd, fixed, sizeof(fixed), 0)) return GP_ERR_IO;
	uint32_t total = gp_get32(fixed + 12);
	if (memcmp(fixed, gp_magic_file, 8) || total < GP_HEADER_MIN || total > GP_HEADER_MAX)
		return GP_ERR_CORRUPT;
	if (size < total) return 0;
	uint8_t *h = malloc(total);
	if (!h) return GP_ERR_NOMEM;
	if (read_at(s->fd, h, total, 0) || gp_crc32(h, total - 4) != gp_get32(h + total - 4)) {
		free(h);
		return GP_ERR_CORRUPT;
	}
	s->hdr = h;
	s->hdr_len = total;
	s->rd = total;
	return 1;
}

/* A stretch that is not a chunk (a write the disk cut short): the next
 * offset after rd whose 40 bytes are a valid chunk header, else as far as
 * the data goes (keeping 3 bytes: a magic may straddle the end). */
static void resync(gp_spool *s, uint64_t size)
{
	uint8_t *buf = malloc(RESYNC_BLOCK + GP_CHUNK_HDR);
	uint64_t from = s->rd + 1;
	while (buf && from + GP_CHUNK_HDR <= size) {
		size_t n = size - from < RESYNC_BLOCK + GP_CHUNK_HDR ? (size_t)(size - from) : RESYNC_BLOCK + GP_CHUNK_HDR;
		if (read_at(s->fd, buf, n, from)) break;
		for (size_t i = 0; i + GP_CHUNK_HDR <= n; i++) {
			struct gp_chunk_hdr h;
			const char *why;
			if ((buf[i] == 'G' && !gp_chunk_hdr_get(buf + i, &h, &why)) ||
			    (i + 8 <= n && !memcmp(buf + i, gp_magic_footer, 8))) {
				s->skipped_bytes += from + i - s->rd;
				s->rd = from + i;
				free(buf);
				return;
			}
		}
		from += n - GP_CHUNK_HDR + 1;
	}
	free(buf);
	if (size > s->rd + 3) {
		s->skipped_bytes += size - 3 - s->rd;
		s->rd = size - 3;
	}
}

static void drop(gp_spool *s, struct chunk *prev, struct chunk *c)
{
	if (prev) prev->next = c->next;
	else s->head = c->next;
	if (s->tail == c) s->tail = prev;
	s->kept_bytes -= c->len;
	s->kept_chunks--;
	free(c);
}

static void capture_put(gp_spool *s, const struct chunk *c)
{
	if (!s->cap_open || s->cap_errno) return;
	if (gp_out_raw_chunk(&s->cap, c->data, c->len))
		s->cap_errno = s->cap.last_errno ? s->cap.last_errno : EIO;
}

/* One chunk at s->rd (header h already checked) into memory and the capture. */
static int take_chunk(gp_spool *s, const struct gp_chunk_hdr *h)
{
	size_t len = GP_CHUNK_HDR + (size_t)h->csize;
	struct chunk *c = malloc(sizeof(*c) + len);
	if (!c) return GP_ERR_NOMEM;
	if (read_at(s->fd, c->data, len, s->rd)) {
		free(c);
		return GP_ERR_IO;
	}
	c->next = NULL;
	c->first_ts = h->first_ts;
	c->last_ts = h->last_ts;
	c->source = h->source;
	c->len = len;
	if (s->tail) s->tail->next = c;
	else s->head = c;
	s->tail = c;
	s->kept_bytes += len;
	s->kept_chunks++;
	if (c->source == 0) s->meta_bytes += len;
	s->rd += len;
	s->read_bytes += len;
	capture_put(s, c);
	return 0;
}

static void release_space(gp_spool *s)
{
	uint64_t end = s->rd & ~(uint64_t)(PAGE - 1);
	if (end <= s->punched || s->punch_errno) return;
	if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->punched,
		      (off_t)(end - s->punched)) == 0)
		s->punched = end;
	else
		s->punch_errno = errno;
}

/* Data chunks older than the horizon, then the oldest over the cap. */
static int evict(gp_spool *s, uint64_t horizon)
{
	for (struct chunk *prev = NULL, *c = s->head, *n; c; c = n) {
		n = c->next;
		if (c->source != 0 && c->last_ts < horizon) {
			drop(s, prev, c);
			s->dropped_age++;
		} else {
			prev = c;
		}
	}
	if (s->meta_bytes > s->max_bytes) return GP_ERR_FULL;
	for (struct chunk *prev = NULL, *c = s->head, *n; c && s->kept_bytes > s->max_bytes; c = n) {
		n = c->next;
		if (c->source != 0) {
			drop(s, prev, c);
			s->dropped_cap++;
		} else {
			prev = c;
		}
	}
	return 0;
}

GP_API int gp_spool_poll(gp_spool *s, uint64_t horizon_ns)
{
	if (!s) return GP_ERR_INVALID;
	struct stat st;
	if (fstat(s->fd, &st) != 0) return GP_ERR_IO;
	uint64_t size = (uint64_t)st.st_size;
	int n = 0;
	if (!s->hdr) {
		int rc = read_header(s, size);
		if (rc <= 0) return rc;
	}
	while (s->rd + 8 <= size) {
		uint8_t b[GP_CHUNK_HDR];
		size_t have = size - s->rd < GP_CHUNK_HDR ? (size_t)(size - s->rd) : GP_CHUNK_HDR;
		if (read_at(s->fd, b, have, s->rd)) return GP_ERR_IO;
		if (!memcmp(b, gp_magic_footer, 8)) {
			/* the recorder closed: its footer is not ours to keep */
			if (s->rd + GP_FOOTER_SIZE > size) break;
			s->rd += GP_FOOTER_SIZE;
			continue;
		}
		if (have < GP_CHUNK_HDR) break;
		struct gp_chunk_hdr h;
		const char *why;
		if (gp_chunk_hdr_get(b, &h, &why)) {
			resync(s, size);
			continue;
		}
		if (s->rd + GP_CHUNK_HDR + h.csize > size) break; /* still being written */
		if (h.source == GP_SOURCE_INDEX) {                /* the recorder's index: a capture gets its own */
			s->rd += GP_CHUNK_HDR + h.csize;
			continue;
		}
		int rc = take_chunk(s, &h);
		if (rc) return rc;
		n++;
	}
	release_space(s);
	int rc = evict(s, horizon_ns);
	return rc ? rc : n;
}

GP_API void gp_spool_get_stats(const gp_spool *s, struct gp_spool_stats *st)
{
	if (!s || !st || st->sz < sizeof(size_t)) return;
	struct gp_spool_stats o = { .sz = st->sz };
	o.kept_bytes = s->kept_bytes;
	o.meta_bytes = s->meta_bytes;
	o.kept_chunks = s->kept_chunks;
	for (const struct chunk *c = s->head; c; c = c->next)
		if (c->source != 0 && (!o.oldest_ns || (c->first_ts && c->first_ts < o.oldest_ns)))
			o.oldest_ns = c->first_ts;
	o.dropped_age = s->dropped_age;
	o.dropped_cap = s->dropped_cap;
	o.read_bytes = s->read_bytes;
	o.skipped_bytes = s->skipped_bytes;
	o.punch_errno = s->punch_errno;
	o.capture_records = s->cap_open ? s->cap.records : s->cap_records;
	o.capture_bytes = s->cap_open ? s->cap.off : s->cap_bytes;
	memcpy(st, &o, st->sz < sizeof(o) ? st->sz : sizeof(o));
}

/* ------------------------------------------------------------ captures */
GP_API int gp_spool_capture_begin(gp_spool *s, const char *path, uint64_t from_ns)
{
	if (!s || !path || s->cap_open || !s->hdr) return GP_ERR_INVALID;
	char *p = strdup(path);
	if (!p) return GP_ERR_NOMEM;
	free(s->cap_path);
	s->cap_path = p;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, gp_pick_mode(path, 0));
	if (fd < 0) return GP_ERR_IO;
	if (gp_out_init(&s->cap, fd, 3)) {
		close(fd);
		unlink(path);
		errno = ENOMEM;
		return GP_ERR_IO;
	}
	/* in the traced process: a pipe or a file-size limit costs the
	 * capture, never the job (gp_write_all) */
	s->cap.sigpipe_guard = 1;
	s->cap_open = 1;
	s->cap_errno = 0;
	int err;
	size_t w = gp_write_all(fd, s->hdr, s->hdr_len, 1, &err);
	s->cap.off += w;
	if (w != s->hdr_len) s->cap_errno = err ? err : EIO;
	for (const struct chunk *c = s->head; c && !s->cap_errno; c = c->next)
		if (c->source == 0 || c->last_ts >= from_ns)
			capture_put(s, c);
	if (s->cap_errno) {
		int e = s->cap_errno;
		cap_close(s, 1);
		errno = e;
		return GP_ERR_IO;
	}
	return 0;
}

GP_API int gp_spool_capture_error(const gp_spool *s)
{
	return s && s->cap_open ? s->cap_errno : 0;
}

GP_API int gp_spool_capture_end(gp_spool *s)
{
	if (!s || !s->cap_open) return GP_ERR_INVALID;
	if (!s->cap_errno && gp_out_finish(&s->cap))
		s->cap_errno = s->cap.last_errno ? s->cap.last_errno : EIO;
	if (!s->cap_errno && close(s->cap.fd) != 0)
		s->cap_errno = errno;
	else if (s->cap_errno)
		close(s->cap.fd);
	s->cap_records = s->cap.records;
	s->cap_bytes = s->cap.off;
	int e = s->cap_errno;
	if (e) unlink(s->cap_path);
	gp_out_free(&s->cap);
	s->cap_open = 0;
	if (e) {
		errno = e;
		return GP_ERR_IO;
	}
	return 0;
}

GP_API void gp_spool_capture_abort(gp_spool *s)
{
	if (s) cap_close(s, 1);
}
