/* advise_slice.h — advise's facts pass (advise_facts.h) in slices of time,
 * with the figures of one pass: a struct cut_slice engine of
 * analysis/steps/steps_slice.h (its cuts, lead-ins, order checks and
 * prefix), the launch join feeding a facts engine whose state is
 * adv_facts_state; the figures of each engine since its mark added in
 * slice order (adv_facts_take).  PM-sampled figures (fractional sums) are
 * not cut: a trace with PM counters runs on one thread. */
#ifndef GPUPROF_ANALYSIS_ADVISE_ADVISE_SLICE_H
#define GPUPROF_ANALYSIS_ADVISE_ADVISE_SLICE_H

#include "gp_trace.h"
#include "analysis/advise/advise_facts.h"
#include "analysis/gpu/windows.h"
#include "analysis/steps/step_detect.h"
#include "analysis/steps/steps_slice.h"

struct adv_slice_in {
	struct steps *st;              /* finished */
	struct adv_pre *pre;           /* finished */
	const struct winset *win;      /* finished */
	const struct adv_facts_opts *opts;
	int beside;                    /* st not finished: the facts fed beside it (adv_facts_opts.beside) */
	int steps;                     /* beside: each engine makes the steps too, from its join (st their
					* template: steps_slice.h steps_slice_init) */
};

/* What the engines add up into: the steps (in->steps) and the facts. */
struct adv_slice_sum {
	struct steps *st;
	struct adv_facts *f;
};

/* The engine of slice ix of cuts over the records r reads (of its window:
 * steps_slice_window), made on the caller's thread; with in->beside, fed
 * in the pass that makes the steps, one per slice of theirs. */
struct cut_slice *adv_slice_new(const struct adv_slice_in *in, gp_reader *r, const struct steps_cuts *cuts, int ix);
/* The ended engines e[0 .. cuts->k) into sum (the facts made as
 * adv_slice_one's, with in's beside; the steps and the join's counts as
 * steps_slice_merge's), as cut_slice_merge: 0, or -1 (damage, or a figure
 * lost: the facts are not one pass's). */
int adv_slice_merge(const struct adv_slice_sum *sum, struct opjoin_counts *counts, struct cut_slice **e,
		    const struct steps_cuts *cuts, const char *path, const struct adv_slice_in *in,
		    struct steps_slice_merged *how);
/* The facts pass of one thread over r (rewound) into sum (adv_facts_new
 * over in's steps and pre): the read status (0, or a GP_ERR_*). */
int adv_slice_one(struct adv_facts *sum, gp_reader *r, const struct adv_slice_in *in);
/* The facts pass in the slices of pf (its cuts, fed by one pass before
 * this; d: the steps' plans for the lead-ins, NULL none) over the trace at
 * path into sum.  0, or -1 when a slice met damage or could not be opened,
 * or the trace holds PM counters (nothing added: the caller runs
 * adv_slice_one).  *how: as the steps' merge. */
int adv_slice_pass(struct adv_facts *sum, const char *path, const struct steps_prefix *pf,
		   const struct step_detect *d, const struct adv_slice_in *in, struct steps_slice_merged *how);

#endif
