/* advise_run.c — see advise_run.h. */
#include "analysis/advise/advise_run.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/advise/advise_facts.h"
#include "analysis/advise/advise_slice.h"
#include "analysis/core/slices.h"
#include "analysis/stacks/stacks.h"
#include "analysis/steps/steps_pipe.h"

struct advise_run {
	gp_reader *r;
	struct advise_run_opts o;
	int sliced;                    /* the steps' second pass ran in this many slices (0: one thread) */
	struct steps_slice_merged how;
	int facts_sliced;              /* the facts pass ran in this many slices (0: one thread) */
	struct steps_slice_merged facts_how;
	struct steps_prefix *prefix;   /* the slices' cuts, noted by pass 1 (NULL: one thread) */
	const struct step_detect *detect; /* the steps' plans, for the slices' lead-ins (NULL: none) */
	struct adv_pre pre;
	struct steps_pipe pipe;        /* the steps, with their launch join */
	const struct winset *win;      /* the steps' windows */
	struct adv_facts *facts;
	struct adv_result res;
	int judged;
};

/* Pass 1's extra: advise's own inputs, and with slices what their
 * engines start from (steps_slice.h steps_prefix). */
static void pass1_pre(void *arg, const gp_record *rec)
{
	struct advise_run *ar = arg;
	adv_pre_add(&ar->pre, ar->r, rec);
	if (ar->prefix) steps_prefix_add(ar->prefix, ar->r, rec);
}

void advise_run_inputs(struct advise_run *ar, struct adv_pre *pre, struct steps_prefix *pf)
{
	adv_pre_free(&ar->pre);
	ar->pre = *pre;
	memset(pre, 0, sizeof(*pre));
	stacks_set_site_rule(ar->pre.stk, &ar->o.site);
	steps_prefix_free(ar->prefix);
	ar->prefix = pf;
}

/* advise's inputs and the steps pipeline, as before any pass */
static void inputs_init(struct advise_run *ar)
{
	adv_pre_init(&ar->pre, ar->r);
	stacks_set_site_rule(ar->pre.stk, &ar->o.site);
	struct steps_pipe_opts po = { 1, ATTR_ANY_THREAD, &ar->o.detect, ar->o.kernel_wait_ns };
	steps_pipe_init(&ar->pipe, ar->r, &po);
}

struct advise_run *advise_run_new(gp_reader *r, const struct advise_run_opts *opts)
{
	struct advise_run *ar = xcalloc(1, sizeof(*ar));
	ar->r = r;
	ar->o.detect.want = STEP_WANT_AUTO;
	if (opts) ar->o = *opts;
	inputs_init(ar);
	int k = ar->o.path && ar->o.threads > 1 ? slices_count(ar->r, ar->o.path, ar->o.threads) : 0;
	ar->prefix = k > 1 ? steps_prefix_slices(ar->r, k) : NULL;
	return ar;
}

/* Passes 1 and 2 with the second in k slices: 0, -1 (as advise_run_run),
 * or 1 when the trace is damaged or a slice could not be read (the
 * inputs are made again on one thread). */
static int steps_sliced(struct advise_run *ar, int k, int *read_rc, const char **err)
{
	*read_rc = steps_pipe_pass(&ar->pipe, 1, pass1_pre, ar);
	int rc = 1;
	if (*read_rc < 0) { /* damage, or an error: one thread's read says what */
		rc = gp_reader_recoverable(*read_rc) ? 1 : -1;
	} else {
		steps_pipe_plan_ranges(&ar->pipe);
		if (steps_pipe_plan_steps(&ar->pipe, err) < 0) rc = -1;
		else if (steps_slice_pass(&ar->pipe, ar->o.path, ar->prefix, &ar->how) == 0) rc = 0;
	}
	if (rc == 0) ar->sliced = k;
	if (rc == 1) {
		adv_pre_free(&ar->pre);
		steps_pipe_free(&ar->pipe);
		steps_prefix_free(ar->prefix); /* one thread */
		ar->prefix = NULL;
		inputs_init(ar);
	}
	return rc;
}

int advise_run_run(struct advise_run *ar, int *read_rc, const char **err)
{
	const uint64_t *from;
	int k = ar->prefix ? steps_prefix_cuts(ar->prefix, &from) : 0;
	int rc = k > 1 ? steps_sliced(ar, k, read_rc, err) : 1;
	if (rc < 0) return -1;
	if (rc == 1 && steps_pipe_run(&ar->pipe, pass1_pre, ar, read_rc, err) < 0) return -1;
	ar->detect = ar->pipe.detect;
	return advise_run_judge(ar, ar->pipe.steps, &ar->pipe.win, read_rc);
}

int advise_run_slices(const struct advise_run *ar, struct steps_slice_merged *how)
{
	if (how) *how = ar->how;
	return ar->sliced;
}

int advise_run_facts_slices(const struct advise_run *ar, struct steps_slice_merged *how)
{
	if (how) *how = ar->facts_how;
	return ar->facts_sliced;
}

int advise_run_judge(struct advise_run *ar, struct steps *st, const struct winset *win, int *read_rc)
{
	gp_reader *r = ar->r;
	int rc = 0;
	adv_pre_finish(&ar->pre);
	ar->win = win;
	struct adv_facts_opts fopts = { ar->o.kernel_wait_ns, NULL, 0, 0 };
	const struct adv_slice_in sin = { st, &ar->pre, win, &fopts };
	ar->facts = adv_facts_new(r, st, &ar->pre, &fopts);
	int sliced = 0;
	if (ar->prefix) {
		const uint64_t *from;
		int k = steps_prefix_cuts(ar->prefix, &from);
		sliced = adv_slice_pass(ar->facts, ar->o.path, ar->prefix, ar->detect, &sin, &ar->facts_how) == 0;
		if (sliced) ar->facts_sliced = k;
		else { /* part of the figures may be in: one thread starts again */
			adv_facts_free(ar->facts);
			ar->facts = adv_facts_new(r, st, &ar->pre, &fopts);
		}
	}
	if (!sliced) {
		rc = adv_slice_one(ar->facts, r, &sin);
		*read_rc = rc; /* the same file read again: the same status */
		if (!gp_reader_recoverable(rc)) return -1;
	}
	adv_facts_summarize(ar->facts);
	advise_judge(ar->facts, gp_reader_header(r)->start_trace_ns, &ar->res);
	struct gp_integrity in;
	memset(&in, 0, sizeof(in));
	gp_reader_integrity(r, &in);
	ar->res.cut_short = rc == GP_ERR_TRUNCATED || rc == GP_ERR_CORRUPT || in.truncated || in.frames_corrupt;
	if (!ar->o.all) advise_hide_nothing_saved(&ar->res);
	ar->judged = 1;
	return 0;
}

const struct adv_result *advise_run_result(const struct advise_run *ar)
{
	return ar->judged ? &ar->res : NULL;
}

const struct adv_facts *advise_run_facts(const struct advise_run *ar)
{
	return ar->judged ? ar->facts : NULL;
}

void advise_run_free(struct advise_run *ar)
{
	if (!ar) return;
	/* the findings point into the facts and the stacks: they go first */
	if (ar->judged) advise_result_free(&ar->res);
	adv_facts_free(ar->facts);
	steps_prefix_free(ar->prefix);
	steps_pipe_free(&ar->pipe);
	adv_pre_free(&ar->pre);
	free(ar);
}
