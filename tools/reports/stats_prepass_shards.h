/* stats_prepass_shards.h — the pre-pass of `gpuprof stats --threads N`
 * (stats_report.h stats_ctx_prepass: the NVTX ranges, the GPU-activity
 * windows, the step detection) in K slices of time on K threads, merged
 * into exactly what the one-thread pre-pass makes.
 *
 * The slices are the slice runner's (analysis/core/slices.h): slice i reads
 * the records timed in [from, to) with a reader of its own, windowed to
 * the slice (the footer's chunk table).  What a one-thread pre-pass makes depends on the order in
 * which it reads the records: range ids are given in that order, a name
 * gets its number when first seen, a lane its kind from its first range,
 * the step detection its processes' order and its sample (the first 2^20
 * GPU operations of a process).  That order is not the slices' order put
 * end to end: a source writes a push/pop range when it is popped, so an
 * outer range begun before a cut comes after the inner ranges begun after
 * it.  The time-ordered merge of the reader takes, of the sources' next
 * records, the one with the smallest time, ties to the smaller source;
 * the record it takes is always the one whose source's largest time so
 * far is smallest (whatever comes first in a source holds back what
 * follows it), so the order of a whole read is that of the key
 *
 *   (largest time of its source up to and including it, source, chunk,
 *    place in the chunk)
 *
 * which every slice can compute for its own records: the chunks a slice
 * leaves out of a source hold only records before its start, which cannot
 * raise the largest time of a record of the slice (gp_reader.h
 * gp_reader_record_chunk).  Each slice collects its ranges, windows and
 * per process its count of GPU operations and the key of its first, with
 * their keys; the merge replays the ranges and windows into the context
 * in key order (attribution_add_range and winset_add as one thread calls
 * them: the same ids, names, lanes) and gives the step detection its
 * processes in the order of their first operation.  The sample is read
 * after that, on the caller's reader from the start, only for the
 * processes whose steps are not NVTX ranges (step_detect_sample_wanted),
 * and only until each has its 2^20 operations or all of them (the slices
 * counted them): nothing on a trace whose steps are ranges.  Where the
 * steps analysis runs in slices (ctx->steps_prefix), the slices are its
 * cuts, and each also keeps what the steps' prefix needs of its API and
 * GPU records (stats_prepass_prefix.h), merged into ctx->steps_prefix.
 *
 * Not cut (the caller runs the one-thread pre-pass, ctx untouched): a
 * slice met damage (a corrupt chunk, a truncation, an error); a slice's
 * keys did not rise (which the rule above says cannot happen); a range,
 * window or GPU operation without a time (its chunk may belong to no
 * slice's window); a trace with CUDA graph nodes when the capture sites
 * are wanted (STATS_NEED_PREJOIN: the sites follow each thread's calls,
 * which are not kept here); a steps' cut at time 0 (a record without a
 * time could reach it). */
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
