/* steps_slice.c — see steps_slice.h. */
#include "analysis/steps/steps_slice.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/slices.h"
#include "analysis/steps/steps_pipe.h"
#include "common/tool.h"
#include "common/util.h"

enum { LEAD_IN, OWN, STOPPED };

struct steps_prefix {
	int k, next;
	const uint64_t *from;
	u64map run;               /* pid -> the longest GPU operation read so far */
	u64map *at;               /* per cut: run at its first API or GPU record */
	uint64_t call, *call_at;  /* the longest API call read so far; per cut, as at */
	/* the last source's process and its slot in run (a source's records
	 * come in runs): no lookup a record */
	uint32_t src, pid;
	uint64_t *slot;
	int have;
};

struct steps_prefix *steps_prefix_new(int k, const uint64_t *from)
{
	struct steps_prefix *pf = xcalloc(1, sizeof(*pf));
	pf->k = k;
	pf->next = 1;
	pf->from = xmalloc((size_t)k * sizeof(*from));
	memcpy((uint64_t *)pf->from, from, (size_t)k * sizeof(*from));
	u64map_init(&pf->run);
	pf->at = xcalloc((size_t)k, sizeof(*pf->at));
	pf->call_at = xcalloc((size_t)k, sizeof(*pf->call_at));
	for (int c = 0; c < k; c++) u64map_init(&pf->at[c]);
	return pf;
}

void steps_prefix_free(struct steps_prefix *pf)
{
	if (!pf) return;
	u64map_free(&pf->run);
	for (int c = 0; c < pf->k; c++) u64map_free(&pf->at[c]);
	free(pf->at);
	free(pf->call_at);
	free((uint64_t *)pf->from);
	free(pf);
}

/* The cut pf->next is reached: the longest operations so far are its. */
static void prefix_note(struct steps_prefix *pf)
{
	pf->call_at[pf->next] = pf->call;
	for (size_t i = 0; i < pf->run.cap; i++)
		if (pf->run.used[i]) *u64map_get(&pf->at[pf->next], pf->run.slot[i].key, MAP_INSERT) = pf->run.slot[i].val;
}

int steps_prefix_op(const gp_record *rec, uint64_t *dur)
{
	uint64_t s, e;
	switch (rec->type) {
	case GP_REC_KERNEL:
		s = rec->u.kernel.start_ns, e = rec->u.kernel.end_ns;
		break;
	case GP_REC_MEMCPY:
		s = rec->u.memcpy.start_ns, e = rec->u.memcpy.end_ns;
		break;
	case GP_REC_MEMSET:
		s = rec->u.memset.start_ns, e = rec->u.memset.end_ns;
		break;
	default:
		return 0;
	}
	*dur = e > s ? e - s : 0;
	return 1;
}

void steps_prefix_add(struct steps_prefix *pf, gp_reader *r, const gp_record *rec)
{
	uint64_t d;
	int op = steps_prefix_op(rec, &d);
	if (!op && rec->type != GP_REC_API) return;
	uint64_t t = gp_record_time(rec); /* an API or GPU record's start */
	for (; pf->next < pf->k && t >= pf->from[pf->next]; pf->next++) prefix_note(pf);
	if (!op) {
		const gp_rec_api *a = &rec->u.api;
		if (a->end_ns > a->start_ns && a->end_ns - a->start_ns > pf->call) pf->call = a->end_ns - a->start_ns;
		return;
	}
	if (!pf->have || rec->source_id != pf->src) {
		uint32_t pid = tool_pid(r, rec);
		pf->src = rec->source_id;
		if (!pf->have || pid != pf->pid) pf->slot = u64map_get(&pf->run, pid, MAP_INSERT);
		pf->pid = pid;
		pf->have = 1;
	}
	if (d > *pf->slot) *pf->slot = d;
}

int steps_prefix_cuts(const struct steps_prefix *pf, const uint64_t **from)
{
	*from = pf->from;
	return pf->k;
}

uint64_t steps_prefix_longest(const struct steps_prefix *pf, int c, uint32_t pid)
{
	uint64_t *v = c > 0 && c < pf->k ? u64map_get((u64map *)&pf->at[c], pid, MAP_FIND) : NULL;
	return v ? *v : 0;
}

uint64_t steps_prefix_longest_call(const struct steps_prefix *pf, int c)
{
	return c > 0 && c < pf->k ? pf->call_at[c] : 0;
}

void steps_prefix_raise(struct steps_prefix *pf, int c, uint32_t pid, uint64_t ns)
{
	uint64_t *v = u64map_get(&pf->at[c], pid, MAP_INSERT);
	if (ns > *v) *v = ns;
}

void steps_prefix_print(const struct steps_prefix *pf, FILE *f)
{
	for (int c = 1; pf && c < pf->k; c++) {
		const u64map *m = &pf->at[c];
		uint64_t *pids = xmalloc((m->n ? m->n : 1) * sizeof(*pids));
		size_t n = 0;
		for (size_t i = 0; i < m->cap; i++)
			if (m->used[i]) pids[n++] = m->slot[i].key;
		qsort(pids, n, sizeof(*pids), cmp_u64);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "prepass prefix cut %d pid %" PRIu64 " longest %" PRIu64 "\n", c, pids[i],
				*u64map_get((u64map *)m, pids[i], MAP_FIND));
		free(pids);
	}
}

struct steps_slice {
	gp_reader *r;             /* the reader it is fed from (names, processes, threads) */
	struct opjoin *j;
	struct steps *st;
	struct attribution *a;    /* a view of the caller's index */
	const struct winset *win;
	const struct steps_cuts *cuts;
	int ix, phase;
	int cont;                 /* going on over a later slice's records (steps_slice_continue) */
	uint64_t lead, from, to;  /* to: UINT64_MAX for the last slice */
	uint64_t now;             /* step_pass2_add's latest time */
	struct bytes start, end;  /* the states at the mark and at the end */
	struct slice_order order;
	int gap;                  /* no record in [from, from + stop_ns) came before its mark */
};

void steps_slice_window(const struct steps_cuts *c, int ix, uint64_t *from, uint64_t *to)
{
	*from = c->lead[ix];
	*to = ix + 1 < c->k ? c->from[ix + 1] + c->stop_ns : UINT64_MAX;
}

static void bounds(struct steps_slice *s, int ix)
{
	const struct steps_cuts *c = s->cuts;
	s->ix = ix;
	s->lead = c->lead[ix];
	s->from = c->from[ix];
	s->to = ix + 1 < c->k ? c->from[ix + 1] : UINT64_MAX;
	s->phase = LEAD_IN;
}

struct steps_slice *steps_slice_new(gp_reader *r, const struct steps *tmpl, const struct attribution *a,
				    const struct winset *win, const struct steps_cuts *cuts, int ix)
{
	struct steps_slice *s = xcalloc(1, sizeof(*s));
	s->r = r;
	s->cuts = cuts;
	s->win = win;
	bounds(s, ix);
	s->a = a ? attribution_view(a) : NULL;
	s->st = steps_new_slice(tmpl, s->a, s->lead);
	steps_set_reader(s->st, r);
	/* one pass's slack at the cut (steps_prefix) */
	for (size_t i = 0; ix && cuts->prefix && i < cuts->prefix->at[ix].cap; i++)
		if (cuts->prefix->at[ix].used[i])
			steps_set_longest(s->st, (uint32_t)cuts->prefix->at[ix].slot[i].key, cuts->prefix->at[ix].slot[i].val);
	/* the lead-in's operations whose call lies before it never pair */
	struct opjoin_opts jo = { 0, 0, NULL, 0, ix ? s->from : 0 };
	s->j = opjoin_new(r, &jo, steps_op, s->st);
	slice_order_init(&s->order, cuts);
	return s;
}

const struct attribution *steps_slice_attribution(const struct steps_slice *s)
{
	return s->a;
}

void steps_slice_reader(struct steps_slice *s, gp_reader *r)
{
	s->r = r;
	opjoin_set_reader(s->j, r);
	steps_set_reader(s->st, r);
}

void steps_slice_free(struct steps_slice *s)
{
	if (!s) return;
	opjoin_free(s->j);
	steps_free(s->st);
	attribution_free(s->a);
	bytes_free(&s->start);
	bytes_free(&s->end);
	slice_order_free(&s->order);
	free(s);
}

static void state(const struct steps_slice *s, struct bytes *b)
{
	b->n = 0;
	bytes_u64(b, s->now);
	opjoin_state(s->j, b);
	steps_state(s->st, b);
}

/* The first record of the slice's own, timed t (UINT64_MAX: none came):
 * what came before is not its own (the lead-in's rows, counts), and its
 * state is noted for the merge. */
static void mark(struct steps_slice *s, uint64_t t)
{
	s->phase = OWN;
	s->gap = t - s->from >= s->cuts->stop_ns;
	if (s->cont) return; /* one pass's engine: nothing to drop */
	opjoin_mark(s->j);
	steps_mark(s->st);
	if (s->ix) state(s, &s->start);
}

void slice_order_init(struct slice_order *o, const struct steps_cuts *cuts)
{
	memset(o, 0, sizeof(*o));
	o->cuts = cuts;
	o->lead_crossed = xcalloc((size_t)cuts->k, 1);
	o->stop_crossed = xcalloc((size_t)cuts->k, 1);
}

void slice_order_free(struct slice_order *o)
{
	free(o->srcmax);
	free(o->lead_crossed);
	free(o->stop_crossed);
	memset(o, 0, sizeof(*o));
}

/* one timed before an earlier one of its source marks the cuts the pair spans */
void slice_order_note(struct slice_order *o, uint32_t src, uint64_t t)
{
	if (src >= o->nsrc) {
		size_t n = o->nsrc ? o->nsrc : 64;
		while (n <= src) n *= 2;
		o->srcmax = xrealloc(o->srcmax, n * sizeof(*o->srcmax));
		memset(o->srcmax + o->nsrc, 0, (n - o->nsrc) * sizeof(*o->srcmax));
		o->nsrc = n;
	}
	uint64_t *m = &o->srcmax[src];
	if (t + 1 > *m) {
		*m = t + 1;
		return;
	}
	uint64_t hi = *m - 1;
	const struct steps_cuts *cuts = o->cuts;
	for (int c = 1; c < cuts->k; c++) {
		uint64_t stop = cuts->from[c] + cuts->stop_ns;
		if (hi >= cuts->from[c] && t < cuts->lead[c]) o->lead_crossed[c] = 1;
		if (hi >= stop && t < stop) o->stop_crossed[c] = 1;
	}
}

int slice_order_crosses(const struct slice_order *o, int c, int gap)
{
	return c > 0 && c < o->cuts->k && (o->lead_crossed[c] || (gap && o->stop_crossed[c]));
}

void steps_slice_add(struct steps_slice *s, const gp_record *rec)
{
	switch (rec->type) {
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
		break;
	default:
		return; /* the join and the steps take no other */
	}
	uint64_t t = gp_record_time(rec);
	if (!s->cont) slice_order_note(&s->order, rec->source_id, t);
	if (s->phase == STOPPED || t < s->lead) return;
	/* past the window: its order is not the whole read's */
	if (s->to != UINT64_MAX && t >= s->to + s->cuts->stop_ns) return;
	if (s->phase == LEAD_IN) {
		if (t < s->from) {
			if (!s->cont) step_pass2_add(s->r, rec, s->j, s->st, s->win, &s->now);
			return;
		}
		mark(s, t);
	}
	if (t >= s->to) {
		s->phase = STOPPED; /* the next slice's mark: one pass's state is here */
		return;
	}
	step_pass2_add(s->r, rec, s->j, s->st, s->win, &s->now);
}

void steps_slice_end(struct steps_slice *s)
{
	if (s->phase == LEAD_IN) mark(s, UINT64_MAX);
	if (s->ix + 1 == s->cuts->k) {
		opjoin_finish(s->j);
		steps_finish(s->st);
		return;
	}
	state(s, &s->end);
}

int steps_slice_gap(const struct steps_slice *s)
{
	return s->gap;
}

int steps_slice_crosses(const struct steps_slice *s, int c, int gap)
{
	return slice_order_crosses(&s->order, c, gap);
}

int steps_slice_same(const struct steps_slice *before, const struct steps_slice *s)
{
	return bytes_equal(&before->end, &s->start) && steps_fresh_ok(before->st, s->st);
}

void steps_slice_continue(struct steps_slice *s, int ix)
{
	bounds(s, ix);
	s->cont = 1;
}

void steps_slice_take(struct steps *sum, struct opjoin_counts *counts, struct steps_slice *s)
{
	steps_take(sum, s->st);
	opjoin_take_counts(s->j, counts);
}

uint64_t steps_slice_lead(const struct step_detect *d, uint64_t cut)
{
	const char *env = getenv("GPUPROF_STEPS_LEAD");
	uint64_t fixed;
	if (env && !parse_duration_ns(env, &fixed)) return cut > fixed ? cut - fixed : 0;
	uint64_t at = cut;
	for (size_t i = 0; d && i < step_detect_nplans(d); i++) {
		const struct step_plan *pl = step_detect_plan(d, i);
		if (pl->method != STEP_NVTX) continue;
		size_t lo = 0, hi = pl->nsteps; /* the steps that start at or before cut */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (pl->steps[mid].s <= cut) lo = mid + 1;
			else hi = mid;
		}
		if (lo >= 2 && pl->steps[lo - 2].s < at) at = pl->steps[lo - 2].s;
	}
	return at > STEPS_SLICE_LEAD_NS ? at - STEPS_SLICE_LEAD_NS : 0;
}

int steps_slice_read(struct steps_slice *e, gp_reader *r)
{
	const gp_record *rec;
	int rc;
	steps_slice_reader(e, r);
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) steps_slice_add(e, rec);
	steps_slice_end(e);
	return slices_whole(r, rc);
}

int steps_slice_merge(struct steps *sum, struct opjoin_counts *counts, struct steps_slice **e,
		      const struct steps_cuts *cuts, const char *path, const struct attribution *a,
		      const struct winset *win, struct steps_slice_merged *how)
{
	int k = cuts->k, ok = 1;
	memset(how, 0, sizeof(*how));
	for (int i = 0; i < k; i++)
		for (int c = 1; c < k; c++) how->crossed |= steps_slice_crosses(e[i], c, steps_slice_gap(e[c]));
	if (how->crossed) {
		for (int i = 0; i < k; i++) {
			steps_slice_free(e[i]);
			e[i] = NULL;
		}
		static const uint64_t zero = 0;
		const struct steps_cuts one = { 1, &zero, &zero, 0, NULL };
		gp_reader *r = slices_open(path, 0, UINT64_MAX);
		if (!r) return -1;
		struct steps_slice *w = steps_slice_new(r, sum, a, win, &one, 0);
		ok = steps_slice_read(w, r);
		steps_slice_take(sum, counts, w);
		steps_slice_free(w);
		gp_reader_close(r);
		return ok ? 0 : -1;
	}
	struct steps_slice *w = e[0];
	e[0] = NULL;
	steps_slice_take(sum, counts, w);
	for (int i = 1; i < k; i++) {
		struct steps_slice *n = e[i];
		e[i] = NULL;
		if (!ok) {
			steps_slice_free(n);
			continue;
		}
		if (steps_slice_same(w, n)) {
			steps_slice_free(w);
			w = n;
		} else {
			/* its lead-in did not reach one pass's state: w reads it */
			steps_slice_free(n);
			steps_slice_continue(w, i);
			uint64_t lo, hi;
			steps_slice_window(cuts, i, &lo, &hi);
			gp_reader *r = slices_open(path, lo, hi);
			ok = r && steps_slice_read(w, r);
			gp_reader_close(r);
			how->again++;
		}
		steps_slice_take(sum, counts, w);
	}
	steps_slice_free(w);
	return ok ? 0 : -1;
}

struct steps_prefix *steps_prefix_slices(gp_reader *r, int k)
{
	struct slices *cut = k < 2 ? NULL : slices_new(r, k);
	if (!cut) return NULL;
	uint64_t *from = xcalloc((size_t)k, sizeof(*from)), to;
	for (int i = 0; i < k; i++) slices_bounds(cut, i, &from[i], &to);
	struct steps_prefix *pf = steps_prefix_new(k, from);
	free(from);
	slices_free(cut);
	return pf;
}

/* steps_slice_pass's slices: an engine and a reader each */
struct pass_slices {
	const char *path;
	struct steps_pipe *p;
	struct steps_cuts cuts;
	struct steps_slice **e;
	gp_reader **r;        /* open until the merge: the engines name things through them */
	int *ok;
};

static void pass_read(void *arg, int ix, uint64_t from, uint64_t to)
{
	struct pass_slices *a = arg;
	uint64_t lo, hi;
	steps_slice_window(&a->cuts, ix, &lo, &hi);
	if (!(a->r[ix] = slices_open(a->path, lo, hi))) return;
	a->e[ix] = steps_slice_new(a->r[ix], a->p->steps, a->p->attr, &a->p->win, &a->cuts, ix);
	a->ok[ix] = steps_slice_read(a->e[ix], a->r[ix]);
}

int steps_slice_pass(struct steps_pipe *p, const char *path, const struct steps_prefix *pf,
		     struct steps_slice_merged *how)
{
	const uint64_t *from;
	int k = steps_prefix_cuts(pf, &from);
	struct slices *cut = slices_new(p->r, k);
	if (!cut) return -1;
	struct pass_slices a = { path, p, { 0 }, NULL, NULL, NULL };
	uint64_t *lead = xcalloc((size_t)k, sizeof(*lead));
	for (int i = 1; i < k; i++) lead[i] = steps_slice_lead(p->detect, from[i]);
	a.cuts = (struct steps_cuts){ k, from, lead, STEPS_SLICE_STOP_NS, pf };
	a.e = xcalloc((size_t)k, sizeof(*a.e));
	a.r = xcalloc((size_t)k, sizeof(*a.r));
	a.ok = xcalloc((size_t)k, sizeof(*a.ok));
	struct slice_pass pass = { &a, pass_read, NULL };
	slices_run(cut, &pass);
	slices_free(cut);
	int ok = 1;
	for (int i = 0; i < k; i++) ok &= a.ok[i];
	struct opjoin_counts counts = { 0 };
	int rc = -1;
	if (ok) rc = steps_slice_merge(p->steps, &counts, a.e, &a.cuts, path, p->attr, &p->win, how);
	for (int i = 0; i < k; i++) {
		steps_slice_free(a.e[i]);
		gp_reader_close(a.r[i]);
	}
	free(a.e);
	free(a.r);
	free(a.ok);
	free(lead);
	return rc;
}
