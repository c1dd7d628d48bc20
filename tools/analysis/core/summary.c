/* summary.c — see summary.h. */
#include "analysis/core/summary.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/testenv.h"

size_t summary_group(struct summary *t, const char *name)
{
	int is_new;
	size_t *slot = strmap_get(&t->idx, name, &is_new);
	if (is_new) {
		struct sgroup g = { .name = xstrdup(name) };
		*slot = t->n;
		VEC_PUSH(t->g, t->n, t->cap, g);
	}
	return *slot;
}

/* The limit of a table's exact values: SUMMARY_EXACT_VALUES, or
 * $GPUPROF_SUMMARY_EXACT's (tests: small traces past the limit). */
static size_t summary_exact_limit(void)
{
	/* read once; threads reading it at once store the same value */
	static _Atomic size_t lim;
	size_t l = atomic_load_explicit(&lim, memory_order_relaxed);
	if (!l) {
		uint64_t v;
		l = testenv(TESTENV_SUMMARY_EXACT, &v) ? SUMMARY_EXACT_VALUES : (size_t)v;
		atomic_store_explicit(&lim, l, memory_order_relaxed);
	}
	return l;
}

void summary_board_init(struct summary_board *b, size_t shares)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->mu, NULL);
	b->shares = shares ? shares : 1;
}

void summary_board_free(struct summary_board *b)
{
	pthread_mutex_destroy(&b->mu);
	strmap_free(&b->idx);
	free(b->cnt);
}

/* t's counts shown on its board; the board's counts into c[0..*m), and
 * each group's into own[] (lower bounds of the table's counts). */
static void board_counts(struct summary *t, uint64_t **c, size_t *m, uint64_t *own)
{
	struct summary_board *b = t->board;
	pthread_mutex_lock(&b->mu);
	for (size_t i = 0; i < t->n; i++) {
		struct sgroup *g = &t->g[i];
		if (!g->on_board) {
			int is_new;
			size_t *slot = strmap_get(&b->idx, g->name, &is_new);
			if (is_new) {
				*slot = b->n;
				VEC_PUSH(b->cnt, b->n, b->cap, 0);
			}
			g->on_board = *slot + 1;
		}
		b->cnt[g->on_board - 1] += g->n - g->shown;
		g->shown = g->n;
		own[i] = b->cnt[g->on_board - 1];
	}
	*m = b->n;
	*c = xmalloc((b->n ? b->n : 1) * sizeof(**c));
	memcpy(*c, b->cnt, b->n * sizeof(**c));
	pthread_mutex_unlock(&b->mu);
}

/* The rule of summary.h on the counts so far (the board's when there is
 * one): a group of count n weighs the groups under SUMMARY_MIN_SWITCH
 * (small, below any n that may switch), then with the others' counts
 * sorted, those below n (lower bound at i) plus n for each of the rest. */
void summary_settle(struct summary *t)
{
	size_t lim = summary_exact_limit(), m, nbig = 0;
	uint64_t *own = xmalloc((t->n ? t->n : 1) * sizeof(*own)), *c, small = 0;
	if (t->board) {
		board_counts(t, &c, &m, own);
	} else {
		m = t->n;
		c = xmalloc((m ? m : 1) * sizeof(*c));
		for (size_t i = 0; i < m; i++) c[i] = own[i] = t->g[i].n;
	}
	for (size_t i = 0; i < m; i++)
		if (c[i] < SUMMARY_MIN_SWITCH) small += c[i];
		else c[nbig++] = c[i];
	qsort(c, nbig, sizeof(*c), cmp_u64);
	uint64_t *below = xmalloc((nbig + 1) * sizeof(*below));
	below[0] = small;
	for (size_t i = 0; i < nbig; i++) below[i + 1] = below[i] + c[i];
	for (size_t k = 0; below[nbig] > lim && k < t->n; k++) {
		struct sgroup *g = &t->g[k];
		uint64_t n = own[k];
		if (g->q.approx || n < SUMMARY_MIN_SWITCH) continue;
		size_t lo = FIRST_WHERE(i, nbig, c[i] >= n);
		if (below[lo] + (nbig - lo) * n <= lim) continue;
		t->exact -= g->q.nv;
		t->approx++;
		qsketch_to_histogram(&g->q);
	}
	free(own);
	free(c);
	free(below);
}

/* The trigger: the summary's share of the limit (all of it when alone),
 * then once past it, what it still holds (the groups the rule keeps, or
 * whose other slices' counts are not yet on the board) and a quarter of
 * that or of its share, whichever is more: the rule runs a few times as the
 * held values grow, not on every value. */
static void set_trigger(struct summary *t)
{
	size_t lim = summary_exact_limit(), share = lim / (t->board ? t->board->shares : 1);
	if (share < SUMMARY_MIN_SWITCH) share = SUMMARY_MIN_SWITCH;
	size_t next = t->exact + (t->exact > share ? t->exact : share) / 4;
	t->trigger = t->trigger && next > share ? next : share;
}

/* n more exact values held: the rule runs when they pass the trigger */
static void held_add(struct summary *t, size_t n)
{
	t->exact += n;
	if (!t->trigger) set_trigger(t);
	if (t->exact > t->trigger) {
		summary_settle(t);
		set_trigger(t);
	}
}

/* n values of the given minimum, maximum, total and sum of squares join g */
static void group_join(struct sgroup *g, uint64_t min, uint64_t max, uint64_t n, uint64_t total,
		       unsigned __int128 sq)
{
	if (!g->n || min < g->min) g->min = min;
	if (!g->n || max > g->max) g->max = max;
	g->n += n;
	g->total += total;
	if (__builtin_add_overflow(g->sq, sq, &g->sq)) g->sq = ~(unsigned __int128)0;
}

void summary_add(struct summary *t, size_t i, uint64_t v)
{
	struct sgroup *g = &t->g[i];
	group_join(g, v, v, 1, v, (unsigned __int128)v * v);
	qsketch_add(&g->q, v);
	if (!g->q.approx) held_add(t, 1);
}

void summary_merge(struct summary *t, size_t i, const struct sgroup *src)
{
	struct sgroup *g = &t->g[i];
	if (!src->n) return;
	group_join(g, src->min, src->max, src->n, src->total, src->sq);
	g->shown += src->shown; /* src's part of the board's count */
	if (!g->on_board) g->on_board = src->on_board;
	int was_exact = !g->q.approx;
	size_t held = was_exact ? g->q.nv : 0, src_held = src->q.approx ? 0 : src->q.nv;
	qsketch_merge(&g->q, &src->q);
	if (g->q.approx) { /* src's kept values, and g's when it was exact, binned */
		if (was_exact) { t->exact -= held; t->approx++; }
		return;
	}
	held_add(t, src_held);
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
