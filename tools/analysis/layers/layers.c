/* layers.c — see layers.h. */
#include "analysis/layers/layers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int layers_autograd_thread(const char *thread_name)
{
	/* the autograd engine's device threads are named pt_autograd_N
	 * (PyTorch's Engine::thread_init) */
	return starts_with(thread_name, "pt_autograd");
}

int layers_backward(const struct stack_view *v)
{
	return v && !v->nlayers && v->borrowed && layers_autograd_thread(v->thread_name);
}

void layer_bwd_add(struct layer_bwd_table *t, uint32_t key, uint64_t ns, uint64_t kernels)
{
	const struct layer_bwd z = { key, 0, 0 };
	struct layer_bwd *w = VEC_KEYED(&t->idx, key, t->v, t->n, t->cap, &z);
	w->ns += ns;
	w->kernels += kernels;
}

void layer_bwd_merge(struct layer_bwd_table *t, const struct layer_bwd_table *src)
{
	for (size_t i = 0; i < src->n; i++) layer_bwd_add(t, src->v[i].key, src->v[i].ns, src->v[i].kernels);
}

void layer_bwd_free(struct layer_bwd_table *t)
{
	u64map_free(&t->idx);
	free(t->v);
}

size_t layers_open_on(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t **buf,
		      size_t *cbuf)
{
	size_t n = attribution_open_on(a, pid, tid, t, *buf, *cbuf);
	if (n > *cbuf) {
		vec_reserve((void **)buf, cbuf, n, sizeof(**buf));
		n = attribution_open_on(a, pid, tid, t, *buf, *cbuf);
	}
	return n;
}

static uint32_t path_of(const struct stack_view *v, int graph, const char **out)
{
	uint32_t n = 0;
	if (graph) out[n++] = "(CUDA graph replay)";
	if (v && v->nlayers) {
		for (uint32_t i = 0; i < v->nlayers && n < LAYER_PATH_MAX; i++) out[n++] = v->layers[i];
		return n;
	}
	if (v && v->borrowed) {
		out[n++] = layers_autograd_thread(v->thread_name) ? LAYERS_BACKWARD_UNATTRIBUTED
								  : "(other thread, unattributed)";
		return n;
	}
	if (!v || !v->own_python) {
		out[n++] = "(no python stack)";
		return n;
	}
	out[n++] = "(not in a forward)";
	out[n++] = v->user_site;
	return n;
}

uint32_t layers_path(const struct stack_view *v, enum layers_work work, const char **out)
{
	if (work != LAYERS_GRAPH_CAPTURED) return path_of(v, work == LAYERS_GRAPH_REPLAY, out);
	/* room for the row of its own below the path */
	uint32_t n = path_of(v, 0, out);
	if (n == LAYER_PATH_MAX) n--;
	out[n++] = LAYERS_CAPTURED_ROW;
	return n;
}

/* ------------------------------------------------------------ tree */
struct layer_tree {
	strmap idx;               /* "parent\x01name" -> node index */
	struct layer_node *v; size_t n, cap;
	struct layer_node *rows; size_t nrows;
	int sorted;
	uint64_t total;
};

struct layer_tree *layer_tree_new(void)
{
	struct layer_tree *t = xcalloc(1, sizeof(*t));
	strmap_init(&t->idx);
	return t;
}

void layer_tree_free(struct layer_tree *t)
{
	if (!t) return;
	strmap_free(&t->idx);
	free(t->v);
	free(t->rows);
	free(t);
}

static uint32_t child(struct layer_tree *t, uint32_t parent, const char *name)
{
	size_t len = strlen(name) + 16;
	char *key = xmalloc(len);
	snprintf(key, len, "%u\x01%s", parent, name);
	int is_new;
	size_t *slot = strmap_get(&t->idx, key, &is_new);
	free(key);
	if (is_new) {
		struct layer_node nd = { .name = name, .parent = parent,
					 .depth = parent == UINT32_MAX ? 0 : t->v[parent].depth + 1 };
		*slot = t->n;
		VEC_PUSH(t->v, t->n, t->cap, nd);
	}
	return (uint32_t)*slot;
}

void layer_tree_add(struct layer_tree *t, const char *const *path, uint32_t n, uint64_t ns, uint64_t kernels)
{
	if (!n) return;
	uint32_t at = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		at = child(t, at, path[i]);
		t->v[at].total_ns += ns;
		t->v[at].kernels += kernels;
	}
	t->v[at].self_ns += ns;
	t->v[at].self_kernels += kernels;
	t->total += ns;
	t->sorted = 0;
}

uint64_t layer_tree_total(const struct layer_tree *t)
{
	return t->total;
}

/* children of one parent: most time first, then by name */
static const struct layer_node *cmp_base;
static int cmp_node(const void *a, const void *b)
{
	const struct layer_node *x = &cmp_base[*(const uint32_t *)a], *y = &cmp_base[*(const uint32_t *)b];
	if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
	if (x->kernels != y->kernels) return x->kernels > y->kernels ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* node i, then its children (first[i + 1], linked by next), depth first;
 * the depth is bounded by LAYER_PATH_MAX */
static void emit(struct layer_tree *t, const uint32_t *first, const uint32_t *next, uint32_t i)
{
	t->rows[t->nrows++] = t->v[i];
	for (uint32_t c = first[i + 1]; c != UINT32_MAX; c = next[c]) emit(t, first, next, c);
}

const struct layer_node *layer_tree_rows(struct layer_tree *t, size_t *n)
{
	if (!t->sorted) {
		size_t m = t->n;
		uint32_t *order = xmalloc((m ? m : 1) * sizeof(uint32_t));
		for (size_t i = 0; i < m; i++) order[i] = (uint32_t)i;
		cmp_base = t->v;
		if (m) qsort(order, m, sizeof(*order), cmp_node);
		/* each parent's children in that order: first[parent + 1] (top
		 * rows: first[0]), then next[] */
		uint32_t *first = xmalloc((m + 1) * sizeof(uint32_t)), *last = xmalloc((m + 1) * sizeof(uint32_t));
		uint32_t *next = xmalloc((m ? m : 1) * sizeof(uint32_t));
		for (size_t i = 0; i <= m; i++) first[i] = last[i] = UINT32_MAX;
		for (size_t k = 0; k < m; k++) {
			uint32_t i = order[k], p = t->v[i].parent == UINT32_MAX ? 0 : t->v[i].parent + 1;
			next[i] = UINT32_MAX;
			if (first[p] == UINT32_MAX) first[p] = i;
			else next[last[p]] = i;
			last[p] = i;
		}
		free(t->rows);
		t->rows = xmalloc((m ? m : 1) * sizeof(*t->rows));
		t->nrows = 0;
		for (uint32_t i = first[0]; i != UINT32_MAX; i = next[i]) emit(t, first, next, i);
		free(first); free(last); free(next); free(order);
		t->sorted = 1;
	}
	*n = t->nrows;
	return t->rows;
}
