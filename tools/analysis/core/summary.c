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

size_t summary_exact_limit(void)
{
	/* read once; threads reading it at once store the same value */
	static _Atomic size_t lim;
	size_t l = atomic_load_explicit(&lim, memory_order_relaxed);
	if (!l) {
		const char *env = getenv("GPUPROF_SUMMARY_EXACT");
		l = env && *env ? (size_t)strtoull(env, NULL, 10) : 0;
		if (!l) l = SUMMARY_EXACT_VALUES;
		atomic_store_explicit(&lim, l, memory_order_relaxed);
	}
	return l;
}

/* The rule of summary.h on the counts so far: with the counts sorted, a
 * group of count n (lower bound at i) weighs the i counts below it plus n
 * for each of the others. */
void summary_settle(struct summary *t)
{
	size_t lim = summary_exact_limit();
	uint64_t *c = xmalloc((t->n ? t->n : 1) * sizeof(*c)), *below = xmalloc((t->n + 1) * sizeof(*below));
	for (size_t i = 0; i < t->n; i++) c[i] = t->g[i].n;
	qsort(c, t->n, sizeof(*c), cmp_u64);
	below[0] = 0;
	for (size_t i = 0; i < t->n; i++) below[i + 1] = below[i] + c[i];
	for (size_t k = 0; below[t->n] > lim && k < t->n; k++) {
		struct sgroup *g = &t->g[k];
		if (g->q.approx || g->n < SUMMARY_MIN_SWITCH) continue;
		size_t lo = 0, hi = t->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (c[mid] < g->n) lo = mid + 1;
			else hi = mid;
		}
		if (below[lo] + (t->n - lo) * g->n <= lim) continue;
		t->exact -= g->q.nv;
		t->approx++;
		qsketch_to_histogram(&g->q);
	}
	free(c);
	free(below);
}

/* Over the trigger: the rule, then a higher trigger while the groups kept
 * (those too small to switch) still hold more. */
static void over(struct summary *t)
{
	summary_settle(t);
	while (t->exact > t->trigger) t->trigger *= 2;
}

static void add_sq(struct sgroup *g, unsigned __int128 sq)
{
	if (__builtin_add_overflow(g->sq, sq, &g->sq)) g->sq = ~(unsigned __int128)0;
}

void summary_add(struct summary *t, size_t i, uint64_t v)
{
	struct sgroup *g = &t->g[i];
	if (!g->n || v < g->min) g->min = v;
	if (!g->n || v > g->max) g->max = v;
	g->n++;
	g->total += v;
	add_sq(g, (unsigned __int128)v * v);
	qsketch_add(&g->q, v);
	if (g->q.approx) return;
	if (!t->trigger) t->trigger = summary_exact_limit();
	if (++t->exact > t->trigger) over(t);
}

void summary_merge(struct summary *t, size_t i, const struct sgroup *src)
{
	struct sgroup *g = &t->g[i];
	if (!src->n) return;
	if (!g->n || src->min < g->min) g->min = src->min;
	if (!g->n || src->max > g->max) g->max = src->max;
	g->n += src->n;
	g->total += src->total;
	add_sq(g, src->sq);
	int was_exact = !g->q.approx;
	size_t held = was_exact ? g->q.nv : 0, src_held = src->q.approx ? 0 : src->q.nv;
	qsketch_merge(&g->q, &src->q);
	if (g->q.approx) { /* src's kept values, and g's when it was exact, binned */
		if (was_exact) { t->exact -= held; t->approx++; }
		return;
	}
	t->exact += src_held;
	if (!t->trigger) t->trigger = summary_exact_limit();
	if (t->exact > t->trigger) over(t);
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
	if (!v) {
		/* n sq - total^2 (>= 0), exact unless n sq overflows */
		unsigned __int128 nsq, t2 = (unsigned __int128)g->total * g->total;
		double num = __builtin_mul_overflow(g->sq, (unsigned __int128)g->n, &nsq)
				     ? (double)g->sq * (double)g->n - (double)t2
				     : (double)(nsq - t2);
		return sqrt((num > 0 ? num : 0) / ((double)g->n * (double)(g->n - 1)));
	}
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
