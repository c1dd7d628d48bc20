/* mem_usage.c — see mem_usage.h. */
#include "analysis/mem_usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mem_usage_add(struct mem_usage *mu, uint32_t pid, const gp_rec_memory *m)
{
	if (m->op != 1 && m->op != 2) return;
	char key[48];
	snprintf(key, sizeof(key), "%u/%u/%u", pid, m->device_id, m->mem_kind);
	int is_new;
	size_t *slot = strmap_get(&mu->idx, key, &is_new);
	if (is_new) {
		struct mem_use u;
		memset(&u, 0, sizeof(u));
		u.pid = pid; u.dev = m->device_id; u.kind = m->mem_kind;
		*slot = mu->n;
		VEC_PUSH(mu->v, mu->n, mu->cap, u);
	}
	struct mem_use *u = &mu->v[*slot];
	if (m->op == 1) {
		u->allocs++;
		u->alloc_bytes += m->bytes;
		if (m->bytes > u->largest_alloc) u->largest_alloc = m->bytes;
		u->in_use += m->bytes;
		if (u->in_use > u->peak) u->peak = u->in_use;
	} else {
		u->frees++;
		u->free_bytes += m->bytes;
		u->in_use = u->in_use > m->bytes ? u->in_use - m->bytes : 0;
	}
}

static int cmp_use(const void *a, const void *b)
{
	const struct mem_use *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

void mem_usage_finish(struct mem_usage *mu)
{
	/* the index goes stale: no mem_usage_add after this */
	if (mu->n) qsort(mu->v, mu->n, sizeof(*mu->v), cmp_use);
}

void mem_usage_free(struct mem_usage *mu)
{
	strmap_free(&mu->idx);
	free(mu->v);
	memset(mu, 0, sizeof(*mu));
}
