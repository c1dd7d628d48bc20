/* layer_ranges.c — see layer_ranges.h. */
#include "analysis/layers/layer_ranges.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct name_work {
	uint32_t name;
	uint64_t ns, kernels;
};

struct layer_ranges {
	const struct attribution *a;
	int8_t *is_layer;               /* per name index: -1 not known yet, 0 no, 1 a layer range */
	size_t nis;
	u64map work_idx;                /* name index -> index in work + 1 */
	struct name_work *work; size_t nwork, cwork;
	uint32_t *buf; size_t cbuf;     /* attribution_open_on's answers */
	char **paths; size_t npaths, cpaths; /* resolve's split copies */
	const char **parts; size_t cparts;
};

struct layer_ranges *layer_ranges_new(const struct attribution *a)
{
	struct layer_ranges *lr = xcalloc(1, sizeof(*lr));
	lr->a = a;
	u64map_init(&lr->work_idx);
	return lr;
}

void layer_ranges_free(struct layer_ranges *lr)
{
	if (!lr) return;
	free(lr->is_layer);
	u64map_free(&lr->work_idx);
	free(lr->work);
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
	size_t n = attribution_open_on(lr->a, pid, tid, t, lr->buf, lr->cbuf);
	if (n > lr->cbuf) {
		vec_reserve((void **)&lr->buf, &lr->cbuf, n, sizeof(*lr->buf));
		n = attribution_open_on(lr->a, pid, tid, t, lr->buf, lr->cbuf);
	}
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
	const struct name_work z = { best, 0, 0 };
	struct name_work *w = VEC_KEYED(&lr->work_idx, best, lr->work, lr->nwork, lr->cwork, &z);
	w->ns += ns;
	w->kernels++;
	return 1;
}

void layer_ranges_merge(struct layer_ranges *lr, const struct layer_ranges *src)
{
	for (size_t i = 0; i < src->nwork; i++) {
		const struct name_work *w = &src->work[i];
		const struct name_work z = { w->name, 0, 0 };
		struct name_work *d = VEC_KEYED(&lr->work_idx, w->name, lr->work, lr->nwork, lr->cwork, &z);
		d->ns += w->ns;
		d->kernels += w->kernels;
	}
}

void layer_ranges_resolve(struct layer_ranges *lr, layers_backward_fn cb, void *ctx)
{
	for (size_t i = 0; i < lr->nwork; i++) {
		const struct name_work *w = &lr->work[i];
		char *p = xstrdup(attribution_name(lr->a, w->name) + sizeof(LAYER_RANGE_PREFIX) - 1);
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
