/* gp_ring.h — libprof-internal: the per-thread byte ring behind gp_emit,
 * and the entry layout it shares with the recorder's metadata queue.
 *
 * One producer (the owning thread) and one consumer (the writer, under the
 * recorder's drain_lock).  The producer's hot path takes no lock, does no
 * atomic read-modify-write and writes no line the consumer writes: head,
 * counters and its limit live on the producer's cache line, tail and the
 * drain generation on the consumer's.  Positions (head, tail) count bytes
 * forever; an entry starts at buf[pos & (cap - 1)] and may run past the
 * end of buf into GP_RING_SLACK extra bytes, so an entry is always
 * contiguous: no wrap check or padding entry on the hot path.
 *
 * Entry: u32 type, u32 size (this header included, a multiple of 8), the
 * record struct (GP_ALIGN8 of its size), extra bytes (string bytes, stack
 * frames; GP_ALIGN8 of their length). */
#ifndef GP_RING_H
#define GP_RING_H

#include <stdint.h>
#include <string.h>
#include "common/gp_error.h"
#include "common/gp_format.h"

#define GP_ALIGN8(x) (((x) + 7u) & ~(uint32_t)7u)
#define GP_ENTRY_HDR 8u /* u32 type, u32 size */
#define GP_RING_MIN 4096u
/* Every entry fits in this much space past the end of the ring buffer
 * (fixed records <= 112 bytes, a stack <= 8 + 16 + 128 * 8). */
#define GP_RING_SLACK 2048u
/* Pages faulted in at ring creation; the consumer faults in further pages
 * ahead of the producer (MADV_POPULATE_WRITE) during the first lap. */
#define GP_RING_PREFAULT (512u << 10)

struct gp_ring {
	/* producer's cache line: written only by the owning thread */
	_Alignas(64) uint64_t head; /* release-stored after each entry */
	uint64_t limit;             /* head may grow to this without looking at tail:
					    <= last tail seen + cap (space), and the point where
					    the ring is half full (wake the consumer) */
	uint64_t drops;             /* entries refused (ring full) */
	uint64_t accepted;
	uint64_t kicked_gen; /* drain_gen value at our last wakeup */
	uint8_t *buf;        /* cap + GP_RING_SLACK bytes, read-only after init */
	uint64_t cap;        /* power of two */
	int wake_fd;         /* the consumer's eventfd, read-only after init */
	/* consumer's cache line */
	_Alignas(64) uint64_t tail;
	uint64_t drain_gen; /* bumped after every drain of this ring */
	uint64_t faulted;   /* bytes of buf known to be faulted in */
	uint64_t head_seen; /* head at the previous drain */
};

/* ---- entries */
static inline uint32_t gp_entry_size(uint32_t blen, uint32_t elen)
{
	return GP_ENTRY_HDR + GP_ALIGN8(blen) + GP_ALIGN8(elen);
}

static inline void gp_entry_put(uint8_t *p, uint32_t type, uint32_t size, const void *body, uint32_t blen,
				const void *extra, uint32_t elen)
{
	gp_put32(p, type);
	gp_put32(p + 4, size);
	memcpy(p + GP_ENTRY_HDR, body, blen);
	if (elen) memcpy(p + GP_ENTRY_HDR + GP_ALIGN8(blen), extra, elen);
}

/* Turns an entry into a gp_record whose string bytes / stack frames point
 * into the entry (lengths clipped to the entry).  0, or GP_ERR_CORRUPT for
 * an unknown type or an entry too small for its struct. */
int gp_entry_to_record(const uint8_t *p, uint32_t type, uint32_t size, gp_record *r);

/* ---- life cycle */
/* Maps a cap-byte buffer (a power of two >= GP_RING_MIN) plus the slack and
 * faults in its start; wake_fd is written when the ring gets half full.
 * 0 or GP_ERR_NOMEM. */
int gp_ring_init(struct gp_ring *g, uint64_t cap, int wake_fd);
void gp_ring_fini(struct gp_ring *g);

/* ---- producer */
/* The careful path: any entry, GP_ERR_FULL (counted in drops) when it does
 * not fit; wakes the consumer once per drain when more than half full. */
int gp_ring_put(struct gp_ring *g, uint32_t type, const void *body, uint32_t blen, const void *extra, uint32_t elen);

/* The hot path for a fixed-size body (blen a constant after inlining).
 * Copies GP_ALIGN8(blen) bytes: callers pass a gp_record union member, and
 * the union is a multiple of 8 bytes, so that stays inside it. */
static inline __attribute__((always_inline)) int gp_ring_put_fixed(struct gp_ring *g, uint32_t type,
								   const void *body, uint32_t blen)
{
	uint32_t size = GP_ENTRY_HDR + GP_ALIGN8(blen);
	uint64_t head = g->head, need = head + size;
	if (GP_UNLIKELY(need > g->limit)) return gp_ring_put(g, type, body, blen, NULL, 0);
	uint8_t *p = g->buf + (head & (g->cap - 1));
	uint64_t hdr = (uint64_t)type | (uint64_t)size << 32;
	memcpy(p, &hdr, 8);
	memcpy(p + GP_ENTRY_HDR, body, GP_ALIGN8(blen));
	__atomic_store_n(&g->head, need, __ATOMIC_RELEASE);
	__atomic_store_n(&g->accepted, g->accepted + 1, __ATOMIC_RELAXED);
	return 0;
}

/* ---- consumer */
/* The producer's position: every entry before it is complete. */
static inline uint64_t gp_ring_head(const struct gp_ring *g) { return __atomic_load_n(&g->head, __ATOMIC_ACQUIRE); }

/* The entry at position t (tail <= t < head): its bytes, type and size;
 * NULL when they do not make an entry ending by head (cannot happen with
 * one producer; the caller stops rather than loop). */
static inline const uint8_t *gp_ring_entry(const struct gp_ring *g, uint64_t t, uint64_t head, uint32_t *type,
					   uint32_t *size)
{
	const uint8_t *p = g->buf + (t & (g->cap - 1));
	*type = gp_get32(p);
	*size = gp_get32(p + 4);
	if (*size < GP_ENTRY_HDR || (*size & 7) || *size > head - t) return NULL;
	return p;
}

/* Gives the space before position t back to the producer. */
static inline void gp_ring_release(struct gp_ring *g, uint64_t t) { __atomic_store_n(&g->tail, t, __ATOMIC_RELEASE); }

/* Ends a drain: the producer may wake the consumer again. */
static inline void gp_ring_drained(struct gp_ring *g) { __atomic_add_fetch(&g->drain_gen, 1, __ATOMIC_RELEASE); }

/* During the first lap, faults in pages ahead of the producer (twice what
 * it wrote since the last call), so its stores do not fault; head is the
 * head the drain saw.  Nothing once the producer is gone. */
void gp_ring_prefault_ahead(struct gp_ring *g, uint64_t head, int producer_gone);

static inline uint64_t gp_ring_accepted(const struct gp_ring *g) { return __atomic_load_n(&g->accepted, __ATOMIC_RELAXED); }
static inline uint64_t gp_ring_drops(const struct gp_ring *g) { return __atomic_load_n(&g->drops, __ATOMIC_RELAXED); }

#endif /* GP_RING_H */
