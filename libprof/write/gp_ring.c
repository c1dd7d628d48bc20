/* gp_ring.c — the per-thread ring's careful producer path, buffer set-up
 * and page faulting, and the entry decoding (gp_ring.h). */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gp_ring.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int g_no_populate; /* MADV_POPULATE_WRITE unsupported (atomic) */

int gp_entry_to_record(const uint8_t *p, uint32_t type, uint32_t size, gp_record *r)
{
	if (type == 0 || type >= GP_REC_TYPE_MAX) return GP_ERR_CORRUPT;
	uint32_t blen = gp_rec_struct_size[type];
	if (GP_ENTRY_HDR + GP_ALIGN8(blen) > size) return GP_ERR_CORRUPT;
	r->type = type;
	r->source_id = 0;
	memcpy(&r->u, p + GP_ENTRY_HDR, blen);
	const uint8_t *extra = p + GP_ENTRY_HDR + GP_ALIGN8(blen);
	uint32_t elen = size - GP_ENTRY_HDR - GP_ALIGN8(blen);
	if (type == GP_REC_STRING) {
		if (r->u.string.len > elen) r->u.string.len = elen;
		r->u.string.str = (const char *)extra;
	} else if (type == GP_REC_STACK) {
		if ((uint64_t)r->u.stack.nframes * 8 > elen) r->u.stack.nframes = elen / 8;
		r->u.stack.frames = (const uint64_t *)extra;
	}
	return 0;
}

static void wake(struct gp_ring *g)
{
	int saved = errno;
	uint64_t one = 1;
	ssize_t rc = write(g->wake_fd, &one, sizeof(one));
	(void)rc;
	errno = saved;
}

/* Where the producer must next look at tail: never past the space it knows
 * is free (tail + cap); at half full (wake the consumer); while more than
 * half full, every cap/16 bytes (to see the consumer's progress). */
static inline uint64_t ring_limit(uint64_t head, uint64_t tail, uint64_t cap)
{
	if (head - tail <= cap / 2) return tail + cap / 2;
	uint64_t l = head + cap / 16;
	return l < tail + cap ? l : tail + cap;
}

int gp_ring_put(struct gp_ring *g, uint32_t type, const void *body, uint32_t blen, const void *extra, uint32_t elen)
{
	uint32_t size = gp_entry_size(blen, elen);
	uint64_t head = g->head, cap = g->cap;
	uint64_t need = head + size;
	uint64_t tail = __atomic_load_n(&g->tail, __ATOMIC_ACQUIRE);
	if (need - tail > cap || size > GP_RING_SLACK || size > cap / 2) {
		__atomic_store_n(&g->drops, g->drops + 1, __ATOMIC_RELAXED);
		g->limit = ring_limit(head, tail, cap);
		return GP_ERR_FULL;
	}
	gp_entry_put(g->buf + (head & (cap - 1)), type, size, body, blen, extra, elen);
	__atomic_store_n(&g->head, need, __ATOMIC_RELEASE);
	__atomic_store_n(&g->accepted, g->accepted + 1, __ATOMIC_RELAXED);
	if (need - tail > cap / 2) {
		/* More than half full: wake the consumer once per drain of this ring. */
		uint64_t dg = __atomic_load_n(&g->drain_gen, __ATOMIC_ACQUIRE);
		if (dg != g->kicked_gen) {
			g->kicked_gen = dg;
			wake(g);
		}
	}
	g->limit = ring_limit(need, tail, cap);
	return 0;
}

/* Faults in [from, to) of a ring buffer without writing to it (the producer
 * may be writing nearby).  0, or GP_ERR_IO when the kernel cannot (then
 * nothing happened). */
static int populate(uint8_t *buf, uint64_t from, uint64_t to)
{
	uint64_t pg = 4096;
	from &= ~(pg - 1);
	to = (to + pg - 1) & ~(pg - 1);
	if (to <= from || __atomic_load_n(&g_no_populate, __ATOMIC_RELAXED)) return GP_ERR_IO;
	if (madvise(buf + from, to - from, MADV_POPULATE_WRITE)) {
		if (errno == EINVAL) __atomic_store_n(&g_no_populate, 1, __ATOMIC_RELAXED);
		return GP_ERR_IO;
	}
	return 0;
}

int gp_ring_init(struct gp_ring *g, uint64_t cap, int wake_fd)
{
	memset(g, 0, sizeof(*g));
	void *buf = mmap(NULL, cap + GP_RING_SLACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) return GP_ERR_NOMEM;
	g->buf = buf;
	g->cap = cap;
	g->limit = cap / 2;
	g->kicked_gen = UINT64_MAX;
	g->wake_fd = wake_fd;
	/* fault in the start now (first use of this thread, off the hot
	 * path); the consumer keeps ahead of the producer from there */
	uint64_t pre = cap + GP_RING_SLACK < GP_RING_PREFAULT ? cap + GP_RING_SLACK : GP_RING_PREFAULT;
	if (populate(g->buf, 0, pre))
		for (uint64_t o = 0; o < pre; o += 4096) ((volatile uint8_t *)g->buf)[o] = 0;
	g->faulted = pre;
	return 0;
}

void gp_ring_fini(struct gp_ring *g)
{
	if (g->buf) munmap(g->buf, g->cap + GP_RING_SLACK);
	g->buf = NULL;
}

void gp_ring_prefault_ahead(struct gp_ring *g, uint64_t head, int producer_gone)
{
	if (g->faulted < g->cap + GP_RING_SLACK && head < g->cap && !producer_gone) {
		uint64_t ahead = 2 * (head - g->head_seen);
		uint64_t to = head + (ahead > GP_RING_PREFAULT ? ahead : GP_RING_PREFAULT);
		if (to > g->cap + GP_RING_SLACK) to = g->cap + GP_RING_SLACK;
		if (to > g->faulted && !populate(g->buf, g->faulted, to)) g->faulted = to;
	}
	g->head_seen = head;
}
