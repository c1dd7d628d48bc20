/* counters.h — sampled counters (GP_REC_COUNTER, e.g. nvml.*): one series
 * per name, process and device, its samples in time order once finished.
 * Feeds the stats counters and util reports. */
#ifndef GPUPROF_ANALYSIS_GPU_COUNTERS_H
#define GPUPROF_ANALYSIS_GPU_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "common/util.h"

struct csample { uint64_t t; double v; };
struct cseries {
	uint32_t pid, dev;
	char *name;
	struct csample *s; size_t n, cap;
};

/* Zero-initialised = empty. */
struct counters { strmap idx; struct cseries *v; size_t n, cap; };

/* A counter record of process pid; name: the counter's name. */
void counters_add(struct counters *c, uint32_t pid, const gp_rec_counter *k, const char *name);
/* Appends the samples of src (a later part of the same trace, before
 * counters_finish) to c's series of the same name, process and device. */
void counters_merge(struct counters *c, struct counters *src);
/* Sorts the series by (name, pid, device) and each one's samples by time.
 * Nothing is added after this. */
void counters_finish(struct counters *c);
/* Mean of the samples of series (name, pid, dev) with s <= time <= e; -1
 * when there are none. */
double counters_mean(const struct counters *c, const char *name, uint32_t pid, uint32_t dev,
		     uint64_t s, uint64_t e);
void counters_free(struct counters *c);

#endif
