/* advise_slice.c — see advise_slice.h. */
#include "analysis/advise/advise_slice.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/core/slices.h"
#include "analysis/steps/steps_pipe.h"
#include "common/tool.h"
#include "common/util.h"

enum { LEAD_IN, OWN, STOPPED };

struct adv_slice {
	gp_reader *r;
	struct adv_facts *f;
	struct attribution *a;    /* a view of the steps' index */
	struct opjoin *j;
	const struct winset *win;
	const struct steps_cuts *cuts;
	int ix, phase, cont, gap;
	uint64_t lead, from, to, now;
	struct bytes start, end;  /* the states at the mark and at the end */
	struct slice_order order;
};

static void bounds(struct adv_slice *s, int ix)
{
	const struct steps_cuts *c = s->cuts;
	s->ix = ix;
	s->lead = c->lead[ix];
	s->from = c->from[ix];
	s->to = ix + 1 < c->k ? c->from[ix + 1] : UINT64_MAX;
	s->phase = LEAD_IN;
}

/* Made on the caller's thread (adv_facts_new summarises the shared steps). */
static struct adv_slice *slice_new(gp_reader *r, const struct adv_slice_in *in, const struct steps_cuts *cuts, int ix)
{
	struct adv_slice *s = xcalloc(1, sizeof(*s));
	s->r = r;
	s->cuts = cuts;
	s->win = in->win;
	bounds(s, ix);
	const struct attribution *a = steps_attribution(in->st);
	s->a = a ? attribution_view(a) : NULL;
	/* a lead-in from the trace's start is one pass up to the cut; else
	 * the slack starts from one pass's at the cut, and the lead-in's
	 * operations whose call lies before it never pair */
	int alone = ix && s->lead;
	struct adv_facts_opts fo = { in->opts ? in->opts->kernel_wait_ns : 0, s->a, 1, alone ? s->lead : 0 };
	s->f = adv_facts_new(r, in->st, in->pre, &fo);
	if (alone && cuts->prefix) adv_facts_seed(s->f, cuts->prefix, ix);
	struct opjoin_opts jo = { 0, 0, NULL, 0, alone ? s->from : 0 };
	s->j = opjoin_new(r, &jo, adv_facts_op, s->f);
	slice_order_init(&s->order, cuts);
	return s;
}

static void slice_free(struct adv_slice *s)
{
	if (!s) return;
	opjoin_free(s->j);
	adv_facts_free(s->f);
	attribution_free(s->a);
	bytes_free(&s->start);
	bytes_free(&s->end);
	slice_order_free(&s->order);
	free(s);
}

static void slice_reader(struct adv_slice *s, gp_reader *r)
{
	s->r = r;
	opjoin_set_reader(s->j, r);
	adv_facts_reader(s->f, r);
}

static void state(const struct adv_slice *s, struct bytes *b, int cut)
{
	b->n = 0;
	bytes_u64(b, s->now);
	opjoin_state(s->j, b);
	adv_facts_state(s->f, b, s->cuts->lead[cut]);
}

static void mark(struct adv_slice *s, uint64_t t)
{
	s->phase = OWN;
	s->gap = t - s->from >= s->cuts->stop_ns;
	if (s->cont) return; /* one pass's engine: its figures were taken */
	opjoin_mark(s->j);
	adv_facts_mark(s->f);
	if (s->ix) state(s, &s->start, s->ix);
}

/* One record, as one pass's facts pass takes it: the API calls and GPU
 * operations into the facts, then through the join (whose callback feeds
 * the facts), the facts advanced with the join's frontier. */
static void feed(struct adv_slice *s, const gp_record *rec)
{
	if (rec->type == GP_REC_API)
		adv_facts_api(s->f, tool_pid(s->r, rec), tool_rec_tid(s->r, rec), &rec->u.api);
	else
		adv_facts_gpu(s->f, tool_pid(s->r, rec), rec);
	uint64_t before = s->now;
	step_pass2_add(s->r, rec, s->j, NULL, s->win, &s->now);
	if (s->now > before) adv_facts_advance(s->f, s->now, opjoin_frontier(s->j));
}

static void slice_add(struct adv_slice *s, const gp_record *rec)
{
	switch (rec->type) {
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
		break;
	default:
		return;
	}
	uint64_t t = gp_record_time(rec);
	if (!s->cont) slice_order_note(&s->order, rec->source_id, t);
	if (s->phase == STOPPED || t < s->lead) return;
	if (s->to != UINT64_MAX && t >= s->to + s->cuts->stop_ns) return;
	if (s->phase == LEAD_IN) {
		if (t < s->from) {
			if (!s->cont) feed(s, rec);
			return;
		}
		mark(s, t);
	}
	if (t >= s->to) {
		s->phase = STOPPED;
		return;
	}
	feed(s, rec);
}

static void slice_end(struct adv_slice *s)
{
	if (s->phase == LEAD_IN) mark(s, UINT64_MAX);
	if (s->ix + 1 == s->cuts->k) {
		opjoin_finish(s->j);
		adv_facts_drain(s->f);
		return;
	}
	state(s, &s->end, s->ix + 1);
}

/* The records of r to s; the read status. */
static int slice_read(struct adv_slice *s, gp_reader *r)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	slice_reader(s, r);
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		if (s->cuts->k == 1) progress_tick(++n);
		slice_add(s, rec);
	}
	slice_end(s);
	return rc;
}

int adv_slice_one(struct adv_facts *sum, gp_reader *r, const struct adv_slice_in *in)
{
	static const uint64_t zero = 0;
	const struct steps_cuts one = { 1, &zero, &zero, 0, NULL };
	int rc = gp_reader_rewind(r);
	if (rc < 0) return rc;
	struct adv_slice *s = slice_new(r, in, &one, 0);
	rc = slice_read(s, r);
	adv_facts_take(sum, s->f);
	slice_free(s);
	return rc;
}

struct pass_slices {
	const char *path;
	struct adv_slice **e;
	gp_reader **r;        /* open until the merge: the engines name things through them */
	int *ok;
};

static void pass_read(void *arg, int ix, uint64_t from, uint64_t to)
{
	struct pass_slices *a = arg;
	struct adv_slice *s = a->e[ix];
	uint64_t lo, hi;
	steps_slice_window(s->cuts, ix, &lo, &hi);
	if (!(a->r[ix] = slices_open(a->path, lo, hi))) return;
	a->ok[ix] = slices_whole(a->r[ix], slice_read(s, a->r[ix]));
}

/* The ended engines in slice order into sum (steps_slice_merge's rules). */
static int merge(struct adv_facts *sum, struct pass_slices *a, const struct steps_cuts *cuts,
		 const struct adv_slice_in *in, struct steps_slice_merged *how)
{
	int k = cuts->k, ok = 1;
	struct adv_slice **e = a->e;
	memset(how, 0, sizeof(*how));
	for (int i = 0; i < k; i++)
		for (int c = 1; c < k; c++) how->crossed |= slice_order_crosses(&e[i]->order, c, e[c]->gap);
	if (how->crossed) {
		gp_reader *r = slices_open(a->path, 0, UINT64_MAX);
		if (!r) return -1;
		int rc = adv_slice_one(sum, r, in);
		ok = slices_whole(r, rc);
		gp_reader_close(r);
		return ok ? 0 : -1;
	}
	struct adv_slice *w = e[0];
	e[0] = NULL;
	adv_facts_take(sum, w->f);
	for (int i = 1; i < k; i++) {
		struct adv_slice *n = e[i];
		e[i] = NULL;
		if (!ok) {
			slice_free(n);
			continue;
		}
		if (bytes_equal(&w->end, &n->start)) {
			slice_free(w);
			w = n;
		} else {
			/* its lead-in did not reach one pass's state: w reads it */
			slice_free(n);
			bounds(w, i);
			w->cont = 1;
			uint64_t lo, hi;
			steps_slice_window(cuts, i, &lo, &hi);
			gp_reader *r = slices_open(a->path, lo, hi);
			ok = r && slices_whole(r, slice_read(w, r));
			gp_reader_close(r);
			how->again++;
		}
		adv_facts_take(sum, w->f);
	}
	slice_free(w);
	return ok && !adv_facts_lost(sum) ? 0 : -1;
}

int adv_slice_pass(struct adv_facts *sum, const char *path, const struct steps_prefix *pf,
		   const struct step_detect *d, const struct adv_slice_in *in, struct steps_slice_merged *how)
{
	if (in->pre->ctr.n) return -1;
	const uint64_t *from;
	int k = steps_prefix_cuts(pf, &from);
	struct slices *cut = slices_new(in->pre->r, k);
	if (!cut) return -1;
	uint64_t *lead = xcalloc((size_t)k, sizeof(*lead));
	for (int i = 1; i < k; i++) lead[i] = steps_slice_lead(d, from[i]);
	const struct steps_cuts cuts = { k, from, lead, STEPS_SLICE_STOP_NS, pf };
	struct pass_slices a = { path, NULL, NULL, NULL };
	a.e = xcalloc((size_t)k, sizeof(*a.e));
	a.r = xcalloc((size_t)k, sizeof(*a.r));
	a.ok = xcalloc((size_t)k, sizeof(*a.ok));
	for (int i = 0; i < k; i++) a.e[i] = slice_new(in->pre->r, in, &cuts, i);
	struct slice_pass pass = { &a, pass_read, NULL };
	slices_run(cut, &pass);
	slices_free(cut);
	int ok = 1;
	for (int i = 0; i < k; i++) ok &= a.ok[i];
	int rc = ok ? merge(sum, &a, &cuts, in, how) : -1;
	for (int i = 0; i < k; i++) {
		slice_free(a.e[i]);
		gp_reader_close(a.r[i]);
	}
	free(a.e);
	free(a.r);
	free(a.ok);
	free(lead);
	return rc;
}
