/* counters.c — see counters.h. */
#include "analysis/gpu/counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The series (pid, dev, name), made empty when new.  Counters come in
 * runs of one series (a sampler writes one device's counters together),
 * so the last one is tried before the index. */
static struct cseries *series_of(struct counters *c, uint32_t pid, uint32_t dev, const char *name)
{
	if (c->last) {
		struct cseries *q = &c->v[c->last - 1];
		if (q->pid == pid && q->dev == dev && !strcmp(q->name, name)) return q;
	}
	char *key = xmalloc(strlen(name) + 32);
	sprintf(key, "%u/%u/%s", pid, dev, name);
	int is_new;
	size_t *slot = strmap_get(&c->idx, key, &is_new);
	free(key);
	if (is_new) {
		struct cseries s = { .pid = pid, .dev = dev, .name = xstrdup(name) };
		*slot = c->n;
		VEC_PUSH(c->v, c->n, c->cap, s);
	}
	c->last = *slot + 1;
	return &c->v[*slot];
}

/* b, the samples right after a's (the same cell or a later one), into a */
static void bucket_join(struct cbucket *a, const struct cbucket *b)
{
	a->tw += a->last * (double)(b->t0 > a->t1 ? b->t0 - a->t1 : 0) + b->tw;
	a->n += b->n;
	a->sum += b->sum;
	if (b->min < a->min) a->min = b->min;
	if (b->max > a->max) a->max = b->max;
	if (b->t1 >= a->t1) { a->t1 = b->t1; a->last = b->last; }
	if (b->t0 < a->t0) a->t0 = b->t0;
}

/* Bucket b (its k on q's grid) into q: joined to the bucket of its cell,
 * appended after the last one (the usual case: time order), or inserted. */
static void bucket_put(struct cseries *q, const struct cbucket *b)
{
	size_t lo = q->nb;
	if (q->nb && q->b[q->nb - 1].k >= b->k) {
		lo = FIRST_WHERE(k, q->nb, q->b[k].k >= b->k);
		if (q->b[lo].k == b->k) { bucket_join(&q->b[lo], b); return; }
	}
	vec_reserve((void **)&q->b, &q->cb, q->nb + 1, sizeof(*q->b));
	memmove(q->b + lo + 1, q->b + lo, (q->nb - lo) * sizeof(*q->b));
	q->b[lo] = *b;
	q->nb++;
}

/* q's grid made w wide (w >= q->width, both powers of two): the cells
 * that fall together are joined */
static void regrid(struct cseries *q, uint64_t w)
{
	if (w <= q->width) return;
	size_t m = 0;
	for (size_t i = 0; i < q->nb; i++) {
		struct cbucket b = q->b[i];
		b.k = b.t0 / w;
		if (m && q->b[m - 1].k == b.k) bucket_join(&q->b[m - 1], &b);
		else q->b[m++] = b;
	}
	q->nb = m;
	q->width = w;
}

/* The narrowest grid (a power of two of ns) with fewer than half the
 * buckets over [t0, t1] */
static uint64_t grid_for(uint64_t t0, uint64_t t1)
{
	uint64_t w = 1;
	while ((t1 - t0) / w >= COUNTERS_BUCKETS / 2) w <<= 1;
	return w;
}

/* q's samples into its buckets (a grid made for them when it has none),
 * the grid widened while it has more than COUNTERS_BUCKETS */
static void fold(struct cseries *q)
{
	if (!q->n) return;
	qsort(q->s, q->n, sizeof(*q->s), cmp_u64); /* by t, the first field */
	if (!q->width) q->width = grid_for(q->s[0].t, q->s[q->n - 1].t);
	for (size_t i = 0; i < q->n; i++) {
		const struct csample *x = &q->s[i];
		struct cbucket b = { x->t / q->width, 1, x->t, x->t, x->v, x->v, x->v, x->v, 0 };
		bucket_put(q, &b);
		if (q->nb > COUNTERS_BUCKETS) regrid(q, q->width * 2);
	}
	free(q->s);
	q->s = NULL; q->n = q->cap = 0;
}

void counters_add(struct counters *c, uint32_t pid, const gp_rec_counter *k, const char *name)
{
	struct cseries *s = series_of(c, pid, k->device_id, name);
	struct csample smp = { k->ts_ns, k->kind == GP_COUNTER_DOUBLE ? k->value.d : (double)k->value.i };
	VEC_PUSH(s->s, s->n, s->cap, smp);
	if (c->limit && s->n >= c->limit) fold(s);
}

void counters_merge(struct counters *c, struct counters *src)
{
	for (size_t i = 0; i < src->n; i++) {
		struct cseries *o = &src->v[i];
		struct cseries *s = series_of(c, o->pid, o->dev, o->name);
		if (!s->width && !o->width && (!c->limit || s->n + o->n < c->limit)) {
			vec_reserve((void **)&s->s, &s->cap, s->n + o->n, sizeof(*s->s));
			memcpy(s->s + s->n, o->s, o->n * sizeof(*o->s));
			s->n += o->n;
			continue;
		}
		/* both on one grid, the wider one's; then o's cells after s's */
		if (!s->width) s->width = o->width;
		fold(s);
		if (!o->width) o->width = s->width;
		fold(o);
		uint64_t w = s->width > o->width ? s->width : o->width;
		regrid(s, w);
		regrid(o, w);
		for (size_t j = 0; j < o->nb; j++) bucket_put(s, &o->b[j]);
		while (s->nb > COUNTERS_BUCKETS) regrid(s, s->width * 2);
	}
	c->last = 0;
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
	c->last = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct cseries *q = &c->v[i];
		if (!q->width) { qsort(q->s, q->n, sizeof(*q->s), cmp_u64); continue; }
		fold(q);
		/* the grid of the whole series, whatever the slices' were: one
		 * is never narrower than it (a grid widens when its span/width
		 * passes COUNTERS_BUCKETS, the final one at half that) */
		regrid(q, grid_for(q->b[0].t0, q->b[q->nb - 1].t1));
	}
}

/* Sample or bucket i of a finished series, as a bucket */
static struct cbucket series_at(const struct cseries *q, size_t i)
{
	if (q->width) return q->b[i];
	const struct csample *x = &q->s[i];
	return (struct cbucket){ 0, 1, x->t, x->t, x->v, x->v, x->v, x->v, 0 };
}

void counters_figures(const struct cseries *q, struct cfigures *f)
{
	memset(f, 0, sizeof(*f));
	size_t n = q->width ? q->nb : q->n;
	for (size_t i = 0; i < n; i++) {
		struct cbucket b = series_at(q, i);
		if (!i) { f->min = b.min; f->max = b.max; f->t_first = b.t0; }
		else f->tw += f->last_v * (double)(b.t0 - f->t_last);
		if (b.min < f->min) f->min = b.min;
		if (b.max > f->max) f->max = b.max;
		f->sum += b.sum;
		f->tw += b.tw;
		f->n += b.n;
		f->t_last = b.t1;
		f->last_v = b.last;
	}
}

double counters_mean(const struct counters *c, const char *name, uint32_t pid, uint32_t dev,
		     uint64_t s, uint64_t e)
{
	double sum = 0, n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct cseries *q = &c->v[i];
		if (q->pid != pid || q->dev != dev || strcmp(q->name, name)) continue;
		/* in time order: from the first that ends at s or later (advise asks
		 * once per kernel) */
		size_t m = q->width ? q->nb : q->n;
		for (size_t j = FIRST_WHERE(k, m, series_at(q, k).t1 >= s); j < m; j++) {
			struct cbucket b = series_at(q, j);
			if (b.t0 > e) break;
			if (b.t0 >= s && b.t1 <= e) { sum += b.sum; n += (double)b.n; continue; }
			/* across an edge: the share of its samples' time inside */
			uint64_t lo = b.t0 > s ? b.t0 : s, hi = b.t1 < e ? b.t1 : e;
			double share = (double)(hi - lo) / (double)(b.t1 - b.t0);
			sum += share * b.sum;
			n += share * (double)b.n;
		}
	}
	return n > 0 ? sum / n : -1;
}

void counters_free(struct counters *c)
{
	for (size_t i = 0; i < c->n; i++) { free(c->v[i].name); free(c->v[i].s); free(c->v[i].b); }
	free(c->v);
	strmap_free(&c->idx);
	memset(c, 0, sizeof(*c));
}
