/* summary.h — per-name summaries of a value (a duration or a size): count,
 * total, min, max, mean and sample standard deviation, and the median.  The
 * `stats` api, kernels, memops, memsize, nvtx and sync reports are built on it.
 *
 * Which groups keep their values (exact median) and which switch to a
 * histogram (analysis/core/quantile.h) is a rule on the table's counts
 * alone, docs/CLI.md "stats memory" (its first item: n >= SUMMARY_MIN_SWITCH,
 * the limit summary_exact_limit in summary.c).  The sum the rule reads only
 * grows, so a summary holding part of the table's values (a slice of
 * `stats --threads`) may switch a group early: the whole table switches it
 * too.  A summary applies the rule each time it holds more values than its
 * trigger (the limit, or a slice's share of it; then what it still holds
 * and a quarter), and summary_settle applies it to the final counts: call
 * it before reading the medians.
 *
 * The standard deviation of a group whose values are kept is computed at
 * the end from the sorted values (two passes); that of an estimated group
 * from the exact sums of its values and their squares: either is the same
 * bits in any order, which lossless CSV/JSON shows. */
#ifndef GPUPROF_ANALYSIS_CORE_SUMMARY_H
#define GPUPROF_ANALYSIS_CORE_SUMMARY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/quantile.h"
#include "common/util.h"

#define SUMMARY_EXACT_VALUES ((size_t)1 << 20)
#define SUMMARY_MIN_SWITCH 1024

struct sgroup {
	char *name;
	uint64_t n, total, min, max;
	unsigned __int128 sq;    /* sum of the squares (saturates past 2^128) */
	struct qsketch q;        /* for the median */
	uint64_t shown;          /* of n, the values counted on the board */
	size_t on_board;         /* its name's index there + 1 (0: not yet) */
};

/* The summaries of one table filled at once on several threads (the
 * slices of `stats --threads`): the counts each has shown, per group name.
 * A slice applies the rule to these (its own and the others' so far: lower
 * bounds of the table's) rather than to its own counts alone, so that it
 * switches what the whole table will and holds about its share of the
 * limit (limit / shares), not a limit of its own.  Which groups are
 * estimated does not depend on the board (the final counts decide), only
 * the memory held on the way. */
struct summary_board {
	pthread_mutex_t mu;
	strmap idx;              /* group name -> index in cnt */
	uint64_t *cnt; size_t n, cap;
	size_t shares;           /* summaries filled at once */
};
void summary_board_init(struct summary_board *b, size_t shares);
void summary_board_free(struct summary_board *b);

/* Zero-initialised = empty. */
struct summary {
	strmap idx; struct sgroup *g; size_t n, cap;
	size_t exact, trigger;   /* values held exactly; the rule runs past trigger (0: not set) */
	size_t approx;           /* groups whose median is estimated */
	struct summary_board *board; /* set before the first value, or NULL */
};

/* Index of the group `name` (created empty when new); indices are stable,
 * pointers into g are not (a new group may move the array). */
size_t summary_group(struct summary *t, const char *name);
/* Adds value v to group i. */
void summary_add(struct summary *t, size_t i, uint64_t v);
/* Adds the values of src (a group of another summary) to group i; when
 * both are exact and sorted (qsketch_sorted), the values stay sorted. */
void summary_merge(struct summary *t, size_t i, const struct sgroup *src);
/* Switches the groups the rule estimates on t's counts (its board's when
 * it has one): before the medians, deviations and t->approx are read. */
void summary_settle(struct summary *t);
/* Median (mean of the two middle values for even counts): exact, or the
 * estimate when g->q.approx. */
double sgroup_median(struct sgroup *g);
/* Quantile p (0..1), linear between the two nearest ranks: exact, or the
 * estimate when g->q.approx. */
double sgroup_quantile(struct sgroup *g, double p);
/* Sample standard deviation (n-1), 0 for a single value; sorts the values
 * while they are kept. */
double sgroup_stddev(struct sgroup *g);
void summary_free(struct summary *t);

#endif
