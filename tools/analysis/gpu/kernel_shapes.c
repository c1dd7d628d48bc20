/* kernel_shapes.c — see kernel_shapes.h. */
#include "analysis/gpu/kernel_shapes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The group (pid, dev, threads, regs, smem, name), made empty with name
 * id `name_id` when new. */
static struct kshape *shape_of(struct kshapes *ks, uint32_t pid, uint32_t dev, uint32_t threads, uint32_t regs,
			       uint32_t smem, const char *name, uint32_t name_id)
{
	size_t n = strlen(name) + 64;
	char *full = xmalloc(n);
	snprintf(full, n, "%u/%u/%u/%u/%u/%s", pid, dev, threads, regs, smem, name);
	int is_new;
	size_t *slot = strmap_get(&ks->idx, full, &is_new);
	free(full);
	if (is_new) {
		struct kshape c = { .pid = pid, .dev = dev, .threads = threads, .regs = regs, .smem = smem,
				    .name = xstrdup(name), .name_id = name_id };
		*slot = ks->n;
		VEC_PUSH(ks->v, ks->n, ks->cap, c);
	}
	return &ks->v[*slot];
}

/* 64 bits of (pid, dev, threads, regs, smem, name id) */
static uint64_t shape_hash(uint32_t pid, uint32_t dev, uint32_t threads, uint32_t regs, uint32_t smem, uint32_t id)
{
	const uint32_t f[6] = { pid, dev, threads, regs, smem, id };
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < 6; i++) h = (h ^ f[i]) * 0x100000001b3ull, h ^= h >> 29;
	return h;
}

void kshapes_add(struct kshapes *ks, uint32_t pid, const gp_rec_kernel *k, const char *name)
{
	uint32_t threads = k->block[0] * k->block[1] * k->block[2];
	uint32_t smem = k->static_smem + k->dynamic_smem;
	uint64_t blocks = (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
	/* The group by name id first: the name-keyed lookup (a key built, a
	 * demangled name hashed) is a tenth of stats's pass.  The group found
	 * is checked, so a hash collision or a second id of one name only
	 * takes the slow path; a name id names one string in a trace. */
	uint64_t *fast = u64map_get(&ks->by_id, shape_hash(pid, k->device_id, threads, k->registers, smem, k->name_id),
				    MAP_INSERT);
	struct kshape *c = *fast ? &ks->v[*fast - 1] : NULL;
	if (!c || c->pid != pid || c->dev != k->device_id || c->threads != threads || c->regs != k->registers ||
	    c->smem != smem || c->name_id != k->name_id) {
		int fresh = !*fast;
		c = shape_of(ks, pid, k->device_id, threads, k->registers, smem, name, k->name_id);
		if (fresh && c->name_id == k->name_id) *fast = (uint64_t)(c - ks->v) + 1;
	}
	uint64_t dur = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
	if (!c->n || blocks < c->bmin) c->bmin = blocks;
	if (!c->n || blocks > c->bmax) c->bmax = blocks;
	c->n++;
	c->total += dur;
	*u64map_get(&c->blocks, blocks, MAP_INSERT) += dur;
}

static int cmp_kshape(const void *a, const void *b)
{
	const struct kshape *x = a, *y = b;
	if (x->total != y->total) return x->total > y->total ? -1 : 1;
	int c = strcmp(x->name, y->name);
	if (c) return c;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	if (x->threads != y->threads) return x->threads < y->threads ? -1 : 1;
	if (x->regs != y->regs) return x->regs < y->regs ? -1 : 1;
	return x->smem < y->smem ? -1 : x->smem > y->smem;
}

void kshapes_finish(struct kshapes *ks, struct devprops *dp)
{
	/* sorted first: the device sums below add up in this order */
	u64map_free(&ks->by_id); /* its indices are the order before the sort */
	if (ks->n) qsort(ks->v, ks->n, sizeof(*ks->v), cmp_kshape);
	for (size_t i = 0; i < ks->n; i++) {
		struct kshape *g = &ks->v[i];
		const gp_rec_device *d = devprops_get(dp, g->pid, g->dev);
		g->d = d;
		g->o = occ_compute(d, g->threads, g->regs, g->smem);
		g->cov_known = d && d->sm_count;
		g->occ_known = g->cov_known && g->o.known;
		g->wcov = g->wocc = 0;
		/* summed by grid size: the same bits however the sizes came in
		 * (kshapes_merge) */
		size_t nb = 0;
		uint64_t *bk = xmalloc((g->blocks.n ? g->blocks.n : 1) * sizeof(*bk));
		for (size_t j = 0; j < g->blocks.cap; j++)
			if (g->blocks.used[j]) bk[nb++] = g->blocks.slot[j].key;
		qsort(bk, nb, sizeof(*bk), cmp_u64);
		for (size_t j = 0; j < nb; j++) {
			double ns = (double)*u64map_get(&g->blocks, bk[j], MAP_FIND);
			if (g->cov_known) g->wcov += ns * occ_coverage(d, bk[j]);
			if (g->occ_known) g->wocc += ns * occ_coverage(d, bk[j]) * occ_grid(d, &g->o, bk[j]);
		}
		free(bk);
		const struct kshape_dev new_dev = { .pid = g->pid, .dev = g->dev };
		struct kshape_dev *u = VEC_KEYED(&ks->dev_idx, ((uint64_t)g->pid << 32) | g->dev, ks->devs, ks->ndevs,
						 ks->cdevs, &new_dev);
		u->smw_ns += g->wcov; u->occw_ns += g->wocc;
		/* a device's weighted figures need every kernel's properties */
		u->cov_known = u->cov_known == 0 ? (g->cov_known ? 1 : -1) : (u->cov_known == 1 && g->cov_known ? 1 : -1);
		u->occ_known = u->occ_known == 0 ? (g->occ_known ? 1 : -1) : (u->occ_known == 1 && g->occ_known ? 1 : -1);
	}
}

void kshapes_merge(struct kshapes *ks, struct kshapes *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct kshape *o = &src->v[i];
		struct kshape *c = shape_of(ks, o->pid, o->dev, o->threads, o->regs, o->smem, o->name, o->name_id);
		if (!c->n || o->bmin < c->bmin) c->bmin = o->bmin;
		if (!c->n || o->bmax > c->bmax) c->bmax = o->bmax;
		c->n += o->n;
		c->total += o->total;
		for (size_t j = 0; j < o->blocks.cap; j++)
			if (o->blocks.used[j]) *u64map_get(&c->blocks, o->blocks.slot[j].key, MAP_INSERT) += o->blocks.slot[j].val;
	}
}

const struct kshape_dev *kshapes_device(struct kshapes *ks, uint32_t pid, uint32_t dev)
{
	uint64_t *s = u64map_get(&ks->dev_idx, ((uint64_t)pid << 32) | dev, MAP_FIND);
	return s ? &ks->devs[*s - 1] : NULL;
}

void kshapes_free(struct kshapes *ks)
{
	for (size_t i = 0; i < ks->n; i++) { free(ks->v[i].name); u64map_free(&ks->v[i].blocks); }
	free(ks->v);
	strmap_free(&ks->idx);
	u64map_free(&ks->by_id);
	free(ks->devs);
	u64map_free(&ks->dev_idx);
	memset(ks, 0, sizeof(*ks));
}
