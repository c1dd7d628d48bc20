/* gp_intern.h — libprof-internal: string interning for the recorder.
 *
 * gp_strtab: the recorder-wide table, bytes -> id (1, 2, 3... in the order
 * strings were first seen), open addressing over a hash of the bytes.  Not
 * locked: the recorder holds its meta_lock around every call.
 * gp_icache: a small per-thread cache in front of it, keyed by the
 * caller's pointer and the content hash, so a thread interning the same
 * constant string again takes no lock, and a reused buffer holding new
 * bytes misses instead of returning a stale id. */
#ifndef GP_INTERN_H
#define GP_INTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

uint64_t gp_str_hash(const char *s, size_t n);

struct gp_strtab_ent {
	uint64_t h;
	uint32_t len;
	char *s;
};
struct gp_strtab {
	struct gp_strtab_ent *ent; /* ent[id - 1] */
	uint32_t n, cap;
	uint32_t *slot;    /* id, 0 = empty */
	uint32_t slot_cap; /* power of two, > 2 n */
};

/* The id of these bytes (h = gp_str_hash of them), 0 when not in the table. */
uint32_t gp_strtab_find(const struct gp_strtab *t, const char *s, uint32_t len, uint64_t h);
/* Adds bytes not in the table under the next id (n + 1) and returns it; 0
 * when out of memory (the table is unchanged then). */
uint32_t gp_strtab_add(struct gp_strtab *t, const char *s, uint32_t len, uint64_t h);
/* Takes back the string gp_strtab_add added last: its id is given to the
 * next string added.  (Safe with linear probing: nothing inserted later
 * probed past its slot.) */
void gp_strtab_remove_last(struct gp_strtab *t);
/* The bytes of an id (NUL-terminated copy), NULL if unknown. */
static inline const char *gp_strtab_str(const struct gp_strtab *t, uint32_t id)
{
	return id && id <= t->n ? t->ent[id - 1].s : NULL;
}
void gp_strtab_free(struct gp_strtab *t);

#define GP_ICACHE 64
struct gp_icache_ent {
	const char *p;
	uint64_t h;
	uint32_t len, id;
};
struct gp_icache {
	uint64_t gen; /* owner's generation: another table, start empty */
	struct gp_icache_ent ent[GP_ICACHE];
};

/* The cache slot for pointer s with hash h, after emptying the cache if it
 * belonged to another generation (another recorder). */
static inline struct gp_icache_ent *gp_icache_slot(struct gp_icache *c, uint64_t gen, const char *s, uint64_t h)
{
	if (c->gen != gen) {
		memset(c->ent, 0, sizeof(c->ent));
		c->gen = gen;
	}
	return &c->ent[(h ^ ((uintptr_t)s >> 3)) & (GP_ICACHE - 1)];
}

static inline int gp_icache_hit(const struct gp_icache_ent *e, const char *s, uint32_t len, uint64_t h)
{
	return e->id && e->p == s && e->h == h && e->len == len;
}

#endif /* GP_INTERN_H */
