/* steps_pipe.h — the steps pipeline (docs/STEPS.md), built in one place for
 * every reader of the steps (selection's --steps, the stats context):
 *  pass 1: every NVTX range into the attribution index, GPU operations into
 *          step detection's sample, GPU-activity windows;
 *  plan:   those finished; the steps engine, the correlation-id join
 *          delivering to it (steps_op, maybe among others);
 *  pass 2: API calls and GPU operations through the join, API calls into
 *          the steps, both advanced with the stream's time; then finish.
 * Init, consume, finalize: a caller with a loop of its own (the stats
 * context) calls steps_pipe_pre_add / steps_pipe_add per record; one
 * without calls steps_pipe_pass (a whole read). */
#ifndef GPUPROF_ANALYSIS_STEPS_STEPS_PIPE_H
#define GPUPROF_ANALYSIS_STEPS_STEPS_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/join/attribution.h"
#include "analysis/join/opjoin.h"
#include "analysis/steps/step_detect.h"
#include "analysis/steps/steps.h"
#include "analysis/gpu/windows.h"

struct steps_pipe_opts {
	int ranges;                    /* keep the NVTX ranges (attribution) */
	enum attr_rule rule;           /* their rule (ATTR_ANY_THREAD: 0) */
	const struct step_detect_opts *detect; /* NULL: no steps */
	uint64_t kernel_wait_ns;       /* 0: STEP_KERNEL_WAIT_NS */
};

/* All owned (steps_pipe_free); NULL what was not asked, join before
 * steps_pipe_join. */
struct steps_pipe {
	gp_reader *r;
	struct attribution *attr;
	struct step_detect *detect;
	struct winset win;             /* the GPU-activity windows (finished by the plan) */
	struct steps *steps;           /* after the plan */
	struct opjoin *join;           /* after steps_pipe_join */
	uint64_t now;                  /* latest API or GPU record time seen in pass 2 */
	int steps_apart;               /* the steps run elsewhere (the stats slices): the
					* join does not feed them, finish leaves them */
	int steps_done;                /* the steps had their pass (steps_pipe_finish, or the
					* caller's drive in slices: reports/stats_selection.c) */
	uint64_t kernel_wait_ns;
};

/* Detection wanted implies the ranges (the NVTX method reads them). */
void steps_pipe_init(struct steps_pipe *p, gp_reader *r, const struct steps_pipe_opts *o);
/* Pass 1, one record. */
void steps_pipe_pre_add(struct steps_pipe *p, const gp_record *rec);
/* The plan in two halves, for a caller that samples between them (the
 * stats slices): the index, the windows, detection's NVTX plans; then its
 * sample plans and the steps engine (-1 with *err: detection failed). */
void steps_pipe_plan_ranges(struct steps_pipe *p);
int steps_pipe_plan_steps(struct steps_pipe *p, const char **err);
/* The join, made once: jo may be NULL; on_op NULL delivers to the steps. */
void steps_pipe_join(struct steps_pipe *p, const struct opjoin_opts *jo, opjoin_cb on_op, void *arg);
/* Pass 2, one record: other record types are ignored. */
void steps_pipe_add(struct steps_pipe *p, const gp_record *rec);
void steps_pipe_finish(struct steps_pipe *p);
void steps_pipe_free(struct steps_pipe *p);

/* Whether some process's steps are the trace method's (planned): found
 * in pass 2 over the whole trace, not in pass 1 */
int steps_pipe_trace_planned(const struct steps_pipe *p);
/* The steps as `--steps A:B` numbers them (selection.h), per process
 * in the plans' order: fn(arg, its bounds) for each.  NVTX steps are the
 * plan's, numbered by their name (else their place); the trace method's
 * are the steps engine's rows, made in pass 2 (steps_pipe_finish done). */
struct step_bound {
	size_t plan;             /* the plan's index (step_detect_plan) */
	int64_t number;
	uint64_t s, e;
	int partial;             /* step_row.partial */
};
typedef void (*steps_bound_fn)(void *arg, const struct step_bound *b);
void steps_pipe_bounds(struct steps_pipe *p, steps_bound_fn fn, void *arg);

/* A whole read from the start, each record to pass 1 or 2.  The read
 * status of the end (0, or a GP_ERR_*). */
int steps_pipe_pass(struct steps_pipe *p, int pass);
/* Pass 2 on parts the caller holds (the slices of analysis/steps/steps_slice.h,
 * advise's facts pass): st NULL for the join alone; win the finished
 * windows, for whether GPU activity was recorded at a call; *now: the
 * latest API or GPU record time seen (0 at the start). */
void step_pass2_add(gp_reader *r, const gp_record *rec, struct opjoin *j, struct steps *st,
		    const struct winset *win, uint64_t *now);
/* Pass 1 on parts the caller holds: a, d, win NULL for what is not wanted. */
void step_pass1_add(gp_reader *r, const gp_record *rec, struct attribution *a, struct step_detect *d,
		    struct winset *win);

#endif
