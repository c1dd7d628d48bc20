/* gps_drop.c — the drop rule's windows (gps_drop.h).  A round that comes
 * W or more after the open window's first round closes it and opens the
 * next: a window's length is W rounded up to the sampling interval.  The
 * closed window is judged before it joins the history, so a drop is judged
 * against the windows before it; it joins either way (a drop that lasts
 * becomes the new normal once it is most of the history). */
#include "features/gps_drop.h"

void gps_drop_init(struct gps_drop *d, unsigned pct, uint64_t window_ns)
{
	d->window_ns = window_ns;
	d->pct = pct;
	d->start = 0;
	d->sum = 0;
	d->rounds = 0;
	gps_rolling_reset(&d->hist);
}

int gps_drop_round(struct gps_drop *d, uint64_t now, unsigned busy, struct gps_drop_hit *hit)
{
	int fired = 0;
	if (d->rounds && now - d->start >= d->window_ns) {
		/* the mean in 1/100 % (integers for the rolling median) */
		uint64_t mean = d->sum * 100 / d->rounds;
		uint64_t med = gps_rolling_median(&d->hist);
		if (d->hist.n >= GPS_DROP_WINDOWS_MIN && med && mean * 100 < med * (100 - d->pct)) {
			hit->busy = (double)mean / 100;
			hit->median = (double)med / 100;
			hit->windows = d->hist.n;
			fired = 1;
		}
		gps_rolling_add(&d->hist, mean);
		d->rounds = 0;
		d->sum = 0;
	}
	if (!d->rounds)
		d->start = now;
	d->sum += busy > 100 ? 100 : busy;
	d->rounds++;
	return fired;
}
