/* summary.h — per-name summaries of a value (a duration or a size): count,
 * total, min, max, mean, sample standard deviation and the exact median, for
 * which every value is kept (8 bytes each).  The standard deviation is
 * computed at the end from the sorted values (two passes): the same values
 * in any order give the same bits, which lossless CSV/JSON shows.  The `stats`
 * api, kernels, memops, memsize and nvtx reports are built on it. */
#ifndef GPUPROF_TOOL_SUMMARY_H
#define GPUPROF_TOOL_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

struct sgroup {
	char *name;
	uint64_t n, total, min, max;
	uint64_t *v; size_t nv, cv;
	int sorted;              /* v is sorted */
};

/* Zero-initialised = empty. */
struct summary { strmap idx; struct sgroup *g; size_t n, cap; };

/* Index of the group `name` (created empty when new); indices are stable,
 * pointers into g are not (a new group may move the array). */
size_t summary_group(struct summary *t, const char *name);
void sgroup_add(struct sgroup *g, uint64_t v);
/* Exact median (mean of the two middle values for even counts); sorts g->v. */
double sgroup_median(struct sgroup *g);
/* Sample standard deviation (n-1), 0 for a single value; sorts g->v. */
double sgroup_stddev(struct sgroup *g);
/* Group indices by total, largest first, then by name; free() the array. */
size_t *summary_by_total(struct summary *t);
void summary_free(struct summary *t);

#endif
