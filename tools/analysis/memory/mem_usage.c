/* mem_usage.c — see mem_usage.h. */
#include "analysis/memory/mem_usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entry of (pid, dev, kind), made empty when new. */
static struct mem_use *mem_use_of(struct mem_usage *mu, uint32_t pid, uint32_t dev, uint32_t kind)
{
	char key[48];
	snprintf(key, sizeof(key), "%u/%u/%u", pid, dev, kind);
	int is_new;
	size_t *slot = strmap_get(&mu->idx, key, &is_new);
	if (is_new) {
		struct mem_use u = { .pid = pid, .dev = dev, .kind = kind };
		*slot = mu->n;
		VEC_PUSH(mu->v, mu->n, mu->cap, u);
	}
	return &mu->v[*slot];
}

void mem_usage_add(struct mem_usage *mu, uint32_t pid, const gp_rec_memory *m)
{
	if (m->op != 1 && m->op != 2) return;
	struct mem_use *u = mem_use_of(mu, pid, m->device_id, m->mem_kind);
	if (m->op == 1) {
		u->allocs++;
		u->alloc_bytes += m->bytes;
		if (m->bytes > u->largest_alloc) u->largest_alloc = m->bytes;
		u->in_use += m->bytes;
		if (u->in_use > u->peak) u->peak = u->in_use;
		u->net += (int64_t)m->bytes;
		if (u->net > u->max_net) u->max_net = u->net;
	} else {
		u->frees++;
		u->free_bytes += m->bytes;
		u->in_use = u->in_use > m->bytes ? u->in_use - m->bytes : 0;
		u->net -= (int64_t)m->bytes;
	}
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

void mem_usage_merge(struct mem_usage *mu, const struct mem_usage *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct mem_use *s = &src->v[i];
		struct mem_use *u = mem_use_of(mu, s->pid, s->dev, s->kind);
		/* src's walk from u's in use rather than 0 (mem_use.net); the
		 * byte counts of a real trace are far below 2^63 */
		int64_t x = (int64_t)u->in_use;
		u->peak = (uint64_t)max64(max64((int64_t)u->peak, x + s->max_net), (int64_t)s->peak);
		u->in_use = (uint64_t)max64(x + s->net, (int64_t)s->in_use);
		u->max_net = max64(u->max_net, u->net + s->max_net);
		u->net += s->net;
		u->allocs += s->allocs;
		u->frees += s->frees;
		u->alloc_bytes += s->alloc_bytes;
		u->free_bytes += s->free_bytes;
		if (s->largest_alloc > u->largest_alloc) u->largest_alloc = s->largest_alloc;
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
