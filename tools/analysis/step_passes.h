/* step_passes.h — the two passes of the steps analysis, one record at a
 * time, as every reader of the steps runs them (the stats context,
 * selection's --steps):
 *  pass 1: every NVTX range into the attribution index, GPU operations into
 *          step detection's sample, GPU-activity windows;
 *  pass 2: API calls and GPU operations through the correlation-id join
 *          (whose callback delivers to steps_op, maybe among others) and API
 *          calls into the steps, advancing both with the stream's time. */
#ifndef GPUPROF_ANALYSIS_STEP_PASSES_H
#define GPUPROF_ANALYSIS_STEP_PASSES_H

#include <stdint.h>

#include "gp_trace.h"
#include "analysis/attribution.h"
#include "analysis/opjoin.h"
#include "analysis/step_detect.h"
#include "analysis/steps.h"
#include "analysis/windows.h"

/* Pass 1.  a, d, win: NULL for what is not wanted. */
void step_pass1_add(gp_reader *r, const gp_record *rec, struct attribution *a, struct step_detect *d,
		    struct winset *win);
/* Pass 2.  st: NULL for the join alone; win: the (finished) windows, for
 * whether GPU activity was recorded at a call; *now: the latest API or GPU
 * record time seen (0 at the start).  Other records are ignored. */
void step_pass2_add(gp_reader *r, const gp_record *rec, struct opjoin *j, struct steps *st,
		    const struct winset *win, uint64_t *now);

#endif
