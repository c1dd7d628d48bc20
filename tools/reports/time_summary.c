/* time_summary.c — see time_summary.h. */
#include "reports/time_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* The TS_TIME_PCT .. TS_STDDEV cells of group g's row; sum: the 100 %. */
static void time_summary_cells(struct cell *row, struct sgroup *g, uint64_t sum)
{
	cell_num(&row[TS_TIME_PCT], sum ? 100.0 * (double)g->total / (double)sum : 0);
	cell_num(&row[TS_TOTAL], (double)g->total);
	cell_num(&row[TS_COUNT], (double)g->n);
	cell_num(&row[TS_AVG], (double)g->total / (double)g->n);
	cell_num(&row[TS_MED], sgroup_median(g));
	cell_num(&row[TS_MIN], (double)g->min);
	cell_num(&row[TS_MAX], (double)g->max);
	cell_num(&row[TS_STDDEV], sgroup_stddev(g));
}

const char *time_summary_note(const struct summary *t)
{
	return t->approx ? TIME_SUMMARY_APPROX_NOTE : NULL;
}

void summary_state_init(struct summary_state *s, const struct stats_ctx *ctx)
{
	memset(s, 0, sizeof(*s));
	s->r = ctx->r;
	s->groups.board = ctx->board;
}

void summary_state_release(struct summary_state *s)
{
	summary_free(&s->groups);
	u64map_free(&s->cache);
	free(s->meta);
}

void *summary_state_new(const struct stats_ctx *ctx)
{
	struct summary_state *s = xmalloc(sizeof(*s));
	summary_state_init(s, ctx);
	return s;
}

void summary_state_free(void *self)
{
	summary_state_release(self);
	free(self);
}

const char *summary_state_name(const struct summary_state *s, size_t g)
{
	return s->groups.g[g].name + s->meta[g].name_at;
}

/* The group of (pid, dev, name), made with string id `id`. */
static size_t group_of(struct summary_state *s, uint32_t pid, uint32_t dev, uint32_t id, const char *name)
{
	char pre[32];
	int np = snprintf(pre, sizeof(pre), "%u/%u/", pid, dev);
	size_t nl = strlen(name);
	char *key = xmalloc((size_t)np + nl + 1);
	memcpy(key, pre, (size_t)np);
	memcpy(key + np, name, nl + 1);
	size_t n = s->groups.n, g = summary_group(&s->groups, key);
	free(key);
	if (g == n) { /* new */
		vec_reserve((void **)&s->meta, &s->cmeta, g + 1, sizeof(*s->meta));
		s->meta[g] = (struct ts_meta){ pid, dev, id, (size_t)np, 0, 0 };
	}
	return g;
}

void summary_state_merge(struct summary_state *s, struct summary_state *src)
{
	for (size_t i = 0; i < src->groups.n; i++) {
		const struct ts_meta *m = &src->meta[i];
		struct sgroup *from = &src->groups.g[i];
		size_t g = group_of(s, m->pid, m->dev, m->id, from->name + m->name_at);
		qsketch_sorted(&s->groups.g[g].q);
		qsketch_sorted(&from->q);
		summary_merge(&s->groups, g, from);
		qsketch_free(&from->q);
		s->meta[g].sum += m->sum;
		s->meta[g].bits |= m->bits;
	}
}

int summary_state_merge_report(void *self, void *src, const struct stats_ctx *ctx)
{
	summary_state_merge(self, src);
	return 0;
}

static uint64_t cache_key(uint32_t pid, uint32_t dev, uint32_t id)
{
	return (((uint64_t)pid << 32) | id) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)dev + 1) * 0xC2B2AE3D27D4EB4Full;
}

size_t summary_state_group(struct summary_state *s, uint32_t pid, uint32_t dev, uint32_t id,
			   char *(*name_of)(gp_reader *r, uint32_t id))
{
	uint64_t k = cache_key(pid, dev, id);
	uint64_t *slot = u64map_get(&s->cache, k, MAP_FIND);
	if (slot) {
		const struct ts_meta *m = &s->meta[*slot - 1];
		if (m->pid == pid && m->dev == dev && m->id == id) return *slot - 1;
	}
	char *name = name_of(s->r, id);
	size_t g = group_of(s, pid, dev, id, name);
	free(name);
	/* a hash collision with another (pid, dev, id) keeps the first; this
	 * one goes the slow way each time */
	if (!slot && s->meta[g].id == id) *u64map_get(&s->cache, k, MAP_INSERT) = g + 1;
	return g;
}

size_t summary_state_named(struct summary_state *s, uint32_t pid, const char *name)
{
	return group_of(s, pid, 0, 0, name);
}

static const struct summary_state *sort_state;
static const struct stats_ctx *sort_ctx;
static int cmp_row(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct ts_meta *x = &sort_state->meta[i], *y = &sort_state->meta[j];
	if (x->pid != y->pid) {
		/* ranked processes by rank, then the others by pid */
		unsigned rx = (unsigned)stats_ctx_rank(sort_ctx, x->pid), ry = (unsigned)stats_ctx_rank(sort_ctx, y->pid);
		if (rx != ry) return rx < ry ? -1 : 1;
		return x->pid < y->pid ? -1 : 1;
	}
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	const struct sgroup *gx = &sort_state->groups.g[i], *gy = &sort_state->groups.g[j];
	if (gx->total != gy->total) return gx->total > gy->total ? -1 : 1;
	return strcmp(gx->name, gy->name);
}

size_t *summary_state_order(const struct summary_state *s, const struct stats_ctx *ctx)
{
	size_t n = s->groups.n;
	size_t *ix = xmalloc((n ? n : 1) * sizeof(size_t));
	for (size_t i = 0; i < n; i++) ix[i] = i;
	sort_state = s;
	sort_ctx = ctx;
	qsort(ix, n, sizeof(size_t), cmp_row);
	return ix;
}

void time_summary_fill(struct report *rep, struct summary_state *s, const struct stats_ctx *ctx, int name_col,
		       time_summary_own own, void *arg)
{
	summary_settle(&s->groups);
	size_t n = s->groups.n, *ix = summary_state_order(s, ctx);
	rep->note = time_summary_note(&s->groups);
	for (size_t k = 0; k < n;) {
		/* the rows of one process and device: their sum is the 100 % */
		size_t end = k;
		uint64_t sum = 0;
		while (end < n && s->meta[ix[end]].pid == s->meta[ix[k]].pid && s->meta[ix[end]].dev == s->meta[ix[k]].dev)
			sum += s->groups.g[ix[end++]].total;
		for (; k < end; k++) {
			size_t g = ix[k];
			struct cell *c = report_row(rep);
			time_summary_cells(c, &s->groups.g[g], sum);
			int rank = stats_ctx_rank(ctx, s->meta[g].pid);
			cell_num(&c[TS_PID], s->meta[g].pid);
			if (rank >= 0) cell_num(&c[TS_RANK], rank);
			cell_num(&c[TS_DEVICE], s->meta[g].dev);
			cell_str(&c[name_col], summary_state_name(s, g));
			if (own) own(arg, c, g);
		}
	}
	free(ix);
	report_hide_uniform(rep, TS_PID);
	report_hide_uniform(rep, TS_RANK);
	report_hide_uniform(rep, TS_DEVICE);
}

static uint32_t kind8(uint32_t k) { return k < 255 ? k : 255; } /* 255: unknown, as any past the names */

/* A memop group's name: "OPERATION\tSRC\tDST" (SRC empty for a memset); its
 * string id, the parts: bit 31 for a memcpy, then its copy kind, and the
 * source and destination memory kinds, 8 bits each. */
size_t memop_group(struct summary_state *s, uint32_t pid, const gp_record *rec, uint64_t *dur, uint64_t *bytes)
{
	char name[128];
	uint32_t dev, id;
	if (rec->type == GP_REC_MEMCPY) {
		const gp_rec_memcpy *c = &rec->u.memcpy;
		snprintf(name, sizeof(name), "[CUDA memcpy %s]\t%s\t%s", copy_kind_long(c->copy_kind),
			 mem_kind_name(c->src_kind), mem_kind_name(c->dst_kind));
		*dur = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
		*bytes = c->bytes;
		dev = c->device_id;
		id = 1u << 31 | kind8(c->copy_kind) << 16 | kind8(c->src_kind) << 8 | kind8(c->dst_kind);
	} else {
		const gp_rec_memset *z = &rec->u.memset;
		snprintf(name, sizeof(name), "[CUDA memset]\t\t%s", mem_kind_name(z->mem_kind));
		*dur = z->end_ns > z->start_ns ? z->end_ns - z->start_ns : 0;
		*bytes = z->bytes;
		dev = z->device_id;
		id = kind8(z->mem_kind);
	}
	return group_of(s, pid, dev, id, name);
}

void memop_group_parts(const struct summary_state *s, size_t g, struct memop_parts *out)
{
	uint32_t id = s->meta[g].id;
	memset(out, 0, sizeof(*out));
	if (id >> 31) {
		snprintf(out->op, sizeof(out->op), "[CUDA memcpy %s]", copy_kind_long(id >> 16 & 0xff));
		out->src = mem_kind_name(id >> 8 & 0xff);
	} else {
		snprintf(out->op, sizeof(out->op), "[CUDA memset]");
	}
	out->dst = mem_kind_name(id & 0xff);
}
