/* steps.h — per-step figures: the second pass of the steps analysis.  A
 * component: steps_new (init, with the attribution index and the step
 * plans of the first pass), then the trace in time order through
 * steps_api (API calls) and steps_op (GPU operations joined to their launch
 * call: the opjoin callback) with steps_advance after each record
 * (consume), steps_finish (finalize); then the rows.
 *
 * Each step's wall time [s, e) splits into buckets that add up to e - s
 * exactly, over the GPU timeline of the process (docs/STEPS.md "Buckets:
 * where a step's time goes"); the GPU operations launched during the step
 * (the attribution rule) give its launched work and HTA's kernel launch
 * statistics ("Launched work and launch statistics").
 *
 * Memory: the operations and API calls of the steps not yet finalized (a
 * step is finalized once every launch call made before its end has met its
 * GPU operation and the stream is past its end by the longest operation
 * seen), plus one row per step. */
#ifndef GPUPROF_ANALYSIS_STEPS_STEPS_H
#define GPUPROF_ANALYSIS_STEPS_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join/attribution.h"
#include "gp_trace.h"
#include "analysis/join/opjoin.h"
#include "analysis/steps/step_detect.h"

enum step_bucket { SB_COMPUTE, SB_COMM, SB_MEMORY, SB_HOST_WAIT, SB_SYNC, SB_LAUNCH, SB_OTHER, SB_COUNT };
/* "compute", "comm", "memory", "host_wait", "sync", "launch", "other" */
extern const char *const step_bucket_names[SB_COUNT];

/* HTA's kernel launch statistics thresholds (hta/analyzers/cuda_kernel_analysis.py) */
#define STEP_SHORT_CPU_NS 50000ull      /* short op: CPU duration <= 50 us and GPU duration < CPU duration */
#define STEP_RUNTIME_OUTLIER_NS 50000ull /* runtime outlier: CPU duration > 50 us */
#define STEP_DELAY_OUTLIER_NS 100000ull /* launch-delay outlier: delay > 100 us */

struct step_row {
	uint32_t pid;
	uint32_t index;           /* 0, 1, ... within the process */
	int64_t number;           /* from the range name; the index for trace steps */
	uint32_t range_id;        /* NVTX step: attribution range id; UINT32_MAX otherwise */
	uint64_t s, e;
	uint64_t bucket[SB_COUNT];
	/* GPU work launched in the step (the attribution rule) */
	uint64_t kernels, kernel_ns, memops, memop_ns;
	uint64_t other_thread;    /* of those, launched from a thread other than the step range's */
	/* HTA kernel launch statistics, over the launched operations with a call */
	uint64_t launched;
	uint64_t cpu_med, gpu_med, delay_med, delay_max;
	uint32_t queue_max;
	uint32_t short_ops, runtime_outliers, delay_outliers;
	/* host */
	uint32_t sync_calls, alloc_calls;
	uint64_t pause_max;       /* longest time in the step with no API call on any thread */
	uint8_t partial;          /* trace: the last step, whose next boundary never came; it ends
				     where its GPU work ended, so its time is not a period */
	uint8_t unrecorded;       /* not inside one GPU-activity window (windowed trace) */
	uint8_t run_before_unseen; /* the process's GPU work was recorded only from a window that
				      opened after the trace began (a capture, a sampled trace) and
				      the step is a trace step (none before it is ever seen) or an
				      NVTX step numbered above 1: the run's earlier steps may have
				      left nothing in the trace */
	uint8_t warmup, outlier;  /* set by step_summarize */
	uint32_t ph_off, ph_n;    /* its phases: step_phase(p, ph_off .. ph_off+ph_n) */
};

/* GPU work launched during a phase (an NVTX range directly inside the step
 * range, on its thread) within one step */
struct step_phase { uint32_t name; uint32_t kernels; uint64_t kernel_ns, memops, memop_ns; };

struct steps_proc {
	uint32_t pid;
	const struct step_plan *plan;
	/* its rows and their phases, in spills (common/spill.h: past a few
	 * MiB in a file): read them with step_row and step_phase */
	struct spill *rows; size_t nrows;
	struct spill *ph; size_t nph;
	uint64_t late_ops;        /* operations that came after their step was finalized (left out) */
	uint64_t pending_max;     /* most operations + API calls held at once (the memory bound) */
	int runs_ahead;           /* step_summarize: the host runs ahead of the GPU (step_summary.h) */
};

/* Row k (< nrows) and phase k (< nph) of p; step_row_w: to change it.
 * The pointer is valid as common/spill.h says (through the next 7 calls
 * on p's rows or phases).  A spill's cache is not shared: one thread at a
 * time, or each thread through a spill_reader of p->rows after
 * spill_seal (advise's facts in slices). */
const struct step_row *step_row(const struct steps_proc *p, size_t k);
/* A whole trace's rows held in memory (a quarter of it for the phases) */
#define STEPS_ROWS_MEM (4u << 20)
struct step_row *step_row_w(const struct steps_proc *p, size_t k);
const struct step_phase *step_phase(const struct steps_proc *p, size_t k);

struct winset;

struct steps_opts {
	uint64_t kernel_wait_ns;  /* launch-bound gap threshold; 0: STEP_KERNEL_WAIT_NS */
	const struct winset *windows; /* GPU-activity windows of a windowed trace, finished
					 (windows.h); NULL or empty: recorded throughout */
};
#define STEP_KERNEL_WAIT_NS 10000ull

struct steps;

struct steps *steps_new(gp_reader *r, const struct attribution *a, const struct step_detect *sd,
			const struct steps_opts *opts);
void steps_free(struct steps *st); /* NULL ok */
void steps_api(struct steps *st, uint32_t pid, uint32_t tid, const gp_rec_api *a);
/* opjoin callback; ctx is the struct steps */
void steps_op(void *ctx, const struct gpu_op *op);
/* now: the latest record time seen; frontier: opjoin_frontier() */
void steps_advance(struct steps *st, uint64_t now, uint64_t frontier);
void steps_finish(struct steps *st);
size_t steps_nprocs(const struct steps *st);
struct steps_proc *steps_proc(struct steps *st, size_t i);
const struct attribution *steps_attribution(const struct steps *st);
uint64_t steps_kernel_wait(const struct steps *st);
/* Whether the GPU activity of pid was recorded at time t (always, unless
 * the trace has GPU-activity windows for pid and t is outside them). */
int steps_gpu_recorded(const struct winset *w, uint32_t pid, uint64_t t);
/* Whether a step of pid in [s, e) is not inside one GPU-activity window
 * (step_row.unrecorded; w finished, may be empty). */
int steps_unrecorded(const struct winset *w, uint32_t pid, uint64_t s, uint64_t e);

/* Time shards (analysis/steps/steps_slice.h): the engine of one slice of time,
 * with tmpl's plans, options and step ranges (tmpl, made by steps_new,
 * must outlive it; a its attribution index, a view of tmpl's) and reading
 * from time `from` on (its lead-in's start: an NVTX step that ended
 * before it is not made).  steps_mark: the rows finalized so far are not
 * its own (dropped), the counters start from 0, and the threads whose
 * first synchronising call comes from here on are noted.  steps_state:
 * appends to b what decides the engine's behaviour from here on (per
 * process: the next step to finalize, or the rows not finalized; the
 * operations and API calls held in their order; the latest end pruned,
 * the slack, the last prune; the latest time).  steps_fresh_ok: whether
 * the calls of the threads st noted (steps_mark) were counted as before's
 * engine would have (its threads' last calls).  steps_take: moves the
 * rows st finalized (since its mark or the last take), their phases and
 * counters, to sum (made by steps_new: NVTX rows by index, trace rows
 * appended and numbered). */
struct bytes;
struct steps *steps_new_slice(const struct steps *tmpl, const struct attribution *a, uint64_t from);
void steps_mark(struct steps *st);
/* A slice's engine: the longest GPU operation of pid seen before it (one
 * pass's at its cut: analysis/steps/steps_slice.h). */
void steps_set_longest(struct steps *st, uint32_t pid, uint64_t ns);
/* The reader the names come from from now on (one over the same trace). */
void steps_set_reader(struct steps *st, gp_reader *r);
void steps_state(const struct steps *st, struct bytes *b);
int steps_fresh_ok(const struct steps *before, const struct steps *st);
void steps_take(struct steps *sum, struct steps *st);

/* API name classes (docs/STEPS.md): synchronising calls block the calling
 * thread until GPU work is done (*Synchronize, and memcpy/memset calls
 * without "Async"); allocation calls (*Malloc*, *HostAlloc, cuMemAlloc*,
 * cuMemCreate). */
int step_api_is_sync(const char *name);
int step_api_is_alloc(const char *name);

#endif
