/* stats_prepass_prefix.h — the steps' prefix (analysis/steps/steps_slice.h
 * steps_prefix: per cut c and process, the longest GPU operation one pass
 * has read before the first API or GPU record timed at or after from[c])
 * from the pre-pass' slices (stats_prepass_shards.h), which are the
 * steps' slices: exactly what the one-thread pre-pass notes.
 *
 * A whole read is in the order of the key below (stats_prepass_shards.h),
 * which every slice computes for its records.  Slice j holds the records
 * timed in [from[j], from[j+1]).  Let K_c be the smallest key of the API
 * and GPU records timed at or after from[c]: those are the records of the
 * slices j >= c, so K_c is the smallest of those slices' first keys (no
 * such record: the cut is never reached, its prefix empty), and K_c does
 * not fall as c grows.  A GPU operation of slice j counts for cut c when
 * its key is below K_c: never for c <= j (it is itself timed at or after
 * from[c]); for c > j, for the cuts from the first whose K_c is above it
 * on.  Every record timed at or after from[j+1] has a key whose first
 * part (its source's largest time so far) is at least from[j+1], so an
 * operation whose own first part is below from[j+1] counts for every cut
 * after its slice: the slice keeps, per process, the longest such.  The
 * others (a source out of time order around the cut: it had a record
 * timed at or after from[j+1] before this one) are kept with their keys,
 * and placed at the merge, once the K_c are known; of those, one no longer
 * than an operation of its process the slice kept before it counts for
 * no cut the earlier one does not: left out.  Memory: per slice, a few
 * words per process and the late operations kept (each longer than every
 * one kept before it of its process: few, unless its operations grow
 * longer all along while a source runs late).  The API calls are kept the
 * same way, as one more process (the longest call, steps_prefix_longest_call). */
#ifndef GPUPROF_REPORTS_STATS_PREPASS_PREFIX_H
#define GPUPROF_REPORTS_STATS_PREPASS_PREFIX_H

#include <stdint.h>

#include "analysis/steps/steps_slice.h"
#include "common/util.h"

/* Where a record comes in a whole time-ordered read (stats_prepass_shards.h). */
struct pp_key {
	uint64_t pmax; /* the largest time of its source up to it */
	uint32_t src, chunk, at;
};

static inline int pp_key_cmp(const struct pp_key *a, const struct pp_key *b)
{
	if (a->pmax != b->pmax) return a->pmax < b->pmax ? -1 : 1;
	if (a->src != b->src) return a->src < b->src ? -1 : 1;
	if (a->chunk != b->chunk) return a->chunk < b->chunk ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* A process's operations in a slice: the longest of those that count for
 * every cut after it (fold), and the longest kept so far (max: those and
 * the late ones kept). */
struct pp_pfx_proc {
	uint64_t pid;
	int folded, any;
	uint64_t fold, max;
};

/* What slice ix of k, its records timed before `to` (from[ix+1]; the
 * last: UINT64_MAX), gives the prefix. */
struct pp_prefix {
	int ix, k;
	uint64_t to;
	int have;            /* an API or GPU record of its own came */
	struct pp_key first; /* the smallest key of those */
	struct pp_pfx_proc *pv;
	size_t np, cp;
	struct pp_pfx_proc calls; /* the API calls' (steps_prefix_longest_call) */
	u64map pidx; /* pid -> pv index + 1 */
	struct pp_pfx_late *late;
	size_t nlate, clate;
};

#define PP_CALLS ((uint64_t)1 << 32) /* the calls' "process" */
void pp_prefix_init(struct pp_prefix *p, int ix, int k, uint64_t to);
void pp_prefix_free(struct pp_prefix *p);
/* pid's index + 1 in p (to keep per source: one lookup a run of records). */
size_t pp_prefix_proc(struct pp_prefix *p, uint32_t pid);
/* An API or GPU record of the slice's own (timed in its window), key k;
 * a GPU operation's process proc (pp_prefix_proc), or 0 for an API record;
 * its length dur. */
void pp_prefix_add(struct pp_prefix *p, const struct pp_key *k, size_t proc, uint64_t dur);
/* The k slices' (their records read whole, keys rising) into pf (empty,
 * its cuts the slices' starts). */
void pp_prefix_merge(const struct pp_prefix *const *sl, int k, struct steps_prefix *pf);

#endif
