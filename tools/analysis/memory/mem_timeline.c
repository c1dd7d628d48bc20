/* mem_timeline.c — see mem_timeline.h. */
#include "analysis/memory/mem_timeline.h"

#include <stdlib.h>
#include <string.h>

static struct mem_series *series(struct mem_timeline *m, uint32_t pid, uint32_t dev, uint32_t kind)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pid == pid && m->v[i].dev == dev && m->v[i].kind == kind) return &m->v[i];
	vec_reserve((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v));
	struct mem_series *s = &m->v[m->n++];
	memset(s, 0, sizeof(*s));
	s->pid = pid; s->dev = dev; s->kind = kind;
	u64map_init(&s->live);
	return s;
}

void mem_timeline_add(struct mem_timeline *m, uint32_t pid, const gp_rec_memory *rec)
{
	if (rec->op != 1 && rec->op != 2) return;
	if (m->events >= MEM_TIMELINE_MAX_EVENTS) { m->dropped++; return; }
	struct mem_series *s = series(m, pid, rec->device_id, rec->mem_kind);
	int64_t delta;
	if (rec->op == 1) {
		*u64map_get(&s->live, rec->address, MAP_INSERT) = rec->bytes;
		delta = (int64_t)rec->bytes;
		s->allocs++;
	} else {
		uint64_t *b = u64map_get(&s->live, rec->address, MAP_FIND);
		uint64_t bytes = rec->bytes ? rec->bytes : b ? *b : 0;
		if (b) u64map_del(&s->live, rec->address);
		delta = -(int64_t)bytes;
		s->frees++;
	}
	struct mem_point pt = { rec->ts_ns, delta };
	VEC_PUSH(s->p, s->n, s->cap, pt);
	m->events++;
}

/* by time; an allocation before a free at the same time (the peak is not
 * missed) */
static int cmp_point(const void *a, const void *b)
{
	const struct mem_point *x = a, *y = b;
	if (x->t != y->t) return x->t < y->t ? -1 : 1;
	return x->v > y->v ? -1 : x->v < y->v;
}

static int cmp_series(const void *a, const void *b)
{
	const struct mem_series *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

void mem_timeline_finish(struct mem_timeline *m)
{
	if (m->n) qsort(m->v, m->n, sizeof(*m->v), cmp_series);
	for (size_t i = 0; i < m->n; i++) {
		struct mem_series *s = &m->v[i];
		if (s->n) qsort(s->p, s->n, sizeof(*s->p), cmp_point);
		int64_t level = 0;
		s->peak = 0;
		for (size_t k = 0; k < s->n; k++) {
			level += s->p[k].v;
			s->p[k].v = level;
			if (level > s->peak) s->peak = level;
		}
		u64map_free(&s->live);
	}
}

int64_t mem_series_max(const struct mem_series *s, uint64_t a, uint64_t b)
{
	/* first event after a */
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->p[mid].t <= a) lo = mid + 1;
		else hi = mid;
	}
	int64_t best = lo ? s->p[lo - 1].v : 0;
	for (size_t k = lo; k < s->n && s->p[k].t <= b; k++)
		if (s->p[k].v > best) best = s->p[k].v;
	return best;
}

void mem_timeline_free(struct mem_timeline *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].p);
		u64map_free(&m->v[i].live);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}
