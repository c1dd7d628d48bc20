/* steps_run.h — the steps analysis (docs/STEPS.md) over a whole trace in one
 * call: the two passes of the steps pipeline (steps_pipe.h) that the stats
 * context drives record by record alongside its reports, for the commands
 * that only want the finished per-step rows (`gpuprof diff`).
 *
 * Pass 1 reads the NVTX ranges (the attribution index), the GPU-activity
 * windows, a sample of the GPU operations (step detection) and the
 * processes' ranks; pass 2
 * streams the API calls and GPU operations through the launch join
 * (opjoin.h) into the per-step component (steps.h), which is finished at
 * the end.  The reader is rewound before each pass, so it may have been read
 * before.  Memory: as steps.h and attribution.h say. */
#ifndef GPUPROF_ANALYSIS_STEPS_STEPS_RUN_H
#define GPUPROF_ANALYSIS_STEPS_STEPS_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/join/attribution.h"
#include "analysis/steps/step_detect.h"
#include "analysis/steps/steps_pipe.h"
#include "common/util.h"

struct steps_run_opts {
	struct step_detect_opts detect;
	enum attr_rule rule;           /* ATTR_ANY_THREAD (0) by default */
	uint64_t kernel_wait_ns;       /* 0: STEP_KERNEL_WAIT_NS */
};

/* What the analysis leaves: all owned, freed by steps_run_free. */
struct steps_run {
	struct steps_pipe pipe;        /* finished: the steps' rows not yet summarised;
					* the join for opjoin_counts */
	struct steps_run_proc {          /* PROCESS records, in trace order */
		uint32_t pid; int32_t rank;
		char *cmd, *settings;    /* its command line and the tracer's settings; NULL: unknown */
	} *procs;
	size_t nprocs, cprocs;
	uint64_t *threads; size_t nthreads, cthreads; /* pid << 32 | tid of the threads with records (SOURCE) */
	u64map seen_thread;
};

/* Runs both passes.  Returns 0, or -1 with *read_rc the fatal read status
 * (< 0, for tool_finish) or, when the read went well, *err the message of a
 * failed step detection (--step-range NAME absent).  On success *read_rc is
 * the status of the last pass (0, or GP_ERR_TRUNCATED / GP_ERR_CORRUPT after
 * which the intact records were analysed).  opts may be NULL. */
int steps_run(gp_reader *r, const struct steps_run_opts *opts, struct steps_run *out, int *read_rc,
	      const char **err);
void steps_run_free(struct steps_run *sr);
/* The rank of pid from its PROCESS record; -1 when none or unknown. */
int32_t steps_run_rank(const struct steps_run *sr, uint32_t pid);

/* The process record of pid; NULL when none. */
const struct steps_run_proc *steps_run_process(const struct steps_run *sr, uint32_t pid);
/* The number of threads of pid that recorded something (their SOURCE records). */
size_t steps_run_threads(const struct steps_run *sr, uint32_t pid);

/* --method: "auto", "nvtx", "trace" -> STEP_WANT_*; 0 ok, -1 unknown name */
int step_want_parse(const char *s, int *want);

#endif
