/* advise_drive.c — see advise_drive.h. */
#include "reports/advise_drive.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/steps/step_index.h"
#include "common/spill.h"
#include "common/tool.h"

/* the expected rows held in memory per process; the rest go to a file */
#define EXPECT_MEM (4u << 20)

/* The pre-pass's state of a slice: advise's inputs and the caller's. */
struct pre_state {
	struct adv_pre adv;
	const struct stats_pre_hook *extra;
	void *extra_st;
};

static void *pre_new(void *arg, uint64_t from)
{
	struct advise_drive *ad = arg;
	struct pre_state *s = xcalloc(1, sizeof(*s));
	adv_pre_init(&s->adv, ad->d.r);
	s->extra = ad->o.pre;
	if (s->extra) s->extra_st = s->extra->new(s->extra->arg, from);
	return s;
}

static void pre_add(void *st, gp_reader *r, const gp_record *rec)
{
	struct pre_state *s = st;
	if (s->extra) s->extra->add(s->extra_st, r, rec);
	adv_pre_add(&s->adv, r, rec);
}

static int pre_merge(void *dst, void *src)
{
	struct pre_state *d = dst, *s = src;
	int rc = d->extra ? d->extra->merge(d->extra_st, s->extra_st) : 0;
	return adv_pre_merge(&d->adv, &s->adv) | rc;
}

static void pre_free(void *st)
{
	struct pre_state *s = st;
	if (s->extra) s->extra->free(s->extra_st);
	adv_pre_free(&s->adv);
	free(s);
}

/* The facts' engines beside the steps' in the driver's pass (stats_ctx.part):
 * in the shards the steps' engines too (sin[1]), else beside the pass's. */
static struct cut_slice *part_make(void *arg, gp_reader *r, const struct steps_cuts *cuts, int ix, int steps)
{
	return adv_slice_new(&((struct advise_drive *)arg)->sin[steps], r, cuts, ix);
}

static int part_merge(void *arg, struct cut_slice **e, const struct steps_cuts *cuts, const char *path,
		      struct opjoin_counts *counts, struct steps_slice_merged *how)
{
	struct advise_drive *ad = arg;
	const struct adv_slice_sum sum = { ad->d.ctx.pipe.steps, ad->facts };
	/* the shards' (counts): their engines made the steps too */
	int rc = adv_slice_merge(&sum, counts, e, cuts, path, &ad->sin[counts != NULL], &ad->facts_how);
	if (how) *how = ad->facts_how;
	ad->beside = rc == 0;
	ad->facts_sliced = cuts->k > 1 ? cuts->k : 0;
	/* a figure of the facts lost is not damage: the facts after the steps */
	return rc && !adv_facts_lost(ad->facts) ? -1 : 0;
}

static void expect_free(struct advise_drive *ad)
{
	for (size_t i = 0; i < ad->nexpect; i++) spill_free(ad->expect[i].rows);
	free(ad->expect);
	ad->expect = NULL;
	ad->nexpect = 0;
}

/* step_index_bounds' rows of the trace method's plans into ad->expect */
static void expect_add(void *arg, const struct step_bound *b)
{
	struct advise_drive *ad = arg;
	struct adv_rows *x = &ad->expect[b->plan];
	if (!x->rows) return;
	*(struct step_row *)spill_push(x->rows) = (struct step_row){
		.pid = step_detect_plan(ad->d.ctx.pipe.detect, b->plan)->pid, .index = (uint32_t)x->n,
		.number = b->number, .range_id = UINT32_MAX, .s = b->s, .e = b->e, .partial = (uint8_t)b->partial };
	x->n++;
}

/* The rows the trace method's steps will have, where a run before kept
 * them (the steps' index, of this drive's options): then the facts go
 * beside those steps too, and adv_facts_settle checks the rows were the
 * steps' (else the facts' own pass after them).  0, or -1: none kept. */
static int expect_load(struct advise_drive *ad)
{
	struct steps_pipe *pipe = &ad->d.ctx.pipe;
	if (!steps_pipe_trace_planned(pipe)) return 0;
	struct step_index *ix = step_index_open(ad->d.path, ad->d.r, ad->so.rule, &ad->so.detect);
	size_t n = step_detect_nplans(pipe->detect);
	if (!ix || step_index_nplans(ix) != n) {
		step_index_close(ix);
		return -1;
	}
	ad->expect = xcalloc(n ? n : 1, sizeof(*ad->expect));
	ad->nexpect = n;
	for (size_t i = 0; i < n; i++)
		if (step_detect_plan(pipe->detect, i)->method == STEP_TRACE)
			ad->expect[i].rows = spill_new(sizeof(struct step_row), EXPECT_MEM);
	int rc = step_index_bounds(ix, expect_add, ad);
	step_index_close(ix);
	for (size_t i = 0; i < n; i++)
		if (ad->expect[i].rows) spill_seal(ad->expect[i].rows);
	if (rc) expect_free(ad);
	return rc;
}

/* Whether the facts can be made beside the steps: every process's steps
 * are NVTX ranges (their places known from the pre-pass) or the trace
 * method's with their rows kept by a run before (the steps' index: the
 * trace method finds them in the pass), and no PM samples (their sums
 * are fractional: one thread after the steps). */
static int facts_beside(struct advise_drive *ad, struct steps *st, const struct adv_pre *pre)
{
	if (!st || pre->ctr.n) return 0;
	for (size_t i = 0; i < steps_nprocs(st); i++)
		if (steps_proc(st, i)->plan->method != STEP_NVTX &&
		    !(steps_proc(st, i)->plan->method == STEP_TRACE && i < ad->nexpect && ad->expect[i].rows))
			return 0;
	return 1;
}

static void pre_ready(void *arg, void *st, struct stats_ctx *ctx)
{
	struct advise_drive *ad = arg;
	struct pre_state *s = st;
	if (s->extra && s->extra->ready) s->extra->ready(s->extra->arg, s->extra_st, ctx);
	/* advise's inputs are complete: the facts go beside the steps */
	stacks_set_site_rule(s->adv.stk, &ad->o.site);
	adv_pre_finish(&s->adv);
	adv_facts_free(ad->facts); /* a pass read again */
	ad->facts = NULL;
	ad->beside = 0;
	expect_free(ad);
	if (ctx->pipe.steps) expect_load(ad);
	if (!facts_beside(ad, ctx->pipe.steps, &s->adv)) return;
	ad->fopts = (struct adv_facts_opts){ ad->o.kernel_wait_ns, NULL, 0, 0, &ctx->pipe.win, 0, ad->expect };
	for (int steps = 0; steps < 2; steps++)
		ad->sin[steps] = (struct adv_slice_in){ ctx->pipe.steps, &s->adv, &ctx->pipe.win, &ad->fopts, 1, steps };
	ad->facts = adv_facts_new(ad->d.r, ctx->pipe.steps, &s->adv, &ad->fopts);
	ad->part = (struct stats_part){ ad, part_make, part_merge };
	ctx->part = &ad->part;
}

void advise_drive_plan(struct advise_drive *ad, gp_reader *r, const char *path, const struct advise_drive_opts *o)
{
	memset(ad, 0, sizeof(*ad));
	ad->o = *o;
	/* the steps as `gpuprof steps` finds them, over the whole trace */
	ad->so = (struct stats_opts){ .rule = ATTR_ANY_THREAD, .detect = o->detect, .kernel_wait_ns = o->kernel_wait_ns,
				      .verbose = o->verbose, .whole_trace = 1, .site = o->site };
	ad->hook = (struct stats_pre_hook){ ad, pre_new, pre_add, pre_merge, pre_free, pre_ready };
	ad->d = (struct stats_drive){ .r = r, .path = path, .strict = o->strict, .so = &ad->so,
				      .names = NAME_FULL, .run = o->run,
				      .threads = g_threads,
				      .pre = &ad->hook, .want_prefix = 1, .keep_going = o->keep_going };
	stats_drive_plan(&ad->d);
}

void *advise_drive_pre(const struct advise_drive *ad)
{
	return ((struct pre_state *)ad->d.pre_st)->extra_st;
}

/* The facts after the steps, in a read of their own (in the driver's
 * slices, else on one thread): its read status, into ad->facts. */
static int facts_read(struct advise_drive *ad, struct steps *st, struct adv_pre *pre)
{
	gp_reader *r = ad->d.r;
	struct adv_facts_opts fopts = { ad->o.kernel_wait_ns, NULL, 0, 0, NULL, 0, NULL };
	const struct adv_slice_in sin = { st, pre, &ad->d.ctx.pipe.win, &fopts, 0, 0 };
	adv_facts_free(ad->facts);
	ad->facts = adv_facts_new(r, st, pre, &fopts);
	ad->beside = ad->facts_sliced = 0;
	if (ad->d.prefix) {
		const uint64_t *from;
		int k = steps_prefix_cuts(ad->d.prefix, &from);
		if (adv_slice_pass(ad->facts, ad->d.path, ad->d.prefix, ad->d.ctx.pipe.detect, &sin, &ad->facts_how) == 0) {
			ad->facts_sliced = k;
			return 0;
		}
		/* part of the figures may be in: one thread starts again */
		adv_facts_free(ad->facts);
		ad->facts = adv_facts_new(r, st, pre, &fopts);
	}
	return adv_slice_one(ad->facts, r, &sin);
}

int advise_drive_judge(struct advise_drive *ad, int *read_rc)
{
	struct steps *st = ad->d.ctx.pipe.steps;
	if (!st) return -1;
	gp_reader *r = ad->d.r;
	int rc = ad->d.read_rc;
	/* made beside the steps, unless a step they counted is not counted */
	if (!ad->beside || adv_facts_settle(ad->facts) != 0) {
		rc = facts_read(ad, st, &((struct pre_state *)ad->d.pre_st)->adv);
		*read_rc = rc; /* the same file read again: the same status */
		if (!gp_reader_recoverable(rc)) return -1;
	}
	adv_facts_summarize(ad->facts);
	advise_judge(ad->facts, gp_reader_header(r)->start_trace_ns, &ad->res);
	struct gp_integrity in;
	memset(&in, 0, sizeof(in));
	gp_reader_integrity(r, &in);
	ad->res.cut_short = rc == GP_ERR_TRUNCATED || rc == GP_ERR_CORRUPT || in.truncated || in.frames_corrupt;
	if (!ad->o.all) advise_hide_nothing_saved(&ad->res);
	ad->judged = 1;
	return 0;
}

void advise_drive_free(struct advise_drive *ad)
{
	/* the findings point into the facts and the stacks: they go first */
	if (ad->judged) advise_result_free(&ad->res);
	adv_facts_free(ad->facts);
	expect_free(ad); /* read by the facts until they settled */
	steps_prefix_free(ad->d.prefix);
	stats_drive_free(&ad->d);
}
