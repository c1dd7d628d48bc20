/* gps_rolling.c — a rolling median over a fixed window (gps_rolling.h):
 * the values in arrival order (to know which one leaves) and the same
 * values kept sorted (the median is the middle one). */
#include <string.h>

#include "features/gps_rolling.h"

void gps_rolling_reset(struct gps_rolling *r) { r->n = r->pos = 0; }

/* the first index in sorted[0, n) whose value is >= v */
static unsigned lower_bound(const uint64_t *a, unsigned n, uint64_t v)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void gps_rolling_add(struct gps_rolling *r, uint64_t v)
{
	if (r->n == GPS_ROLLING_MAX) {
		/* the oldest leaves: one copy of its value (equal values are
		 * interchangeable) */
		unsigned at = lower_bound(r->sorted, r->n, r->order[r->pos]);
		memmove(&r->sorted[at], &r->sorted[at + 1], (r->n - at - 1) * sizeof r->sorted[0]);
		r->n--;
	}
	unsigned at = lower_bound(r->sorted, r->n, v);
	memmove(&r->sorted[at + 1], &r->sorted[at], (r->n - at) * sizeof r->sorted[0]);
	r->sorted[at] = v;
	r->n++;
	r->order[r->pos] = v;
	r->pos = (r->pos + 1) % GPS_ROLLING_MAX;
}

uint64_t gps_rolling_median(const struct gps_rolling *r)
{
	if (!r->n)
		return 0;
	unsigned n = r->n;
	return n & 1 ? r->sorted[n / 2] : (r->sorted[n / 2 - 1] + r->sorted[n / 2]) / 2;
}
