/* counters.c — see counters.h. */
#include "analysis/gpu/counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The series (pid, dev, name), made empty when new. */
static struct cseries *series_of(struct counters *c, uint32_t pid, uint32_t dev, const char *name)
{
	char *key = xmalloc(strlen(name) + 32);
	sprintf(key, "%u/%u/%s", pid, dev, name);
	int is_new;
	size_t *slot = strmap_get(&c->idx, key, &is_new);
	free(key);
	if (is_new) {
		struct cseries s;
		memset(&s, 0, sizeof(s));
		s.pid = pid; s.dev = dev; s.name = xstrdup(name);
		*slot = c->n;
		VEC_PUSH(c->v, c->n, c->cap, s);
	}
	return &c->v[*slot];
}

void counters_add(struct counters *c, uint32_t pid, const gp_rec_counter *k, const char *name)
{
	struct cseries *s = series_of(c, pid, k->device_id, name);
	struct csample smp = { k->ts_ns, k->kind == GP_COUNTER_DOUBLE ? k->value.d : (double)k->value.i };
	VEC_PUSH(s->s, s->n, s->cap, smp);
}

void counters_merge(struct counters *c, struct counters *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct cseries *o = &src->v[i];
		struct cseries *s = series_of(c, o->pid, o->dev, o->name);
		vec_reserve((void **)&s->s, &s->cap, s->n + o->n, sizeof(*s->s));
		memcpy(s->s + s->n, o->s, o->n * sizeof(*o->s));
		s->n += o->n;
	}
}

static int cmp_csample(const void *a, const void *b)
{
	const struct csample *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_cseries(const void *a, const void *b)
{
	const struct cseries *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c) return c;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

void counters_finish(struct counters *c)
{
	/* the index points into the array sorted here: not used after this */
	if (c->n) qsort(c->v, c->n, sizeof(*c->v), cmp_cseries);
	for (size_t i = 0; i < c->n; i++)
		qsort(c->v[i].s, c->v[i].n, sizeof(*c->v[i].s), cmp_csample);
}

double counters_mean(const struct counters *c, const char *name, uint32_t pid, uint32_t dev,
		     uint64_t s, uint64_t e)
{
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct cseries *q = &c->v[i];
		if (q->pid != pid || q->dev != dev || strcmp(q->name, name)) continue;
		for (size_t j = 0; j < q->n; j++)
			if (q->s[j].t >= s && q->s[j].t <= e) { sum += q->s[j].v; n++; }
	}
	return n ? sum / (double)n : -1;
}

void counters_free(struct counters *c)
{
	for (size_t i = 0; i < c->n; i++) { free(c->v[i].name); free(c->v[i].s); }
	free(c->v);
	strmap_free(&c->idx);
	memset(c, 0, sizeof(*c));
}
