/* stats_report.h — what a `gpuprof stats` report is: a component with
 * new / add (each record it asked for) / op (each GPU operation joined to
 * its launch call, if it asked) / fill (its tables) / free, described by one
 * struct stats_report; the context the driver (stats_drive.h) shares with
 * every report; and the one list of reports (registry.c).
 *
 * The driver streams the trace in time order.  When a report it runs
 * declares a need for the NVTX ranges or the steps (`needs`), it first reads
 * the trace once for them (the pre-pass: a push/pop range is written when it
 * is popped, after the calls inside it, so the ranges must all be known
 * before a call is attributed), then rewinds; otherwise it reads the trace
 * once.  In the main pass every record first feeds the context's shared
 * analyses (below) that some report of the run needs, then goes to the
 * add() of each report of the run whose `types` has its type; records timed
 * outside the selection (--since/--until) go nowhere.  The reports of the
 * run: those --report names, or without it every report that may be in the
 * default set.  At the end the driver finishes the shared analyses, then
 * calls fill() of each report that has a table to print, in list order; the
 * reports do not depend on each other.
 *
 * Shards (`--threads N`, N > 1, reports/stats_shards.h, docs/CLI.md
 * "Threads"): a report runs on K threads, one slice of the trace's time
 * each, when it can merge (`merge`, or no record feeds its state), needs of
 * the context only what the shards compute (stats_report_shardable) and
 * takes no records without a time unless every slice reads them (format
 * 1.4).  Its states are merged in time order, the joins first, so op() and
 * call() may see an operation after later ones.  The other reports run in
 * the one pass on the driver's thread, beside the shards.
 *
 * Adding a report: one file here defining
 * `const struct stats_report stats_report_NAME`, and NAME in registry.c. */
#ifndef GPUPROF_REPORTS_STATS_REPORT_H
#define GPUPROF_REPORTS_STATS_REPORT_H

#include <stdint.h>

#include "gp_trace.h"
#include "analysis/join/attribution.h"
#include "analysis/gpu/counters.h"
#include "analysis/gpu/devprops.h"
#include "analysis/layers/graph_sites.h"
#include "analysis/gpu/gpu_activity.h"
#include "analysis/gpu/kernel_names.h"
#include "analysis/gpu/kernel_shapes.h"
#include "analysis/join/opjoin.h"
#include "analysis/steps/selection.h"
#include "analysis/stacks/site_rule.h"
#include "analysis/stacks/stacks.h"
#include "analysis/steps/step_detect.h"
#include "analysis/steps/steps.h"
#include "analysis/steps/steps_pipe.h"
#include "analysis/steps/steps_slice.h"
#include "analysis/gpu/windows.h"
#include "common/report.h"

/* What a report needs of the context beyond its records (struct
 * stats_report.needs, bits): the context computes only what some report of
 * the run needs (windows and device properties always). */
enum stats_need {
	STATS_NEED_RANGES = 1,  /* ctx->pipe.attr: every NVTX range of the trace, indexed (pre-pass) */
	STATS_NEED_OPS = 2,     /* op(), call(): GPU operations joined to their launch call */
	STATS_NEED_STEPS = 4,   /* ctx->pipe.steps: the steps analysis (pre-pass; implies both above) */
	STATS_NEED_SPAN = 8,    /* ctx->span: the time span reports measure in (util): the steps'
				 * (STATS_NEED_STEPS) unless a selection or --whole-trace is given */
	STATS_NEED_GPU = 16,    /* ctx->gpu: busy intervals, kernels per window */
	STATS_NEED_SHAPES = 32, /* ctx->kn, ctx->shapes: kernel names and launch shapes */
	STATS_NEED_COUNTERS = 64, /* ctx->cnt: sampled counters */
	STATS_NEED_PREJOIN = 128, /* the pre-pass makes what the shards' joins read: the GPU-activity
				   * windows (ctx->pipe.win) and where CUDA graphs were captured (ctx->graphs) */
	STATS_NEED_STEPS_SLICED = 256, /* with STATS_NEED_STEPS: the steps' second pass runs in the
					* shards (analysis/steps/steps_slice.h); the pre-pass makes the plans and
					* ctx->pipe.steps, which the shards' merge fills, and the main pass
					* feeds it nothing */
	STATS_NEED_STACKS = 512, /* ctx->stacks: the recorded call stacks, with --site's rule */
};
/* What a context of a shard can always compute: analyses that merge over
 * slices of time (kernel shapes, counters); stats_shard_needs adds the
 * busy intervals and the span where it can */
#define STATS_SHARD_NEEDS (STATS_NEED_SHAPES | STATS_NEED_COUNTERS)
/* What a shard's context gets from the caller's pre-pass, read only: the
 * NVTX ranges (a view of the index), the windows its join asks and the
 * graphs' capture sites; so a report that needs the join and the ranges
 * can run in shards too (each slice joins its own records; the joins merge
 * at the cuts, opjoin.h) */
#define STATS_SHARD_JOIN_NEEDS (STATS_NEED_RANGES | STATS_NEED_OPS)

/* Options of the shared analyses, parsed by the driver (docs/CLI.md,
 * docs/STEPS.md).  Zero-initialised = the defaults. */
struct stats_opts {
	enum attr_rule rule;            /* --attribution (default any-thread) */
	struct step_detect_opts detect; /* --method, --step-range */
	uint64_t kernel_wait_ns;        /* --kernel-wait (0: STEP_KERNEL_WAIT_NS) */
	int keep_warmup;                /* --keep-warmup */
	int verbose;                    /* --verbose: the steps' memory figures on stderr */
	int nvtx_instances;             /* --nvtx-instances: numbered NVTX names not grouped */
	int whole_trace;                /* --whole-trace: the span reports over the whole trace */
	int by_process;                 /* --by: STATS_BY_AUTO (0), STATS_BY_PROCESS, STATS_BY_NONE */
	struct site_rule site;          /* --site: launch_sites' site (default user) */
};

/* --by: per-process rows in the nvtx table (the steps, comm and comm_steps
 * tables always have a PID column) */
enum { STATS_BY_AUTO = 0, STATS_BY_PROCESS = 1, STATS_BY_NONE = 2 };

/* An engine fed every API and GPU record of the pass beside the steps'
 * (advise's facts, reports/advise_drive.h), set by the pre-pass hook's
 * ready: with the steps in slices, the steps' engine of each slice, which
 * also makes them (make with steps, on the slice's thread, over its reader
 * of the steps' window; merge also merges the steps into ctx->pipe.steps
 * and the join's counts, as steps_slice_merge: 0, or -1 when a trace read
 * again met damage), else one over the whole pass beside the steps here
 * (cuts of one slice, on the pass's thread).  merge takes the ended
 * engines (and frees them). */
struct stats_part {
	void *arg;
	struct cut_slice *(*make)(void *arg, gp_reader *r, const struct steps_cuts *cuts, int ix, int steps);
	int (*merge)(void *arg, struct cut_slice **e, const struct steps_cuts *cuts, const char *path,
		     struct opjoin_counts *counts, struct steps_slice_merged *how);
};

/* Shared by the driver and every report.  Reports read it; only
 * the stats_ctx_* functions write it. */
struct stats_ctx {
	gp_reader *r;
	const struct stats_opts *opts;
	uint32_t needs;         /* stats_need: what the reports run need */
	uint64_t base;          /* trace start (header start_trace_ns) */
	uint64_t out_base;      /* what times in the output count from: base, or 0 (--abs-time) */
	const struct selection *sel; /* timed records starting outside it are dropped */
	/* The form of kernel names in a Name column (--names; CSV and JSON:
	 * always NAME_FULL, with the mangled name in a column of its own). */
	enum name_form names;
	/* shared analyses: complete after stats_ctx_finish */
	uint64_t last;          /* latest end of any timed record, dropped ones included */
	struct devprops dev;    /* device properties */
	struct kernel_names kn; /* demangled kernel names (for shapes) */
	struct kshapes shapes;  /* kernels by name and launch shape; occupancy */
	struct gpu_activity gpu;/* busy intervals per device and stream */
	struct counters cnt;    /* sampled counters */
	/* The steps pipeline (analysis/steps/steps_pipe.h) over every record,
	 * selected or not: complete after stats_ctx_finish.
	 * pipe.win: the GPU-activity windows, clipped to [since, until);
	 * pipe.attr (STATS_NEED_RANGES): the NVTX ranges of the whole trace,
	 * indexed for analysis/join/attribution.h; NULL otherwise;
	 * pipe.detect, pipe.steps (STATS_NEED_STEPS): where the steps are
	 * (pre-pass) and the steps analysis; NULL otherwise;
	 * pipe.join (STATS_NEED_OPS): the correlation-id join every record goes
	 * through; each joined operation goes to the steps, then to on_op, each
	 * launch call leaving it to on_call (the driver's: op() and call() of
	 * the reports) */
	struct steps_pipe pipe;
	/* STATS_NEED_OPS: where CUDA graph nodes were captured
	 * (analysis/layers/graph_sites.h), from every API and GRAPH_NODE record,
	 * selected or not: a graph is captured once, before its launches */
	struct graph_sites *graphs;
	/* STATS_NEED_STACKS: the call stacks (analysis/stacks/stacks.h) from
	 * the MODULE, STACK, THREAD and SOURCE records, one table for the
	 * reports that read them (launch_sites, layers, memory_steps): metadata,
	 * all delivered before the first timed record.  Shards: every slice
	 * reads them (stats_shard_needs), and a context that read none takes a
	 * slice's at the merge (stacks_adopt), the pointer unchanged. */
	struct stacks *stacks;
	int graphs_pre;         /* graphs made by the pre-pass (STATS_NEED_PREJOIN), or the
				 * driver's in a shard: complete, not fed again */
	int graphs_shared;      /* the driver's (stats_ctx_slice): not freed here */
	void (*on_op)(void *arg, const struct gpu_op *op);
	void (*on_call)(void *arg, const struct launch_call *c);
	void *on_arg;
	uint64_t join_from;     /* a shard's: where its slice starts (opjoin_opts.slice_from; stats_ctx_slice):
				 * > 0 after the first slice (its streaming unions keep their heads for
				 * the merge, intervals.h) */
	/* STATS_NEED_SPAN (stats_ctx_finish): per process, the time the span
	 * reports measure in, when not the whole trace: the counted steps (from
	 * the first one's start to the last one's end; default, when the trace
	 * has steps) or the selection of --steps/--range.  Empty: from the first
	 * to the last GPU operation (or the GPU-activity windows) as before. */
	struct winset span;
	struct span_of { uint32_t pid; char what[288]; } *span_of;
	size_t nspan_of, cspan_of;
	int prepassed;          /* the pre-pass ran (windows came from it) */
	int gpu_later;          /* gpu is fed by a pass of its own once the span is known */
	u64map rank_of;         /* pid -> rank + 1, from GP_REC_PROCESS (complete before any timed record) */
	/* set by the driver while a report's new() runs in shards: the board
	 * its summary shares with the other slices' (analysis/core/summary.h);
	 * NULL otherwise */
	struct summary_board *board;
	size_t union_lag;       /* the streaming unions' lag (0: each one's default);
				 * set from GPUPROF_UNION_LAG, for tests */
	/* Shards: a merge at a cut could not give the one-pass figures (a
	 * streaming union whose interval runs past the next slice's head):
	 * the driver reads the trace again on one thread */
	int merge_lost;
	/* Shards: the GPU intervals summed at GPU_ACTIVITY_LAG_BINS could not
	 * merge exactly at a cut: stats_ctx_finish sums them again
	 * (analysis/gpu/gpu_activity.h) */
	int gpu_redo;
	/* STATS_NEED_STEPS_SLICED: the counts of the steps' join (for
	 * --verbose), summed over the slices by the merge */
	struct opjoin_counts steps_counts;
	/* STATS_NEED_STEPS_SLICED: what the pre-pass notes for the steps'
	 * engines (set by the driver, its own; analysis/steps/steps_slice.h) */
	struct steps_prefix *steps_prefix;
	/* Set by the driver: the deferred pass over the GPU operations
	 * (gpu_later) in slices of time (stats_shards.h
	 * stats_shards_gpu_pass, filling ctx->gpu as the serial pass would;
	 * where it cannot, the serial pass runs); NULL: the serial pass */
	struct stats_gpu_pass *gpu_slices;
	const struct stats_part *part; /* NULL: none */
};

/* A record as the driver hands it to add(): with its process and thread.
 * pid: the record's process (for GP_REC_PROCESS the process it describes);
 * tid: the thread of the record's source (0 for GP_REC_PROCESS; API and
 * NVTX records may name their own thread, which takes precedence). */
struct stats_rec {
	const gp_record *rec;
	uint32_t pid, tid;
};

/* One table a report prints: its --report name (also its JSON key and CSV
 * "# NAME" line) and its --help text (lines after the first are indented by
 * the help printer).  Selecting a report's first table selects all of its
 * tables, but those in its report's by_name: they are printed only when
 * named (or asked for by an option of the driver, as --per-step). */
struct stats_table { const char *name, *help; };

#define STATS_TYPE(t) (1u << (t))

struct stats_report {
	const struct stats_table *tables;
	int ntables;
	uint32_t types;  /* STATS_TYPE(GP_REC_...) | ...: the records add() gets */
	uint32_t needs;  /* stats_need bits */
	uint32_t by_name;/* bit j: tables[j] is printed only when named; bit 0: the report
			  * runs only when one of its tables is named */
	/* The report's state; NULL (the function or its result) for a report
	 * that only reads the context. */
	void *(*new)(const struct stats_ctx *ctx);
	void (*add)(void *self, const struct stats_ctx *ctx, const struct stats_rec *r);
	/* STATS_NEED_OPS: every GPU operation of the trace (selected or not:
	 * a report that attributes work to ranges or steps decides by those),
	 * joined to its launch call (analysis/join/opjoin.h), once, in no particular
	 * order; NULL for none. */
	void (*op)(void *self, const struct stats_ctx *ctx, const struct gpu_op *op);
	/* STATS_NEED_OPS: every launch call of the trace as it leaves the join
	 * (its operations delivered), once; NULL for none. */
	void (*call)(void *self, const struct stats_ctx *ctx, const struct launch_call *c);
	/* Shards (above): adds the state of the next slice of time, src, to
	 * self (which has every record before src's); src is freed after.
	 * 0, or -1 when the merged figures could not be those of one pass
	 * (the driver then reads the trace again on one thread).  NULL: the
	 * report does not run in shards, unless no record feeds its state (no
	 * add, op or call: its figures are the context's, merged with it). */
	int (*merge)(void *self, void *src, const struct stats_ctx *ctx);
	/* Whether it is in the default set (no --report); NULL: always. */
	int (*in_default)(void *self, const struct stats_ctx *ctx);
	/* Fills tables[0 .. ntables): each arrives with its name set (report.h:
	 * report_init); fill gives it title and columns (report_define) and
	 * rows.  Titles and notes may point into self: printed before free. */
	void (*fill)(void *self, struct stats_ctx *ctx, struct report *tables);
	void (*free)(void *self);
};

/* Whether a record timed t is in the selection (--since/--until, --steps,
 * --range): the records add() gets are; op() and ctx->pipe.attr hand out the
 * others too. */
static inline int stats_selected(const struct stats_ctx *ctx, uint64_t t)
{
	return selection_has(ctx->sel, t);
}

/* What the span of pid is, for titles and a column ("steps 2..54
 * (warm-up left out)", "selection: ..."); NULL: the whole trace. */
const char *stats_span_of(const struct stats_ctx *ctx, uint32_t pid);

/* Every report, in output order; NULL-terminated (registry.c). */
extern const struct stats_report *const stats_reports[];

/* The context: start (reader, options, what the reports need, the
 * selection resolved against the trace, whether times are absolute), the
 * pre-pass when stats_ctx_prepass says so (every record, then finish), every
 * record of the main pass, finish, free. */
void stats_ctx_init(struct stats_ctx *ctx, gp_reader *r, const struct stats_opts *opts, uint32_t needs,
		    const struct selection *sel, int abs_time);
int stats_ctx_prepass(const struct stats_ctx *ctx);
void stats_ctx_pre_add(struct stats_ctx *ctx, const gp_record *rec);
/* 0, or -1 with a message in *err (static): --step-range names no range.
 * sample: NULL, or for a pre-pass whose step detection got no GPU records
 * (stats_prepass_shards.h): between the plans of the ranges and those of
 * the samples, sample(ctx, arg) feeds step_detect_gpu the operations the
 * samples want (step_detect_sample_wanted). */
int stats_ctx_pre_finish(struct stats_ctx *ctx, void (*sample)(struct stats_ctx *ctx, void *arg), void *arg,
			 const char **err);
/* Feeds the shared analyses; returns whether the record goes to the
 * reports, with *out filled. */
int stats_ctx_add(struct stats_ctx *ctx, const gp_record *rec, struct stats_rec *out);
void stats_ctx_finish(struct stats_ctx *ctx);
/* Shards: adds the analyses of src, the context of the next slice of time
 * (STATS_SHARD_NEEDS, the latest record, the join: opjoin_merge, which
 * delivers through ctx's on_op and on_call), to ctx, before
 * stats_ctx_finish; with meta (ctx did not read the whole trace itself),
 * src's metadata too: processes' ranks, device properties.  src is left
 * emptied of the analyses. */
void stats_ctx_merge(struct stats_ctx *ctx, struct stats_ctx *src, int meta);
/* Shards: ctx (stats_ctx_init here, with main's options, selection, time
 * base, form of names and busy bins) reads with r the records of a slice of
 * time that starts at from (its join's opts.slice_from; after the first
 * slice, its streaming unions keep their heads), computing needs but the
 * ranges; with STATS_SHARD_JOIN_NEEDS, it gets main's NVTX ranges (a view
 * of its index, attribution_view), graphs' capture sites and GPU-activity
 * windows (a copy) from main's pre-pass, which must not change while the
 * slice reads. */
void stats_ctx_slice(struct stats_ctx *ctx, gp_reader *r, const struct stats_ctx *main, uint32_t needs, uint64_t from);
/* The record of a pass over the GPU operations (gpu_later) into g, which
 * the pass clips: a process record's settings, a selected GPU operation's
 * interval. */
void stats_ctx_gpu_feed(const struct stats_ctx *ctx, struct gpu_activity *g, gp_reader *r, const gp_record *rec);
/* Shards: the join of the last merged slice reaches the end of the trace
 * (opjoin_finish, delivering through on_op and on_call) and goes. */
void stats_ctx_end_join(struct stats_ctx *ctx);

/* The fan-out, written once (stats_drive.c's pass, each slice of
 * stats_shards.c): the reports run[i] of the list, their states self[i],
 * as the consumers of a context.
 * stats_fanout_attach makes them the context's on_op and on_call (f must
 * outlive the pass); stats_fanout_add passes a record through the context
 * to the add() of those that take its type (0: the context dropped it). */
struct stats_fanout { struct stats_ctx *ctx; void **self; const int *run; };
void stats_fanout_attach(struct stats_fanout *f, struct stats_ctx *ctx, void **self, const int *run);
int stats_fanout_add(const struct stats_fanout *f, const gp_record *rec);
/* The rank of process pid (its GP_REC_PROCESS record), -1 for none. */
int stats_ctx_rank(const struct stats_ctx *ctx, uint32_t pid);
void stats_ctx_free(struct stats_ctx *ctx);

#endif
