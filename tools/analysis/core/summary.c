/* summary.c — see summary.h. */
#include "analysis/core/summary.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

size_t summary_group(struct summary *t, const char *name)
{
	int is_new;
	size_t *slot = strmap_get(&t->idx, name, &is_new);
	if (is_new) {
		struct sgroup g;
		memset(&g, 0, sizeof(g));
		g.name = xstrdup(name);
		*slot = t->n;
		VEC_PUSH(t->g, t->n, t->cap, g);
	}
	return *slot;
}

/* The group holding the most values (the first such group on ties, so the
 * choice depends only on the input), when it holds SUMMARY_MIN_SWITCH or
 * more, goes to a histogram: the values it held, else 0. */
static size_t shed_largest(struct summary *t)
{
	size_t best = 0, most = 0;
	for (size_t i = 0; i < t->n; i++)
		if (!t->g[i].q.approx && t->g[i].q.nv > most) { most = t->g[i].q.nv; best = i; }
	if (most < SUMMARY_MIN_SWITCH) return 0;
	qsketch_to_histogram(&t->g[best].q);
	t->exact -= most;
	t->approx++;
	return most;
}

/* Over the limit: shed, or double the limit when nothing is big enough. */
static void shed(struct summary *t)
{
	if (!shed_largest(t)) t->limit *= 2;
}

/* One more exact value against the shared budget (summary_budget). */
static void budget_add(struct summary *t)
{
	struct summary_budget *b = t->budget;
	size_t ex = atomic_fetch_add_explicit(&b->exact, 1, memory_order_relaxed) + 1;
	size_t lim = atomic_load_explicit(&b->limit, memory_order_relaxed);
	if (!lim) {
		size_t zero = 0;
		atomic_compare_exchange_strong(&b->limit, &zero, SUMMARY_EXACT_VALUES);
		lim = atomic_load_explicit(&b->limit, memory_order_relaxed);
	}
	if (ex <= lim) return;
	size_t freed = shed_largest(t);
	if (freed) atomic_fetch_sub_explicit(&b->exact, freed, memory_order_relaxed);
	else if (t->exact * (b->shares ? b->shares : 1) >= lim)
		atomic_compare_exchange_strong(&b->limit, &lim, lim * 2);
}

static void budget_sub(struct summary *t, size_t n)
{
	if (t->budget && n) atomic_fetch_sub_explicit(&t->budget->exact, n, memory_order_relaxed);
}

void summary_add(struct summary *t, size_t i, uint64_t v)
{
	struct sgroup *g = &t->g[i];
	if (!g->n || v < g->min) g->min = v;
	if (!g->n || v > g->max) g->max = v;
	g->n++;
	g->total += v;
	double d = (double)v - g->mean;
	g->mean += d / (double)g->n;
	g->m2 += d * ((double)v - g->mean);
	qsketch_add(&g->q, v);
	if (g->q.approx) return;
	if (t->budget) {
		t->exact++;
		budget_add(t);
		return;
	}
	if (!t->limit) t->limit = SUMMARY_EXACT_VALUES;
	if (++t->exact > t->limit) shed(t);
}

void summary_merge(struct summary *t, size_t i, const struct sgroup *src)
{
	struct sgroup *g = &t->g[i];
	if (!src->n) return;
	if (!g->n || src->min < g->min) g->min = src->min;
	if (!g->n || src->max > g->max) g->max = src->max;
	/* Welford's sums of two parts (Chan et al.) */
	double n = (double)(g->n + src->n), d = src->mean - g->mean;
	g->m2 += src->m2 + d * d * (double)g->n * (double)src->n / n;
	g->mean += d * (double)src->n / n;
	g->n += src->n;
	g->total += src->total;
	int was_exact = !g->q.approx;
	size_t held = was_exact ? g->q.nv : 0, src_held = src->q.approx ? 0 : src->q.nv;
	qsketch_merge(&g->q, &src->q);
	if (g->q.approx) { /* src's kept values, and g's when it was exact, binned */
		if (was_exact) { t->exact -= held; t->approx++; }
		budget_sub(t, held + src_held);
		return;
	}
	t->exact += src_held;
	if (t->budget) return;
	if (!t->limit) t->limit = SUMMARY_EXACT_VALUES;
	while (t->exact > t->limit) shed(t);
}

double sgroup_median(struct sgroup *g)
{
	return qsketch_median(&g->q, g->min, g->max);
}

double sgroup_quantile(struct sgroup *g, double p)
{
	return qsketch_quantile(&g->q, p, g->min, g->max);
}

double sgroup_stddev(struct sgroup *g)
{
	if (g->n < 2) return 0.0;
	const uint64_t *v = qsketch_sorted(&g->q);
	if (!v) return sqrt(g->m2 / (double)(g->n - 1));
	double mean = (double)g->total / (double)g->n, m2 = 0;
	for (size_t i = 0; i < g->q.nv; i++) {
		double d = (double)v[i] - mean;
		m2 += d * d;
	}
	return sqrt(m2 / (double)(g->n - 1));
}

void summary_free(struct summary *t)
{
	for (size_t i = 0; i < t->n; i++) { free(t->g[i].name); qsketch_free(&t->g[i].q); }
	free(t->g);
	strmap_free(&t->idx);
	memset(t, 0, sizeof(*t));
}
