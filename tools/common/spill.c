/* spill.c — see spill.h. */
#include "common/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/testenv.h"
#include "common/tool.h"
#include "common/util.h"

enum { BLOCK_BYTES = 64 << 10, WRITER_SLOTS = 8, READER_SLOTS = 4 };

/* A block held in a cache: its number (SIZE_MAX: none), its bytes, whether
 * they changed since read, and when last used (the least recent goes). */
struct slot { size_t b; unsigned char *buf; int dirty; unsigned long used; };

struct cache { struct slot s[WRITER_SLOTS]; int n, last; unsigned long tick; };

struct spill {
	/* per: records a block, a power of two (1 << shift) so that finding
	 * record i's block is a shift, not a division; blksz = per * recsz */
	size_t recsz, per, blksz;
	unsigned shift;
	size_t n;                 /* records */
	size_t nres;              /* blocks kept in memory (the cap's) */
	/* mem[b]: block b in memory (within the cap, or after the file failed);
	 * NULL: in the file at b * blksz or in the cache */
	unsigned char **mem; size_t nmem, cmem;
	int fd; /* -1: no file yet */
	int failed;
	struct cache c;
	/* the block block() gave last, its bytes and its slot (NULL: in
	 * memory), for runs of calls in one block (a slot leaves the cache
	 * only for another block, which then becomes the last) */
	size_t lastb;
	unsigned char *last;
	struct slot *lastsl;
};

/* hit (first, spill.h's inline path reads it): the block read last and
 * its bytes (a cached slot is only reused by a read of another block,
 * which replaces them). */
struct spill_reader { struct spill_reader_hit hit; const struct spill *s; struct cache c; };

/* Where the files go: $TMPDIR, unset or empty /tmp. */
static const char *spill_dir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

/* One line for the process, however many spills fail. */
static void spill_warn(const char *what, int err)
{
	static int said;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		tool_warn("cannot spill to %s (%s: %s): keeping it in memory", spill_dir(), what, strerror(err));
}

struct spill *spill_new(size_t recsz, size_t mem_cap)
{
	struct spill *s = xcalloc(1, sizeof(*s));
	s->recsz = recsz ? recsz : 1;
	while (s->recsz << (s->shift + 1) <= BLOCK_BYTES) s->shift++;
	s->per = (size_t)1 << s->shift;
	s->blksz = s->per * s->recsz;
	/* tests: 0 sends small traces' rows through the file */
	uint64_t m;
	if (!testenv(TESTENV_SPILL_MEM, &m) && m < mem_cap) mem_cap = (size_t)m;
	s->nres = mem_cap / s->blksz;
	s->fd = -1;
	s->lastb = SIZE_MAX;
	s->c.n = WRITER_SLOTS;
	for (int k = 0; k < WRITER_SLOTS; k++) s->c.s[k].b = SIZE_MAX;
	return s;
}

void spill_free(struct spill *s)
{
	if (!s) return;
	for (size_t b = 0; b < s->nmem; b++) free(s->mem[b]);
	free(s->mem);
	for (int k = 0; k < WRITER_SLOTS; k++) free(s->c.s[k].buf);
	if (s->fd >= 0) close(s->fd);
	free(s);
}

size_t spill_count(const struct spill *s) { return s->n; }
int spill_failed(const struct spill *s) { return s->failed; }

/* The file, made on first need: 0, or -1 with the spill failed. */
static int file_open(struct spill *s)
{
	if (s->fd >= 0) return 0;
	if (s->failed) return -1;
	const char *dir = spill_dir();
	size_t n = strlen(dir) + 32;
	char *path = xmalloc(n);
	snprintf(path, n, "%s/gpuprof-spill-XXXXXX", dir);
	s->fd = mkostemp(path, O_CLOEXEC);
	int err = errno;
	if (s->fd >= 0) unlink(path);
	free(path);
	if (s->fd < 0) {
		s->failed = 1;
		spill_warn("a temporary file", err);
		return -1;
	}
	return 0;
}

static int io_all(int fd, unsigned char *p, size_t n, off_t off, int wr)
{
	while (n) {
		ssize_t k = wr ? pwrite(fd, p, n, off) : pread(fd, p, n, off);
		if (k < 0 && errno == EINTR) continue;
		if (k <= 0) {
			if (k == 0) errno = wr ? ENOSPC : EIO;
			return -1;
		}
		p += k; n -= (size_t)k; off += k;
	}
	return 0;
}

/* Slot k's block leaves the cache: to the file when changed; where that
 * fails, into memory for good (its buffer becomes the block's). */
static void slot_evict(struct spill *s, struct slot *sl)
{
	if (sl->b == SIZE_MAX) return;
	if (sl->dirty) {
		if (file_open(s) < 0 || io_all(s->fd, sl->buf, s->blksz, (off_t)(sl->b * s->blksz), 1) < 0) {
			if (!s->failed) spill_warn("writing", errno);
			s->failed = 1;
			s->mem[sl->b] = sl->buf;
			sl->buf = NULL;
		}
	}
	sl->b = SIZE_MAX;
	sl->dirty = 0;
}

/* Block b in cache c: found, or read into its least recently used slot
 * (fresh: a new block, zeroed, never read).  w: the writer's cache, whose
 * slots are written back as they go. */
static struct slot *cache_get(struct cache *c, const struct spill *s, size_t b, int fresh, struct spill *w)
{
	struct slot *sl = &c->s[c->last];
	if (sl->b == b) {
		sl->used = ++c->tick;
		return sl;
	}
	int v = 0;
	for (int k = 0; k < c->n; k++) {
		if (c->s[k].b == b) {
			c->last = k;
			c->s[k].used = ++c->tick;
			return &c->s[k];
		}
		if (c->s[k].used < c->s[v].used) v = k;
	}
	sl = &c->s[v];
	if (w) slot_evict(w, sl);
	if (!sl->buf) sl->buf = xmalloc(s->blksz);
	if (fresh) {
		memset(sl->buf, 0, s->blksz);
	} else if (io_all(s->fd, sl->buf, s->blksz, (off_t)(b * s->blksz), 0) < 0) {
		/* only after a write that said it worked: the block is lost */
		spill_warn("reading back", errno);
		memset(sl->buf, 0, s->blksz);
	}
	sl->b = b;
	sl->used = ++c->tick;
	c->last = v;
	return sl;
}

/* Block b's bytes for the writer; dirty: they are to change. */
static unsigned char *block(struct spill *s, size_t b, int fresh, int dirty)
{
	if (b == s->lastb) {
		if (s->lastsl) {
			s->lastsl->dirty |= dirty;
			s->lastsl->used = ++s->c.tick;
		}
		return s->last;
	}
	if (b >= s->nmem) {
		vec_reserve((void **)&s->mem, &s->cmem, b + 1, sizeof(*s->mem));
		memset(s->mem + s->nmem, 0, (b + 1 - s->nmem) * sizeof(*s->mem));
		s->nmem = b + 1;
	}
	if (!s->mem[b] && (b < s->nres || (fresh && s->failed))) s->mem[b] = xcalloc(1, s->blksz);
	s->lastb = b;
	s->lastsl = NULL;
	if (s->mem[b]) return s->last = s->mem[b];
	struct slot *sl = cache_get(&s->c, s, b, fresh, s);
	sl->dirty |= dirty;
	s->lastsl = sl;
	return s->last = sl->buf;
}

void *spill_push(struct spill *s)
{
	size_t i = s->n++, b = i >> s->shift, k = i & (s->per - 1);
	unsigned char *p = block(s, b, k == 0 && b >= s->nmem, 1) + k * s->recsz;
	memset(p, 0, s->recsz);
	return p;
}

void *spill_at(struct spill *s, size_t i) { return block(s, i >> s->shift, 0, 1) + (i & (s->per - 1)) * s->recsz; }

const void *spill_get(struct spill *s, size_t i)
{
	return block(s, i >> s->shift, 0, 0) + (i & (s->per - 1)) * s->recsz;
}

void spill_truncate(struct spill *s, size_t n)
{
	if (n < s->n) s->n = n;
}

void spill_write(struct spill *s, const void *p, size_t n)
{
	const unsigned char *q = p;
	while (n) {
		size_t at = s->n & (s->per - 1), b = s->n >> s->shift, k = s->blksz - at < n ? s->blksz - at : n;
		memcpy(block(s, b, at == 0 && b >= s->nmem, 1) + at, q, k);
		s->n += k; q += k; n -= k;
	}
}

size_t spill_read(struct spill *s, size_t off, void *dst, size_t n)
{
	unsigned char *d = dst;
	if (off >= s->n) return 0;
	if (n > s->n - off) n = s->n - off;
	for (size_t left = n; left;) {
		size_t at = off & (s->per - 1), k = s->blksz - at < left ? s->blksz - at : left;
		memcpy(d, block(s, off >> s->shift, 0, 0) + at, k);
		d += k; off += k; left -= k;
	}
	return n;
}

void spill_seal(struct spill *s)
{
	for (int k = 0; k < WRITER_SLOTS; k++) slot_evict(s, &s->c.s[k]);
	s->lastb = SIZE_MAX;
}

struct spill_reader *spill_reader_new(const struct spill *s)
{
	struct spill_reader *rd = xcalloc(1, sizeof(*rd));
	rd->s = s;
	rd->c.n = READER_SLOTS;
	rd->hit = (struct spill_reader_hit){ SIZE_MAX, NULL, s->recsz, s->shift };
	for (int k = 0; k < READER_SLOTS; k++) rd->c.s[k].b = SIZE_MAX;
	return rd;
}

const void *spill_reader_at_miss(struct spill_reader *rd, size_t i)
{
	const struct spill *s = rd->s;
	size_t b = i >> s->shift;
	const unsigned char *m = s->mem[b];
	rd->hit.p = m ? m : cache_get(&rd->c, s, b, 0, NULL)->buf;
	rd->hit.b = b;
	return rd->hit.p + (i & (s->per - 1)) * s->recsz;
}

void spill_reader_free(struct spill_reader *rd)
{
	if (!rd) return;
	for (int k = 0; k < READER_SLOTS; k++) free(rd->c.s[k].buf);
	free(rd);
}
