/* advise_run.c — see advise_run.h. */
#include "analysis/advise/advise_run.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/advise/advise_facts.h"
#include "analysis/core/slices.h"
#include "analysis/stacks/stacks.h"
#include "analysis/steps/steps_pipe.h"
#include "common/tool.h"

struct advise_run {
	gp_reader *r;
	struct advise_run_opts o;
	int sliced;                    /* the steps' second pass ran in this many slices (0: one thread) */
	struct steps_slice_merged how;
	struct steps_prefix *prefix;   /* the slices' cuts, noted by pass 1 */
	struct adv_pre pre;
	struct steps_pipe pipe;        /* the steps, with their launch join */
	struct opjoin *j3;             /* the facts pass's launch join */
	const struct winset *win;      /* the steps' windows */
	struct adv_facts *facts;
	struct adv_result res;
	int judged;
};

void advise_run_pre_add(struct advise_run *ar, const gp_record *rec)
{
	adv_pre_add(&ar->pre, tool_pid(ar->r, rec), rec);
}

/* Pass 1's extra: advise's own inputs (and with slices, what their steps'
 * engines start from: steps_slice.h steps_prefix). */
static void pass1_pre(void *arg, const gp_record *rec)
{
	struct advise_run *ar = arg;
	advise_run_pre_add(ar, rec);
	if (ar->prefix) steps_prefix_add(ar->prefix, ar->r, rec);
}

/* Pass 3: the same launch join (its callback feeds the facts), with the API
 * calls and GPU operations also into advise's facts, advanced with the
 * join's frontier. */
static int pass_facts(struct advise_run *ar)
{
	gp_reader *r = ar->r;
	const gp_record *rec;
	int rc;
	uint64_t n = 0, now = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		if (rec->type == GP_REC_API)
			adv_facts_api(ar->facts, tool_pid(r, rec), tool_rec_tid(r, rec), &rec->u.api);
		else if (rec->type == GP_REC_KERNEL || rec->type == GP_REC_MEMCPY || rec->type == GP_REC_MEMSET)
			adv_facts_gpu(ar->facts, tool_pid(r, rec), rec);
		uint64_t before = now;
		step_pass2_add(r, rec, ar->j3, NULL, ar->win, &now);
		if (now > before)
			adv_facts_advance(ar->facts, now, opjoin_frontier(ar->j3));
	}
	return rc;
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
	return ar;
}

/* Passes 1 and 2 with the second in k slices: 0, -1 (as advise_run_run),
 * or 1 when the trace is damaged or a slice could not be read (the
 * inputs are made again on one thread). */
static int steps_sliced(struct advise_run *ar, int k, int *read_rc, const char **err)
{
	if (!(ar->prefix = steps_prefix_slices(ar->r, k))) return 1;
	*read_rc = steps_pipe_pass(&ar->pipe, 1, pass1_pre, ar);
	int rc = 1;
	if (*read_rc < 0) { /* damage, or an error: one thread's read says what */
		rc = gp_reader_recoverable(*read_rc) ? 1 : -1;
	} else {
		steps_pipe_plan_ranges(&ar->pipe);
		if (steps_pipe_plan_steps(&ar->pipe, err) < 0) rc = -1;
		else if (steps_slice_pass(&ar->pipe, ar->o.path, ar->prefix, &ar->how) == 0) rc = 0;
	}
	steps_prefix_free(ar->prefix);
	ar->prefix = NULL;
	if (rc == 0) ar->sliced = k;
	if (rc == 1) {
		adv_pre_free(&ar->pre);
		steps_pipe_free(&ar->pipe);
		inputs_init(ar);
	}
	return rc;
}

int advise_run_run(struct advise_run *ar, int *read_rc, const char **err)
{
	int k = ar->o.path && ar->o.threads > 1 ? slices_count(ar->r, ar->o.path, ar->o.threads) : 0;
	int rc = k > 1 ? steps_sliced(ar, k, read_rc, err) : 1;
	if (rc < 0) return -1;
	if (rc == 1 && steps_pipe_run(&ar->pipe, pass1_pre, ar, read_rc, err) < 0) return -1;
	return advise_run_judge(ar, ar->pipe.steps, &ar->pipe.win, read_rc);
}

int advise_run_slices(const struct advise_run *ar, struct steps_slice_merged *how)
{
	if (how) *how = ar->how;
	return ar->sliced;
}

int advise_run_judge(struct advise_run *ar, struct steps *st, const struct winset *win, int *read_rc)
{
	gp_reader *r = ar->r;
	int rc;
	adv_pre_finish(&ar->pre);
	ar->win = win;
	struct adv_facts_opts fopts = { ar->o.kernel_wait_ns };
	ar->facts = adv_facts_new(r, st, &ar->pre, &fopts);
	ar->j3 = opjoin_new(r, NULL, adv_facts_op, ar->facts);
	if ((rc = gp_reader_rewind(r)) >= 0) rc = pass_facts(ar);
	*read_rc = rc; /* the same file read again: the same status */
	if (!gp_reader_recoverable(rc)) return -1;
	opjoin_finish(ar->j3);
	adv_facts_finish(ar->facts);
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
	opjoin_free(ar->j3);
	steps_pipe_free(&ar->pipe);
	adv_pre_free(&ar->pre);
	free(ar);
}
