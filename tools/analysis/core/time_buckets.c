/* time_buckets.c — see time_buckets.h. */
#include "analysis/core/time_buckets.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

uint64_t time_buckets_width(uint64_t span, uint64_t target)
{
	uint64_t want = target ? span / target : span, w = 1000000;
	static const uint64_t steps[] = { 1, 2, 5 };
	for (uint64_t p = 1000000; p <= UINT64_MAX / 10; p *= 10)
		for (int i = 0; i < 3; i++) {
			w = steps[i] * p;
			if (w >= want) return w;
		}
	return w;
}

void time_buckets_init(struct time_buckets *b, uint64_t t0, uint64_t width)
{
	memset(b, 0, sizeof(*b));
	b->t0 = t0;
	b->width = width ? width : 1;
}

size_t time_buckets_series(struct time_buckets *b, uint64_t key)
{
	struct tbseries s = { key, NULL, 0 };
	return (size_t)((struct tbseries *)VEC_KEYED(&b->idx, key, b->s, b->ns, b->cs, &s) - b->s);
}

static double *slot(struct time_buckets *b, size_t series, size_t i)
{
	struct tbseries *s = &b->s[series];
	if (i >= s->n) vec_reserve_zeroed((void **)&s->v, &s->n, i + 1, sizeof(*s->v));
	if (i + 1 > b->len) b->len = i + 1;
	return &s->v[i];
}

void time_buckets_busy(struct time_buckets *b, size_t series, uint64_t s, uint64_t e)
{
	if (s < b->t0) s = b->t0;
	if (e <= s) return;
	for (size_t i = (size_t)((s - b->t0) / b->width);; i++) {
		uint64_t bs = b->t0 + (uint64_t)i * b->width, be = bs + b->width;
		uint64_t x = s > bs ? s : bs, y = e < be ? e : be;
		if (y > x) *slot(b, series, i) += (double)(y - x);
		if (e <= be) break;
	}
}

static double *at(struct time_buckets *b, size_t series, uint64_t t)
{
	if (t < b->t0) t = b->t0;
	return slot(b, series, (size_t)((t - b->t0) / b->width));
}

void time_buckets_add(struct time_buckets *b, size_t series, uint64_t t, double v)
{
	*at(b, series, t) += v;
}

void time_buckets_max(struct time_buckets *b, size_t series, uint64_t t, double v)
{
	double *x = at(b, series, t);
	if (v > *x) *x = v;
}

double time_buckets_get(const struct time_buckets *b, size_t series, size_t i)
{
	const struct tbseries *s = &b->s[series];
	return i < s->n ? s->v[i] : 0;
}

void time_buckets_free(struct time_buckets *b)
{
	for (size_t i = 0; i < b->ns; i++) free(b->s[i].v);
	free(b->s);
	u64map_free(&b->idx);
	memset(b, 0, sizeof(*b));
}
