/* gps_drop.h — the drop rule's windows (features/gps_drop.c; docs/FLIGHT.md,
 * "Anomaly rules", drop>P%): GPU busy (NVML utilisation, the busiest of the
 * job's devices in a sampling round) averaged over windows of W of time,
 * each window against the rolling median of the GPS_ROLLING_MAX windows
 * before it.  Pure: no locks, no clock of its own, one owner (the NVML
 * thread). */
#ifndef GPS_DROP_H
#define GPS_DROP_H

#include <stdint.h>

#include "features/gps_rolling.h"

#define GPS_DROP_WINDOWS_MIN 6 /* windows in the history before a drop is judged */

struct gps_drop {
	uint64_t window_ns;        /* W */
	unsigned pct;              /* P */
	uint64_t start;            /* the open window's first round (0: none yet) */
	uint64_t sum;              /* its rounds' busy percentages */
	unsigned rounds;           /* and how many */
	struct gps_rolling hist;   /* the closed windows' means, in 1/100 % */
};

/* What a closed window that dropped says */
struct gps_drop_hit {
	double busy, median;       /* %: the window's mean, the history's median */
	unsigned windows;          /* in the history it was judged against */
};

void gps_drop_init(struct gps_drop *d, unsigned pct, uint64_t window_ns);
/* One sampling round at now (ns, any monotonic clock): busy % of the
 * busiest device.  1 when it closed a window whose mean busy is more than
 * P % below the median of the windows before it (at least
 * GPS_DROP_WINDOWS_MIN of them, their median above 0), *hit filled. */
int gps_drop_round(struct gps_drop *d, uint64_t now, unsigned busy, struct gps_drop_hit *hit);

#endif
