/* stats_prepass_shards.h — the pre-pass of `gpuprof stats --threads N`
 * (stats_report.h stats_ctx_prepass: the NVTX ranges, the GPU-activity
 * windows, the step detection) in K slices of time on K threads, merged
 * into exactly what the one-thread pre-pass makes (docs/CLI.md "Threads").
 *
 * What one thread makes depends on the order it reads the records in (range
 * ids, name numbers, a lane's kind, the step detection's processes and
 * sample).  The reader's time-ordered merge gives a record in the order of
 * the key (largest time of its source up to and including it, source,
 * chunk, place in the chunk), which each slice computes for its own records
 * (gp_reader.h gp_reader_record_chunk); the merge replays the slices'
 * ranges and windows into the context in key order and gives the step
 * detection its processes in the order of their first GPU operation.  The
 * trace method's sample is read after that on the caller's reader, only for
 * the processes that want it (step_detect_sample_wanted).  With
 * ctx->steps_prefix, each slice also keeps what the steps' prefix needs
 * (stats_prepass_prefix.h).
 *
 * Not cut (ctx untouched: the caller runs the one-thread pre-pass): damage
 * in a slice; a slice's keys did not rise; a range, window or GPU
 * operation without a time; CUDA graph nodes when the capture sites are
 * wanted (STATS_NEED_PREJOIN); a steps' cut at time 0. */
#ifndef GPUPROF_REPORTS_STATS_PREPASS_SHARDS_H
#define GPUPROF_REPORTS_STATS_PREPASS_SHARDS_H

#include <stdio.h>

#include "reports/stats_report.h"

/* The slices' CPU seconds (for --verbose): their count, sum and largest;
 * and the caller's thread's (the merge, the index, the plans, the
 * samples: what stays serial). */
struct stats_prepass_cpu {
	int k;
	double sum, max, here;
};

/* A consumer of the pre-pass besides the context (report's header and
 * memory timeline): its state for the whole trace, new(arg, 0), gets every
 * record of a one-thread pre-pass; in slices, slice i's state, new(arg,
 * from), gets the metadata records (slice 0) and those timed in its slice
 * (a record without a time after slice 0: not cut), and merge adds the
 * next slice's state to it (0, or -1: not the figures of one read: not
 * cut); the whole trace's state then merges slice 0's.  ready: after the
 * pre-pass, before the pass (st: the whole trace's state). */
struct stats_pre_hook {
	void *arg;
	void *(*new)(void *arg, uint64_t from);
	void (*add)(void *st, gp_reader *r, const gp_record *rec);
	int (*merge)(void *dst, void *src);
	void (*free)(void *st);
	void (*ready)(void *arg, void *st, struct stats_ctx *ctx);
};

/* The pre-pass of ctx (stats_ctx_init done, stats_ctx_prepass true) in k
 * slices over the trace at path (slices_count(ctx->r, path, k) > 1;
 * with ctx->steps_prefix, in the steps' slices whatever k).
 * 0: ctx holds what stats_ctx_pre_add over every record and
 * stats_ctx_pre_finish would have made (and hook_st, hook's state for the
 * whole trace, what hook->add over every record would have), its reader rewound; 1: not cut
 * (above; ctx untouched: run the one-thread pre-pass); -1: as
 * stats_ctx_pre_finish's -1, with its message in *err. */
int stats_prepass_shards(struct stats_ctx *ctx, const char *path, int k, const struct stats_pre_hook *hook,
			 void *hook_st, struct stats_prepass_cpu *cpu,
			 const char **err);

/* Tests (GPUPROF_PREPASS_DUMP=1): what the pre-pass made, one line per
 * range (by id), window and step plan, on f. */
void stats_prepass_dump(const struct stats_ctx *ctx, FILE *f);

#endif
