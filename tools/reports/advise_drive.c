/* advise_drive.c — see advise_drive.h. */
#include "reports/advise_drive.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/advise/advise_slice.h"
#include "common/tool.h"

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

static void pre_ready(void *arg, void *st, struct stats_ctx *ctx)
{
	struct pre_state *s = st;
	if (s->extra && s->extra->ready) s->extra->ready(s->extra->arg, s->extra_st, ctx);
}

void advise_drive_plan(struct advise_drive *ad, gp_reader *r, const char *path, const struct advise_drive_opts *o)
{
	memset(ad, 0, sizeof(*ad));
	ad->o = *o;
	/* the steps as `gpuprof steps` finds them, over the whole trace */
	ad->so = (struct stats_opts){ .rule = ATTR_ANY_THREAD, .detect = o->detect, .kernel_wait_ns = o->kernel_wait_ns,
				      .verbose = o->verbose, .whole_trace = 1, .site = o->site };
	struct sel_opts none;
	sel_opts_init(&none);
	char why[256];
	if (selection_resolve_pipe(&ad->sel, r, &none, NULL, &ad->so.detect, why, sizeof(why)) < 0)
		memset(&ad->sel, 0, sizeof(ad->sel));
	size_t nreps = 0;
	while (stats_reports[nreps]) nreps++;
	ad->run = xcalloc(nreps ? nreps : 1, sizeof(*ad->run));
	for (size_t i = 0; i < nreps; i++)
		ad->run[i] = o->run ? o->run[i] : !strcmp(stats_reports[i]->tables[0].name, "steps");
	ad->hook = (struct stats_pre_hook){ ad, pre_new, pre_add, pre_merge, pre_free, pre_ready };
	ad->d = (struct stats_drive){ .r = r, .path = path, .strict = o->strict, .so = &ad->so, .sel = &ad->sel,
				      .names = NAME_FULL, .run = ad->run,
				      .threads = g_threads,
				      .pre = &ad->hook, .want_prefix = 1, .keep_going = o->keep_going };
	stats_drive_plan(&ad->d);
}

int advise_drive_run(struct advise_drive *ad, int *code)
{
	return stats_drive_run(&ad->d, code);
}

void *advise_drive_pre(const struct advise_drive *ad)
{
	return ((struct pre_state *)ad->d.pre_st)->extra_st;
}

int advise_drive_judge(struct advise_drive *ad, int *read_rc)
{
	struct steps *st = ad->d.ctx.pipe.steps;
	if (!st) return -1;
	gp_reader *r = ad->d.r;
	struct adv_pre *pre = &((struct pre_state *)ad->d.pre_st)->adv;
	stacks_set_site_rule(pre->stk, &ad->o.site);
	adv_pre_finish(pre);
	struct adv_facts_opts fopts = { ad->o.kernel_wait_ns, NULL, 0, 0 };
	const struct adv_slice_in sin = { st, pre, &ad->d.ctx.pipe.win, &fopts };
	ad->facts = adv_facts_new(r, st, pre, &fopts);
	int rc = 0, sliced = 0;
	if (ad->d.prefix) {
		const uint64_t *from;
		int k = steps_prefix_cuts(ad->d.prefix, &from);
		sliced = adv_slice_pass(ad->facts, ad->d.path, ad->d.prefix, ad->d.ctx.pipe.detect, &sin,
					&ad->facts_how) == 0;
		if (sliced) ad->facts_sliced = k;
		else { /* part of the figures may be in: one thread starts again */
			adv_facts_free(ad->facts);
			ad->facts = adv_facts_new(r, st, pre, &fopts);
		}
	}
	if (!sliced) {
		rc = adv_slice_one(ad->facts, r, &sin);
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
	steps_prefix_free(ad->d.prefix);
	ad->d.prefix = NULL;
	stats_drive_free(&ad->d);
	free(ad->run);
	selection_free(&ad->sel);
}
