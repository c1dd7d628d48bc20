/* advise_facts.h — what `gpuprof advise` measures on a trace whose steps the
 * steps analysis has found (docs/ADVISE.md "What is measured"): per process,
 * per counted step and per call site, the causes of lost step time and the
 * figures each rule of advise.c judges: in the pass of the steps, beside
 * them (adv_facts_opts.beside), or in a third pass after them.
 *
 * Two inputs besides the trace:
 *  - struct adv_pre, filled during the first pass (the one that reads the
 *    NVTX ranges): device properties, sampled counters (PM sampling's pm.*),
 *    call stacks, and the bandwidth of the pinned copies;
 *  - the finished steps analysis (steps.h), whose rows say where each step
 *    lies and, once summarised (step_summary.h, done here), which steps are
 *    warm-up and which are counted.
 *
 * The component (init/consume/finalize): adv_facts_new, then the trace in
 * time order — each API record through adv_facts_api, each GPU record through
 * adv_facts_gpu, both before the same record goes to the launch join
 * (opjoin.h), whose callback is adv_facts_op — with adv_facts_advance after
 * each record, then adv_facts_drain and adv_facts_summarize.
 *
 * How the sweep classifies idle time and hands it to causes, when GPU-side
 * savings count, and what it holds: docs/ADVISE.md "What is measured". */
#ifndef GPUPROF_ANALYSIS_ADVISE_ADVISE_FACTS_H
#define GPUPROF_ANALYSIS_ADVISE_ADVISE_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gpu/counters.h"
#include "analysis/gpu/devprops.h"
#include "analysis/memory/mem_view.h"
#include "analysis/join/opjoin.h"
#include "analysis/stacks/stacks.h"
#include "analysis/steps/step_summary.h"
#include "analysis/steps/steps.h"
#include "analysis/steps/steps_slice.h"
#include "common/util.h"
#include "gp_trace.h"

/* What a measured cost is attributed to; each rule of advise.c judges one
 * or two of them. */
enum adv_cause {
	AC_INPUT,      /* GPU idle in a step before its first launch call; where the
			* steps start at their input copy (adv_input_at_end), after its
			* last launch until the next step's copy */
	AC_SYNC,       /* *Synchronize calls; blocking device-to-host copies */
	AC_PAGEABLE,   /* async copies from/to pageable host memory (run synchronously) */
	AC_SYNC_COPY,  /* synchronous memcpy (not small HtoD) / memset on pinned or managed memory */
	AC_ALLOC,      /* cudaMalloc/cudaFree and the like (not the stream-ordered *Async ones) */
	AC_HOST_IDLE,  /* host-side GPU idle after a step's first launch call */
	AC_FP32,       /* FP32 matrix kernels (no tensor cores) */
	AC_UNDERPAR,   /* kernels whose grid has fewer blocks than the device has SMs */
	AC_LOWOCC,     /* kernels covering every SM at a theoretical occupancy below 25 % */
	AC_SHORT,      /* kernels shorter than their launch call (where launch-bound launches from) */
	AC_COUNT
};

#define ADV_SMALL_HTOD_BYTES 65536ull   /* nsys cuda_memcpy_sync: smaller HtoD sync copies are left out */
#define ADV_PINNED_BW_MIN_BYTES 1048576ull /* copies used to measure the pinned bandwidth */
#define ADV_LOWOCC_MAX 0.25             /* theoretical occupancy below this: low */
#define ADV_HOLD_NS 5000000000ull       /* the longest lag waited for */

/* Collected during the first pass: zero-initialised plus adv_pre_init. */
struct adv_pre {
	gp_reader *r;
	struct devprops dp;
	struct counters ctr;
	struct stacks *stk;
	/* pinned copies of >= ADV_PINNED_BW_MIN_BYTES: [0] HtoD, [1] DtoH */
	uint64_t pinned_bytes[2], pinned_ns[2];
	u64map rank;             /* pid -> rank + 2 (process records) */
	struct mem_view *mem;    /* device memory and failed allocations (out-of-memory) */
	uint64_t n;              /* records added */
	int meta;                /* a device, process, module, stack, thread or source record came */
};
/* r: the reader the stacks and the memory view name things through. */
void adv_pre_init(struct adv_pre *pre, gp_reader *r);
/* Any record of the first pass, read through r (device, counter, module,
 * stack, thread, source and memcpy records are used; API and memory
 * records go to the memory view). */
void adv_pre_add(struct adv_pre *pre, gp_reader *r, const gp_record *rec);
/* Adds src, the records of the next slice of time, to dst (what one read
 * makes; src left to free); dst empty: it takes src whole.  0, or -1 when
 * it could not be one read's: src holds metadata (devices, processes,
 * stacks: the first slice's only), or mem_view_merge's -1. */
int adv_pre_merge(struct adv_pre *dst, struct adv_pre *src);
/* After the first pass. */
void adv_pre_finish(struct adv_pre *pre);
void adv_pre_free(struct adv_pre *pre);

/* Counts and times over a set of steps; saving_ns: the estimate (see each
 * cause in docs/ADVISE.md). */
struct adv_tally { uint64_t count, cost_ns, saving_ns; };
/* A cause outside the counted steps: its tally, the time range of its uses
 * (0: none), and how many of them lie before the first step. */
struct adv_out { struct adv_tally t; uint64_t first, last, before; };

/* One place a cause was seen: a call site (with stacks), else an API call or
 * kernel name, within a phase. */
struct adv_group {
	enum adv_cause cause;
	const char *label;       /* "train.py:57 step", "cudaStreamSynchronize", "sgemm_128x64" */
	const char *name;        /* API name (calls) or demangled kernel name (kernels), "" none */
	int after_site;          /* label is the site of the launch before the call (the call had no stack) */
	int has_site;            /* label is a call site from a stack (else it is `name`) */
	int dataloader;          /* input: the stack holds DataLoader frames (torch/utils/data/) */
	uint32_t phase;          /* attribution name id + 1 of the step phase; 0 none */
	uint32_t stack_id, pid, tid; /* an example stack (0: none) */
	struct adv_tally in;     /* counted steps */
	uint64_t out_count;      /* elsewhere */
	uint64_t bytes;          /* copies: bytes, counted steps */
	uint64_t blocks_min, blocks_max; /* kernels: grid blocks seen */
	uint32_t threads;        /* kernels: threads per block */
	double occ;              /* kernels: theoretical occupancy (-1 unknown) */
	double pm_ns, pm_w;      /* kernel ns with PM samples inside, and that x the sample mean (fraction) */
};

/* A step's figures (those of the steps' row of the same place) */
struct adv_step {
	uint64_t cost[AC_COUNT];         /* per cause */
	uint64_t first_launch, last_launch; /* of its launch calls (UINT64_MAX / 0: none) */
	uint32_t kernels;                /* kernels launched in it */
};

/* Facts of one process. */
struct adv_proc {
	uint32_t pid;
	int32_t rank;                    /* from its process record, -1 none */
	struct steps_proc *sp;           /* rows (warm-up/outlier flags set) */
	struct step_summary sum;         /* step_summarize(sp, 0) */
	const gp_rec_device *dev;        /* its first device record, NULL none */
	size_t ncounted;
	uint64_t wall;                   /* sum of the counted steps' times */
	uint64_t busy;                   /* compute + comm + memory over the counted steps */
	struct adv_tally in[AC_COUNT];   /* counted steps */
	struct adv_out out[AC_COUNT];    /* elsewhere: warm-up steps, between or outside the steps */
	/* struct adv_step per row (a slice's engine: from its first, advise_facts.c
	 * row0), spilled past a few MiB (common/spill.h) */
	struct spill *steps;
	struct adv_group *groups; size_t ngroups;
	/* launched work in the counted steps */
	uint64_t kernels, short_kernels; /* short: GPU duration < launch call duration (the call recorded) */
	uint64_t kernels_called;         /* kernels with a recorded launch call */
	uint64_t short_hta;              /* HTA's short: also a call of <= 50 us */
	uint64_t launches;               /* GPU operations with a recorded launch call */
	uint64_t launched_ns;            /* their GPU time (kernels, copies, sets) */
	uint64_t kernel_ns_all;          /* kernel time of the process, in steps or not */
	uint64_t kernel_ns_in_steps;     /* of it, launched in a step (counted, warm-up or not counted) */
	uint64_t pre_launch_ns;          /* sum over steps of (first launch call - step start) */
	uint64_t post_launch_ns;         /* sum over steps of (step end - last launch call end) */
	uint64_t issue_ns;               /* sum over steps of (last launch call end - first launch call start) */
	uint64_t graph_floor_ns;         /* median gap between an operation and queued work behind it */
	int floor_measured;              /* 0: none seen, ADV_GRAPH_FLOOR_NS assumed */
	uint64_t gpu_side_discarded_ns;  /* GPU-side savings left out: the host was the bottleneck then */
	double fp32_speedup;             /* assumed for this process's device */
	double pinned_gbps[2];           /* HtoD, DtoH pinned bandwidth (GB/s): measured, else the host
					    link's (hostlink.h); 0 neither */
	int pinned_from_link[2];         /* pinned_gbps is the host link's, not measured */
	const char *device_name;         /* of dev, "" none */
	const char *link;                /* dev's host link (hostlink.h), NULL not in the table */
	uint64_t unexplained_idle_ns;    /* idle in the counted steps no cause took ("other" gaps) */
	uint64_t late_ops;               /* operations that arrived after the sweep had passed them */
	uint64_t held_max;               /* most operations + calls + busy-stretch entries held at once */
};
#define ADV_GRAPH_FLOOR_NS 1000ull

/* The steps start at their input copy (the trace method's, where no NVTX
 * range marks them): the host loads a batch after the step before has
 * issued its last work, so a step's input wait lies at its end. */
static inline int adv_input_at_end(const struct steps_proc *sp)
{
	return sp->plan && sp->plan->method == STEP_TRACE && sp->plan->input_copy;
}

/* The rows a process's steps will have (struct step_row: pid, index,
 * number, s, e, partial), known before the pass that makes them: the
 * trace method's, as a run before kept them (step_index.h).  rows sealed;
 * NULL: none known (NVTX steps have theirs from the plan). */
struct adv_rows { struct spill *rows; size_t n; };

struct adv_facts_opts {
	uint64_t kernel_wait_ns;         /* as steps_opts; 0: STEP_KERNEL_WAIT_NS */
	const struct attribution *a;     /* the NVTX index to ask (a view of st's, for a
					    slice's engine on a thread); NULL: st's */
	/* a slice's engine (advise_slice.h): no step summary of its own (the
	 * whole trace's facts, made before it, flagged the rows), its per-row
	 * figures from the row its lead-in starts in (lead: the lead-in's
	 * start; 0: the trace's) */
	int part;
	uint64_t lead;
	/* the steps not finished but running beside, fed the same records
	 * (their rows' places are the plan's: NVTX steps): counted is what
	 * the flags will be unless a step is partial or warm-up, and these
	 * GPU-activity windows say which are unrecorded; the whole trace's
	 * facts settle after the steps finish (adv_facts_settle).  NULL: the
	 * steps finished */
	const struct winset *beside;
	int direct;                      /* a part on the steps' own thread: their rows, no reader */
	/* with beside: per process (the steps' order), the rows its trace
	 * method's steps will have, read in their place until settle checks
	 * them against the steps' (NULL, or rows NULL: the steps' own) */
	const struct adv_rows *expect;
};

struct adv_facts;

/* st: steps_finish done; pre: adv_pre_finish done.  Both outlive the facts. */
struct adv_facts *adv_facts_new(gp_reader *r, struct steps *st, struct adv_pre *pre,
				const struct adv_facts_opts *opts);
void adv_facts_free(struct adv_facts *f); /* NULL ok */
void adv_facts_api(struct adv_facts *f, uint32_t pid, uint32_t tid, const gp_rec_api *a);
/* A KERNEL, MEMCPY or MEMSET record of pid (others ignored). */
void adv_facts_gpu(struct adv_facts *f, uint32_t pid, const gp_record *rec);
/* opjoin callback; ctx is the struct adv_facts */
void adv_facts_op(void *ctx, const struct gpu_op *op);
void adv_facts_advance(struct adv_facts *f, uint64_t now, uint64_t frontier);
/* The last sweep, then the figures over the steps (for a sum of slices:
 * adv_facts_take between the two). */
void adv_facts_drain(struct adv_facts *f);
/* Facts made with the steps beside (opts.beside), after steps_finish:
 * summarises the steps, then 0 when every step is counted as the facts
 * took it, or is a warm-up step among the first 64, whose figures as
 * counted are taken back (those of a step not counted put elsewhere); else
 * -1 (not the steps' figures: the caller makes the facts after the steps). */
int adv_facts_settle(struct adv_facts *f);
void adv_facts_summarize(struct adv_facts *f);

/* The engine of a slice of time (advise_slice.h): from one pass's longest
 * operation per process and longest call at cut c of pf (the slack of its
 * sweeps); the reader of its records; at its mark (its first own record)
 * its figures start from zero and its groups are made again at their
 * first use; its state (appended to b: what decides what it does from
 * here on — the operations, calls and busy stretch held, the sweep's
 * position, the threads' last calls that a record of lead or later may
 * continue, the first launches of the steps a gap may still reach);
 * adv_facts_take adds its figures since the mark (or the last take) to
 * sum's, its groups in the order of their first use, and marks it again.
 * Sums of integers, minima and maxima: exact in any cut. */
void adv_facts_reader(struct adv_facts *f, gp_reader *r);
void adv_facts_seed(struct adv_facts *f, const struct steps_prefix *pf, int c);
void adv_facts_mark(struct adv_facts *f);
void adv_facts_state(const struct adv_facts *f, struct bytes *b, uint64_t lead);
void adv_facts_take(struct adv_facts *sum, struct adv_facts *part);
/* Whether a slice's engine was asked for a row before its lead-in after
 * its mark (then its figures are not one pass's: the caller runs one
 * thread). */
int adv_facts_lost(const struct adv_facts *f);
size_t adv_facts_nprocs(const struct adv_facts *f);
const struct adv_proc *adv_facts_proc(const struct adv_facts *f, size_t i);
struct stacks *adv_facts_stacks(const struct adv_facts *f);
/* The first pass's memory view (finished without steps: its failures). */
const struct mem_view *adv_facts_mem(const struct adv_facts *f);
const struct attribution *adv_facts_attribution(const struct adv_facts *f);
uint64_t adv_facts_kernel_wait(const struct adv_facts *f);

#endif
