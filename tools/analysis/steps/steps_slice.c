/* steps_slice.c — see steps_slice.h. */
#include "analysis/steps/steps_slice.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/slices.h"
#include "analysis/steps/steps_pipe.h"
#include "common/testenv.h"
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
	struct gpu_op op;
	if (!gpu_op_of(rec, 0, &op)) return 0;
	*dur = op.e - op.s;
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

void steps_prefix_raise_call(struct steps_prefix *pf, int c, uint64_t ns)
{
	if (ns > pf->call_at[c]) pf->call_at[c] = ns;
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
		fprintf(f, "prepass prefix cut %d call longest %" PRIu64 "\n", c, pf->call_at[c]);
		free(pids);
	}
}

/* one timed before an earlier one of its source marks the cuts the pair spans */
static void slice_order_note(struct slice_order *o, const struct steps_cuts *cuts, uint32_t src, uint64_t t)
{
	if (src >= o->nsrc) vec_reserve_zeroed((void **)&o->srcmax, &o->nsrc, (size_t)src + 1, sizeof(*o->srcmax));
	uint64_t *m = &o->srcmax[src];
	if (t + 1 > *m) {
		*m = t + 1;
		return;
	}
	uint64_t hi = *m - 1;
	for (int c = 1; c < cuts->k; c++) {
		uint64_t stop = cuts->from[c] + STEPS_SLICE_STOP_NS;
		if (hi >= cuts->from[c] && t < cuts->lead[c]) o->lead_crossed[c] = 1;
		if (hi >= stop && t < stop) o->stop_crossed[c] = 1;
	}
}

static const uint64_t zero;
const struct steps_cuts steps_cuts_one = { 1, &zero, &zero, NULL };

void steps_slice_window(const struct steps_cuts *c, int ix, uint64_t *from, uint64_t *to)
{
	*from = c->lead[ix];
	*to = ix + 1 < c->k ? c->from[ix + 1] + STEPS_SLICE_STOP_NS : UINT64_MAX;
}

static void bounds(struct cut_slice *s, int ix)
{
	const struct steps_cuts *c = s->cuts;
	s->ix = ix;
	s->lead = c->lead[ix];
	s->from = c->from[ix];
	s->to = ix + 1 < c->k ? c->from[ix + 1] : UINT64_MAX;
	s->phase = LEAD_IN;
}

void cut_slice_init(struct cut_slice *s, const struct cut_engine *eng, gp_reader *r, const struct steps_cuts *cuts,
		    int ix, uint64_t orphan_before, opjoin_cb on_op, void *ctx)
{
	s->eng = eng;
	s->r = r;
	s->cuts = cuts;
	bounds(s, ix);
	/* the lead-in's operations whose call lies before it never pair */
	struct opjoin_opts jo = { 0, NULL, 0, orphan_before };
	s->j = opjoin_new(r, &jo, on_op, ctx);
	s->order.lead_crossed = xcalloc((size_t)cuts->k, 1);
	s->order.stop_crossed = xcalloc((size_t)cuts->k, 1);
}

void cut_slice_free(struct cut_slice *s)
{
	if (!s) return;
	s->eng->free(s); /* its parts, before the join that feeds them */
	opjoin_free(s->j);
	bytes_free(&s->start);
	bytes_free(&s->end);
	free(s->order.srcmax);
	free(s->order.lead_crossed);
	free(s->order.stop_crossed);
	free(s);
}

static void state(const struct cut_slice *s, struct bytes *b, int cut)
{
	b->n = 0;
	bytes_u64(b, s->now);
	opjoin_state(s->j, b);
	s->eng->state(s, b, cut);
}

/* The first record of the slice's own, timed t (UINT64_MAX: none came):
 * what came before is not its own (the lead-in's rows, counts), and its
 * state is noted for the merge. */
static void mark(struct cut_slice *s, uint64_t t)
{
	s->phase = OWN;
	s->gap = t - s->from >= STEPS_SLICE_STOP_NS;
	if (s->cont) return; /* one pass's engine: nothing to drop */
	opjoin_mark(s->j);
	s->eng->mark(s);
	if (s->ix) state(s, &s->start, s->ix);
}

void cut_slice_add(struct cut_slice *s, const gp_record *rec)
{
	switch (rec->type) {
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
		break;
	default:
		return; /* the join and the engines take no other */
	}
	uint64_t t = gp_record_time(rec);
	if (!s->cont) slice_order_note(&s->order, s->cuts, rec->source_id, t);
	if (s->phase == STOPPED || t < s->lead) return;
	/* past the window: its order is not the whole read's */
	if (s->to != UINT64_MAX && t >= s->to + STEPS_SLICE_STOP_NS) return;
	if (s->phase == LEAD_IN) {
		if (t < s->from) {
			if (!s->cont) s->eng->feed(s, rec);
			return;
		}
		mark(s, t);
	}
	if (t >= s->to) {
		s->phase = STOPPED; /* the next slice's mark: one pass's state is here */
		return;
	}
	s->eng->feed(s, rec);
}

void cut_slice_end(struct cut_slice *s)
{
	if (s->phase == LEAD_IN) mark(s, UINT64_MAX);
	if (s->ix + 1 == s->cuts->k) {
		opjoin_finish(s->j);
		s->eng->finish(s);
		return;
	}
	state(s, &s->end, s->ix + 1);
}

int cut_slice_read(struct cut_slice *s, gp_reader *r, int *rc_out)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	/* the names come from r from now on (the reader whose records s is fed) */
	s->r = r;
	opjoin_set_reader(s->j, r);
	s->eng->reader(s, r);
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		if (s->cuts->k == 1) progress_tick(++n);
		cut_slice_add(s, rec);
	}
	cut_slice_end(s);
	if (rc_out) *rc_out = rc;
	return slices_whole(r, rc);
}

int cut_slice_merge(void *sum, struct opjoin_counts *counts, struct cut_slice **e, const struct steps_cuts *cuts,
		    const char *path, cut_make make, void *arg, struct steps_slice_merged *how)
{
	int k = cuts->k, ok = 1;
	memset(how, 0, sizeof(*how));
	for (int i = 0; i < k; i++)
		for (int c = 1; c < k; c++)
			how->crossed |= e[i]->order.lead_crossed[c] || (e[c]->gap && e[i]->order.stop_crossed[c]);
	if (how->crossed) {
		for (int i = 0; i < k; i++) {
			cut_slice_free(e[i]);
			e[i] = NULL;
		}
		gp_reader *r = slices_open(path, 0, UINT64_MAX);
		if (!r) return -1;
		struct cut_slice *w = make(arg, r, &steps_cuts_one, 0);
		ok = cut_slice_read(w, r, NULL);
		w->eng->take(sum, counts, w);
		cut_slice_free(w);
		gp_reader_close(r);
		return ok ? 0 : -1;
	}
	struct cut_slice *w = e[0];
	e[0] = NULL;
	w->eng->take(sum, counts, w);
	for (int i = 1; i < k; i++) {
		struct cut_slice *n = e[i];
		e[i] = NULL;
		if (!ok) {
			cut_slice_free(n);
			continue;
		}
		if (bytes_equal(&w->end, &n->start) && (!w->eng->same || w->eng->same(w, n))) {
			cut_slice_free(w);
			w = n;
		} else {
			/* its lead-in did not reach one pass's state: w reads it */
			cut_slice_free(n);
			bounds(w, i);
			w->cont = 1;
			uint64_t lo, hi;
			steps_slice_window(cuts, i, &lo, &hi);
			gp_reader *r = slices_open(path, lo, hi);
			ok = r && cut_slice_read(w, r, NULL);
			gp_reader_close(r);
			how->again++;
		}
		w->eng->take(sum, counts, w);
	}
	cut_slice_free(w);
	return ok ? 0 : -1;
}

/* The steps' engine of a slice. */
static void se_feed(struct cut_slice *c, const gp_record *rec)
{
	struct steps_slice *s = (struct steps_slice *)c;
	step_pass2_add(c->r, rec, c->j, s->st, s->win, &c->now);
}

static void se_mark(struct cut_slice *c)
{
	steps_mark(((struct steps_slice *)c)->st);
}

static void se_state(const struct cut_slice *c, struct bytes *b, int cut)
{
	steps_state(((const struct steps_slice *)c)->st, b);
}

static void se_finish(struct cut_slice *c)
{
	steps_finish(((struct steps_slice *)c)->st);
}

static void se_reader(struct cut_slice *c, gp_reader *r)
{
	steps_set_reader(((struct steps_slice *)c)->st, r);
}

static int se_same(const struct cut_slice *before, const struct cut_slice *c)
{
	return steps_fresh_ok(((const struct steps_slice *)before)->st, ((const struct steps_slice *)c)->st);
}

/* Moves the rows s finalized since its mark (or the last take) into sum
 * (steps_take) and adds its join's counts to *counts. */
static void se_take(void *sum, struct opjoin_counts *counts, struct cut_slice *c)
{
	steps_take(sum, ((struct steps_slice *)c)->st);
	opjoin_take_counts(c->j, counts);
}

static void se_free(struct cut_slice *c)
{
	struct steps_slice *s = (struct steps_slice *)c;
	steps_free(s->st);
	attribution_free(s->a);
}

const struct cut_engine steps_slice_engine = { se_feed, se_mark, se_state, se_finish, se_reader, se_same, se_take,
					       se_free };

struct steps_slice *steps_slice_new(gp_reader *r, const struct steps *tmpl, const struct attribution *a,
				    const struct winset *win, const struct steps_cuts *cuts, int ix)
{
	struct steps_slice *s = xcalloc(1, sizeof(*s));
	steps_slice_init(s, &steps_slice_engine, r, tmpl, a, win, cuts, ix, NULL, NULL);
	return s;
}

void steps_slice_init(struct steps_slice *s, const struct cut_engine *eng, gp_reader *r, const struct steps *tmpl,
		      const struct attribution *a, const struct winset *win, const struct steps_cuts *cuts, int ix,
		      opjoin_cb on_op, void *ctx)
{
	s->win = win;
	s->a = a ? attribution_view(a) : NULL;
	s->st = steps_new_slice(tmpl, s->a, cuts->lead[ix]);
	steps_set_reader(s->st, r);
	/* one pass's slack at the cut (steps_prefix) */
	for (size_t i = 0; ix && cuts->prefix && i < cuts->prefix->at[ix].cap; i++)
		if (cuts->prefix->at[ix].used[i])
			steps_set_longest(s->st, (uint32_t)cuts->prefix->at[ix].slot[i].key, cuts->prefix->at[ix].slot[i].val);
	cut_slice_init(&s->c, eng, r, cuts, ix, ix ? cuts->from[ix] : 0, on_op ? on_op : steps_op, on_op ? ctx : s->st);
}

void steps_slice_free(struct steps_slice *s)
{
	cut_slice_free(s ? &s->c : NULL);
}

uint64_t steps_slice_lead(const struct step_detect *d, uint64_t cut)
{
	uint64_t fixed;
	if (!testenv(TESTENV_STEPS_LEAD, &fixed)) return cut > fixed ? cut - fixed : 0;
	uint64_t at = cut;
	for (size_t i = 0; d && i < step_detect_nplans(d); i++) {
		const struct step_plan *pl = step_detect_plan(d, i);
		if (pl->method != STEP_NVTX) continue;
		/* the steps that start at or before cut */
		size_t lo = FIRST_WHERE(k, pl->nsteps, attribution_range(pl->a, pl->range_ids[k]).s > cut);
		uint64_t s = lo >= 2 ? attribution_range(pl->a, pl->range_ids[lo - 2]).s : at;
		if (s < at) at = s;
	}
	return at > STEPS_SLICE_LEAD_NS ? at - STEPS_SLICE_LEAD_NS : 0;
}

/* cut_slice_pass's slices: an engine and a reader each */
struct pass_slices {
	const char *path;
	struct cut_slice **e;
	gp_reader **r;        /* open until the merge: the engines name things through them */
	int *ok;
};

static void pass_read(void *arg, int ix, uint64_t from, uint64_t to)
{
	struct pass_slices *a = arg;
	uint64_t lo, hi;
	steps_slice_window(a->e[ix]->cuts, ix, &lo, &hi);
	if (!(a->r[ix] = slices_open(a->path, lo, hi))) return;
	a->ok[ix] = cut_slice_read(a->e[ix], a->r[ix], NULL);
}

int cut_slice_pass(void *sum, struct opjoin_counts *counts, gp_reader *r, const char *path,
		   const struct steps_prefix *pf, const struct step_detect *d, cut_make make, void *arg,
		   struct steps_slice_merged *how)
{
	const uint64_t *from;
	int k = steps_prefix_cuts(pf, &from);
	struct slices *cut = slices_new(r, k);
	if (!cut) return -1;
	uint64_t *lead = xcalloc((size_t)k, sizeof(*lead));
	for (int i = 1; i < k; i++) lead[i] = steps_slice_lead(d, from[i]);
	const struct steps_cuts cuts = { k, from, lead, pf };
	struct pass_slices a = { path, NULL, NULL, NULL };
	a.e = xcalloc((size_t)k, sizeof(*a.e));
	a.r = xcalloc((size_t)k, sizeof(*a.r));
	a.ok = xcalloc((size_t)k, sizeof(*a.ok));
	for (int i = 0; i < k; i++) a.e[i] = make(arg, r, &cuts, i);
	struct slice_pass pass = { &a, pass_read, NULL };
	slices_run(cut, &pass);
	slices_free(cut);
	int ok = 1;
	for (int i = 0; i < k; i++) ok &= a.ok[i];
	int rc = ok ? cut_slice_merge(sum, counts, a.e, &cuts, path, make, arg, how) : -1;
	for (int i = 0; i < k; i++) {
		cut_slice_free(a.e[i]);
		gp_reader_close(a.r[i]);
	}
	free(a.e);
	free(a.r);
	free(a.ok);
	free(lead);
	return rc;
}

/* cut_slice_merge's make: the engine over the whole trace (tmpl: the sum) */
struct se_make { const struct steps *tmpl; const struct attribution *a; const struct winset *win; };

static struct cut_slice *se_make(void *arg, gp_reader *r, const struct steps_cuts *cuts, int ix)
{
	const struct se_make *m = arg;
	return &steps_slice_new(r, m->tmpl, m->a, m->win, cuts, ix)->c;
}

int steps_slice_merge(struct steps *sum, struct opjoin_counts *counts, struct steps_slice **e,
		      const struct steps_cuts *cuts, const char *path, const struct attribution *a,
		      const struct winset *win, struct steps_slice_merged *how)
{
	struct se_make m = { sum, a, win };
	return cut_slice_merge(sum, counts, (struct cut_slice **)e, cuts, path, se_make, &m, how);
}

struct steps_prefix *steps_prefix_slices(gp_reader *r, int k)
{
	struct slices *cut = k < 2 ? NULL : slices_new(r, k);
	if (!cut) return NULL;
	struct steps_prefix *pf = xcalloc(1, sizeof(*pf));
	pf->k = k;
	pf->next = 1;
	uint64_t *from = xcalloc((size_t)k, sizeof(*from)), to;
	for (int i = 0; i < k; i++) slices_bounds(cut, i, &from[i], &to);
	pf->from = from;
	slices_free(cut);
	u64map_init(&pf->run);
	pf->at = xcalloc((size_t)k, sizeof(*pf->at));
	pf->call_at = xcalloc((size_t)k, sizeof(*pf->call_at));
	for (int c = 0; c < k; c++) u64map_init(&pf->at[c]);
	return pf;
}
