/* summary.h — per-name summaries of a value (a duration or a size): count,
 * total, min, max, mean and sample standard deviation, and the median.  The
 * `stats` api, kernels, memops, memsize and nvtx reports are built on it.
 *
 * Medians are exact while the summary holds at most SUMMARY_EXACT_VALUES
 * values in all; past that, its group holding the most values switches to
 * a histogram (analysis/core/quantile.h), and so on until the values fit;
 * a group switches only with at least SUMMARY_MIN_SWITCH values, else the
 * limit doubles (docs/CLI.md, the `api`, `kernels`, ... item of what stats
 * keeps).
 *
 * The standard deviation of a group whose values are kept is computed at
 * the end from the sorted values (two passes): the same values in any order
 * give the same bits, which lossless CSV/JSON shows.  A group switched to a
 * histogram uses its running (Welford) sums instead: the same value up to
 * rounding, whose last bits may depend on the order. */
#ifndef GPUPROF_ANALYSIS_CORE_SUMMARY_H
#define GPUPROF_ANALYSIS_CORE_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/core/quantile.h"
#include "common/util.h"

#define SUMMARY_EXACT_VALUES ((size_t)1 << 20)
#define SUMMARY_MIN_SWITCH 1024

struct sgroup {
	char *name;
	uint64_t n, total, min, max;
	double mean, m2;         /* Welford */
	struct qsketch q;        /* for the median */
};

/* The limit of exact values shared by the summaries of one table filled at
 * once on several threads (the shards of `stats --threads`, each with its
 * part of the trace): the values all of them hold count against one limit,
 * so a table of at most SUMMARY_EXACT_VALUES values stays exact whatever
 * the number of threads, and memory stays bounded.  Past it, a summary
 * adding a value sheds its own group holding the most values (as above);
 * when it holds none of SUMMARY_MIN_SWITCH values and at least its share
 * (limit / shares), the limit doubles; else it waits for the others to shed
 * on their next value.  Which groups are estimated then depends on the
 * threads' timing: each estimate is within QSKETCH_REL_ERR all the same.
 * Zero-initialised with shares set = empty (limit 0: SUMMARY_EXACT_VALUES). */
struct summary_budget {
	_Atomic size_t exact, limit;
	size_t shares;           /* summaries filled at once */
};

/* Zero-initialised = empty. */
struct summary {
	strmap idx; struct sgroup *g; size_t n, cap;
	size_t exact, limit;     /* values held exactly, and the limit (0: SUMMARY_EXACT_VALUES) */
	size_t approx;           /* groups whose median is estimated */
	/* set before the first value: the limit is this shared one's (the
	 * values merged into it from a summary of the same budget were counted
	 * there already) */
	struct summary_budget *budget;
};

/* Index of the group `name` (created empty when new); indices are stable,
 * pointers into g are not (a new group may move the array). */
size_t summary_group(struct summary *t, const char *name);
/* Adds value v to group i. */
void summary_add(struct summary *t, size_t i, uint64_t v);
/* Adds the values of src (a group of another summary) to group i; when
 * both are exact and sorted (qsketch_sorted), the values stay sorted. */
void summary_merge(struct summary *t, size_t i, const struct sgroup *src);
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
