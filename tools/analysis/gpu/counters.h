/* counters.h — sampled counters (GP_REC_COUNTER, e.g. nvml.*): one series
 * per name, process and device.  Feeds the stats counters and util reports
 * and advise's PM figures.
 *
 * Memory: with limit 0 a series keeps every sample (16 bytes each; advise
 * reads them one by one).  With a limit (stats: COUNTERS_EXACT_SAMPLES) a
 * series keeps its samples exactly until it has more than the limit, then
 * folds them into buckets of a time grid (COUNTERS_BUCKETS at most; bucket
 * k holds the samples with k W <= t < (k + 1) W, W a power of two of ns
 * doubled as the trace goes on), fixed by the series' first and last time
 * at counters_finish.  What stays exact and the error bound of
 * counters_mean: docs/CLI.md, the `counters` item of what stats keeps. */
#ifndef GPUPROF_ANALYSIS_GPU_COUNTERS_H
#define GPUPROF_ANALYSIS_GPU_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "common/util.h"

#define COUNTERS_EXACT_SAMPLES ((size_t)1 << 16)
#define COUNTERS_BUCKETS 8192

struct csample { uint64_t t; double v; };
/* Grid cell k of a folded series: its samples' figures */
struct cbucket {
	uint64_t k, n, t0, t1; /* t0, t1: first and last sample time */
	double sum, min, max, last, tw; /* tw: sum of v x (next t - t) inside the bucket */
};
struct cseries {
	uint32_t pid, dev;
	char *name;
	struct csample *s; size_t n, cap; /* samples not folded (sorted by counters_finish) */
	struct cbucket *b; size_t nb, cb; /* folded: width > 0, buckets in time order */
	uint64_t width;
};

/* Zero-initialised = empty, every sample kept; set limit before the first
 * sample to fold past it. */
struct counters {
	strmap idx; struct cseries *v; size_t n, cap;
	size_t limit;
	size_t last; /* the previous sample's series + 1 (0: none) */
};

/* A series' figures over all its samples (n 0: none). */
struct cfigures { uint64_t n; double min, max, sum, tw, last_v; uint64_t t_first, t_last; };

/* A counter record of process pid; name: the counter's name. */
void counters_add(struct counters *c, uint32_t pid, const gp_rec_counter *k, const char *name);
/* Appends the samples of src (a later part of the same trace, before
 * counters_finish) to c's series of the same name, process and device. */
void counters_merge(struct counters *c, struct counters *src);
/* Sorts the series by (name, pid, device) and each one's samples by time;
 * a folded series gets its final grid.  Nothing is added after this. */
void counters_finish(struct counters *c);
void counters_figures(const struct cseries *q, struct cfigures *f);
/* Mean of the samples of series (name, pid, dev) with s <= time <= e; -1
 * when there are none. */
double counters_mean(const struct counters *c, const char *name, uint32_t pid, uint32_t dev,
		     uint64_t s, uint64_t e);
void counters_free(struct counters *c);

#endif
