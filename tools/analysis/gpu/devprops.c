/* devprops.c — see devprops.h. */
#include "analysis/gpu/devprops.h"

#include <stdlib.h>
#include <string.h>

void devprops_add(struct devprops *dp, uint32_t pid, const gp_rec_device *d)
{
	/* a later record wins */
	*(gp_rec_device *)VEC_KEYED(&dp->idx, ((uint64_t)pid << 32) | d->device_id, dp->v, dp->n, dp->cap, d) = *d;
}

const gp_rec_device *devprops_get(const struct devprops *dp, uint32_t pid, uint32_t dev)
{
	uint64_t *s = u64map_get((u64map *)&dp->idx, ((uint64_t)pid << 32) | dev, MAP_FIND);
	return s ? &dp->v[*s - 1] : NULL;
}

void devprops_free(struct devprops *dp)
{
	free(dp->v);
	u64map_free(&dp->idx);
	memset(dp, 0, sizeof(*dp));
}
