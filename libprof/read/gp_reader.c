/* gp_reader.c — reads a trace: header validation, chunk scan with resync,
 * file-order and time-ordered iteration, string/source tables, integrity.
 * Input is untrusted: every size, count and offset is bounded first. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "common/gp_error.h"
#include "common/gp_format.h"
#include "codec/gp_codec.h"
#include "gp_reader.h"

static __thread char g_open_err[512];

enum {
	CH_UNKNOWN = 0,
	CH_OK = 1,
	CH_CORRUPT = 2
};
enum {
	DEC_BATCH = 32 /* records decoded per gp_dec_batch call */
};

struct cent {
	uint64_t off; /* of the chunk header */
	uint32_t csize, usize, source, count;
	uint8_t state;
};

struct cursor {
	uint8_t *cbuf, *ubuf;
	size_t ccap, ucap;
	size_t *list; /* ordered mode: this source's chunks */
	size_t nlist, li;
	size_t fo_next; /* file-order mode: next chunk index */
	size_t cur;     /* chunk being decoded */
	int in_chunk;
	struct gp_dec dec;
	gp_record *batch;    /* records decoded ahead (DEC_BATCH) */
	int bi, bn;          /* next to hand out, how many */
	const gp_record *cr; /* current record (in batch) */
	uint64_t key;
	int skip_untimed; /* source 0 in the merge: metadata already given */
	int only_untimed; /* ordered phase 1 */
};

struct strent {
	uint32_t id, len;
	char *s;
};
struct u32map {
	uint32_t *slot; /* value = index+1 */
	uint32_t cap, n;
};

struct gp_reader {
	int fd;
	uint64_t fsize, data_start;
	gp_header hdr;
	struct cent *ch;
	size_t nch, chcap;
	struct gp_integrity integ;
	struct gp_footer_info foot;
	char errmsg[512], first_problem[512];
	ZSTD_DCtx *dctx;

	struct cursor fo;
	int ord_phase; /* 0 not started, 1 metadata, 2 merge, 3 done */
	struct cursor meta;
	struct cursor *curs;
	size_t ncurs;
	struct cursor **heap;
	size_t nheap;
	struct cursor *last; /* cursor whose record was returned last */

	struct strent *strs;
	size_t nstrs, strs_cap;
	struct u32map strmap;
	gp_rec_source *srcs;
	size_t nsrcs, srcs_cap;
	struct u32map srcmap;
};

static void problem(gp_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(gp_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	if (!r->first_problem[0]) memcpy(r->first_problem, r->errmsg, sizeof(r->errmsg));
}

/* ---------------------------------------------------------------- tables */
static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

/* returns index+1 of key, 0 if absent */
static uint32_t map_get(const struct u32map *m, uint32_t key, const void *arr, size_t stride)
{
	if (!m->cap) return 0;
	for (uint32_t i = hash32(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		uint32_t v = m->slot[i];
		if (!v) return 0;
		uint32_t k;
		memcpy(&k, (const uint8_t *)arr + (size_t)(v - 1) * stride, 4);
		if (k == key) return v;
	}
}

static int map_put(struct u32map *m, uint32_t key, uint32_t val, const void *arr, size_t stride)
{
	if ((m->n + 1) * 2 > m->cap) {
		uint32_t nc = m->cap ? m->cap * 2 : 256;
		uint32_t *ns = calloc(nc, 4);
		if (!ns) return GP_ERR_NOMEM;
		for (uint32_t i = 0; i < m->cap; i++) {
			uint32_t v = m->slot[i];
			if (!v) continue;
			uint32_t k;
			memcpy(&k, (const uint8_t *)arr + (size_t)(v - 1) * stride, 4);
			uint32_t j = hash32(k) & (nc - 1);
			while (ns[j]) j = (j + 1) & (nc - 1);
			ns[j] = v;
		}
		free(m->slot);
		m->slot = ns;
		m->cap = nc;
	}
	uint32_t j = hash32(key) & (m->cap - 1);
	while (m->slot[j]) j = (j + 1) & (m->cap - 1);
	m->slot[j] = val;
	m->n++;
	return 0;
}

static const char *str_add(gp_reader *r, uint32_t id, const char *s, uint32_t len)
{
	uint32_t v = map_get(&r->strmap, id, r->strs, sizeof(*r->strs));
	/* seen again (second pass, other order): keep the pointer callers hold */
	if (v && r->strs[v - 1].len == len && !memcmp(r->strs[v - 1].s, s, len)) return r->strs[v - 1].s;
	char *copy = malloc((size_t)len + 1);
	if (!copy) return NULL;
	memcpy(copy, s, len);
	copy[len] = 0;
	if (v) { /* same id, other bytes: the later definition wins */
		free(r->strs[v - 1].s);
		r->strs[v - 1].s = copy;
		r->strs[v - 1].len = len;
		return copy;
	}
	if (r->nstrs == r->strs_cap) {
		size_t nc = r->strs_cap ? r->strs_cap * 2 : 256;
		struct strent *ns = realloc(r->strs, nc * sizeof(*ns));
		if (!ns) {
			free(copy);
			return NULL;
		}
		r->strs = ns;
		r->strs_cap = nc;
	}
	r->strs[r->nstrs] = (struct strent){ id, len, copy };
	if (map_put(&r->strmap, id, (uint32_t)r->nstrs + 1, r->strs, sizeof(*r->strs))) {
		free(copy);
		return NULL;
	}
	r->nstrs++;
	return copy;
}

static void src_add(gp_reader *r, const gp_rec_source *s)
{
	uint32_t v = map_get(&r->srcmap, s->source_id, r->srcs, sizeof(*r->srcs));
	if (v) {
		r->srcs[v - 1] = *s;
		return;
	}
	if (r->nsrcs == r->srcs_cap) {
		size_t nc = r->srcs_cap ? r->srcs_cap * 2 : 64;
		gp_rec_source *ns = realloc(r->srcs, nc * sizeof(*ns));
		if (!ns) return;
		r->srcs = ns;
		r->srcs_cap = nc;
	}
	r->srcs[r->nsrcs] = *s;
	if (map_put(&r->srcmap, s->source_id, (uint32_t)r->nsrcs + 1, r->srcs, sizeof(*r->srcs))) return;
	r->nsrcs++;
}

GP_API const char *gp_reader_string(const gp_reader *r, uint32_t id)
{
	if (!r) return NULL;
	uint32_t v = map_get(&r->strmap, id, r->strs, sizeof(*r->strs));
	return v ? r->strs[v - 1].s : NULL;
}

GP_API const gp_rec_source *gp_reader_source(const gp_reader *r, uint32_t source_id)
{
	if (!r) return NULL;
	uint32_t v = map_get(&r->srcmap, source_id, r->srcs, sizeof(*r->srcs));
	return v ? &r->srcs[v - 1] : NULL;
}

GP_API uint32_t gp_reader_tid(const gp_reader *r, const gp_record *rec, const struct gp_field *f)
{
	uint32_t t = (uint32_t)gp_field_get(rec, f, 0);
	if (!t && (f->flags & GP_FIELD_SRC_TID)) {
		const gp_rec_source *src = gp_reader_source(r, rec->source_id);
		t = src ? src->tid : 0;
	}
	return t;
}

/* ---------------------------------------------------------------- file access */
static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t k = pread(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR) continue;
		if (k <= 0) return GP_ERR_IO;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

static int footer_at(gp_reader *r, uint64_t pos, struct gp_footer_info *f)
{
	uint8_t b[GP_FOOTER_SIZE];
	if (pos + GP_FOOTER_SIZE > r->fsize || pread_all(r->fd, b, sizeof(b), pos)) return 0;
	if (memcmp(b, gp_magic_footer, 8) || gp_crc32(b, 32) != gp_get32(b + 32)) return 0;
	f->present = 1;
	f->index_offset = gp_get64(b + 8);
	f->chunk_count = gp_get64(b + 16);
	f->record_count = gp_get64(b + 24);
	return 1;
}

static int chunk_hdr_at(gp_reader *r, uint64_t pos, struct gp_chunk_hdr *h, const char **why)
{
	uint8_t b[GP_CHUNK_HDR];
	if (pos + GP_CHUNK_HDR > r->fsize || pread_all(r->fd, b, sizeof(b), pos)) {
		*why = "short read";
		return GP_ERR_TRUNCATED;
	}
	return gp_chunk_hdr_get(b, h, why);
}

/* Next offset > pos holding a valid chunk header or footer, or fsize. */
static uint64_t resync(gp_reader *r, uint64_t pos)
{
	enum {
		BLK = 1 << 16
	};
	static __thread uint8_t blk[BLK];
	for (uint64_t base = pos + 1; base < r->fsize; base += BLK - 8) {
		size_t n = (size_t)(r->fsize - base < BLK ? r->fsize - base : BLK);
		if (pread_all(r->fd, blk, n, base)) return r->fsize;
		for (size_t i = 0; i + 4 <= n; i++) {
			if (blk[i] != 'G' || blk[i + 1] != 'P') continue;
			uint64_t at = base + i;
			struct gp_chunk_hdr h;
			const char *why;
			struct gp_footer_info f;
			if (!memcmp(blk + i, gp_magic_chunk, 4) && chunk_hdr_at(r, at, &h, &why) == 0) return at;
			if (i + 8 <= n && !memcmp(blk + i, gp_magic_footer, 8) && footer_at(r, at, &f)) return at;
		}
		if (n < BLK) break;
	}
	return r->fsize;
}

static int add_chunk(gp_reader *r, uint64_t off, const struct gp_chunk_hdr *h)
{
	if (r->nch == r->chcap) {
		size_t nc = r->chcap ? r->chcap * 2 : 256;
		struct cent *n = realloc(r->ch, nc * sizeof(*n));
		if (!n) return GP_ERR_NOMEM;
		r->ch = n;
		r->chcap = nc;
	}
	r->ch[r->nch++] = (struct cent){ off, h->csize, h->usize, h->source, h->count, CH_UNKNOWN };
	return 0;
}

/* The index is not needed to read, but a damaged one is reported. */
static void check_index(gp_reader *r, uint64_t pos, const struct gp_chunk_hdr *h)
{
	uint8_t *c = malloc(h->csize), *u = malloc(h->usize ? h->usize : 1);
	if (c && u && !pread_all(r->fd, c, h->csize, pos + GP_CHUNK_HDR)) {
		size_t n = ZSTD_decompressDCtx(r->dctx, u, h->usize, c, h->csize);
		if (ZSTD_isError(n) || n != h->usize || n < 2 || u[0] != 1) {
			r->integ.frames_corrupt++;
			problem(r, "index chunk at offset %llu: %s", (unsigned long long)pos,
				ZSTD_isError(n) ? ZSTD_getErrorName(n) : "bad index content");
		}
	}
	free(c);
	free(u);
}

/* Walks chunk headers (no decompression) and builds the chunk table. */
static int scan(gp_reader *r)
{
	uint64_t pos = r->data_start;
	int footer = 0;
	while (pos < r->fsize) {
		uint64_t avail = r->fsize - pos;
		struct gp_footer_info f;
		if (footer_at(r, pos, &f)) {
			footer = 1;
			if (pos + GP_FOOTER_SIZE < r->fsize) {
				uint64_t extra = r->fsize - pos - GP_FOOTER_SIZE;
				r->integ.bytes_skipped += extra;
				problem(r, "%llu bytes of garbage after the footer at offset %llu",
					(unsigned long long)extra, (unsigned long long)pos);
			}
			pos += GP_FOOTER_SIZE;
			break;
		}
		if (avail < GP_CHUNK_HDR) {
			problem(r, "file ends inside a chunk header at offset %llu (%llu of %u bytes)",
				(unsigned long long)pos, (unsigned long long)avail, GP_CHUNK_HDR);
			break;
		}
		struct gp_chunk_hdr h;
		const char *why = NULL;
		int rc = chunk_hdr_at(r, pos, &h, &why);
		if (rc == 0) {
			if (h.csize > avail - GP_CHUNK_HDR) {
				problem(r, "file ends inside the chunk at offset %llu (needs %llu bytes, %llu available)",
					(unsigned long long)pos, (unsigned long long)GP_CHUNK_HDR + h.csize,
					(unsigned long long)avail);
				break;
			}
			if (h.source == GP_SOURCE_INDEX) check_index(r, pos, &h);
			else if ((rc = add_chunk(r, pos, &h))) return rc;
			pos += GP_CHUNK_HDR + h.csize;
			continue;
		}
		uint64_t next = resync(r, pos);
		r->integ.frames_corrupt++;
		r->integ.bytes_skipped += next - pos;
		if (next < r->fsize)
			problem(r, "chunk at offset %llu: %s; skipped %llu bytes to offset %llu",
				(unsigned long long)pos, why, (unsigned long long)(next - pos), (unsigned long long)next);
		else
			problem(r, "chunk at offset %llu: %s; no valid chunk after it (%llu bytes skipped)",
				(unsigned long long)pos, why, (unsigned long long)(next - pos));
		pos = next;
		if (next == r->fsize) {
			pos = next;
			break;
		}
	}
	r->integ.has_footer = footer;
	if (!footer) {
		r->integ.truncated = 1;
		r->integ.truncated_at = pos;
		if (!r->first_problem[0])
			problem(r, "no footer: the trace was not closed cleanly (ends at offset %llu)", (unsigned long long)pos);
	}
	return 0;
}

/* ---------------------------------------------------------------- open/close */
static int fail_open(gp_reader *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_open(gp_reader *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

static int read_header(gp_reader *r)
{
	uint8_t fixed[GP_HEADER_FIXED];
	uint64_t have = r->fsize < GP_HEADER_FIXED ? r->fsize : GP_HEADER_FIXED;
	if (have && pread_all(r->fd, fixed, (size_t)have, 0)) return fail_open(r, GP_ERR_IO, "read error: %s", strerror(errno));
	size_t m = have < 8 ? (size_t)have : 8;
	if (memcmp(fixed, gp_magic_file, m)) return fail_open(r, GP_ERR_NOT_GPUPROF, "not a gpuprof trace (bad magic)");
	if (have < 16) return fail_open(r, GP_ERR_TRUNCATED, "file ends inside the header (%llu bytes)", (unsigned long long)have);
	uint16_t major = gp_get16(fixed + 8), minor = gp_get16(fixed + 10);
	uint32_t hsize = gp_get32(fixed + 12);
	if (major > GP_FORMAT_MAJOR)
		return fail_open(r, GP_ERR_VERSION, "trace format version %u.%u is newer than this reader (%u.%u)",
				 major, minor, GP_FORMAT_MAJOR, GP_FORMAT_MINOR);
	if (major == 0) return fail_open(r, GP_ERR_CORRUPT, "bad header: format major version 0");
	if (hsize < GP_HEADER_MIN || hsize > GP_HEADER_MAX)
		return fail_open(r, GP_ERR_CORRUPT, "bad header: header size %u out of range", hsize);
	if (r->fsize < hsize)
		return fail_open(r, GP_ERR_TRUNCATED, "file ends inside the header (%llu of %u bytes)",
				 (unsigned long long)r->fsize, hsize);
	uint8_t *b = malloc(hsize);
	if (!b) return GP_ERR_NOMEM;
	if (pread_all(r->fd, b, hsize, 0)) {
		free(b);
		return fail_open(r, GP_ERR_IO, "read error");
	}
	if (gp_crc32(b, hsize - 4) != gp_get32(b + hsize - 4)) {
		free(b);
		return fail_open(r, GP_ERR_CORRUPT, "bad header: checksum mismatch");
	}
	gp_header *h = &r->hdr;
	h->major = major;
	h->minor = minor;
	h->pid = gp_get32(b + 16);
	h->clock_id = gp_get32(b + 20);
	h->start_trace_ns = gp_get64(b + 24);
	h->start_realtime_ns = gp_get64(b + 32);
	h->rank = (int32_t)gp_get32(b + 40);
	size_t p = GP_HEADER_FIXED, end = hsize - 4;
	char *dst[2] = { h->producer, h->host };
	size_t dcap[2] = { sizeof(h->producer), sizeof(h->host) };
	for (int i = 0; i < 2; i++) {
		if (p + 2 > end) break;
		size_t n = gp_get16(b + p);
		p += 2;
		if (n > end - p) {
			free(b);
			return fail_open(r, GP_ERR_CORRUPT, "bad header: string length beyond header");
		}
		size_t c = n < dcap[i] - 1 ? n : dcap[i] - 1;
		memcpy(dst[i], b + p, c);
		dst[i][c] = 0;
		p += n;
	}
	free(b);
	r->data_start = hsize;
	return 0;
}

GP_API int gp_reader_open(const char *path, gp_reader **out)
{
	if (!path || !out) return GP_ERR_INVALID;
	*out = NULL;
	gp_reader *r = calloc(1, sizeof(*r));
	if (!r) return GP_ERR_NOMEM;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;
	struct stat st;
	if (r->fd < 0 || fstat(r->fd, &st)) {
		rc = GP_ERR_IO;
		fail_open(r, rc, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	r->fsize = (uint64_t)st.st_size;
	if ((rc = read_header(r))) goto fail;
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		rc = GP_ERR_NOMEM;
		goto fail;
	}
	ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, 24);
	if (r->fsize >= r->data_start + GP_FOOTER_SIZE) footer_at(r, r->fsize - GP_FOOTER_SIZE, &r->foot);
	if ((rc = scan(r))) goto fail;
	*out = r;
	return 0;
fail:
	memcpy(g_open_err, r->errmsg, sizeof(g_open_err)); /* for gp_reader_errmsg(NULL) */
	if (r->fd >= 0) close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->ch);
	free(r);
	return rc;
}

GP_API const char *gp_reader_errmsg(const gp_reader *r)
{
	if (!r) return g_open_err;
	return r->errmsg[0] ? r->errmsg : "no error";
}

GP_API const gp_header *gp_reader_header(const gp_reader *r) { return r ? &r->hdr : NULL; }

GP_API int gp_reader_footer(const gp_reader *r, struct gp_footer_info *out)
{
	if (!r || !out) return GP_ERR_INVALID;
	*out = r->foot;
	return r->foot.present ? 0 : GP_ERR_EOF;
}

GP_API void gp_reader_integrity(const gp_reader *r, struct gp_integrity *out)
{
	if (r && out) *out = r->integ;
}

static void cursor_free(struct cursor *c)
{
	free(c->cbuf);
	free(c->ubuf);
	free(c->list);
	free(c->batch);
	memset(c, 0, sizeof(*c));
}

GP_API void gp_reader_close(gp_reader *r)
{
	if (!r) return;
	close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->ch);
	cursor_free(&r->fo);
	cursor_free(&r->meta);
	for (size_t i = 0; i < r->ncurs; i++) cursor_free(&r->curs[i]);
	free(r->curs);
	free(r->heap);
	for (size_t i = 0; i < r->nstrs; i++) free(r->strs[i].s);
	free(r->strs);
	free(r->strmap.slot);
	free(r->srcs);
	free(r->srcmap.slot);
	free(r);
}

/* ---------------------------------------------------------------- chunk decoding */
static void mark(gp_reader *r, struct cent *c, int state)
{
	if (c->state == state) return;
	if (c->state == CH_OK) r->integ.frames_ok--;
	if (c->state == CH_CORRUPT) r->integ.frames_corrupt--;
	c->state = (uint8_t)state;
	if (state == CH_OK) r->integ.frames_ok++;
	else r->integ.frames_corrupt++;
}

/* Reads + decompresses chunk idx into c; 0 ok, <0 skipped (counted). */
static int load_chunk(gp_reader *r, struct cursor *c, size_t idx)
{
	struct cent *e = &r->ch[idx];
	c->in_chunk = 0;
	c->bi = c->bn = 0;
	if (e->state == CH_CORRUPT) return GP_ERR_CORRUPT;
	if (!c->batch && !(c->batch = malloc(DEC_BATCH * sizeof(*c->batch)))) return GP_ERR_NOMEM;
	if (e->csize > c->ccap) {
		uint8_t *n = realloc(c->cbuf, e->csize);
		if (!n) return GP_ERR_NOMEM;
		c->cbuf = n;
		c->ccap = e->csize;
	}
	if (e->usize > c->ucap || !c->ubuf) {
		/* slack past the data: the fast record decoder may read ahead */
		size_t want = e->usize ? e->usize : 1;
		uint8_t *n = realloc(c->ubuf, want + GP_DEC_OVERREAD);
		if (!n) return GP_ERR_NOMEM;
		c->ubuf = n;
		c->ucap = want;
	}
	if (pread_all(r->fd, c->cbuf, e->csize, e->off + GP_CHUNK_HDR)) {
		problem(r, "chunk at offset %llu: read error", (unsigned long long)e->off);
		mark(r, e, CH_CORRUPT);
		return GP_ERR_IO;
	}
	size_t n = ZSTD_decompressDCtx(r->dctx, c->ubuf, e->usize, c->cbuf, e->csize);
	if (ZSTD_isError(n) || n != e->usize) {
		problem(r, "chunk at offset %llu: decompression failed (%s)", (unsigned long long)e->off,
			ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from the chunk header");
		mark(r, e, CH_CORRUPT);
		return GP_ERR_CORRUPT;
	}
	if (e->state == CH_UNKNOWN) mark(r, e, CH_OK);
	const gp_rec_source *s = gp_reader_source(r, e->source);
	memset(c->ubuf + e->usize, 0, GP_DEC_OVERREAD); /* defined bytes for the read-ahead */
	gp_dec_start(&c->dec, c->ubuf, e->usize, e->source, s ? s->tid : 0);
	gp_dec_set_slack(&c->dec, GP_DEC_OVERREAD);
	c->cur = idx;
	c->in_chunk = 1;
	return 0;
}

/* Decodes the next batch of the cursor's current chunk: 1, or 0 at its end
 * (a malformed record ends it too, after the records before it). */
static int chunk_refill(gp_reader *r, struct cursor *c)
{
	if (!c->in_chunk) return 0;
	int meta;
	int n = gp_dec_batch(&c->dec, c->batch, DEC_BATCH, &meta);
	if (meta) {
		for (int i = 0; i < n; i++) {
			gp_record *x = &c->batch[i];
			if (x->type == GP_REC_STRING) {
				const char *s = str_add(r, x->u.string.id, x->u.string.str, x->u.string.len);
				x->u.string.str = s ? s : "";
				if (!s) x->u.string.len = 0;
			} else if (x->type == GP_REC_SOURCE) {
				src_add(r, &x->u.source);
			}
		}
	}
	if (n) {
		c->bn = n;
		c->bi = 1;
		c->cr = &c->batch[0];
		return 1;
	}
	if (c->dec.err) {
		struct cent *e = &r->ch[c->cur];
		problem(r, "chunk at offset %llu: %s at byte %llu", (unsigned long long)e->off,
			c->dec.why ? c->dec.why : "bad record",
			(unsigned long long)(c->dec.p - c->ubuf));
		mark(r, e, CH_CORRUPT);
	}
	c->in_chunk = 0;
	return 0;
}

/* Next record of the cursor's current chunk (c->cr): 1, or 0 at its end. */
static inline int chunk_next(gp_reader *r, struct cursor *c)
{
	if (GP_LIKELY(c->bi < c->bn)) {
		c->cr = &c->batch[c->bi++];
		return 1;
	}
	return chunk_refill(r, c);
}

/* ---------------------------------------------------------------- file order */
GP_API int gp_reader_next(gp_reader *r, const gp_record **rec)
{
	if (!r || !rec) return GP_ERR_INVALID;
	struct cursor *c = &r->fo;
	for (;;) {
		if (chunk_next(r, c)) {
			*rec = c->cr;
			return 1;
		}
		if (c->fo_next >= r->nch) return 0;
		int rc = load_chunk(r, c, c->fo_next++);
		if (rc == GP_ERR_NOMEM) return rc;
	}
}

/* ---------------------------------------------------------------- time order */
static int cursor_advance(gp_reader *r, struct cursor *c)
{
	for (;;) {
		while (chunk_next(r, c)) {
			uint64_t t = gp_record_time(c->cr);
			if (c->only_untimed && t) continue;
			if (c->skip_untimed && !t && c->cr->source_id == 0) continue;
			c->key = t;
			return 1;
		}
		if (c->li >= c->nlist) return 0;
		int rc = load_chunk(r, c, c->list[c->li++]);
		if (rc == GP_ERR_NOMEM) return rc;
	}
}

static int less(const struct cursor *a, const struct cursor *b)
{
	if (a->key != b->key) return a->key < b->key;
	return a->cr->source_id < b->cr->source_id;
}

static void sift_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && less(h[l], h[m])) m = l;
		if (l + 1 < n && less(h[l + 1], h[m])) m = l + 1;
		if (m == i) return;
		struct cursor *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int cmp_src_then_idx(const void *a, const void *b, void *arg)
{
	const struct cent *ch = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (ch[x].source != ch[y].source) return ch[x].source < ch[y].source ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int order_setup(gp_reader *r)
{
	/* phase 1 cursor: all source-0 chunks in file order */
	size_t n0 = 0;
	for (size_t i = 0; i < r->nch; i++) n0 += r->ch[i].source == 0;
	r->meta.list = malloc((n0 ? n0 : 1) * sizeof(size_t));
	if (!r->meta.list) return GP_ERR_NOMEM;
	for (size_t i = 0; i < r->nch; i++)
		if (r->ch[i].source == 0) r->meta.list[r->meta.nlist++] = i;
	r->meta.only_untimed = 1;

	size_t *idx = malloc((r->nch ? r->nch : 1) * sizeof(size_t));
	if (!idx) return GP_ERR_NOMEM;
	for (size_t i = 0; i < r->nch; i++) idx[i] = i;
	qsort_r(idx, r->nch, sizeof(size_t), cmp_src_then_idx, r->ch);
	size_t ns = 0;
	for (size_t i = 0; i < r->nch; i++)
		if (i == 0 || r->ch[idx[i]].source != r->ch[idx[i - 1]].source) ns++;
	r->curs = calloc(ns ? ns : 1, sizeof(*r->curs));
	r->heap = calloc(ns ? ns : 1, sizeof(*r->heap));
	if (!r->curs || !r->heap) {
		free(idx);
		return GP_ERR_NOMEM;
	}
	for (size_t i = 0; i < r->nch;) {
		size_t j = i;
		while (j < r->nch && r->ch[idx[j]].source == r->ch[idx[i]].source) j++;
		struct cursor *c = &r->curs[r->ncurs++];
		c->list = malloc((j - i) * sizeof(size_t));
		if (!c->list) {
			free(idx);
			return GP_ERR_NOMEM;
		}
		memcpy(c->list, idx + i, (j - i) * sizeof(size_t));
		c->nlist = j - i;
		c->skip_untimed = r->ch[idx[i]].source == 0;
		i = j;
	}
	free(idx);
	return 0;
}

GP_API int gp_reader_next_ordered(gp_reader *r, const gp_record **rec)
{
	if (!r || !rec) return GP_ERR_INVALID;
	int rc;
	if (r->ord_phase == 0) {
		if ((rc = order_setup(r))) return rc;
		r->ord_phase = 1;
	}
	if (r->ord_phase == 1) {
		rc = cursor_advance(r, &r->meta);
		if (rc < 0) return rc;
		if (rc) {
			*rec = r->meta.cr;
			return 1;
		}
		/* all metadata (strings, sources) known now: start the merge */
		for (size_t i = 0; i < r->ncurs; i++) {
			rc = cursor_advance(r, &r->curs[i]);
			if (rc < 0) return rc;
			if (rc) r->heap[r->nheap++] = &r->curs[i];
		}
		for (size_t i = r->nheap; i-- > 0;) sift_down(r->heap, r->nheap, i);
		r->last = NULL;
		r->ord_phase = 2;
	}
	if (r->ord_phase == 2) {
		if (r->last) {
			rc = cursor_advance(r, r->last);
			if (rc < 0) return rc;
			if (!rc) r->heap[0] = r->heap[--r->nheap];
			if (r->nheap) sift_down(r->heap, r->nheap, 0);
			r->last = NULL;
		}
		if (!r->nheap) {
			r->ord_phase = 3;
			return 0;
		}
		r->last = r->heap[0];
		*rec = r->last->cr;
		return 1;
	}
	return 0;
}

GP_API int gp_reader_rewind(gp_reader *r)
{
	if (!r) return GP_ERR_INVALID;
	r->fo.fo_next = 0;
	r->fo.in_chunk = 0;
	r->fo.bi = r->fo.bn = 0;
	cursor_free(&r->meta);
	for (size_t i = 0; i < r->ncurs; i++) cursor_free(&r->curs[i]);
	free(r->curs);
	free(r->heap);
	r->curs = NULL;
	r->heap = NULL;
	r->ncurs = r->nheap = 0;
	r->last = NULL;
	r->ord_phase = 0;
	return 0;
}

GP_API int gp_reader_load_meta(gp_reader *r)
{
	if (!r) return GP_ERR_INVALID;
	struct cursor c = { 0 };
	for (size_t i = 0; i < r->nch; i++) {
		if (r->ch[i].source != 0) continue;
		int rc = load_chunk(r, &c, i);
		if (rc == GP_ERR_NOMEM) {
			cursor_free(&c);
			return rc;
		}
		while (chunk_next(r, &c)) {}
	}
	cursor_free(&c);
	return 0;
}

GP_API int gp_reader_describe_integrity(gp_reader *r, char *buf, size_t n)
{
	if (!r || !buf) return GP_ERR_INVALID;
	/* verify every chunk not decoded yet */
	struct cursor c = { 0 };
	for (size_t i = 0; i < r->nch; i++) {
		if (r->ch[i].state != CH_UNKNOWN) continue;
		if (load_chunk(r, &c, i) == 0)
			while (chunk_next(r, &c)) {}
	}
	cursor_free(&c);
	const struct gp_integrity *g = &r->integ;
	if (!g->truncated && !g->frames_corrupt && !g->bytes_skipped)
		return snprintf(buf, n, "ok: %llu chunks, footer present", (unsigned long long)g->frames_ok);
	int k = 0;
	if (g->truncated)
		k += snprintf(buf + k, n > (size_t)k ? n - k : 0, "truncated at offset %llu (no footer); ",
			      (unsigned long long)g->truncated_at);
	if (g->frames_corrupt || g->bytes_skipped)
		k += snprintf(buf + k, n > (size_t)k ? n - k : 0, "%llu corrupt chunks, %llu bytes skipped; ",
			      (unsigned long long)g->frames_corrupt, (unsigned long long)g->bytes_skipped);
	k += snprintf(buf + k, n > (size_t)k ? n - k : 0, "%llu chunks ok%s; first problem: %s",
		      (unsigned long long)g->frames_ok, g->has_footer ? ", footer present" : "",
		      r->first_problem[0] ? r->first_problem : "none");
	return k;
}
