/* advise_run.h — `gpuprof advise` over one trace in one call
 * (docs/ADVISE.md): the three passes and the judging, for the commands that
 * want the findings (`gpuprof advise` prints them, `gpuprof report` puts
 * them into its page).
 *
 * What each pass reads and how the passes run in slices with
 * opts.threads: docs/ADVISE.md "What is measured".
 *
 * The object: advise_run_new, advise_run_run once, then the result (whose
 * findings point into the facts, labels and stacks, the object keeps alive)
 * until advise_run_free.  The reader is rewound before each pass, so it may
 * have been read before.  Memory: as steps.h and advise_facts.h say. */
#ifndef GPUPROF_ANALYSIS_ADVISE_ADVISE_RUN_H
#define GPUPROF_ANALYSIS_ADVISE_ADVISE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/advise/advise.h"
#include "analysis/stacks/site_rule.h"
#include "analysis/steps/step_detect.h"
#include "analysis/steps/steps.h"
#include "analysis/steps/steps_slice.h"
#include "analysis/gpu/windows.h"

struct advise_run_opts {
	struct step_detect_opts detect;
	uint64_t kernel_wait_ns;       /* 0: STEP_KERNEL_WAIT_NS */
	struct site_rule site;         /* the call site a finding names (zero: user) */
	int all;                       /* keep the findings that save nothing (advise_hide_nothing_saved) */
	/* the steps' second pass and the facts pass in slices of time
	 * (steps_slice.h steps_slice_pass, advise_slice.h) on this many
	 * threads over the trace at path; 0 or 1, or path NULL: one thread
	 * (advise_run_judge: the slices of advise_run_inputs' prefix) */
	int threads;
	const char *path;
};

struct advise_run;

/* r outlives the object.  opts may be NULL (the defaults). */
struct advise_run *advise_run_new(gp_reader *r, const struct advise_run_opts *opts);
/* Runs the passes and judges.  Returns 0, or -1 with *read_rc the fatal
 * read status (< 0, for tool_finish) or, when the reads went well, *err the
 * message of a failed step detection (--step-range NAME absent).  On success
 * *read_rc is the status of the last pass (0, or GP_ERR_TRUNCATED /
 * GP_ERR_CORRUPT after which the intact records were analysed). */
int advise_run_run(struct advise_run *ar, int *read_rc, const char **err);
/* For a driver that ran the steps pipeline over the trace itself (gpuprof
 * report: the stats driver): advise's own inputs as its first pass would
 * make them (taken: *pre left empty; adv_pre_finish not yet done), and
 * the steps' prefix of the slices its facts pass runs in (taken; NULL:
 * one thread); then the facts pass (one read) and the judgement over the
 * finished steps st and their windows win (the caller's, outliving ar):
 * advise_run_run's passes 1 and 2 left out.  0, or -1 (*read_rc). */
struct adv_pre;
struct steps_prefix;
void advise_run_inputs(struct advise_run *ar, struct adv_pre *pre, struct steps_prefix *pf);
int advise_run_judge(struct advise_run *ar, struct steps *st, const struct winset *win, int *read_rc);
/* After a successful advise_run_run: the ranked findings and the process
 * summaries. */
const struct adv_result *advise_run_result(const struct advise_run *ar);
/* After advise_run_run: in how many slices the steps' second pass ran (0:
 * one thread) and how they merged. */
int advise_run_slices(const struct advise_run *ar, struct steps_slice_merged *how);
/* After the judgement: in how many slices the facts pass ran (0: one
 * thread; advise_slice.h) and how they merged. */
int advise_run_facts_slices(const struct advise_run *ar, struct steps_slice_merged *how);
/* After a successful advise_run_run: what was measured (per process: the
 * memory bound, for --verbose). */
const struct adv_facts *advise_run_facts(const struct advise_run *ar);
void advise_run_free(struct advise_run *ar); /* NULL ok */

#endif
