/* stats_shards.h — the reports of `gpuprof stats --threads N` that run in
 * shards (stats_report.h says which), on K threads at once, and the pass
 * over the GPU operations that util's span of the steps defers to the end
 * (stats_shards_gpu_pass); docs/CLI.md "Threads" says what the user sees.
 *
 * Each slice of the slice runner (analysis/core/slices.h) hands the records
 * timed in it to a context and report states of its own, and its metadata
 * records to its context (and to the reports that take them on a trace
 * whose metadata every slice reads: gp_reader_meta_apart).  The states merge
 * in time order, the joins first (opjoin_merge); the caller merges slice
 * 0's into its own.  The summaries of the slices share one limit of exact
 * values per report (analysis/core/summary.h).  A damaged trace is not cut:
 * stats_shards_finish says so and the caller reads it on one thread. */
#ifndef GPUPROF_REPORTS_STATS_SHARDS_H
#define GPUPROF_REPORTS_STATS_SHARDS_H

#include <stddef.h>

#include "analysis/core/slices.h"
#include "reports/stats_report.h"

struct stats_shards;

/* The decoding threads the driver's own reader keeps while shards run (its
 * pre-pass and the pass of the other reports; the slices decode their own
 * chunks): a few, not N — each holds ~3 chunks of records (~65 MiB more at
 * N = 16 on the 1e7 trace), and the GPU machine's reader scaled only to 4
 * (docs/PERFORMANCE.md "Offline tool"). */
#define STATS_DRIVER_THREADS 4

/* The analyses of the context that shards compute (stats_report.h
 * stats_need bits) for a run whose reports need run_needs, with these
 * options and selection on the trace r reads: STATS_SHARD_NEEDS; the steps'
 * second pass (STATS_NEED_STEPS_SLICED) when the run needs the steps; the busy
 * intervals (STATS_NEED_GPU, merged at the cuts: gpu_activity_merge) on a
 * trace whose metadata every slice reads, unless they are clipped to the
 * steps' span (then stats_shards_gpu_pass); the span (made by the driver
 * at the end) unless it is the steps'. */
uint32_t stats_shard_needs(gp_reader *r, const struct stats_opts *so, const struct selection *sel, uint32_t run_needs);
/* What the caller makes at the end from what the shards merged, for the
 * reports in shards (with shard_needs from stats_shard_needs): with
 * STATS_NEED_STEPS_SLICED, the steps (whose second pass runs in the
 * shards: analysis/steps/steps_slice.h; the caller's pre-pass makes their
 * plans), their span, and the busy intervals clipped to it (a pass of
 * their own: stats_shards_gpu_pass). */
uint32_t stats_shard_end_needs(uint32_t shard_needs);
/* Whether report rep can run in shards over the trace r reads, the
 * shards computing shard_needs (stats_shard_needs). */
int stats_report_shardable(const struct stats_report *rep, gp_reader *r, uint32_t shard_needs);
/* Starts k threads (slices_count) over the trace at path, running
 * the reports i with run[i] (nreps, the list's order; maybe none), their
 * contexts computing the analyses `needs` (STATS_SHARD_NEEDS bits, for
 * every report of the run: the caller's context does not compute them;
 * STATS_SHARD_JOIN_NEEDS bits of the reports run here: ctx's pre-pass has
 * run, and its ranges and windows stay as they are until
 * stats_shards_finish), with ctx's options, selection and form of names (a
 * slice whose thread cannot be made is read on the caller's, before this
 * returns).  NULL: no time range. */
struct stats_shards *stats_shards_start(const struct stats_ctx *ctx, const char *path, int k,
					const int *run, size_t nreps, uint32_t needs);
/* What the shards took (--verbose): the seconds of the merges on the
 * caller's thread (the slices' own merges overlap their reading), the
 * records all slices read, and the CPU seconds the slices' threads took to
 * read them, their sum and the largest (what K cores would take is about
 * the largest; the sum against one thread's is what cutting costs). */
struct stats_shards_times { double merge, cpu_sum, cpu_max; uint64_t records; };
/* Waits for the threads; then, when every slice was read whole, merges the
 * slices into ctx (stats_ctx_merge; meta: ctx read no records itself) and
 * into self[i] (made here with new(ctx)) of each report run, and returns
 * 0; else -1 (damage: nothing merged, self untouched).  *t set. */
int stats_shards_finish(struct stats_shards *sh, struct stats_ctx *ctx, int meta, void **self,
			struct stats_shards_times *t);
void stats_shards_free(struct stats_shards *sh);

/* The deferred pass over the GPU operations (stats_ctx.gpu_slices): k
 * slices of time on k threads, merged in time order into ctx->gpu (gpu_activity_merge); -1 when a slice met damage or
 * a merge could not be exact (ctx->gpu is then incomplete: the serial
 * pass starts it again). */
struct stats_gpu_pass {
	const char *path;
	int k;
	double cpu_sum, cpu_max; /* set: the slices' CPU seconds, their sum and the largest */
};
int stats_shards_gpu_pass(struct stats_ctx *ctx, const struct winset *clip, struct stats_gpu_pass *p);

#endif
