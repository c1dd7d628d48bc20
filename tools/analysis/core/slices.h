/* slices.h — the one slice runner: a trace's time cut into k slices, a
 * pass over each on a thread of its own, the slices' results merged in
 * time order.  What a pass does with its slice (which reader, which
 * records, what state) is the caller's: the runner owns the cuts, the
 * threads, the order of the merges and the CPU time; every pass over a
 * trace in slices (`stats --threads N`: the reports, the pre-pass, the GPU
 * pass, the steps' engines) is run by it, so all cut the trace alike.
 *
 * The cuts: the trace's time, from its first to its last timed record (the
 * footer's chunk table: gp_reader_time_range), in k slices of equal
 * length; slice i's records are those timed in [from, to), the first from
 * 0, the last to the end.  The same trace and k give the same cuts to
 * every pass.  A slice is read with a reader of its own (slices_open: one
 * decoding thread, the time window of the slice, so the chunks of other
 * slices are not decoded).
 *
 * The merges: with a merge function, the thread of slice i merges slice
 * i + 1's, then i + 2's (which holds i + 3's), ... as they end, so log2(k)
 * merges deep and each merge adds the next slices in time to the earlier
 * one; slice 0 holds them all when slices_wait returns.  Without one, the
 * caller merges after slices_wait, in slice order.  A thread that cannot
 * be made runs its slice on the caller's (the later slices are started
 * first, so a slice's merges wait only for slices already run). */
#ifndef GPUPROF_ANALYSIS_CORE_SLICES_H
#define GPUPROF_ANALYSIS_CORE_SLICES_H

#include <stdint.h>

#include "gp_trace.h"

struct slices;

/* A pass over the slices. */
struct slice_pass {
	void *arg;
	/* Slice ix, its own records timed in [from, to): on its thread. */
	void (*read)(void *arg, int ix, uint64_t from, uint64_t to);
	/* NULL, or slice src (the next after dst's, with those merged into
	 * it) into dst, on dst's thread. */
	void (*merge)(void *arg, int dst, int src);
};

/* The slices a trace can be cut into for k threads: k, or 0 (not cut: no
 * footer, no timed records, a pipe, k < 1). */
int slices_count(gp_reader *r, const char *path, int k);
/* k slices of the trace r reads (slices_count); NULL: no time range. */
struct slices *slices_new(gp_reader *r, int k);
/* Slice i's own records are those timed in [*from, *to). */
void slices_bounds(const struct slices *s, int i, uint64_t *from, uint64_t *to);
/* Starts p over every slice (p must outlive slices_wait); returns once
 * the threads run. */
void slices_start(struct slices *s, const struct slice_pass *p);
/* Waits for the pass (with p->merge: for slice 0's thread, which merged
 * the others). */
void slices_wait(struct slices *s);
/* slices_start then slices_wait. */
void slices_run(struct slices *s, const struct slice_pass *p);
/* The CPU seconds the slices' threads took to read their slices (not the
 * merges), after slices_wait: their sum and the largest.  What k cores
 * would take is about the largest; the sum against one thread's time is
 * what cutting the trace costs. */
void slices_cpu(const struct slices *s, double *sum, double *max);
void slices_free(struct slices *s); /* waits; NULL ok */

/* A reader of the trace at path windowed to [from, to) (one decoding
 * thread, the chunk table of the command's reader of it: tool_open;
 * NULL: cannot be opened), and whether it read its records whole (rc: its
 * last gp_reader_next_ordered). */
gp_reader *slices_open(const char *path, uint64_t from, uint64_t to);
int slices_whole(gp_reader *r, int rc);

#endif
