/* stats_nvtx.c — `stats --report nvtx`: NVTX ranges by name, with the GPU
 * time of the kernels launched inside each push/pop range (nsys nvtx_sum).
 *
 * Attribution.  A push/pop range record is written when the range is
 * popped, i.e. after the API calls inside it on the same thread, and a
 * kernel may arrive before or after the range that encloses its launch.  So
 * each launch call waits on its thread's pending list until the enclosing
 * outermost (depth 0) range has been seen: by then every range containing it
 * is known ("resolved").  Kernel time seen before that is held on the launch;
 * after it, it goes straight to the ranges.  A non-graph launch is forgotten
 * once resolved and its kernel seen.  Memory: the launches not yet closed by
 * an outermost range or still waiting for their kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_launch.h"
#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/time_summary.h"

enum { NVTX_GPU_NS = TS_NCOLS, NVTX_STYLE, NVTX_RANGE, NVTX_NCOLS };
static const struct col nvtx_cols[NVTX_NCOLS] = {
	TIME_SUMMARY_COLS("Instances", "instances"),
	[NVTX_GPU_NS] = { "GPU Kernel Time (ns)", "gpu_kernel_ns", COL_INT },
	[NVTX_STYLE] = { "Style", "style", COL_STR },
	[NVTX_RANGE] = { "Range", "range", COL_STR },
};

/* Range kinds seen under one name (bits). */
enum { STYLE_PUSHPOP = 1, STYLE_STARTEND = 2 };

#define MAXG 16
struct launch {
	uint64_t start, kernel_ns;
	uint32_t groups[MAXG];
	uint8_t ng, resolved, graph, has_api, kernel_seen;
};
struct pend { uint64_t *keys; size_t head, n, cap; };
struct tstack { struct { uint64_t s, e; uint32_t g; } *e; size_t n, cap; };

struct nvtx_report {
	gp_reader *r;
	struct summary ranges;
	uint64_t *gpu_ns; int *style; size_t cx;  /* per group */
	u64map launches;                   /* (pid<<40 ^ corr) -> struct launch * */
	u64map tid2pend; struct pend *pends; size_t npends, cpends;
	/* ranges that arrived before the calls inside them (a writer that emits
	 * ranges at push time): open ranges per thread */
	u64map tid2stack; struct tstack *stacks; size_t nstacks, cstacks;
};

static struct pend *pend_for(struct nvtx_report *st, uint64_t key, int create)
{
	uint64_t *s = u64map_get(&st->tid2pend, key, 0);
	if (s) return &st->pends[*s];
	if (!create) return NULL;
	struct pend p;
	memset(&p, 0, sizeof(p));
	*u64map_get(&st->tid2pend, key, 1) = st->npends;
	VEC_PUSH(st->pends, st->npends, st->cpends, p);
	return &st->pends[st->npends - 1];
}

static struct tstack *stack_for(struct nvtx_report *st, uint64_t key, int create)
{
	uint64_t *s = u64map_get(&st->tid2stack, key, 0);
	if (s) return &st->stacks[*s];
	if (!create) return NULL;
	struct tstack t;
	memset(&t, 0, sizeof(t));
	*u64map_get(&st->tid2stack, key, 1) = st->nstacks;
	VEC_PUSH(st->stacks, st->nstacks, st->cstacks, t);
	return &st->stacks[st->nstacks - 1];
}

static void add_group(struct launch *l, uint32_t g)
{
	for (uint32_t j = 0; j < l->ng; j++)
		if (l->groups[j] == g) return;
	if (l->ng < MAXG) l->groups[l->ng++] = g;
}

static struct launch *launch_get(struct nvtx_report *st, uint64_t key, int create)
{
	uint64_t *s = u64map_get(&st->launches, key, create);
	if (!s) return NULL;
	if (!*s) *s = (uint64_t)(uintptr_t)xcalloc(1, sizeof(struct launch));
	return (struct launch *)(uintptr_t)*s;
}

static void launch_forget(struct nvtx_report *st, uint64_t key)
{
	uint64_t *s = u64map_get(&st->launches, key, 0);
	if (!s) return;
	free((void *)(uintptr_t)*s);
	u64map_del(&st->launches, key);
}

static void attribute(struct nvtx_report *st, const struct launch *l, uint64_t ns)
{
	for (uint32_t i = 0; i < l->ng; i++)
		st->gpu_ns[l->groups[i]] += ns;
}

static void resolve(struct nvtx_report *st, uint64_t key)
{
	struct launch *l = launch_get(st, key, 0);
	if (!l || l->resolved) return;
	attribute(st, l, l->kernel_ns);
	l->kernel_ns = 0;
	l->resolved = 1;
	if (l->kernel_seen && !l->graph) launch_forget(st, key);
}

static void on_api(struct nvtx_report *st, const gp_rec_api *a, uint32_t pid, uint32_t tid)
{
	enum gp_launch_kind kind = gp_launch_kind(a->domain, a->cbid);
	if (!a->correlation_id || !gp_launch_runs_kernels(kind))
		return;
	if (st->launches.n > (1u << 22)) {
		/* launches that never see a kernel (GPU activity off?): start over
		 * rather than grow without bound */
		for (size_t i = 0; i < st->launches.cap; i++)
			if (st->launches.used[i]) free((void *)(uintptr_t)st->launches.vals[i]);
		u64map_free(&st->launches);
		for (size_t i = 0; i < st->npends; i++) st->pends[i].head = st->pends[i].n = 0;
	}
	uint64_t key = ((uint64_t)pid << 40) ^ a->correlation_id;
	struct launch *l = launch_get(st, key, 1);
	if (l->has_api) return;   /* the driver call inside a runtime call: same launch */
	l->has_api = 1;
	l->start = a->start_ns;
	l->graph = kind == GP_LAUNCH_GRAPH;
	struct tstack *ts = stack_for(st, ((uint64_t)pid << 32) | tid, 0);
	if (ts) {
		while (ts->n && ts->e[ts->n - 1].e <= a->start_ns) ts->n--;
		for (size_t i = 0; i < ts->n; i++)
			if (ts->e[i].s <= a->start_ns && a->start_ns < ts->e[i].e)
				add_group(l, ts->e[i].g);
	}
	struct pend *p = pend_for(st, ((uint64_t)pid << 32) | tid, 1);
	if (p->head > 1024 && p->head * 2 > p->n) {
		memmove(p->keys, p->keys + p->head, (p->n - p->head) * sizeof(uint64_t));
		p->n -= p->head; p->head = 0;
	}
	VEC_PUSH(p->keys, p->n, p->cap, key);
}

static void on_kernel(struct nvtx_report *st, uint32_t pid, const gp_rec_kernel *k)
{
	uint64_t dur = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
	uint64_t key = ((uint64_t)pid << 40) ^ k->correlation_id;
	struct launch *l = launch_get(st, key, 0);
	if (!l) {
		if (st->launches.n > (1u << 22)) return;
		l = launch_get(st, key, 1);  /* kernel ahead of its launch call */
	}
	l->kernel_seen = 1;
	if (l->resolved) {
		attribute(st, l, dur);
		if (!l->graph) launch_forget(st, key);
	} else {
		l->kernel_ns += dur;
	}
}

static uint64_t pend_start(struct nvtx_report *st, struct pend *p, size_t i)
{
	struct launch *l = launch_get(st, p->keys[i], 0);
	return l ? l->start : 0;
}

static void on_range(struct nvtx_report *st, const gp_rec_nvtx_range *n, uint32_t pid, uint32_t tid)
{
	const char *dom = tool_str(st->r, n->domain_id), *msg = tool_str(st->r, n->message_id);
	char *name = xmalloc(strlen(dom) + strlen(msg) + 2);
	if (*dom) sprintf(name, "%s:%s", dom, msg);
	else strcpy(name, msg);
	size_t g = summary_group(&st->ranges, name);
	free(name);
	if (g >= st->cx) {
		size_t old = st->cx;
		st->cx = st->ranges.cap;
		st->gpu_ns = xrealloc(st->gpu_ns, st->cx * sizeof(*st->gpu_ns));
		st->style = xrealloc(st->style, st->cx * sizeof(*st->style));
		memset(st->gpu_ns + old, 0, (st->cx - old) * sizeof(*st->gpu_ns));
		memset(st->style + old, 0, (st->cx - old) * sizeof(*st->style));
	}
	st->style[g] |= n->kind == GP_NVTX_STARTEND ? STYLE_STARTEND : STYLE_PUSHPOP;
	sgroup_add(&st->ranges.g[g], n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0);
	if (n->kind != GP_NVTX_PUSHPOP) return;
	uint64_t tkey = ((uint64_t)pid << 32) | (n->tid ? n->tid : tid);
	struct tstack *ts = stack_for(st, tkey, 1);
	while (ts->n && ts->e[ts->n - 1].e <= n->start_ns) ts->n--;
	vec_reserve((void **)&ts->e, &ts->cap, ts->n + 1, sizeof(*ts->e));
	ts->e[ts->n].s = n->start_ns; ts->e[ts->n].e = n->end_ns; ts->e[ts->n].g = (uint32_t)g;
	ts->n++;
	struct pend *p = pend_for(st, tkey, 0);
	if (!p) return;
	/* launches on this thread that started inside [start, end) */
	size_t lo = p->head, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pend_start(st, p, mid) < n->start_ns) lo = mid + 1;
		else hi = mid;
	}
	for (size_t i = lo; i < p->n; i++) {
		struct launch *l = launch_get(st, p->keys[i], 0);
		if (!l) continue;
		if (l->start >= n->end_ns) break;
		add_group(l, (uint32_t)g);
	}
	/* an outermost range closes the books on every launch before its end */
	if (n->depth == 0) {
		while (p->head < p->n && pend_start(st, p, p->head) < n->end_ns)
			resolve(st, p->keys[p->head++]);
	}
}

static void *nvtx_new(const struct stats_ctx *ctx)
{
	struct nvtx_report *st = xcalloc(1, sizeof(*st));
	st->r = ctx->r;
	return st;
}

static void nvtx_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct nvtx_report *st = self;
	const gp_record *rec = r->rec;
	switch (rec->type) {
	case GP_REC_API:
		on_api(st, &rec->u.api, r->pid, rec->u.api.tid ? rec->u.api.tid : r->tid);
		break;
	case GP_REC_KERNEL:
		on_kernel(st, r->pid, &rec->u.kernel);
		break;
	case GP_REC_NVTX_RANGE:
		on_range(st, &rec->u.nvtx_range, r->pid, r->tid);
		break;
	}
}

static void nvtx_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct nvtx_report *st = self;
	/* end of trace: every range is known now */
	for (size_t i = 0; i < st->npends; i++)
		while (st->pends[i].head < st->pends[i].n)
			resolve(st, st->pends[i].keys[st->pends[i].head++]);
	struct report *rep = &tables[0];
	report_define(rep, "NVTX Range Summary", nvtx_cols, NVTX_NCOLS);
	struct summary *t = &st->ranges;
	uint64_t sum = time_summary_sum(t);
	size_t *ix = summary_by_total(t);
	for (size_t k = 0; k < t->n; k++) {
		struct sgroup *g = &t->g[ix[k]];
		int style = st->style[ix[k]];
		struct cell *c = report_row(rep);
		time_summary_cells(c, g, sum);
		if (style & STYLE_PUSHPOP) cell_num(&c[NVTX_GPU_NS], (double)st->gpu_ns[ix[k]]);
		cell_str(&c[NVTX_STYLE], style == STYLE_PUSHPOP ? "PushPop" : style == STYLE_STARTEND ? "StartEnd" : "Mixed");
		cell_str(&c[NVTX_RANGE], g->name);
	}
	free(ix);
}

static void nvtx_free(void *self)
{
	struct nvtx_report *st = self;
	summary_free(&st->ranges);
	free(st->gpu_ns); free(st->style);
	for (size_t i = 0; i < st->launches.cap; i++)
		if (st->launches.used[i]) free((void *)(uintptr_t)st->launches.vals[i]);
	u64map_free(&st->launches);
	u64map_free(&st->tid2pend);
	for (size_t i = 0; i < st->npends; i++) free(st->pends[i].keys);
	free(st->pends);
	for (size_t i = 0; i < st->nstacks; i++) free(st->stacks[i].e);
	free(st->stacks);
	u64map_free(&st->tid2stack);
	free(st);
}

static const struct stats_table nvtx_tables[] = {
	{ "nvtx",
	  "NVTX ranges by name, with GPU time of the kernels launched inside\n"
	  "each push/pop range (nvtx_sum)" },
};

const struct stats_report stats_report_nvtx = {
	.tables = nvtx_tables, .ntables = 1,
	.types = STATS_TYPE(GP_REC_API) | STATS_TYPE(GP_REC_KERNEL) | STATS_TYPE(GP_REC_NVTX_RANGE),
	.new = nvtx_new, .add = nvtx_add, .fill = nvtx_fill, .free = nvtx_free,
};
