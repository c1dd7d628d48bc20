/* mem_view.c — see mem_view.h. */
#include "analysis/memory/mem_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_alloc.h"
#include "analysis/gpu/devprops.h"
#include "common/tool.h"
#include "common/util.h"

const char *const mem_owner_names[MO_COUNT] = {
	[MO_TORCH] = "pytorch caching allocator",
	[MO_TORCH_BY_SIZE] = "caching allocator (by size)",
	[MO_NCCL] = "nccl",
	[MO_BLAS] = "cublas/cudnn workspace",
	[MO_POOL] = "cudaMallocAsync pool",
	[MO_VMM] = "cuMemCreate",
	[MO_OTHER] = "other",
};

/* An allocation call waiting for its memory record. */
struct mcall { uint32_t tid, stack_id, name_id; };

struct mevent {
	uint64_t t, addr, bytes, corr;
	uint32_t pid, dev;
	uint32_t op;     /* 1 alloc, 2 free */
	uint32_t site;   /* index into the series' sites, set in finish (allocs) */
};

/* A failed call; name_id 0: known from its alloc_fail record only (API
 * records off: the flight recorder's history after GPUPROF_FLIGHT_API's
 * switch), named by its callback id (cbid, domain). */
struct fcall { uint32_t pid, tid, stack_id, name_id; uint64_t s, e, corr; int32_t status; uint32_t domain, cbid; };

/* An alloc_fail record: the failed call's request and the device's memory. */
struct frequest { uint32_t pid, dev, tid, domain, cbid; int32_t status; uint64_t t, corr, bytes, total, free; };

/* A mem_live record: one site's live memory at a failed call (the shim's
 * live table). */
struct mlive { uint32_t pid, tid, dev, stack_id, domain, cbid, kind; uint64_t corr, bytes, allocs, size; };

struct psteps { uint32_t pid; struct mem_step *v; size_t n; };

struct mem_view {
	gp_reader *r;
	struct stacks *stk;
	u64map call_of;                 /* (pid, corr) -> index + 1 into calls */
	struct mcall *calls; size_t ncalls, ccalls;
	struct mevent *ev; size_t nev, cev;
	uint64_t dropped;
	struct fcall *fails; size_t nfails, cfails;
	struct frequest *reqs; size_t nreqs, creqs;
	struct mlive *lives; size_t nlives, clives;
	char **names; size_t nnames, cnames; /* call names made from callback ids (owned) */
	struct psteps *steps; size_t nsteps, csteps;
	struct mem_series_view *series; size_t nseries, cseries;
	struct mem_failure *out_fail; size_t nout_fail, cout_fail;
};

static uint64_t call_key(uint32_t pid, uint64_t corr) { return ((uint64_t)pid << 40) ^ corr; }

struct mem_view *mem_view_new(gp_reader *r, struct stacks *stk)
{
	struct mem_view *m = xcalloc(1, sizeof(*m));
	m->r = r;
	m->stk = stk;
	u64map_init(&m->call_of);
	return m;
}

void mem_view_add(struct mem_view *m, uint32_t pid, uint32_t tid, const gp_record *rec)
{
	switch (rec->type) {
	case GP_REC_API: {
		const gp_rec_api *a = &rec->u.api;
		if (!gp_alloc_on_device(gp_alloc_kind(a->domain, a->cbid))) break; /* a host or managed one */
		if (a->tid) tid = a->tid;
		if (a->status == GP_ALLOC_STATUS_OOM) {
			struct fcall f = { pid, tid, a->stack_id, a->name_id, a->start_ns, a->end_ns, a->correlation_id, a->status,
					   a->domain, a->cbid };
			VEC_PUSH(m->fails, m->nfails, m->cfails, f);
			break;
		}
		/* the memory record carries the correlation id of the call
		 * CUPTI gave it (the runtime call's; the driver call inside it
		 * has its own) */
		struct mcall c = { tid, a->stack_id, a->name_id };
		VEC_KEYED(&m->call_of, call_key(pid, a->correlation_id), m->calls, m->ncalls, m->ccalls, &c);
		break;
	}
	case GP_REC_MEMORY: {
		const gp_rec_memory *x = &rec->u.memory;
		if ((x->op != 1 && x->op != 2) || x->mem_kind != GP_MEM_DEVICE) break;
		if (m->nev >= MEM_VIEW_MAX_EVENTS) { m->dropped++; break; }
		struct mevent e = { x->ts_ns, x->address, x->bytes, x->correlation_id, pid, x->device_id, x->op, 0 };
		VEC_PUSH(m->ev, m->nev, m->cev, e);
		break;
	}
	case GP_REC_ALLOC_FAIL: {
		const gp_rec_alloc_fail *x = &rec->u.alloc_fail;
		struct frequest q = { pid, x->device_id, x->tid ? x->tid : tid, x->domain, x->cbid, x->status, x->ts_ns,
				      x->correlation_id, x->bytes, x->total_bytes, x->free_bytes };
		VEC_PUSH(m->reqs, m->nreqs, m->creqs, q);
		break;
	}
	case GP_REC_MEM_LIVE: {
		const gp_rec_mem_live *x = &rec->u.mem_live;
		struct mlive l = { pid, x->tid ? x->tid : tid, x->device_id, x->stack_id, x->domain, x->cbid, x->kind,
				   x->correlation_id, x->bytes, x->allocs, x->size };
		VEC_PUSH(m->lives, m->nlives, m->clives, l);
		break;
	}
	default: break;
	}
}

int mem_view_merge(struct mem_view *m, struct mem_view *src)
{
	/* an allocation call's first record wins, as in one read */
	for (size_t i = 0; i < src->call_of.cap; i++) {
		if (!src->call_of.used[i]) continue;
		uint64_t *slot = u64map_get(&m->call_of, src->call_of.slot[i].key, MAP_INSERT);
		if (*slot) continue;
		VEC_PUSH(m->calls, m->ncalls, m->ccalls, src->calls[src->call_of.slot[i].val - 1]);
		*slot = m->ncalls;
	}
#define APPEND(v, n, c) \
	for (size_t i = 0; i < src->n; i++) VEC_PUSH(m->v, m->n, m->c, src->v[i]);
	APPEND(fails, nfails, cfails)
	APPEND(reqs, nreqs, creqs)
	APPEND(lives, nlives, clives)
#undef APPEND
	/* which records one read drops past the limit depends on its order */
	int lost = m->dropped || src->dropped || m->nev + src->nev > MEM_VIEW_MAX_EVENTS;
	for (size_t i = 0; i < src->nev && m->nev < MEM_VIEW_MAX_EVENTS; i++) VEC_PUSH(m->ev, m->nev, m->cev, src->ev[i]);
	m->dropped += src->dropped;
	return lost ? -1 : 0;
}

void mem_view_set_steps(struct mem_view *m, uint32_t pid, const struct mem_step *v, size_t n)
{
	struct psteps p = { pid, xmalloc((n ? n : 1) * sizeof(*v)), n };
	if (n) memcpy(p.v, v, n * sizeof(*v));
	VEC_PUSH(m->steps, m->nsteps, m->csteps, p);
}

static const struct psteps *steps_of(const struct mem_view *m, uint32_t pid)
{
	for (size_t i = 0; i < m->nsteps; i++)
		if (m->steps[i].pid == pid) return &m->steps[i];
	return NULL;
}

static uint64_t global_mem_of(const struct devprops *dp, uint32_t pid, uint32_t dev)
{
	const gp_rec_device *d = dp ? devprops_get(dp, pid, dev) : NULL;
	for (size_t i = 0; dp && !d && i < dp->n; i++) /* a device record written by another source of the process */
		if (dp->v[i].device_id == dev) d = &dp->v[i];
	return d ? d->global_mem_bytes : 0;
}

static enum mem_owner owner_of(const char *name, const struct stack_view *sv, uint64_t bytes)
{
	if (name && strstr(name, "Async")) return MO_POOL;
	for (uint32_t i = 0; sv && i < sv->nframes; i++) {
		const char *f = sv->frames[i];
		if (strstr(f, "CUDACachingAllocator") || strstr(f, "c10::cuda") || strstr(f, "libc10_cuda"))
			return MO_TORCH;
		if (has_ci(f, "nccl")) return MO_NCCL;
		if (has_ci(f, "cublas") || has_ci(f, "cudnn")) return MO_BLAS;
	}
	if (sv && sv->nframes) return MO_OTHER;
	if (name && strstr(name, "cuMemCreate")) return MO_VMM;
	if (bytes && bytes % MEM_SEG_BYTES == 0) return MO_TORCH_BY_SIZE;
	return MO_OTHER;
}

static int cmp_event(const void *a, const void *b)
{
	const struct mevent *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
	if (x->t != y->t) return x->t < y->t ? -1 : 1;
	/* an allocation before a free at the same time: the peak is not missed */
	if (x->op != y->op) return x->op < y->op ? -1 : 1;
	/* the rest: the same order whatever order the records came in (slices) */
	if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
	if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* An allocation's site: its stack's, else "(no stack) CALL SIZE B". */
static void site_label(char *buf, size_t n, const struct stack_view *sv, const char *call, uint64_t bytes)
{
	if (sv && sv->site && *sv->site) snprintf(buf, n, "%s", sv->site);
	else snprintf(buf, n, "(no stack) %s %llu B", call, (unsigned long long)bytes);
}

/* The site index of an allocation event in series s (sites keyed by label). */
static uint32_t site_of(struct mem_view *m, struct mem_series_view *s, strmap *idx, const struct mevent *e)
{
	const char *name = NULL;
	const struct stack_view *sv = NULL;
	uint64_t *slot = u64map_get(&m->call_of, call_key(e->pid, e->corr), MAP_FIND);
	if (slot) {
		const struct mcall *c = &m->calls[*slot - 1];
		name = tool_str(m->r, c->name_id);
		if (c->stack_id && m->stk) sv = stacks_view(m->stk, c->stack_id, e->pid, c->tid);
	}
	enum mem_owner o = owner_of(name, sv, e->bytes);
	char buf[512];
	site_label(buf, sizeof(buf), sv, name && *name ? name : "(no call)", e->bytes);
	char key[600];
	snprintf(key, sizeof(key), "%d|%s", (int)o, buf);
	int is_new;
	size_t *v = strmap_get(idx, key, &is_new);
	if (is_new) {
		struct mem_site st = { .label = xstrdup(buf), .owner = o, .never_falls = 1 };
		*v = s->nsites;
		VEC_PUSH(s->sites, s->nsites, s->csites, st);
	}
	return (uint32_t)*v;
}

static void slope_add(struct mem_sums *m, double x, double y)
{
	m->sx += x; m->sy += y; m->sxx += x * x; m->sxy += x * y; m->syy += y * y;
}

/* The slope of y over x from the sums of n points, and 2 standard errors. */
static struct mem_slope slope_of(size_t n, const struct mem_sums *m)
{
	struct mem_slope r = { n, 0, 0 };
	if (n < 2) return r;
	double dn = (double)n;
	double Sxx = m->sxx - m->sx * m->sx / dn, Sxy = m->sxy - m->sx * m->sy / dn, Syy = m->syy - m->sy * m->sy / dn;
	if (Sxx <= 0) return r;
	r.slope = Sxy / Sxx;
	if (n > 2) {
		double ssr = Syy - r.slope * Sxy;
		if (ssr < 0) ssr = 0; /* rounding of an exact fit */
		r.bound = 2.0 * sqrt(ssr / (dn - 2) / Sxx);
	}
	return r;
}

int mem_site_leaks(const struct mem_site *t)
{
	return t->growth.n >= 3 && t->never_falls && t->growth.slope > 0 && 2 * t->rises + 1 >= t->growth.n;
}

static int cmp_site(const void *a, const void *b)
{
	const struct mem_site *x = a, *y = b;
	int lx = mem_site_leaks(x), ly = mem_site_leaks(y);
	if (lx != ly) return lx ? -1 : 1;
	if (lx && x->growth.slope != y->growth.slope) return x->growth.slope > y->growth.slope ? -1 : 1;
	if (x->at_peak != y->at_peak) return x->at_peak > y->at_peak ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* Pass 2's step over event i: the levels (the series', its site's, its
 * owner's), and what each site and owner held at the peak (event peak_i). */
static void apply_event(struct mem_series_view *s, const struct mevent *ev, size_t i, size_t peak_i, int64_t *level,
			int64_t owner_level[MO_COUNT])
{
	const struct mevent *e = &ev[i];
	if (e->site == UINT32_MAX) return;
	int64_t d = e->op == 1 ? (int64_t)e->bytes : -(int64_t)e->bytes;
	*level += d;
	s->sites[e->site].level += d;
	owner_level[s->sites[e->site].owner] += d;
	if (i == peak_i) {
		for (size_t j = 0; j < s->nsites; j++) s->sites[j].at_peak = s->sites[j].level;
		memcpy(s->owner_at_peak, owner_level, MO_COUNT * sizeof(*owner_level));
	}
}

/* Walks one series' events [lo, hi): levels, steps, sites, growth. */
static void walk_series(struct mem_view *m, struct mem_series_view *s, struct mevent *ev, size_t n)
{
	strmap idx;
	strmap_init(&idx);
	u64map live; /* address -> event index + 1 of its allocation */
	u64map_init(&live);
	/* pass 1: sites, levels and the peak */
	int64_t level = 0, owner_level[MO_COUNT] = { 0 };
	size_t peak_i = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		struct mevent *e = &ev[i];
		if (e->op == 1) {
			e->site = site_of(m, s, &idx, e);
			*u64map_get(&live, e->addr, MAP_INSERT) = i + 1;
			s->allocs++;
			s->sites[e->site].allocs++;
		} else {
			uint64_t *a = u64map_get(&live, e->addr, MAP_FIND);
			if (!a) { e->site = UINT32_MAX; s->frees++; continue; } /* allocated before the trace */
			const struct mevent *al = &ev[*a - 1];
			if (!e->bytes) e->bytes = al->bytes;
			e->site = al->site;
			u64map_del(&live, e->addr);
			s->frees++;
			s->sites[e->site].frees++;
		}
		int64_t d = e->op == 1 ? (int64_t)e->bytes : -(int64_t)e->bytes;
		level += d;
		enum mem_owner o = s->sites[e->site].owner;
		owner_level[o] += d;
		if (owner_level[o] > s->owner_peak[o]) s->owner_peak[o] = owner_level[o];
		if (level > s->peak) { s->peak = level; s->peak_t = e->t; peak_i = i; }
	}
	s->end = level;
	/* pass 2: per step and per site */
	const struct psteps *ps = steps_of(m, s->pid);
	size_t nst = ps ? ps->n : 0;
	s->steps = xcalloc(nst ? nst : 1, sizeof(*s->steps));
	s->nsteps = nst;
	level = 0;
	memset(owner_level, 0, sizeof(owner_level));
	size_t i = 0, counted = 0;
	struct mem_sums all = { 0 };
	for (size_t k = 0; k <= nst; k++) {
		const struct mem_step *st = k < nst ? &ps->v[k] : NULL;
		uint64_t s0 = st ? st->s : UINT64_MAX;
		/* to the step's start (exclusive) */
		for (; i < n && ev[i].t < s0; i++)
			apply_event(s, ev, i, peak_i, &level, owner_level);
		if (!st) break;
		struct mem_step_row *row = &s->steps[k];
		*row = (struct mem_step_row){ st->number, st->counted, level, level, 0 };
		for (; i < n && ev[i].t <= st->e; i++) {
			apply_event(s, ev, i, peak_i, &level, owner_level);
			if (level > row->peak) row->peak = level;
		}
		row->end = level;
		if (!st->counted) continue;
		double x = (double)counted, y = (double)level;
		slope_add(&all, x, y);
		for (size_t j = 0; j < s->nsites; j++) {
			struct mem_site *t = &s->sites[j];
			if (counted && t->level < t->last_end) t->never_falls = 0;
			else if (counted && t->level > t->last_end) t->rises++;
			t->last_end = t->level;
			slope_add(&t->sums, x, (double)t->level);
		}
		counted++;
	}
	/* every site exists from pass 1 on: each has a value at every counted step's end */
	for (size_t j = 0; j < s->nsites; j++) s->sites[j].growth = slope_of(counted, &s->sites[j].sums);
	s->growth = slope_of(counted, &all);
	s->grows = s->growth.n >= 3 && s->growth.slope > 0 && s->growth.slope > s->growth.bound;
	memcpy(s->owner_end, owner_level, sizeof(owner_level));
	/* the rest of the trace, for each site's and owner's level at the end */
	for (; i < n; i++) apply_event(s, ev, i, peak_i, &level, s->owner_end);
	/* the failures' walk indexes the sites by the events' site: they
	 * are sorted after it (mem_view_finish) */
	u64map_free(&live);
	strmap_free(&idx);
}

static int cmp_fail(const void *a, const void *b)
{
	const struct fcall *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	if (x->s != y->s) return x->s < y->s ? -1 : 1;
	if (x->e != y->e) return x->e > y->e ? -1 : 1; /* the outer (runtime) call first */
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_live(const void *a, const void *b)
{
	const struct mem_site *x = a, *y = b;
	if (x->level != y->level) return x->level > y->level ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* An allocation call's name from its callback id, as the shim names its API
 * records: CUPTI's name without its version suffix ("cudaMalloc"). */
static const char *call_name(struct mem_view *m, uint32_t domain, uint32_t cbid)
{
	const char *n = gp_alloc_name(domain, cbid);
	char *c = xstrdup(n ? n : "an allocation call");
	char *v = strrchr(c, '_');
	if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && strlen(v) >= 6) *v = 0;
	VEC_PUSH(m->names, m->nnames, m->cnames, c);
	return c;
}

/* The live memory by site of failure out from its mem_live records (the
 * shim's table at the failed call), when there are any: 1, else 0.  The
 * device is the failed call's (its alloc_fail record's), else the one
 * with the most live; sites are labelled as the series' are. */
static int live_from_table(struct mem_view *m, struct mem_failure *out, uint64_t corr, uint32_t want_dev)
{
	size_t lo = SIZE_MAX, hi = 0;
	for (size_t i = 0; i < m->nlives; i++)
		if (m->lives[i].pid == out->pid && m->lives[i].corr == corr) {
			if (lo == SIZE_MAX) lo = i;
			hi = i + 1;
		}
	if (lo == SIZE_MAX) return 0;
	uint32_t dev = want_dev;
	if (dev == GP_DEVICE_UNKNOWN) { /* the device with the most live */
		uint64_t best = 0;
		for (size_t i = lo; i < hi; i++) {
			const struct mlive *a = &m->lives[i];
			if (a->pid != out->pid || a->corr != corr || a->kind == GP_MEM_LIVE_UNTABLED) continue;
			uint64_t sum = 0;
			for (size_t j = lo; j < hi; j++)
				if (m->lives[j].pid == out->pid && m->lives[j].corr == corr && m->lives[j].dev == a->dev &&
				    m->lives[j].kind != GP_MEM_LIVE_UNTABLED)
					sum += m->lives[j].bytes;
			if (sum > best || dev == GP_DEVICE_UNKNOWN) { best = sum; dev = a->dev; }
		}
	}
	out->from_table = 1;
	out->dev = dev;
	out->live = 0;
	out->by_site = xcalloc(hi - lo, sizeof(*out->by_site));
	out->nby_site = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct mlive *a = &m->lives[i];
		if (a->pid != out->pid || a->corr != corr) continue;
		if (a->kind == GP_MEM_LIVE_UNTABLED) { /* this device's, or of no known device */
			if (a->dev == dev || a->dev == GP_DEVICE_UNKNOWN) {
				out->untabled_bytes += a->bytes;
				out->untabled_allocs += a->allocs;
			}
			continue;
		}
		if (a->dev != dev || a->kind == GP_MEM_LIVE_FAILED) continue;
		struct mem_site *t = &out->by_site[out->nby_site++];
		memset(t, 0, sizeof(*t));
		char buf[512];
		if (a->kind == GP_MEM_LIVE_REST) {
			snprintf(buf, sizeof(buf), "(%llu more allocations at other sites)", (unsigned long long)a->allocs);
			t->owner = MO_OTHER;
		} else {
			const char *name = call_name(m, a->domain, a->cbid);
			const struct stack_view *sv =
				a->stack_id && m->stk ? stacks_view(m->stk, a->stack_id, a->pid, a->tid) : NULL;
			t->owner = owner_of(name, sv, a->size ? a->size : a->allocs ? a->bytes / a->allocs : 0);
			site_label(buf, sizeof(buf), sv, name, a->size);
		}
		char *label = xstrdup(buf);
		VEC_PUSH(m->names, m->nnames, m->cnames, label);
		t->label = label;
		t->level = (int64_t)a->bytes;
		t->allocs = a->allocs;
		out->live += (int64_t)a->bytes;
		out->table_allocs += a->allocs;
	}
	return 1;
}

/* The live memory by site of failure f out from the series of its process
 * that held the most at its start (q: its alloc_fail record, NULL none). */
static void live_from_series(struct mem_view *m, struct mem_failure *out, const struct fcall *f,
			     const struct frequest *q)
{
	/* the failed call's device, when its record names one with a series */
	int want_dev = q && q->dev != GP_DEVICE_UNKNOWN && mem_view_find(m, f->pid, q->dev);
	/* each series of the process: its sites' levels at f->s */
	size_t e0 = 0;
	for (size_t k = 0; k < m->nseries; k++) {
		struct mem_series_view *s = &m->series[k];
		size_t en = e0;
		while (en < m->nev && m->ev[en].pid == s->pid && m->ev[en].dev == s->dev) en++;
		if (s->pid != f->pid || (want_dev && s->dev != q->dev)) { e0 = en; continue; }
		int64_t *lv = xcalloc(s->nsites ? s->nsites : 1, sizeof(int64_t));
		int64_t level = 0;
		for (size_t i = e0; i < en && m->ev[i].t <= f->s; i++) {
			const struct mevent *e = &m->ev[i];
			if (e->site == UINT32_MAX) continue;
			int64_t d = e->op == 1 ? (int64_t)e->bytes : -(int64_t)e->bytes;
			lv[e->site] += d;
			level += d;
		}
		if (!out->by_site || level > out->live) {
			free(out->by_site);
			out->live = level;
			out->dev = s->dev;
			out->global_mem = s->global_mem;
			out->by_site = xcalloc(s->nsites ? s->nsites : 1, sizeof(*out->by_site));
			out->nby_site = 0;
			for (size_t j = 0; j < s->nsites; j++) {
				if (lv[j] <= 0) continue;
				struct mem_site *t = &out->by_site[out->nby_site++];
				*t = s->sites[j];
				t->level = lv[j];
			}
		}
		free(lv);
		e0 = en;
	}
}

/* The failure f of the process: what was live at its start, in the series
 * of the process that held the most then. */
static void failure_at(struct mem_view *m, const struct devprops *dp, const struct fcall *f, uint32_t nfail)
{
	struct mem_failure out = { .pid = f->pid, .tid = f->tid, .t = f->s, .stack_id = f->stack_id, .status = f->status,
				   .failures = nfail };
	out.call = f->name_id ? tool_str(m->r, f->name_id) : call_name(m, f->domain, f->cbid);
	/* no stack in the call's API record (API records were off): the
	 * failed request's own mem_live record may hold it */
	for (size_t i = 0; i < m->nlives && !out.stack_id; i++)
		if (m->lives[i].pid == f->pid && m->lives[i].corr == f->corr && m->lives[i].kind == GP_MEM_LIVE_FAILED)
			out.stack_id = m->lives[i].stack_id;
	const struct stack_view *sv =
		out.stack_id && m->stk ? stacks_view(m->stk, out.stack_id, f->pid, f->tid) : NULL;
	out.site = sv && sv->site && *sv->site ? sv->site : "(no stack)";
	const struct frequest *q = NULL;
	for (size_t i = 0; i < m->nreqs && !q; i++)
		if (m->reqs[i].pid == f->pid && m->reqs[i].corr == f->corr) q = &m->reqs[i];
	if (q) {
		out.has_request = 1;
		out.requested = q->bytes;
		out.nvml_total = q->total;
		out.nvml_free = q->total ? q->free : 0;
	}
	/* the shim's live table at the call, when it wrote one: exact for the
	 * allocations made while it ran, however short the trace before */
	if (!live_from_table(m, &out, f->corr, q ? q->dev : GP_DEVICE_UNKNOWN)) live_from_series(m, &out, f, q);
	if (out.nby_site) qsort(out.by_site, out.nby_site, sizeof(*out.by_site), cmp_live);
	if (!out.global_mem) out.global_mem = global_mem_of(dp, f->pid, out.dev);
	VEC_PUSH(m->out_fail, m->nout_fail, m->cout_fail, out);
}

void mem_view_finish(struct mem_view *m, const struct devprops *dp)
{
	if (m->nev) qsort(m->ev, m->nev, sizeof(*m->ev), cmp_event);
	for (size_t i = 0; i < m->nev;) {
		size_t j = i;
		while (j < m->nev && m->ev[j].pid == m->ev[i].pid && m->ev[j].dev == m->ev[i].dev) j++;
		struct mem_series_view s = { .pid = m->ev[i].pid, .dev = m->ev[i].dev };
		s.global_mem = global_mem_of(dp, s.pid, s.dev);
		walk_series(m, &s, &m->ev[i], j - i);
		VEC_PUSH(m->series, m->nseries, m->cseries, s);
		i = j;
	}
	/* a device allocation's out-of-memory failure with no API record (API
	 * records were off): its alloc_fail record stands for the call */
	for (size_t i = 0; i < m->nreqs; i++) {
		const struct frequest *q = &m->reqs[i];
		if (q->status != GP_ALLOC_STATUS_OOM || !gp_alloc_on_device(gp_alloc_kind(q->domain, q->cbid))) continue;
		size_t k = 0;
		while (k < m->nfails && !(m->fails[k].pid == q->pid && m->fails[k].corr == q->corr)) k++;
		if (k < m->nfails) continue;
		struct fcall f = { q->pid, q->tid, 0, 0, q->t, q->t, q->corr, q->status, q->domain, q->cbid };
		VEC_PUSH(m->fails, m->nfails, m->cfails, f);
	}
	/* failures: the last one of each process, the others counted; a call
	 * inside the one before on its thread (the driver call of a runtime
	 * call) is that one */
	if (m->nfails) qsort(m->fails, m->nfails, sizeof(*m->fails), cmp_fail);
	for (size_t i = 0; i < m->nfails;) {
		size_t j = i, last = i;
		uint32_t count = 0;
		uint64_t outer_e = 0;
		uint32_t outer_tid = 0;
		for (; j < m->nfails && m->fails[j].pid == m->fails[i].pid; j++) {
			const struct fcall *f = &m->fails[j];
			if (count && f->tid == outer_tid && f->s >= m->fails[last].s && f->e <= outer_e) continue;
			count++;
			last = j;
			outer_e = f->e;
			outer_tid = f->tid;
		}
		failure_at(m, dp, &m->fails[last], count);
		i = j;
	}
	for (size_t k = 0; k < m->nseries; k++) {
		struct mem_series_view *s = &m->series[k];
		if (s->nsites) qsort(s->sites, s->nsites, sizeof(*s->sites), cmp_site);
	}
}

size_t mem_view_nseries(const struct mem_view *m) { return m->nseries; }
const struct mem_series_view *mem_view_series(const struct mem_view *m, size_t i) { return &m->series[i]; }
size_t mem_view_nfailures(const struct mem_view *m) { return m->nout_fail; }
const struct mem_failure *mem_view_failure(const struct mem_view *m, size_t i) { return &m->out_fail[i]; }
uint64_t mem_view_dropped(const struct mem_view *m) { return m->dropped; }

const struct mem_series_view *mem_view_find(const struct mem_view *m, uint32_t pid, uint32_t dev)
{
	for (size_t i = 0; i < m->nseries; i++)
		if (m->series[i].pid == pid && m->series[i].dev == dev) return &m->series[i];
	return NULL;
}

void mem_view_free(struct mem_view *m)
{
	if (!m) return;
	for (size_t i = 0; i < m->nseries; i++) {
		for (size_t j = 0; j < m->series[i].nsites; j++) free(m->series[i].sites[j].label);
		free(m->series[i].sites);
		free(m->series[i].steps);
	}
	for (size_t i = 0; i < m->nout_fail; i++) free(m->out_fail[i].by_site);
	for (size_t i = 0; i < m->nsteps; i++) free(m->steps[i].v);
	free(m->series); free(m->out_fail); free(m->steps); free(m->fails); free(m->reqs);
	free(m->lives);
	for (size_t i = 0; i < m->nnames; i++) free(m->names[i]);
	free(m->names);
	free(m->ev); free(m->calls);
	u64map_free(&m->call_of);
	free(m);
}

void mem_failure_request(const struct mem_failure *f, char *out, size_t n)
{
	if (!f->has_request) {
		snprintf(out, n, "requested size: not recorded (no alloc_fail record: a trace from before format 2.1)");
		return;
	}
	char req[32], fr[32], tot[32], mem[96] = "";
	fmt_bytes(req, sizeof(req), f->requested);
	fmt_bytes(fr, sizeof(fr), f->nvml_free);
	fmt_bytes(tot, sizeof(tot), f->nvml_total);
	if (f->nvml_total) snprintf(mem, sizeof(mem), "; %s free of %s (NVML)", fr, tot);
	else snprintf(mem, sizeof(mem), "; free memory unknown (no NVML)");
	if (f->requested) snprintf(out, n, "requested %s%s", req, mem);
	else snprintf(out, n, "requested size unknown for %s%s", f->call, mem);
}

void mem_failure_live_source(const struct mem_failure *f, char *out, size_t n)
{
	out[0] = 0;
	if (!f->from_table) return;
	size_t k = (size_t)snprintf(out, n, "live by site from the shim's live table (%llu allocation%s made while it ran)",
				    (unsigned long long)f->table_allocs, f->table_allocs == 1 ? "" : "s");
	char a[32], b[32];
	if (k < n && f->has_request && f->nvml_total && f->nvml_total >= f->nvml_free) {
		uint64_t used = f->nvml_total - f->nvml_free, live = f->live > 0 ? (uint64_t)f->live : 0;
		fmt_bytes(a, sizeof(a), used);
		fmt_bytes(b, sizeof(b), used > live ? used - live : live - used);
		if (used >= live)
			k += (size_t)snprintf(out + k, n - k, "; NVML's used %s is %s more (the CUDA context, memory "
							      "allocated before the shim, other processes)", a, b);
		else
			k += (size_t)snprintf(out + k, n - k, "; NVML's used %s is %s less", a, b);
	}
	if (k < n && f->untabled_allocs) {
		fmt_bytes(a, sizeof(a), f->untabled_bytes);
		snprintf(out + k, n - k, "; %llu allocation%s (%s) seen but not tabled (the table full, or no size to read)",
			 (unsigned long long)f->untabled_allocs, f->untabled_allocs == 1 ? "" : "s", a);
	}
}
