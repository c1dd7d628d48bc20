/* layer_ranges.c — see layer_ranges.h. */
#include "analysis/layers/layer_ranges.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct layer_ranges {
	const struct attribution *a;
	int8_t *is_layer;               /* per name index: -1 not known yet, 0 no, 1 a layer range */
	size_t nis;
	struct layer_bwd_table work;    /* by name index */
	uint32_t *buf; size_t cbuf;     /* attribution_open_on's answers */
	char **paths; size_t npaths, cpaths; /* resolve's split copies */
	const char **parts; size_t cparts;
};

struct layer_ranges *layer_ranges_new(const struct attribution *a)
{
	struct layer_ranges *lr = xcalloc(1, sizeof(*lr));
	lr->a = a;
	return lr;
}

void layer_ranges_free(struct layer_ranges *lr)
{
	if (!lr) return;
	free(lr->is_layer);
	layer_bwd_free(&lr->work);
	free(lr->buf);
	for (size_t i = 0; i < lr->npaths; i++) free(lr->paths[i]);
	free(lr->paths);
	free(lr->parts);
	free(lr);
}

/* Whether name index k is a layer range's: the message starts with the
 * prefix and a path follows. */
static int layer_name(struct layer_ranges *lr, uint32_t k)
{
	if (k >= lr->nis) { /* the names known now (the table may grow until it is indexed) */
		size_t n = attribution_nnames(lr->a);
		if (k >= n) return 0;
		lr->is_layer = xrealloc(lr->is_layer, n);
		memset(lr->is_layer + lr->nis, -1, n - lr->nis);
		lr->nis = n;
	}
	if (lr->is_layer[k] < 0) {
		const char *n = attribution_name(lr->a, k);
		size_t l = sizeof(LAYER_RANGE_PREFIX) - 1;
		lr->is_layer[k] = n && !strncmp(n, LAYER_RANGE_PREFIX, l) && n[l] != 0;
	}
	return lr->is_layer[k];
}

int layer_ranges_backward(struct layer_ranges *lr, uint32_t pid, uint32_t tid, uint64_t t, uint64_t ns)
{
	size_t n = layers_open_on(lr->a, pid, tid, t, &lr->buf, &lr->cbuf);
	uint32_t best = UINT32_MAX, depth = 0;
	for (size_t i = 0; i < n; i++) {
		const struct attr_range r = attribution_range(lr->a, lr->buf[i]);
		if (!layer_name(lr, r.name)) continue;
		if (best == UINT32_MAX || r.depth > depth) {  /* the innermost: a node's backward inside another's
							   * (a reentrant checkpoint's recomputation) */
			best = r.name;
			depth = r.depth;
		}
	}
	if (best == UINT32_MAX) return 0;
	layer_bwd_add(&lr->work, best, ns, 1);
	return 1;
}

void layer_ranges_merge(struct layer_ranges *lr, const struct layer_ranges *src)
{
	layer_bwd_merge(&lr->work, &src->work);
}

void layer_ranges_resolve(struct layer_ranges *lr, layers_backward_fn cb, void *ctx)
{
	for (size_t i = 0; i < lr->work.n; i++) {
		const struct layer_bwd *w = &lr->work.v[i];
		char *p = xstrdup(attribution_name(lr->a, w->key) + sizeof(LAYER_RANGE_PREFIX) - 1);
		VEC_PUSH(lr->paths, lr->npaths, lr->cpaths, p);
		size_t n = 0;
		for (char *s = p;;) {
			if (n == lr->cparts) vec_reserve((void **)&lr->parts, &lr->cparts, n + 1, sizeof(*lr->parts));
			lr->parts[n++] = s;
			char *sep = strstr(s, LAYER_RANGE_SEP);
			if (!sep) break;
			*sep = 0;
			s = sep + sizeof(LAYER_RANGE_SEP) - 1;
		}
		cb(ctx, lr->parts, (uint32_t)n, w->ns, w->kernels);
	}
}
