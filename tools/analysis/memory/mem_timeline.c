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
	u64map_init(&s->gone);
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
		if (m->slice) u64map_del(&s->gone, rec->address);
		delta = (int64_t)rec->bytes;
		s->allocs++;
	} else {
		uint64_t *b = u64map_get(&s->live, rec->address, MAP_FIND);
		uint64_t bytes = rec->bytes ? rec->bytes : b ? *b : 0;
		if (b) u64map_del(&s->live, rec->address);
		else if (m->slice && !rec->bytes && !u64map_get(&s->gone, rec->address, MAP_FIND)) {
			struct mem_unsized u = { s->n, rec->address };
			VEC_PUSH(s->unsized, s->nunsized, s->cunsized, u);
		}
		if (m->slice) *u64map_get(&s->gone, rec->address, MAP_INSERT) = 1;
		delta = -(int64_t)bytes;
		s->frees++;
	}
	struct mem_point pt = { rec->ts_ns, delta };
	VEC_PUSH(s->p, s->n, s->cap, pt);
	m->events++;
}

/* Series t of a later slice into s: its frees of earlier allocations
 * sized from s's live ones, its last frees and allocations over s's. */
static void merge_series(const struct mem_timeline *m, struct mem_series *s, struct mem_series *t)
{
	for (size_t i = 0; i < t->nunsized; i++) {
		const struct mem_unsized *u = &t->unsized[i];
		uint64_t *b = u64map_get(&s->live, u->address, MAP_FIND);
		if (b) t->p[u->at].v = -(int64_t)*b;
		else if (m->slice && !u64map_get(&s->gone, u->address, MAP_FIND)) {
			struct mem_unsized x = { s->n + u->at, u->address }; /* before s too */
			VEC_PUSH(s->unsized, s->nunsized, s->cunsized, x);
		}
	}
	for (size_t i = 0; i < t->gone.cap; i++)
		if (t->gone.used[i]) {
			u64map_del(&s->live, t->gone.slot[i].key);
			if (m->slice) *u64map_get(&s->gone, t->gone.slot[i].key, MAP_INSERT) = 1;
		}
	for (size_t i = 0; i < t->live.cap; i++)
		if (t->live.used[i]) {
			*u64map_get(&s->live, t->live.slot[i].key, MAP_INSERT) = t->live.slot[i].val;
			if (m->slice) u64map_del(&s->gone, t->live.slot[i].key);
		}
	vec_reserve((void **)&s->p, &s->cap, s->n + t->n, sizeof(*s->p));
	if (t->n) memcpy(s->p + s->n, t->p, t->n * sizeof(*t->p));
	s->n += t->n;
	s->allocs += t->allocs;
	s->frees += t->frees;
}

static void series_free(struct mem_series *s)
{
	free(s->p);
	u64map_free(&s->live);
	u64map_free(&s->gone);
	free(s->unsized);
}

int mem_timeline_merge(struct mem_timeline *m, struct mem_timeline *src)
{
	int rc = 0;
	if (m->events >= MEM_TIMELINE_MAX_EVENTS) {
		/* one read dropped all of src's */
		m->dropped += src->events + src->dropped;
	} else if (m->events + src->events > MEM_TIMELINE_MAX_EVENTS || (src->dropped && m->events)) {
		rc = -1;
	} else {
		for (size_t i = 0; i < src->n; i++) {
			struct mem_series *t = &src->v[i];
			merge_series(m, series(m, t->pid, t->dev, t->kind), t);
		}
		m->events += src->events;
		m->dropped += src->dropped;
	}
	mem_timeline_free(src);
	return rc;
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
		u64map_free(&s->gone);
		free(s->unsized);
		s->unsized = NULL;
		s->nunsized = s->cunsized = 0;
	}
}

int64_t mem_series_max(const struct mem_series *s, uint64_t a, uint64_t b)
{
	size_t lo = FIRST_WHERE(k, s->n, s->p[k].t > a);
	int64_t best = lo ? s->p[lo - 1].v : 0;
	for (size_t k = lo; k < s->n && s->p[k].t <= b; k++)
		if (s->p[k].v > best) best = s->p[k].v;
	return best;
}

void mem_timeline_free(struct mem_timeline *m)
{
	for (size_t i = 0; i < m->n; i++) series_free(&m->v[i]);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
