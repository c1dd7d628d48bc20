/* step_detect.h — where the training steps are, per process, by NVTX
 * ranges or by the trace's period (docs/STEPS.md "Step detection"); the
 * first of the two passes of the steps analysis.
 *
 * Lifecycle: step_detect_new; step_detect_gpu for each GPU record of the
 * trace (a bounded sample per process is kept); step_detect_plan_ranges
 * with the attribution component that holds the trace's NVTX ranges, then
 * step_detect_plan_samples; then the plans. */
#ifndef GPUPROF_ANALYSIS_STEPS_STEP_DETECT_H
#define GPUPROF_ANALYSIS_STEPS_STEP_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join/attribution.h"
#include "gp_trace.h"

enum step_method { STEP_NONE = 0, STEP_NVTX = 1, STEP_TRACE = 2 };
/* "none", "nvtx", "trace" */
const char *step_method_name(int method);
enum step_want { STEP_WANT_AUTO = 0, STEP_WANT_NVTX = 1, STEP_WANT_TRACE = 2 };

struct step_detect_opts {
	int want;                /* step_want */
	const char *range_name;  /* --step-range NAME (NULL: the built-in names) */
};

/* An NVTX step (step_plan_step) */
struct step_def {
	uint64_t s, e;
	uint32_t range_id;       /* attribution range id */
	int64_t number;          /* the number in its name, -1 if none */
};

struct step_plan {
	uint32_t pid;
	int method;              /* step_method */
	char what[256];          /* how the steps were defined, or why none (one line) */
	/* STEP_NVTX */
	char *group;             /* the group's name ("step" for "step <N>") */
	const struct attribution *a; /* the ranges' (step_detect_plan_ranges') */
	uint32_t *range_ids; size_t nsteps; /* the steps' ranges, in time order: 4
				  * bytes a step, the rest is read from a */
	size_t overlapping;      /* ranges of the group left out: they overlap an earlier one */
	/* STEP_TRACE */
	uint64_t marker;         /* signature of the operation that starts each step */
	uint64_t marker_after;   /* not 0: only where the copy or memset before it on its
				  * stream had this signature (step_marker_at) */
	size_t period_ops;       /* operations in the most common step */
	int sizeless;            /* marker and marker_after without the copy's or memset's
				  * size (step_sig_sizeless): no step ran alike with them */
	int input_copy;          /* the marker is a host-to-device copy (the step's input):
				  * the host loads the next batch at the end of a step */
};

struct step_detect;

struct step_detect *step_detect_new(gp_reader *r, const struct step_detect_opts *opts);
void step_detect_free(struct step_detect *d); /* NULL ok */
/* KERNEL, MEMCPY and MEMSET records of pid (others ignored). */
void step_detect_gpu(struct step_detect *d, uint32_t pid, const gp_record *rec);
/* The plans, per process that has GPU operations or NVTX ranges, in two
 * halves (a caller may read the sample after the ranges: the pre-pass in
 * slices): step_detect_proc gives a process its place in the plans' order
 * (that of its first GPU record; step_detect_gpu gives it one too);
 * step_detect_plan_ranges makes the plans of the NVTX ranges;
 * step_detect_sample_wanted says whether pid's plan is made from its
 * sample (then *room: how many more operations the sample takes);
 * step_detect_plan_samples makes those plans and returns 0, or -1 when
 * range_name was given and no process has such a range (the message is in
 * *err, static). */
void step_detect_proc(struct step_detect *d, uint32_t pid);
void step_detect_plan_ranges(struct step_detect *d, const struct attribution *a);
int step_detect_sample_wanted(const struct step_detect *d, uint32_t pid, size_t *room);
int step_detect_plan_samples(struct step_detect *d, const char **err);
size_t step_detect_nplans(const struct step_detect *d);
const struct step_plan *step_detect_plan(const struct step_detect *d, size_t i);
/* Step k (< nsteps) of an NVTX plan. */
/* a: pl's index, or a view of it (attribution_view) on a thread that is
 * not the one that made the plan: the index's reads go through the
 * querying view's own cache, which threads must not share. */
struct step_def step_plan_step(const struct step_plan *pl, const struct attribution *a, size_t k);

/* Signature of a GPU operation for the trace method: the kernel name id; for
 * a memcpy its direction (gp_copy_kind) and size, for a memset its size (a
 * step copies the same batch every time: its input copy is one operation). */
uint64_t step_sig(int op_kind, uint32_t name_id, uint32_t copy_kind, uint64_t bytes);
/* A copy's or memset's signature (the ops a marker's context is made of) */
int step_sig_is_marker(uint64_t sig);
/* sig without a copy's or memset's size (a kernel's as it is): how a plan
 * with step_plan.sizeless compares */
uint64_t step_sig_sizeless(uint64_t sig);
/* The stream of an operation, as the trace method's context keys it */
uint64_t step_stream_key(uint32_t device, uint32_t stream);
/* Per stream, the signature of its last copy or memset (a marker's context:
 * step_plan.marker_after).  step_stream_last: stream q's of v[0 .. *n),
 * made (0: none yet) when new. */
struct step_stream_last { uint64_t q, sig; };
uint64_t *step_stream_last(struct step_stream_last **v, size_t *n, size_t *cap, uint64_t q);
/* The pattern of a numbered name, '*' for its number: "step 12" -> "step *",
 * "ProfilerStep#7" -> "ProfilerStep#*"; NULL when step_detect.c's
 * step_name_split finds no number.  malloc'd. */
char *step_name_pattern(const char *name);

#endif
