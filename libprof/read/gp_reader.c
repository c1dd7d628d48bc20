/* gp_reader.c — reads a trace: header validation, chunk scan with resync,
 * file-order and time-ordered iteration, string/source tables, integrity.
 * Input is untrusted: every size, count and offset is bounded first. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "common/gp_error.h"
#include "common/gp_format.h"
#include "codec/gp_codec.h"
#include "gp_prefetch.h"
#include "gp_reader.h"

static __thread char g_open_err[512];

enum {
	CH_UNKNOWN = 0,
	CH_OK = 1,
	CH_CORRUPT = 2
};
enum {
	DEC_BATCH = 32
}; /* records decoded per gp_dec_batch call */

/* A chunk as the scan found it: the same for every reader of the file (its
 * state, CH_*, is each reader's own: gp_reader.state). */
struct cent {
	uint64_t off; /* of the chunk header */
	uint32_t csize, usize, source, count;
	uint64_t first_ts, last_ts; /* of its timed records (both 0: none) */
};

/* The scan of a file opened with gp_reader_opts.share: its chunk table and
 * what the scan reported, shared read-only by the readers of the same file
 * (device, inode, size and modification time) open at once with share set,
 * freed with the last of them. */
struct chtab {
	struct chtab *next; /* in g_tabs */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	size_t refs; /* under g_tabs_lock */
	struct cent *ch;
	size_t nch;
	struct gp_integrity integ;
	char errmsg[512], first_problem[512];
};
static struct chtab *g_tabs;
static pthread_mutex_t g_tabs_lock = PTHREAD_MUTEX_INITIALIZER;

struct cursor {
	uint8_t *cbuf, *ubuf;
	size_t ccap, ucap;
	size_t *list; /* ordered mode: this source's chunks */
	size_t nlist, li;
	size_t fo_next; /* file-order mode: next chunk index */
	size_t cur;     /* chunk being decoded */
	int in_chunk;
	struct gp_dec dec;
	gp_record *batch; /* records decoded ahead (DEC_BATCH) */
	/* the records ready to hand out: [nx, ne) of the batch, or of the
	 * job's records whose metadata is applied */
	const gp_record *nx, *ne;
	const gp_record *cr; /* current record (in batch) */
	uint64_t key;
	int skip_untimed; /* source 0 in the merge: metadata already given */
	int only_untimed; /* ordered phase 1 */
	/* decoding ahead (gp_prefetch.h): the chunk as the workers decoded it */
	int pooled; /* this cursor takes its chunks from r->pf */
	struct gp_job *job;
	size_t ji; /* the job's next record not yet in [nx, ne) */
};

struct strent {
	uint32_t id, len;
	char *s;
};
/* id -> index+1 of an array whose elements begin with their u32 id (the id
 * is read from the array, not kept here) */
struct id_index {
	uint32_t *slot;
	uint32_t cap, n;
};

struct gp_reader {
	int fd;
	uint64_t fsize, data_start;
	gp_header hdr;
	struct cent *ch;
	size_t nch, chcap;
	uint8_t *state;    /* per chunk: CH_* */
	struct chtab *tab; /* ch is tab's (shared): not freed here */
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
	uint64_t lim_key;    /* the earliest of the other cursors (heap[0]'s children): */
	uint32_t lim_src;    /* its key and source (UINT64_MAX: none) */

	struct strent *strs;
	size_t nstrs, strs_cap;
	struct id_index strmap;
	gp_rec_source *srcs;
	size_t nsrcs, srcs_cap;
	struct id_index srcmap;
	uint32_t src_hint; /* gp_reader_source's last answer: srcs index + 1 (0: none) */

	struct gp_prefetch *pf; /* decoding threads (NULL: this thread decodes) */
	int threads;
	int fo_scheduled; /* file order: the schedule is set */
	int windowed;
	uint64_t win_lo, win_hi; /* gp_reader_set_time_window */
	uint8_t *want;           /* per chunk, while windowed: read it */
	int meta_loaded;         /* gp_reader_load_meta ran */
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
static uint32_t map_get(const struct id_index *m, uint32_t key, const void *arr, size_t stride)
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

static int map_put(struct id_index *m, uint32_t key, uint32_t val, const void *arr, size_t stride)
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
	/* A chunk's records are of one source, and a reader gives them in
	 * runs: the last answer first, checked (the hash lookup, asked per
	 * record for its process, was 7 % of `gpuprof steps`' CPU).  Relaxed:
	 * any thread that may read the sources may read the hint. */
	uint32_t h = __atomic_load_n(&r->src_hint, __ATOMIC_RELAXED);
	if (h && h <= r->nsrcs && r->srcs[h - 1].source_id == source_id) return &r->srcs[h - 1];
	uint32_t v = map_get(&r->srcmap, source_id, r->srcs, sizeof(*r->srcs));
	if (v) __atomic_store_n(&((gp_reader *)r)->src_hint, v, __ATOMIC_RELAXED);
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
static int footer_at(gp_reader *r, uint64_t pos, struct gp_footer_info *f)
{
	uint8_t b[GP_FOOTER_SIZE];
	if (pos + GP_FOOTER_SIZE > r->fsize || gp_pread_all(r->fd, b, sizeof(b), pos)) return 0;
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
	if (pos + GP_CHUNK_HDR > r->fsize || gp_pread_all(r->fd, b, sizeof(b), pos)) {
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
		if (gp_pread_all(r->fd, blk, n, base)) return r->fsize;
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
	r->ch[r->nch++] = (struct cent){ off, h->csize, h->usize, h->source, h->count, h->first_ts, h->last_ts };
	return 0;
}

/* The index is not needed to read, but a damaged one is reported. */
static void check_index(gp_reader *r, uint64_t pos, const struct gp_chunk_hdr *h)
{
	uint8_t *c = malloc(h->csize), *u = malloc(h->usize ? h->usize : 1);
	if (c && u && !gp_pread_all(r->fd, c, h->csize, pos + GP_CHUNK_HDR)) {
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
	if (have && gp_pread_all(r->fd, fixed, (size_t)have, 0)) return fail_open(r, GP_ERR_IO, "read error: %s", strerror(errno));
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
	if (gp_pread_all(r->fd, b, hsize, 0)) {
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
	h->flags = gp_get32(b + 44);
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

static int describe_chunk(void *arg, size_t idx, struct gp_chunk_ref *ref);

static int same_file(const struct chtab *t, const struct stat *st)
{
	return t->dev == st->st_dev && t->ino == st->st_ino && t->size == st->st_size &&
	       t->mtime.tv_sec == st->st_mtim.tv_sec && t->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* The scan of the file st names by another reader open with share, if any:
 * r takes its chunk table and what it reported (1), instead of scanning. */
static int tab_take(gp_reader *r, const struct stat *st)
{
	pthread_mutex_lock(&g_tabs_lock);
	struct chtab *t = g_tabs;
	while (t && !same_file(t, st)) t = t->next;
	if (t) {
		t->refs++;
		r->tab = t;
		r->ch = t->ch;
		r->nch = r->chcap = t->nch;
		r->integ = t->integ;
		memcpy(r->errmsg, t->errmsg, sizeof(r->errmsg));
		memcpy(r->first_problem, t->first_problem, sizeof(r->first_problem));
	}
	pthread_mutex_unlock(&g_tabs_lock);
	return t != NULL;
}

/* r's scan, for the readers of the same file opened with share while r is
 * open (when the table cannot be made, r keeps its own). */
static void tab_give(gp_reader *r, const struct stat *st)
{
	struct chtab *t = calloc(1, sizeof(*t));
	if (!t) return;
	*t = (struct chtab){ .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size, .mtime = st->st_mtim, .refs = 1, .ch = r->ch, .nch = r->nch, .integ = r->integ };
	memcpy(t->errmsg, r->errmsg, sizeof(t->errmsg));
	memcpy(t->first_problem, r->first_problem, sizeof(t->first_problem));
	pthread_mutex_lock(&g_tabs_lock);
	t->next = g_tabs;
	g_tabs = t;
	pthread_mutex_unlock(&g_tabs_lock);
	r->tab = t;
}

/* r's chunk table: its own freed, a shared one freed with its last reader. */
static void tab_drop(gp_reader *r)
{
	struct chtab *t = r->tab;
	if (!t) {
		free(r->ch);
		return;
	}
	pthread_mutex_lock(&g_tabs_lock);
	int last = --t->refs == 0;
	if (last) {
		struct chtab **p = &g_tabs;
		while (*p != t) p = &(*p)->next;
		*p = t->next;
	}
	pthread_mutex_unlock(&g_tabs_lock);
	if (last) {
		free(t->ch);
		free(t);
	}
	r->tab = NULL;
	r->ch = NULL;
}

GP_API int gp_reader_open(const char *path, gp_reader **out)
{
	return gp_reader_open_opts(path, NULL, out);
}

GP_API int gp_reader_threads_default(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > GP_READER_MAX_THREADS ? GP_READER_MAX_THREADS
						     : (int)n;
}

GP_API int gp_reader_open_opts(const char *path, const struct gp_reader_opts *opts, gp_reader **out)
{
	if (!path || !out) return GP_ERR_INVALID;
	int threads = 1, share = 0;
	if (opts && opts->sz >= offsetof(struct gp_reader_opts, threads) + sizeof(opts->threads)) {
		if (opts->threads < 0) return GP_ERR_INVALID;
		threads = opts->threads ? opts->threads : 1;
		if (threads > GP_READER_MAX_THREADS) threads = GP_READER_MAX_THREADS;
	}
	if (opts && opts->sz >= offsetof(struct gp_reader_opts, share) + sizeof(opts->share)) share = opts->share;
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
	if (!(share && tab_take(r, &st)) && (rc = scan(r))) goto fail;
	if (share && !r->tab) tab_give(r, &st);
	if (!(r->state = calloc(r->nch ? r->nch : 1, 1))) {
		rc = GP_ERR_NOMEM;
		goto fail;
	}
	r->threads = threads;
	/* decoding threads: the caller's thread counts as one of `threads` */
	if (threads > 1 && r->nch > 1 &&
	    (rc = gp_prefetch_new(r->fd, threads - 1, 2 * (size_t)(threads - 1) + 2, describe_chunk, r, &r->pf)))
		goto fail;
	*out = r;
	return 0;
fail:
	memcpy(g_open_err, r->errmsg, sizeof(g_open_err)); /* for gp_reader_errmsg(NULL) */
	if (r->fd >= 0) close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	tab_drop(r);
	free(r->state);
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

GP_API int gp_reader_recoverable(int rc)
{
	return rc >= 0 || rc == GP_ERR_EOF || rc == GP_ERR_TRUNCATED || rc == GP_ERR_CORRUPT;
}

static void cursor_free(gp_reader *r, struct cursor *c)
{
	if (c->job) gp_prefetch_release(r->pf, c->job);
	free(c->cbuf);
	free(c->ubuf);
	free(c->list);
	free(c->batch);
	gp_dec_free(&c->dec);
	int pooled = c->pooled;
	memset(c, 0, sizeof(*c));
	c->pooled = pooled;
}

GP_API void gp_reader_close(gp_reader *r)
{
	if (!r) return;
	cursor_free(r, &r->fo);
	cursor_free(r, &r->meta);
	for (size_t i = 0; i < r->ncurs; i++) cursor_free(r, &r->curs[i]);
	gp_prefetch_free(r->pf); /* after the cursors gave their jobs back */
	close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	tab_drop(r);
	free(r->state);
	free(r->want);
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
static void mark(gp_reader *r, size_t idx, int state)
{
	uint8_t *c = &r->state[idx];
	if (*c == state) return;
	if (*c == CH_OK) r->integ.frames_ok--;
	if (*c == CH_CORRUPT) r->integ.frames_corrupt--;
	*c = (uint8_t)state;
	if (state == CH_OK) r->integ.frames_ok++;
	else r->integ.frames_corrupt++;
}

/* For the decoding threads: where chunk idx is and its source's tid now;
 * 0 for a chunk already known to be corrupt. */
static int describe_chunk(void *arg, size_t idx, struct gp_chunk_ref *ref)
{
	gp_reader *r = arg;
	const struct cent *e = &r->ch[idx];
	if (r->state[idx] == CH_CORRUPT) return 0;
	const gp_rec_source *s = gp_reader_source(r, e->source);
	*ref = (struct gp_chunk_ref){ e->off, e->csize, e->usize, e->source, s ? s->tid : 0, r->hdr.major };
	return 1;
}

/* load_chunk with decoding threads: the chunk's job, with the outcomes the
 * reader reports on its own thread (the same as decoding here). */
static int load_job(gp_reader *r, struct cursor *c, size_t idx)
{
	const struct cent *e = &r->ch[idx];
	struct gp_chunk_ref ref;
	describe_chunk(r, idx, &ref);
	struct gp_job *j = gp_prefetch_take(r->pf, idx, &ref, r->dctx);
	if (!j) return GP_ERR_NOMEM;
	if (j->rc) {
		if (j->rc == GP_ERR_IO)
			problem(r, "chunk at offset %llu: read error", (unsigned long long)e->off);
		else if (j->rc == GP_ERR_CORRUPT)
			problem(r, "chunk at offset %llu: decompression failed (%s)", (unsigned long long)e->off, j->zerr);
		int rc = j->rc;
		gp_prefetch_release(r->pf, j);
		if (rc == GP_ERR_NOMEM) return rc;
		mark(r, idx, CH_CORRUPT);
		return rc;
	}
	if (r->state[idx] == CH_UNKNOWN) mark(r, idx, CH_OK);
	c->job = j;
	c->ji = 0;
	c->nx = c->ne = NULL;
	c->cur = idx;
	c->in_chunk = 1;
	return 0;
}

/* Reads + decompresses chunk idx into c; 0 ok, <0 skipped (counted). */
static int load_chunk(gp_reader *r, struct cursor *c, size_t idx)
{
	const struct cent *e = &r->ch[idx];
	c->in_chunk = 0;
	c->nx = c->ne = NULL;
	if (c->job) {
		gp_prefetch_release(r->pf, c->job);
		c->job = NULL;
	}
	if (r->state[idx] == CH_CORRUPT) return GP_ERR_CORRUPT;
	if (c->pooled && r->pf) return load_job(r, c, idx);
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
	if (gp_pread_all(r->fd, c->cbuf, e->csize, e->off + GP_CHUNK_HDR)) {
		problem(r, "chunk at offset %llu: read error", (unsigned long long)e->off);
		mark(r, idx, CH_CORRUPT);
		return GP_ERR_IO;
	}
	size_t n = ZSTD_decompressDCtx(r->dctx, c->ubuf, e->usize, c->cbuf, e->csize);
	if (ZSTD_isError(n) || n != e->usize) {
		problem(r, "chunk at offset %llu: decompression failed (%s)", (unsigned long long)e->off,
			ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from the chunk header");
		mark(r, idx, CH_CORRUPT);
		return GP_ERR_CORRUPT;
	}
	if (r->state[idx] == CH_UNKNOWN) mark(r, idx, CH_OK);
	const gp_rec_source *s = gp_reader_source(r, e->source);
	memset(c->ubuf + e->usize, 0, GP_DEC_OVERREAD); /* defined bytes for the read-ahead */
	gp_dec_start(&c->dec, c->ubuf, e->usize, e->source, s ? s->tid : 0, r->hdr.major);
	gp_dec_set_slack(&c->dec, GP_DEC_OVERREAD);
	c->cur = idx;
	c->in_chunk = 1;
	return 0;
}

/* The strings and sources among n decoded records go into the tables
 * (a string record then points at the table's copy). */
static void apply_meta(gp_reader *r, gp_record *x, size_t n)
{
	for (size_t i = 0; i < n; i++, x++) {
		if (x->type == GP_REC_STRING) {
			const char *s = str_add(r, x->u.string.id, x->u.string.str, x->u.string.len);
			x->u.string.str = s ? s : "";
			if (!s) x->u.string.len = 0;
		} else if (x->type == GP_REC_SOURCE) {
			src_add(r, &x->u.source);
		}
	}
}

static void chunk_bad_record(gp_reader *r, struct cursor *c, const char *why, size_t at)
{
	const struct cent *e = &r->ch[c->cur];
	problem(r, "chunk at offset %llu: %s at byte %llu", (unsigned long long)e->off, why ? why : "bad record",
		(unsigned long long)at);
	mark(r, c->cur, CH_CORRUPT);
}

/* Decodes the next batch of the cursor's current chunk: 1, or 0 at its end
 * (a malformed record ends it too, after the records before it). */
static int chunk_refill(gp_reader *r, struct cursor *c)
{
	if (!c->in_chunk) return 0;
	int meta;
	int n = gp_dec_batch(&c->dec, c->batch, DEC_BATCH, &meta);
	if (meta) apply_meta(r, c->batch, (size_t)n);
	if (n) {
		c->cr = &c->batch[0];
		c->nx = c->cr + 1;
		c->ne = c->batch + n;
		return 1;
	}
	if (c->dec.err) chunk_bad_record(r, c, c->dec.why, (size_t)(c->dec.p - c->ubuf));
	c->in_chunk = 0;
	return 0;
}

/* The same from a job: its records in the batches gp_dec_batch would have
 * made on this thread (DEC_BATCH records, ending after a STACK record), so
 * strings and sources enter the tables at the same points. */
static int job_refill(gp_reader *r, struct cursor *c)
{
	struct gp_job *j = c->job;
	if (!c->in_chunk || !j) return 0;
	if (c->ji < j->nrec) {
		size_t b = c->ji, end = b + DEC_BATCH < j->nrec ? b + DEC_BATCH : j->nrec;
		int meta = 0;
		for (size_t i = b; i < end; i++) {
			uint32_t t = j->recs[i].type;
			meta |= t <= GP_REC_SOURCE;
			if (t == GP_REC_STACK) {
				end = i + 1;
				break;
			}
		}
		if (meta) apply_meta(r, j->recs + b, end - b);
		c->cr = &j->recs[b];
		c->nx = c->cr + 1;
		c->ne = j->recs + end;
		c->ji = end;
		return 1;
	}
	if (j->dec_err) chunk_bad_record(r, c, j->why, j->err_at);
	gp_prefetch_release(r->pf, j);
	c->job = NULL;
	c->in_chunk = 0;
	return 0;
}

/* Next record of the cursor's current chunk (c->cr): 1, or 0 at its end. */
static inline int chunk_next(gp_reader *r, struct cursor *c)
{
	if (GP_LIKELY(c->nx < c->ne)) {
		c->cr = c->nx++;
		return 1;
	}
	return c->job ? job_refill(r, c) : chunk_refill(r, c);
}

/* ---------------------------------------------------------------- window */
/* Whether chunk i is read under the time window (want[], made by
 * gp_reader_set_time_window). */
static int chunk_wanted(const gp_reader *r, size_t i)
{
	return !r->windowed || r->want[i];
}

/* Whether chunk e may hold records of [lo, hi): metadata chunks (meta: of
 * a metadata source) and chunks without timed records always; none of the
 * others when lo >= hi. */
static int chunk_overlaps(const struct cent *e, int meta, uint64_t lo, uint64_t hi)
{
	if (meta || (!e->first_ts && !e->last_ts)) return 1;
	return lo < hi && e->last_ts >= lo && e->first_ts < hi;
}

/* Whether source id holds metadata: source 0, and in a trace that keeps its
 * metadata apart the sources a SOURCE record gives kind GP_SOURCE_META
 * (`gpuprof merge` gives each later input's metadata one). */
static int meta_source(const gp_reader *r, uint32_t id)
{
	if (id == 0) return 1;
	const gp_rec_source *s = gp_reader_meta_apart(r) ? gp_reader_source(r, id) : NULL;
	return s && s->kind == GP_SOURCE_META;
}

static int cmp_src_then_idx(const void *a, const void *b, void *arg);

/* The chunks read under [lo, hi): those that overlap it, and, so that the
 * time-ordered merge gives the window's records in the order a whole read
 * gives them, every chunk of a source before the source's last overlapping
 * one unless all its records are before lo.  Why: the merge takes the
 * smallest head of the sources.  A record before lo, while at its source's
 * head, is taken before any record of the window, so leaving it out changes
 * nothing of their order; a record at or after hi holds back the records
 * its source has after it (a source out of order: late CUPTI buffers), so
 * it stays wherever such records follow.  A source in time order has no
 * chunk of the second kind: the cost is the overlapping chunks'. */
static int window_plan(gp_reader *r, uint64_t lo, uint64_t hi)
{
	uint8_t *want = calloc(r->nch ? r->nch : 1, 1);
	size_t *idx = malloc((r->nch ? r->nch : 1) * sizeof(*idx));
	if (!want || !idx) {
		free(want);
		free(idx);
		return GP_ERR_NOMEM;
	}
	/* the source kinds, for metadata sources other than 0 (once) */
	if (gp_reader_meta_apart(r) && !r->meta_loaded) {
		int rc = gp_reader_load_meta(r);
		if (rc < 0) {
			free(want);
			free(idx);
			return rc;
		}
	}
	for (size_t i = 0; i < r->nch; i++) idx[i] = i;
	qsort_r(idx, r->nch, sizeof(*idx), cmp_src_then_idx, r->ch);
	for (size_t i = 0; i < r->nch;) {
		size_t j = i;
		while (j < r->nch && r->ch[idx[j]].source == r->ch[idx[i]].source) j++;
		int meta = meta_source(r, r->ch[idx[i]].source);
		int later = 0; /* a later chunk of this source overlaps */
		for (size_t k = j; k-- > i;) {
			const struct cent *e = &r->ch[idx[k]];
			int ov = chunk_overlaps(e, meta, lo, hi);
			int timed = e->first_ts || e->last_ts;
			want[idx[k]] = ov || (later && !(timed && e->last_ts < lo));
			later |= ov && timed && !meta;
		}
		i = j;
	}
	free(idx);
	free(r->want);
	r->want = want;
	return 0;
}

GP_API int gp_reader_set_time_window(gp_reader *r, uint64_t from, uint64_t to)
{
	if (!r || from > to) return GP_ERR_INVALID;
	int windowed = from > 0 || to < UINT64_MAX;
	if (windowed) {
		int rc = window_plan(r, from, to);
		if (rc) return rc;
	}
	r->windowed = windowed;
	r->win_lo = from;
	r->win_hi = to;
	return gp_reader_rewind(r);
}

GP_API void gp_reader_time_window(const gp_reader *r, uint64_t *from, uint64_t *to)
{
	*from = r && r->windowed ? r->win_lo : 0;
	*to = r && r->windowed ? r->win_hi : UINT64_MAX;
}

GP_API int gp_reader_meta_apart(const gp_reader *r)
{
	return r && (r->hdr.major > 1 || r->hdr.minor >= 4) && (r->hdr.flags & GP_HDR_FLAG_META_APART);
}

GP_API int gp_reader_time_range(const gp_reader *r, uint64_t *first, uint64_t *last)
{
	if (!r || !first || !last) return GP_ERR_INVALID;
	int any = 0;
	*first = *last = 0;
	for (size_t i = 0; i < r->nch; i++) {
		const struct cent *e = &r->ch[i];
		if (!e->first_ts && !e->last_ts) continue;
		if (!any || e->first_ts < *first) *first = e->first_ts;
		if (!any || e->last_ts > *last) *last = e->last_ts;
		any = 1;
	}
	return any ? 0 : GP_ERR_EOF;
}

GP_API int gp_reader_threads(const gp_reader *r)
{
	return r ? (r->pf ? r->threads : 1) : 0;
}

/* ---------------------------------------------------------------- file order */
static int fo_schedule(gp_reader *r)
{
	size_t *idx = malloc((r->nch ? r->nch : 1) * sizeof(*idx)), n = 0;
	if (!idx) return GP_ERR_NOMEM;
	for (size_t i = 0; i < r->nch; i++)
		if (chunk_wanted(r, i)) idx[n++] = i;
	int rc = gp_prefetch_schedule(r->pf, idx, n);
	free(idx);
	r->fo_scheduled = 1;
	return rc;
}

static __attribute__((noinline)) int next_slow(gp_reader *r, const gp_record **rec);

/* The next record of the current batch is most calls (all but one in
 * DEC_BATCH): that case first, before any other check, and the rest out
 * of line (inlined, it made every call save and restore registers).  The
 * file-order cursor's c->cr is not kept here: only next_slow reads it,
 * after chunk_next set it. */
GP_API int gp_reader_next(gp_reader *r, const gp_record **rec)
{
	if (GP_LIKELY(r && rec)) {
		struct cursor *c = &r->fo;
		if (GP_LIKELY(c->nx < c->ne)) {
			*rec = c->nx++;
			return 1;
		}
	}
	return next_slow(r, rec);
}

static int next_slow(gp_reader *r, const gp_record **rec)
{
	if (!r || !rec) return GP_ERR_INVALID;
	struct cursor *c = &r->fo;
	if (r->pf && !r->fo_scheduled) {
		int rc = fo_schedule(r);
		if (rc) return rc;
		c->pooled = 1;
	}
	for (;;) {
		if (chunk_next(r, c)) {
			*rec = c->cr;
			return 1;
		}
		while (c->fo_next < r->nch && !chunk_wanted(r, c->fo_next)) c->fo_next++;
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
			uint64_t t = gp_rec_time(c->cr);
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
	r->meta.pooled = 1;

	size_t *idx = malloc((r->nch ? r->nch : 1) * sizeof(size_t)), nw = 0;
	if (!idx) return GP_ERR_NOMEM;
	for (size_t i = 0; i < r->nch; i++)
		if (chunk_wanted(r, i)) idx[nw++] = i;
	qsort_r(idx, nw, sizeof(size_t), cmp_src_then_idx, r->ch);
	size_t ns = 0;
	for (size_t i = 0; i < nw; i++)
		if (i == 0 || r->ch[idx[i]].source != r->ch[idx[i - 1]].source) ns++;
	r->curs = calloc(ns ? ns : 1, sizeof(*r->curs));
	r->heap = calloc(ns ? ns : 1, sizeof(*r->heap));
	if (!r->curs || !r->heap) {
		free(idx);
		return GP_ERR_NOMEM;
	}
	for (size_t i = 0; i < nw;) {
		size_t j = i;
		while (j < nw && r->ch[idx[j]].source == r->ch[idx[i]].source) j++;
		struct cursor *c = &r->curs[r->ncurs++];
		c->pooled = 1;
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
	return r->pf ? gp_prefetch_schedule(r->pf, r->meta.list, r->meta.nlist) : 0;
}

/* The merge's loads, predicted: a source's next chunk is loaded once the
 * merge has passed its previous chunk's records, i.e. at about that
 * chunk's last timestamp (its first chunk: at once). */
struct pload {
	uint64_t at;
	size_t idx;
};
static int cmp_pload(const void *a, const void *b)
{
	const struct pload *x = a, *y = b;
	if (x->at != y->at) return x->at < y->at ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int merge_schedule(gp_reader *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ncurs; i++) n += r->curs[i].nlist;
	struct pload *pl = malloc((n ? n : 1) * sizeof(*pl));
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!pl || !idx) {
		free(pl);
		free(idx);
		return GP_ERR_NOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < r->ncurs; i++)
		for (size_t j = 0; j < r->curs[i].nlist; j++) {
			size_t c = r->curs[i].list[j];
			pl[k++] = (struct pload){ j ? r->ch[r->curs[i].list[j - 1]].last_ts : 0, c };
		}
	qsort(pl, n, sizeof(*pl), cmp_pload);
	for (size_t i = 0; i < n; i++) idx[i] = pl[i].idx;
	int rc = gp_prefetch_schedule(r->pf, idx, n);
	free(pl);
	free(idx);
	return rc;
}


static __attribute__((noinline)) int next_ordered_slow(gp_reader *r, const gp_record **rec);

/* Most calls take the next record of the source just handed out, which
 * stays the earliest (a source's records come in runs): from its batch,
 * without a sift or a call, as cursor_advance would.  The heap's other
 * cursors do not move meanwhile, so the earliest of them (lim_key,
 * lim_src) is found once, in next_ordered_slow. */
GP_API int gp_reader_next_ordered(gp_reader *r, const gp_record **rec)
{
	if (GP_LIKELY(r && rec && r->ord_phase == 2 && r->last)) {
		struct cursor *c = r->last;
		if (GP_LIKELY(c->nx < c->ne)) {
			const gp_record *x = c->nx;
			uint64_t t = gp_rec_time(x);
			/* it stays first: the earliest other cursor is not less()
			 * than it */
			if (GP_LIKELY((t || !c->skip_untimed || x->source_id != 0) &&
				      (t < r->lim_key || (t == r->lim_key && x->source_id <= r->lim_src)))) {
				c->cr = c->nx++;
				c->key = t;
				*rec = x;
				return 1;
			}
		}
	}
	return next_ordered_slow(r, rec);
}

static int next_ordered_slow(gp_reader *r, const gp_record **rec)
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
		if (r->pf && (rc = merge_schedule(r))) return rc;
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
		/* what the next record of r->last is compared with */
		const struct cursor *m = r->nheap > 1 ? r->heap[1] : NULL;
		if (r->nheap > 2 && less(r->heap[2], m)) m = r->heap[2];
		r->lim_key = m ? m->key : UINT64_MAX;
		r->lim_src = m ? m->cr->source_id : UINT32_MAX;
		return 1;
	}
	return 0;
}

GP_API int64_t gp_reader_record_chunk(const gp_reader *r)
{
	return r && r->ord_phase == 2 && r->last ? (int64_t)r->last->cur : -1;
}

GP_API int gp_reader_rewind(gp_reader *r)
{
	if (!r) return GP_ERR_INVALID;
	if (r->fo.job) {
		gp_prefetch_release(r->pf, r->fo.job);
		r->fo.job = NULL;
	}
	r->fo.fo_next = 0;
	r->fo.in_chunk = 0;
	r->fo.nx = r->fo.ne = NULL;
	r->fo_scheduled = 0;
	cursor_free(r, &r->meta);
	for (size_t i = 0; i < r->ncurs; i++) cursor_free(r, &r->curs[i]);
	free(r->curs);
	free(r->heap);
	r->curs = NULL;
	r->heap = NULL;
	r->ncurs = r->nheap = 0;
	r->last = NULL;
	r->ord_phase = 0;
	return r->pf ? gp_prefetch_schedule(r->pf, NULL, 0) : 0;
}

GP_API int gp_reader_load_meta(gp_reader *r)
{
	if (!r) return GP_ERR_INVALID;
	struct cursor c = { 0 };
	for (size_t i = 0; i < r->nch; i++) {
		if (r->ch[i].source != 0) continue;
		int rc = load_chunk(r, &c, i);
		if (rc == GP_ERR_NOMEM) {
			cursor_free(r, &c);
			return rc;
		}
		while (chunk_next(r, &c)) {}
	}
	cursor_free(r, &c);
	r->meta_loaded = 1;
	return 0;
}

GP_API int gp_reader_describe_integrity(gp_reader *r, char *buf, size_t n)
{
	if (!r || !buf) return GP_ERR_INVALID;
	/* verify every chunk not decoded yet */
	struct cursor c = { 0 };
	for (size_t i = 0; i < r->nch; i++) {
		if (r->state[i] != CH_UNKNOWN) continue;
		if (load_chunk(r, &c, i) == 0)
			while (chunk_next(r, &c)) {}
	}
	cursor_free(r, &c);
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
