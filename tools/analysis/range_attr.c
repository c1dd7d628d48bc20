/* range_attr.c — see range_attr.h.  One engine per rule, both streaming:
 * THREAD (per-thread pending launches and open ranges), PROCESS (kernels
 * pending until every declared thread has passed their launch). */
#include "analysis/range_attr.h"

#include <stdlib.h>
#include <string.h>

#include "gp_launch.h"
#include "common/util.h"

/* ------------------------------------------------------------ THREAD */
#define MAXG 16
struct held { uint64_t ref, ns; };  /* a kernel seen before its launch was settled */
struct launch {
	uint64_t start;
	struct held *k; uint32_t nk, ck;
	uint32_t groups[MAXG];
	uint8_t ng, resolved, graph, has_api, kernel_seen;
};
struct pend { uint64_t *keys; size_t head, n, cap; };
struct tstack { struct { uint64_t s, e; uint32_t g; } *e; size_t n, cap; };

/* ------------------------------------------------------------ PROCESS */
/* A kernel not settled: t is its launch call's start, or its GPU start
 * while no call is known. */
struct pkern { uint64_t corr, t, ns, ref; uint8_t has_launch; };
struct prange { uint64_t s, e; uint32_t group; };
struct pthr { uint32_t tid; int has; uint64_t last_top; }; /* start of its last outermost range */
struct pproc {
	u64map launch;    /* correlation id -> earliest launch call start, until its kernel came */
	u64map graph;     /* correlation id -> 1: a graph launch (its entry stays) */
	u64map pend;      /* correlation id -> index + 1 of a pending kernel with it */
	struct pkern *k; size_t nk, ck;     /* pending */
	struct prange *r; size_t nr, cr;    /* ranges (declared threads: the last ones) */
	struct pthr *th; size_t nth, cth;   /* declared threads */
	uint64_t horizon;  /* kernels launched before it are settled at once */
	uint64_t settled_max; int any_settled;
	uint64_t late;
};

struct range_attr {
	enum range_rule rule;
	range_attr_fn fn;
	void *arg;
	/* THREAD */
	u64map launches;                   /* (pid<<40 ^ corr) -> struct launch * */
	u64map tid2pend; struct pend *pends; size_t npends, cpends;
	/* ranges that arrived before the calls inside them (a writer that emits
	 * ranges at push time): open ranges per thread */
	u64map tid2stack; struct tstack *stacks; size_t nstacks, cstacks;
	/* PROCESS */
	u64map pid2proc; struct pproc *procs; size_t nprocs, cprocs;
	range_attr_done_fn done;
};

struct range_attr *range_attr_new(enum range_rule rule, range_attr_fn fn, void *arg)
{
	struct range_attr *ra = xcalloc(1, sizeof(*ra));
	ra->rule = rule; ra->fn = fn; ra->arg = arg;
	return ra;
}

static void free_launch(struct launch *l)
{
	if (!l) return;
	free(l->k);
	free(l);
}

static void free_launches(u64map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i]) free_launch((struct launch *)(uintptr_t)m->vals[i]);
	u64map_free(m);
}

void range_attr_free(struct range_attr *ra)
{
	if (!ra) return;
	free_launches(&ra->launches);
	u64map_free(&ra->tid2pend);
	for (size_t i = 0; i < ra->npends; i++) free(ra->pends[i].keys);
	free(ra->pends);
	for (size_t i = 0; i < ra->nstacks; i++) free(ra->stacks[i].e);
	free(ra->stacks);
	u64map_free(&ra->tid2stack);
	for (size_t i = 0; i < ra->nprocs; i++) {
		u64map_free(&ra->procs[i].launch);
		u64map_free(&ra->procs[i].graph);
		u64map_free(&ra->procs[i].pend);
		free(ra->procs[i].k);
		free(ra->procs[i].r);
		free(ra->procs[i].th);
	}
	free(ra->procs);
	u64map_free(&ra->pid2proc);
	free(ra);
}

static struct pend *pend_for(struct range_attr *ra, uint64_t key, enum map_mode mode)
{
	uint64_t *s = u64map_get(&ra->tid2pend, key, MAP_FIND);
	if (s) return &ra->pends[*s];
	if (mode == MAP_FIND) return NULL;
	struct pend p;
	memset(&p, 0, sizeof(p));
	*u64map_get(&ra->tid2pend, key, MAP_INSERT) = ra->npends;
	VEC_PUSH(ra->pends, ra->npends, ra->cpends, p);
	return &ra->pends[ra->npends - 1];
}

static struct tstack *stack_for(struct range_attr *ra, uint64_t key, enum map_mode mode)
{
	uint64_t *s = u64map_get(&ra->tid2stack, key, MAP_FIND);
	if (s) return &ra->stacks[*s];
	if (mode == MAP_FIND) return NULL;
	struct tstack t;
	memset(&t, 0, sizeof(t));
	*u64map_get(&ra->tid2stack, key, MAP_INSERT) = ra->nstacks;
	VEC_PUSH(ra->stacks, ra->nstacks, ra->cstacks, t);
	return &ra->stacks[ra->nstacks - 1];
}

static void add_group(struct launch *l, uint32_t g)
{
	for (uint32_t j = 0; j < l->ng; j++)
		if (l->groups[j] == g) return;
	if (l->ng < MAXG) l->groups[l->ng++] = g;
}

static struct launch *launch_get(struct range_attr *ra, uint64_t key, enum map_mode mode)
{
	uint64_t *s = u64map_get(&ra->launches, key, mode);
	if (!s) return NULL;
	if (!*s) *s = (uint64_t)(uintptr_t)xcalloc(1, sizeof(struct launch));
	return (struct launch *)(uintptr_t)*s;
}

static void launch_forget(struct range_attr *ra, uint64_t key)
{
	uint64_t *s = u64map_get(&ra->launches, key, MAP_FIND);
	if (!s) return;
	free_launch((struct launch *)(uintptr_t)*s);
	u64map_del(&ra->launches, key);
}

static void attribute(struct range_attr *ra, const struct launch *l, uint64_t ref, uint64_t ns)
{
	for (uint32_t i = 0; i < l->ng; i++)
		ra->fn(ra->arg, l->groups[i], ref, ns);
}

static void resolve(struct range_attr *ra, uint64_t key)
{
	struct launch *l = launch_get(ra, key, MAP_FIND);
	if (!l || l->resolved) return;
	for (uint32_t i = 0; i < l->nk; i++) attribute(ra, l, l->k[i].ref, l->k[i].ns);
	free(l->k);
	l->k = NULL; l->nk = l->ck = 0;
	l->resolved = 1;
	if (l->kernel_seen && !l->graph) launch_forget(ra, key);
}

static void thread_call(struct range_attr *ra, uint32_t pid, uint32_t tid, const gp_rec_api *a, int graph)
{
	if (ra->launches.n > (1u << 22)) {
		/* launches that never see a kernel (GPU activity off?): start over
		 * rather than grow without bound */
		free_launches(&ra->launches);
		for (size_t i = 0; i < ra->npends; i++) ra->pends[i].head = ra->pends[i].n = 0;
	}
	uint64_t key = ((uint64_t)pid << 40) ^ a->correlation_id;
	struct launch *l = launch_get(ra, key, MAP_INSERT);
	if (l->has_api) return;   /* the driver call inside a runtime call: same launch */
	l->has_api = 1;
	l->start = a->start_ns;
	l->graph = (uint8_t)graph;
	struct tstack *ts = stack_for(ra, ((uint64_t)pid << 32) | tid, 0);
	if (ts) {
		while (ts->n && ts->e[ts->n - 1].e <= a->start_ns) ts->n--;
		for (size_t i = 0; i < ts->n; i++)
			if (ts->e[i].s <= a->start_ns && a->start_ns < ts->e[i].e)
				add_group(l, ts->e[i].g);
	}
	struct pend *p = pend_for(ra, ((uint64_t)pid << 32) | tid, 1);
	if (p->head > 1024 && p->head * 2 > p->n) {
		memmove(p->keys, p->keys + p->head, (p->n - p->head) * sizeof(uint64_t));
		p->n -= p->head; p->head = 0;
	}
	VEC_PUSH(p->keys, p->n, p->cap, key);
}

static void thread_kernel(struct range_attr *ra, uint32_t pid, uint64_t corr, uint64_t ns, uint64_t ref)
{
	uint64_t key = ((uint64_t)pid << 40) ^ corr;
	struct launch *l = launch_get(ra, key, MAP_FIND);
	if (!l) {
		if (ra->launches.n > (1u << 22)) return;
		l = launch_get(ra, key, MAP_INSERT);  /* kernel ahead of its launch call */
	}
	l->kernel_seen = 1;
	if (l->resolved) {
		attribute(ra, l, ref, ns);
		if (!l->graph) launch_forget(ra, key);
	} else {
		struct held h = { ref, ns };
		if (l->nk == l->ck) {
			l->ck = l->ck ? 2 * l->ck : 1;
			l->k = xrealloc(l->k, l->ck * sizeof(*l->k));
		}
		l->k[l->nk++] = h;
	}
}

static uint64_t pend_start(struct range_attr *ra, struct pend *p, size_t i)
{
	struct launch *l = launch_get(ra, p->keys[i], MAP_FIND);
	return l ? l->start : 0;
}

static void thread_range(struct range_attr *ra, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e, uint32_t depth,
			 uint32_t g)
{
	uint64_t tkey = ((uint64_t)pid << 32) | tid;
	struct tstack *ts = stack_for(ra, tkey, MAP_INSERT);
	while (ts->n && ts->e[ts->n - 1].e <= s) ts->n--;
	vec_reserve((void **)&ts->e, &ts->cap, ts->n + 1, sizeof(*ts->e));
	ts->e[ts->n].s = s; ts->e[ts->n].e = e; ts->e[ts->n].g = g;
	ts->n++;
	struct pend *p = pend_for(ra, tkey, MAP_FIND);
	if (!p) return;
	/* launches on this thread that started inside [s, e) */
	size_t lo = p->head, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pend_start(ra, p, mid) < s) lo = mid + 1;
		else hi = mid;
	}
	for (size_t i = lo; i < p->n; i++) {
		struct launch *l = launch_get(ra, p->keys[i], MAP_FIND);
		if (!l) continue;
		if (l->start >= e) break;
		add_group(l, g);
	}
	/* an outermost range closes the books on every launch before its end */
	if (depth == 0) {
		while (p->head < p->n && pend_start(ra, p, p->head) < e)
			resolve(ra, p->keys[p->head++]);
	}
}

/* ------------------------------------------------------------ PROCESS */
static struct pproc *proc_get(struct range_attr *ra, uint32_t pid)
{
	uint64_t *s = u64map_get(&ra->pid2proc, pid, MAP_INSERT);
	if (!*s) {
		struct pproc p;
		memset(&p, 0, sizeof(p));
		VEC_PUSH(ra->procs, ra->nprocs, ra->cprocs, p);
		*s = ra->nprocs;  /* index + 1 */
	}
	return &ra->procs[*s - 1];
}

static int cmp_pkern_at(const void *a, const void *b)
{
	const struct pkern *x = a, *y = b;
	if (x->t != y->t) return x->t < y->t ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

static void pend_reindex(struct pproc *p)
{
	u64map_free(&p->pend);
	for (size_t i = 0; i < p->nk; i++)
		if (p->k[i].corr) *u64map_get(&p->pend, p->k[i].corr, MAP_INSERT) = i + 1;
}

/* Settles the pending kernels launched before h: each range that holds
 * one gets it (ranges in their order, kernels by launch time), then the
 * caller hears it is done. */
static void settle(struct range_attr *ra, struct pproc *p, uint64_t h)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nk; i++)
		if (p->k[i].t < h) {
			struct pkern t = p->k[n]; p->k[n] = p->k[i]; p->k[i] = t;
			n++;
		}
	if (!n) return;
	struct pkern *b = p->k;
	qsort(b, n, sizeof(*b), cmp_pkern_at);
	for (size_t j = 0; j < p->nr; j++) {
		const struct prange *rg = &p->r[j];
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (b[mid].t < rg->s) lo = mid + 1;
			else hi = mid;
		}
		for (size_t q = lo; q < n && b[q].t < rg->e; q++)
			ra->fn(ra->arg, rg->group, b[q].ref, b[q].ns);
	}
	for (size_t q = 0; q < n; q++) {
		if (!p->any_settled || b[q].t > p->settled_max) p->settled_max = b[q].t;
		p->any_settled = 1;
		if (ra->done) ra->done(ra->arg, b[q].ref, b[q].ns);
	}
	memmove(p->k, p->k + n, (p->nk - n) * sizeof(*p->k));
	p->nk -= n;
	pend_reindex(p);
}

/* The horizon: every declared thread has given an outermost range that
 * starts at or after it (0 while one has none). */
static void advance(struct range_attr *ra, struct pproc *p)
{
	if (!p->nth) return;
	uint64_t h = UINT64_MAX;
	for (size_t i = 0; i < p->nth; i++) {
		uint64_t t = p->th[i].has ? p->th[i].last_top : 0;
		if (t < h) h = t;
	}
	if (h <= p->horizon) return;
	p->horizon = h;
	settle(ra, p, h);
	/* ranges long passed: a kernel arriving now for them is settled by the
	 * last RANGE_ATTR_KEEP only */
	if (p->nr > 2 * RANGE_ATTR_KEEP) {
		size_t drop = 0;
		while (drop < p->nr - RANGE_ATTR_KEEP && p->r[drop].e <= h) drop++;
		memmove(p->r, p->r + drop, (p->nr - drop) * sizeof(*p->r));
		p->nr -= drop;
	}
}

static void process_kernel(struct range_attr *ra, uint32_t pid, uint64_t corr, uint64_t gpu_start, uint64_t ns,
			   uint64_t ref)
{
	struct pproc *p = proc_get(ra, pid);
	struct pkern k = { corr, gpu_start, ns, ref, 0 };
	uint64_t *l = corr ? u64map_get(&p->launch, corr, MAP_FIND) : NULL;
	if (l) {
		k.t = *l;
		k.has_launch = 1;
		if (!u64map_get(&p->graph, corr, MAP_FIND)) u64map_del(&p->launch, corr);
	}
	if (p->nth && k.t < p->horizon) { /* its ranges are all known: settled now */
		for (size_t j = 0; j < p->nr; j++)
			if (p->r[j].s <= k.t && k.t < p->r[j].e) ra->fn(ra->arg, p->r[j].group, ref, ns);
		if (!p->any_settled || k.t > p->settled_max) p->settled_max = k.t;
		p->any_settled = 1;
		if (ra->done) ra->done(ra->arg, ref, ns);
		return;
	}
	VEC_PUSH(p->k, p->nk, p->ck, k);
	if (corr) *u64map_get(&p->pend, corr, MAP_INSERT) = p->nk;
	if (p->nk > RANGE_ATTR_PENDING_MAX) {
		/* a thread holds everything back: settle the older half */
		uint64_t *t = xmalloc(p->nk * sizeof(*t));
		for (size_t i = 0; i < p->nk; i++) t[i] = p->k[i].t;
		qsort(t, p->nk, sizeof(*t), cmp_u64);
		uint64_t h = t[p->nk / 2];
		free(t);
		if (h > p->horizon) p->horizon = h;
		settle(ra, p, h);
	}
}

/* ------------------------------------------------------------ API */
void range_attr_call(struct range_attr *ra, uint32_t pid, uint32_t tid, const gp_rec_api *a)
{
	enum gp_launch_kind kind = gp_launch_kind(a->domain, a->cbid);
	if (!a->correlation_id || !gp_launch_runs_kernels(kind))
		return;
	if (ra->rule == RANGE_RULE_THREAD) {
		thread_call(ra, pid, tid, a, kind == GP_LAUNCH_GRAPH);
		return;
	}
	struct pproc *p = proc_get(ra, pid);
	uint64_t corr = a->correlation_id;
	if (kind == GP_LAUNCH_GRAPH) *u64map_get(&p->graph, corr, MAP_INSERT) = 1;
	uint64_t *pi = u64map_get(&p->pend, corr, MAP_FIND);
	if (pi) { /* its kernel came first and waits: the call's start is its time */
		for (size_t i = *pi; i-- > 0;) {
			struct pkern *k = &p->k[i];
			if (k->corr != corr) continue;
			if (!k->has_launch || a->start_ns < k->t) k->t = a->start_ns;
			k->has_launch = 1;
			if (kind != GP_LAUNCH_GRAPH) break;
		}
		if (kind != GP_LAUNCH_GRAPH) return;
	}
	if (p->launch.n > (1u << 22)) {
		/* launch calls whose kernels never came (GPU activity off?):
		 * start over rather than grow without bound */
		u64map_free(&p->launch);
		u64map_free(&p->graph);
	}
	uint64_t *s = u64map_get(&p->launch, corr, MAP_FIND);
	/* the runtime call and the driver call inside it share the id */
	if (!s) *u64map_get(&p->launch, corr, MAP_INSERT) = a->start_ns;
	else if (a->start_ns < *s) *s = a->start_ns;
}

void range_attr_range(struct range_attr *ra, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e, uint32_t depth,
		      uint32_t group)
{
	if (ra->rule == RANGE_RULE_THREAD) {
		thread_range(ra, pid, tid, s, e, depth, group);
		return;
	}
	struct prange r = { s, e, group };
	struct pproc *p = proc_get(ra, pid);
	/* kernels it holds may have been settled without it */
	if (p->any_settled && s <= p->settled_max) p->late++;
	VEC_PUSH(p->r, p->nr, p->cr, r);
	if (depth) return;
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i].tid == tid) {
			if (!p->th[i].has || s > p->th[i].last_top) p->th[i].last_top = s;
			p->th[i].has = 1;
			advance(ra, p);
			break;
		}
}

void range_attr_thread(struct range_attr *ra, uint32_t pid, uint32_t tid)
{
	if (ra->rule != RANGE_RULE_PROCESS) return;
	struct pproc *p = proc_get(ra, pid);
	for (size_t i = 0; i < p->nth; i++)
		if (p->th[i].tid == tid) return;
	struct pthr t = { tid, 0, 0 };
	VEC_PUSH(p->th, p->nth, p->cth, t);
	p->horizon = 0;   /* it has no range yet */
}

void range_attr_on_settled(struct range_attr *ra, range_attr_done_fn fn)
{
	ra->done = fn;
}

uint64_t range_attr_late(const struct range_attr *ra)
{
	uint64_t n = 0;
	for (size_t i = 0; i < ra->nprocs; i++) n += ra->procs[i].late;
	return n;
}

void range_attr_kernel(struct range_attr *ra, uint32_t pid, uint64_t corr, uint64_t gpu_start, uint64_t ns,
		       uint64_t ref)
{
	if (ra->rule == RANGE_RULE_THREAD) {
		thread_kernel(ra, pid, corr, ns, ref);
		return;
	}
	process_kernel(ra, pid, corr, gpu_start, ns, ref);
}

void range_attr_finish(struct range_attr *ra)
{
	if (ra->rule == RANGE_RULE_PROCESS) {
		for (size_t i = 0; i < ra->nprocs; i++) settle(ra, &ra->procs[i], UINT64_MAX);
		return;
	}
	/* end of trace: every range is known now */
	for (size_t i = 0; i < ra->npends; i++)
		while (ra->pends[i].head < ra->pends[i].n)
			resolve(ra, ra->pends[i].keys[ra->pends[i].head++]);
}
