/* step_profile.h — what a chosen set of steps did, by name: the kernels,
 * copies and memsets launched in them, the API calls made in them and the
 * NVTX ranges opened in them, over every chosen step of each process
 * (`gpuprof diff` divides by the number of steps).  One more pass over the
 * trace, after the steps analysis (steps_pipe.h) has found the steps.
 *
 * Which step a thing belongs to (the attribution rule of docs/STEPS.md): a
 * GPU operation, the step in which the API call that launched it started
 * (joined by correlation id; an operation with no recorded call belongs to
 * none); an API call or an NVTX range, the step in which it started; all
 * in the same process.  The step's own NVTX range is not counted as a
 * range inside it.  A range's kernel time is that of the kernels launched
 * while it was open (the attribution rule, any thread), in a chosen step.
 *
 * Memory: one entry per distinct name, the chosen steps, and what the
 * launch join holds (opjoin.h). */
#ifndef GPUPROF_ANALYSIS_STEPS_STEP_PROFILE_H
#define GPUPROF_ANALYSIS_STEPS_STEP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/steps/steps_pipe.h"
#include "common/util.h"

enum sp_kind { SP_KERNEL, SP_API, SP_RANGE, SP_COPY, SP_COUNT };

#define SP_SYNC 1u       /* an API call that synchronises (step_api_is_sync) */
#define SP_COPYCALL 2u   /* an API call that copies (memcpy in its name) */

struct sp_entry {
	char *name;              /* kernel (demangled), API, range, or copy kind ("HtoD", ..., "memset") */
	uint64_t count, ns;      /* how many, their total duration */
	uint64_t bytes;          /* SP_COPY */
	uint64_t kernel_ns;      /* SP_RANGE: kernels launched while it was open */
	unsigned flags;          /* SP_API: SP_SYNC, SP_COPYCALL */
};

struct sp_list { strmap idx; struct sp_entry *v; size_t n, cap; };

struct sp_step { uint64_t s, e; };

struct step_profile_proc {
	uint32_t pid;
	struct sp_step *steps; size_t nsteps, csteps; /* the chosen steps, by start */
	struct sp_list list[SP_COUNT];
};

struct step_profile;

/* pipe: the finished steps analysis of the trace r reads (its NVTX ranges
 * and GPU-activity windows). */
struct step_profile *step_profile_new(gp_reader *r, const struct steps_pipe *pipe);
/* Chooses step [s, e) of pid (before step_profile_run). */
void step_profile_choose(struct step_profile *sp, uint32_t pid, uint64_t s, uint64_t e);
/* The pass (rewinds the reader).  Returns the read status (0, or < 0). */
int step_profile_run(struct step_profile *sp);
/* pid's profile, or NULL when none of its steps was chosen. */
const struct step_profile_proc *step_profile_proc(const struct step_profile *sp, uint32_t pid);
void step_profile_free(struct step_profile *sp); /* NULL ok */

#endif
