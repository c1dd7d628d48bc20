/* advise_drive.h — the findings of `gpuprof advise` (docs/ADVISE.md) over
 * one trace as a view of stats' driver (stats_drive.h), for the commands
 * that want them: `gpuprof advise` prints them, `gpuprof report` runs its
 * tables in the same drive and puts them into its page.
 *
 * The driver's pre-pass (in slices with --threads) also makes advise's
 * inputs (advise_facts.h adv_pre) and the steps' prefix of its slices, its
 * pass the steps (and the caller's reports) and, beside the steps in the
 * same slices, the facts (advise_facts.h adv_facts_opts.beside,
 * analysis/advise/advise_slice.h); advise_drive_judge settles them on the
 * finished steps, or where they cannot be one pass's over those steps
 * reads the trace once more for them, and judges them.
 *
 * Use: advise_drive_plan (it may replace the reader: read through ad->d.r
 * after it), stats_drive_run(&ad->d), advise_drive_judge, the result and ad->d's
 * context until advise_drive_free. */
#ifndef GPUPROF_REPORTS_ADVISE_DRIVE_H
#define GPUPROF_REPORTS_ADVISE_DRIVE_H

#include <stdint.h>

#include "analysis/advise/advise.h"
#include "analysis/advise/advise_facts.h"
#include "analysis/advise/advise_slice.h"
#include "reports/stats_drive.h"

struct advise_drive_opts {
	struct step_detect_opts detect;
	uint64_t kernel_wait_ns;      /* 0: STEP_KERNEL_WAIT_NS */
	struct site_rule site;        /* the call site a finding names (zero: user) */
	int all;                      /* keep the findings that save nothing (advise_hide_nothing_saved) */
	int strict, verbose;
	int keep_going;               /* as stats_drive's: a failed step detection leaves the steps out */
	const int *run;               /* per stats report: run in the drive (NULL: the steps alone) */
	const struct stats_pre_hook *pre; /* the caller's consumer of the pre-pass (NULL: none);
					   * its state for the whole trace: advise_drive_pre */
};

struct advise_drive {
	struct stats_drive d;         /* d.ctx.pipe: the steps; d.steps_err */
	struct advise_drive_opts o;
	struct stats_opts so;
	struct stats_pre_hook hook;   /* adv_pre beside o.pre */
	struct adv_facts *facts;
	int beside;                   /* the facts were made in the driver's pass, beside the steps */
	int facts_sliced;             /* the facts ran in this many slices (0: one thread) */
	struct steps_slice_merged facts_how;
	struct adv_facts_opts fopts;  /* beside: the facts' engines' inputs */
	struct adv_rows *expect;      /* per process, the trace method's rows from the steps' index */
	size_t nexpect;
	struct adv_slice_in sin[2];   /* [1]: the engines make the steps too */
	struct stats_part part;
	struct adv_result res;
	int judged;
};

void advise_drive_plan(struct advise_drive *ad, gp_reader *r, const char *path, const struct advise_drive_opts *o);
/* The caller's pre-pass state (o.pre's) for the whole trace. */
void *advise_drive_pre(const struct advise_drive *ad);
/* The facts over the drive's steps and the judgement: 0, or -1 when
 * there are no steps (d.steps_err says why) or the trace could not be read
 * again (*read_rc). */
int advise_drive_judge(struct advise_drive *ad, int *read_rc);
void advise_drive_free(struct advise_drive *ad);

#endif
