/* gps_rolling.h — the median of the last GPS_ROLLING_MAX values
 * (features/gps_rolling.c): the rolling median step time of the flight
 * recorder's step rule and status (features/gps_steps.c).  A value added
 * replaces the oldest once the window is full; the median is that of the
 * values in the window (even count: the mean of the two middle ones, rounded
 * down), as a sort of them would give.  Adding costs a binary search and a
 * move of at most GPS_ROLLING_MAX values (it runs inside the job's NVTX pop
 * once a step; a sort there was most of the step's tracing cost).  Pure:
 * no locks, one owner. */
#ifndef GPS_ROLLING_H
#define GPS_ROLLING_H

#include <stdint.h>

#define GPS_ROLLING_MAX 51

struct gps_rolling {
	uint64_t order[GPS_ROLLING_MAX];  /* in arrival order, a ring */
	uint64_t sorted[GPS_ROLLING_MAX]; /* the same values, ascending */
	unsigned n, pos;                  /* values held; the ring's next slot */
};

void gps_rolling_reset(struct gps_rolling *r);
void gps_rolling_add(struct gps_rolling *r, uint64_t v);
/* 0 when empty */
uint64_t gps_rolling_median(const struct gps_rolling *r);

#endif
