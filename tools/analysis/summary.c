/* summary.c — see summary.h. */
#include "analysis/summary.h"

#include <math.h>
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

void sgroup_add(struct sgroup *g, uint64_t v)
{
	if (!g->n || v < g->min) g->min = v;
	if (!g->n || v > g->max) g->max = v;
	g->n++;
	g->total += v;
	VEC_PUSH(g->v, g->nv, g->cv, v);
	g->sorted = 0;
}

static void sgroup_sort(struct sgroup *g)
{
	if (!g->sorted) qsort(g->v, g->nv, sizeof(uint64_t), cmp_u64);
	g->sorted = 1;
}

double sgroup_median(struct sgroup *g)
{
	if (!g->nv) return 0;
	sgroup_sort(g);
	if (g->nv & 1) return (double)g->v[g->nv / 2];
	return ((double)g->v[g->nv / 2 - 1] + (double)g->v[g->nv / 2]) / 2.0;
}

double sgroup_stddev(struct sgroup *g)
{
	if (g->nv < 2) return 0.0;
	sgroup_sort(g);
	double mean = (double)g->total / (double)g->nv, m2 = 0;
	for (size_t i = 0; i < g->nv; i++) {
		double d = (double)g->v[i] - mean;
		m2 += d * d;
	}
	return sqrt(m2 / (double)(g->nv - 1));
}

void summary_free(struct summary *t)
{
	for (size_t i = 0; i < t->n; i++) { free(t->g[i].name); free(t->g[i].v); }
	free(t->g);
	strmap_free(&t->idx);
	memset(t, 0, sizeof(*t));
}

static const struct summary *sort_tab;
static int cmp_by_total(const void *a, const void *b)
{
	const struct sgroup *x = &sort_tab->g[*(const size_t *)a], *y = &sort_tab->g[*(const size_t *)b];
	if (x->total != y->total) return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t *summary_by_total(struct summary *t)
{
	size_t *ix = xmalloc((t->n ? t->n : 1) * sizeof(size_t));
	for (size_t i = 0; i < t->n; i++) ix[i] = i;
	sort_tab = t;
	qsort(ix, t->n, sizeof(size_t), cmp_by_total);
	return ix;
}
