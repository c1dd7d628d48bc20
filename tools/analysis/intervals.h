/* intervals.h — sets of time intervals [s, e) in ns: collect, merge into
 * their union, measure busy time, gaps and the overlap of two unions.  Used
 * by the utilisation (analysis/gpu_activity.c) and comm (reports/stats_comm.c)
 * analyses. */
#ifndef GPUPROF_TOOL_INTERVALS_H
#define GPUPROF_TOOL_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

struct ival { uint64_t s, e; };
/* Zero-initialised = empty; the owner frees v. */
struct ivset { struct ival *v; size_t n, cap; };
/* Of a union: time covered, number of gaps between its intervals, the
 * largest gap, and how many intervals went in. */
struct ivsum { uint64_t busy, gaps, largest, count; };

/* A union summed as it streams: the part already summed (busy time, gaps,
 * largest gap; count unused) and where it ended, for the gap to what
 * comes next. */
struct ivdone {
	struct ivsum sum;
	int has; uint64_t last_e;
};

/* Adds [s, e); an end before the start counts as an instant at s. */
void ivset_add(struct ivset *set, uint64_t s, uint64_t e);
/* Sorts the set and rewrites it in place as its union (disjoint, ordered). */
struct ivsum ivset_union(struct ivset *set);
/* Time covered by both of two unions (each disjoint and ordered). */
uint64_t ivset_overlap(const struct ivset *a, const struct ivset *b);

/* Streaming unions.  Busy time, gaps, the largest gap and the overlap of
 * two unions are additive over a split of time, so a set can be cut at x:
 * ivset_cut merges it into its union, sums the part before x into *done
 * (an interval across x is split at x), keeps the rest, and puts the
 * summed pieces in *pre when given (for an overlap).  Pieces must come in
 * time order: cut successive x in increasing order, and add no interval
 * that starts before the last cut. */
void ivset_cut(struct ivset *set, struct ivdone *done, uint64_t x, struct ivset *pre);
/* The union of a set cut so far: its rest merged, plus the summed part
 * (and the gap between them). */
struct ivsum ivset_union_done(struct ivset *set, const struct ivdone *done);
/* Combines the union of a rest with what was summed before it. */
struct ivsum ivsum_after(struct ivsum rest, const struct ivset *set, const struct ivdone *done);

/* Two sets cut together as they stream (kernels and copies of a device,
 * NCCL and other kernels of a rank), and the overlap of their unions.
 * Records do not arrive in start order (CUPTI returns buffers as they
 * complete), so a cut leaves the `lag` most recent intervals pending: once
 * the pair holds 2 x lag, it cuts at the start of the lag-th most recent.
 * An interval that starts before the last cut arrived more than `lag`
 * intervals late: its part before the cut is not counted (late, late_ns),
 * so busy time can only come out short, by at most late_ns.  Memory: at
 * most 4 x lag intervals (16 bytes each).  Zero-initialised = empty. */
struct ivpair {
	struct ivset set[2];
	struct ivdone done[2];
	uint64_t overlap_done;  /* of the summed parts */
	uint64_t cut;           /* everything before it is summed */
	size_t next_cut;        /* pending count that triggers the next cut (0: 2 x lag) */
	uint64_t late, late_ns;
};
/* Clips [*s, *e) to its part at or after the cut, counting what was late;
 * 0 when nothing is left. */
int ivpair_admit(struct ivpair *p, uint64_t *s, uint64_t *e);
/* Adds [s, e) (admitted) to set `which` (0 or 1); returns where the pair
 * was cut now (0: not cut), for the caller's other sets (ivset_cut). */
uint64_t ivpair_add(struct ivpair *p, int which, uint64_t s, uint64_t e, size_t lag);
/* Both unions, the summed parts included (count: set's intervals now, the
 * caller knows how many went in), and their overlap. */
void ivpair_finish(struct ivpair *p, struct ivsum *a, struct ivsum *b, uint64_t *overlap);
void ivpair_free(struct ivpair *p);

#endif
