/* intervals.h — sets of time intervals [s, e) in ns: collect, merge into
 * their union, measure busy time, gaps and the overlap of two unions.  Used
 * by the utilisation (analysis/gpu/gpu_activity.c) and comm (reports/stats_comm.c)
 * analyses. */
#ifndef GPUPROF_ANALYSIS_CORE_INTERVALS_H
#define GPUPROF_ANALYSIS_CORE_INTERVALS_H

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
	int has; uint64_t first_s, last_e;
};

/* Adds [s, e); an end before the start counts as an instant at s. */
void ivset_add(struct ivset *set, uint64_t s, uint64_t e);
/* Moves src's intervals to the end of dst's (src is left empty). */
void ivset_append(struct ivset *dst, struct ivset *src);
/* Sorts the set and rewrites it in place as its union (disjoint, ordered). */
struct ivsum ivset_union(struct ivset *set);
/* Time covered by both of two unions (each disjoint and ordered);
 * ivset_intersect also appends the common pieces to out (NULL: not). */
uint64_t ivset_overlap(const struct ivset *a, const struct ivset *b);
uint64_t ivset_intersect(const struct ivset *a, const struct ivset *b, struct ivset *out);

/* Streaming unions.  Busy time, gaps, the largest gap and the overlap of
 * two unions are additive over a split of time, so a set can be cut at x
 * (ivpair's cuts, below): the part before x summed into a struct ivdone,
 * the rest kept. */
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
	uint64_t cut;           /* everything before it is summed (or in head) */
	size_t next_cut;        /* pending count that triggers the next cut (0: 2 x lag) */
	uint64_t late, late_ns;
	/* Time shards (ivpair_merge): a pair over a slice of time after the
	 * first (keep_head, set before the first interval) does not sum the
	 * pieces of its first cut: they stay apart, each set's union pieces
	 * before head_end, until the pair is merged after the previous
	 * slice's, whose last intervals may overlap them. */
	int keep_head;
	uint64_t head_end;      /* the first cut (0: not cut yet) */
	struct ivset head[2];
	/* Set before the first interval when wanted: each piece of set
	 * `which`'s union as a cut sums it (not a keep_head pair's first
	 * cut's), in time order (`gpuprof report`'s busy % per bin); and
	 * those ivpair_merge sums (dst's pending and src's head), once. */
	void (*on_sum)(void *arg, int which, uint64_t s, uint64_t e);
	void *on_sum_arg;
};
/* Clips [*s, *e) to its part at or after the cut, counting what was late;
 * 0 when nothing is left. */
int ivpair_admit(struct ivpair *p, uint64_t *s, uint64_t *e);
/* Adds [s, e) (admitted) to set `which` (0 or 1); returns where the pair
 * was cut now (0: not cut), for the caller's other sets (ivpair_cut_other). */
uint64_t ivpair_add(struct ivpair *p, int which, uint64_t s, uint64_t e, size_t lag);
/* A set cut with p's cuts (a device's streams): cut at x, where p was cut
 * now (ivpair_add); its pieces go to head when that was a keep_head
 * pair's first cut. */
void ivpair_cut_other(const struct ivpair *p, uint64_t x, struct ivset *set, struct ivdone *done, struct ivset *head);
/* Both unions, the summed parts included (count: set's intervals now, the
 * caller knows how many went in), and their overlap. */
void ivpair_finish(struct ivpair *p, struct ivsum *a, struct ivsum *b, uint64_t *overlap);
void ivpair_free(struct ivpair *p);

/* Time shards: src holds the intervals of the next slice of time after
 * dst's (src keep_head; every interval of src starts at or after dst's
 * cut).  The merge is exact (the same sums, gaps and overlap as one pair
 * fed both slices' intervals, when neither met a late one) when src never
 * cut, or when dst's pending intervals all end by src's head_end; else
 * IVM_INEXACT and nothing is merged.  How the merge went, for the caller's
 * sets cut with the pair's cuts (ivset_merge_cut): */
enum iv_merge {
	IVM_PENDING,  /* src never cut: its pending intervals join dst's */
	IVM_SUM,      /* dst's pending and src's head are summed between dst's done and src's */
	IVM_HEAD,     /* dst (keep_head) never cut: dst's pending and src's head become its head */
	IVM_INEXACT,
};
/* Merges src into dst (src is left empty: free it); lag as ivpair_add's: a
 * pending set grown past 2 x lag by IVM_PENDING is cut, and *cut_at says
 * where (0: not cut), for the caller's other sets (ivpair_cut_other). */
enum iv_merge ivpair_merge(struct ivpair *dst, struct ivpair *src, size_t lag, uint64_t *cut_at);
/* A set cut with a pair's cuts, merged as the pair was (m): dst's (set,
 * done, head) gets src's; src's are left empty.  For IVM_SUM, *mid (when
 * not NULL) gets the pieces summed between the two (dst's pending and
 * src's head, as their union). */
void ivset_merge_cut(enum iv_merge m, struct ivset *dset, struct ivdone *ddone, struct ivset *dhead,
		     struct ivset *sset, struct ivdone *sdone, struct ivset *shead, struct ivset *mid);
/* Before a union of a set with a head (a slice's, never merged after an
 * earlier one): the head's pieces go into done, before what it holds. */
void ivset_fold_head(struct ivset *head, struct ivdone *done);

#endif
