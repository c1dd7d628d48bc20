/* time_buckets.h — time series in fixed-width buckets: for each series,
 * per bucket, the time covered by the intervals added (an interval across
 * buckets is split), a sum of values, or their maximum.  Memory: 8 bytes per bucket
 * per series, whatever the number of records; used by the summarised
 * Perfetto timeline (export --summary). */
#ifndef GPUPROF_ANALYSIS_CORE_TIME_BUCKETS_H
#define GPUPROF_ANALYSIS_CORE_TIME_BUCKETS_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

/* Zero-initialised is not enough: time_buckets_init. */
struct tbseries { uint64_t key; double *v; size_t n; };
struct time_buckets {
	uint64_t t0, width;           /* bucket i: [t0 + i width, t0 + (i + 1) width) */
	struct tbseries *s; size_t ns, cs;
	u64map idx;                   /* key -> series */
	size_t len;                   /* buckets up to the last one touched, over all series */
};

/* A bucket width for `span` ns in about `target` buckets: 1, 2 or 5 x 10^k
 * ns, at least 1 ms. */
uint64_t time_buckets_width(uint64_t span, uint64_t target);
void time_buckets_init(struct time_buckets *b, uint64_t t0, uint64_t width);
/* The series with this key (created empty at the end of the list). */
size_t time_buckets_series(struct time_buckets *b, uint64_t key);
/* Adds the time of [s, e) to the buckets it covers (before t0: clipped). */
void time_buckets_busy(struct time_buckets *b, size_t series, uint64_t s, uint64_t e);
/* Adds v to the bucket of t (1: counts events). */
void time_buckets_add(struct time_buckets *b, size_t series, uint64_t t, double v);
/* Keeps the larger of v and the bucket's value. */
void time_buckets_max(struct time_buckets *b, size_t series, uint64_t t, double v);
/* Value of bucket i of a series (0 past its end). */
double time_buckets_get(const struct time_buckets *b, size_t series, size_t i);
void time_buckets_free(struct time_buckets *b);

#endif
