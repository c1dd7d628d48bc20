/* gp_intern.c — the recorder's string table (gp_intern.h). */
#include <stdlib.h>
#include "gp_intern.h"

uint64_t gp_str_hash(const char *s, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return h;
}

uint32_t gp_strtab_find(const struct gp_strtab *t, const char *s, uint32_t len, uint64_t h)
{
	if (!t->slot_cap) return 0;
	uint32_t m = t->slot_cap - 1;
	for (uint32_t i = (uint32_t)h & m;; i = (i + 1) & m) {
		uint32_t x = t->slot[i];
		if (!x) return 0;
		const struct gp_strtab_ent *e = &t->ent[x - 1];
		if (e->h == h && e->len == len && !memcmp(e->s, s, len)) return x;
	}
}

uint32_t gp_strtab_add(struct gp_strtab *t, const char *s, uint32_t len, uint64_t h)
{
	if ((t->n + 1) * 2 > t->slot_cap) {
		uint32_t nc = t->slot_cap ? t->slot_cap * 2 : 1024;
		uint32_t *ns = calloc(nc, sizeof(*ns));
		if (!ns) return 0;
		for (uint32_t k = 0; k < t->n; k++) {
			uint32_t i = (uint32_t)t->ent[k].h & (nc - 1);
			while (ns[i]) i = (i + 1) & (nc - 1);
			ns[i] = k + 1;
		}
		free(t->slot);
		t->slot = ns;
		t->slot_cap = nc;
	}
	if (t->n == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 512;
		struct gp_strtab_ent *ne = realloc(t->ent, nc * sizeof(*ne));
		if (!ne) return 0;
		t->ent = ne;
		t->cap = nc;
	}
	char *copy = malloc((size_t)len + 1);
	if (!copy) return 0;
	memcpy(copy, s, len);
	copy[len] = 0;
	uint32_t id = t->n + 1;
	t->ent[t->n++] = (struct gp_strtab_ent){ h, len, copy };
	uint32_t m = t->slot_cap - 1, i = (uint32_t)h & m;
	while (t->slot[i]) i = (i + 1) & m;
	t->slot[i] = id;
	return id;
}

void gp_strtab_remove_last(struct gp_strtab *t)
{
	if (!t->n) return;
	uint32_t id = t->n, m = t->slot_cap - 1;
	for (uint32_t i = (uint32_t)t->ent[id - 1].h & m; t->slot[i]; i = (i + 1) & m)
		if (t->slot[i] == id) {
			t->slot[i] = 0;
			break;
		}
	free(t->ent[id - 1].s);
	t->n--;
}

void gp_strtab_free(struct gp_strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++) free(t->ent[i].s);
	free(t->ent);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
