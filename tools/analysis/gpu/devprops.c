/* devprops.c — see devprops.h. */
#include "analysis/gpu/devprops.h"

#include <stdlib.h>
#include <string.h>

void devprops_add(struct devprops *dp, uint32_t pid, const gp_rec_device *d)
{
	uint64_t *s = u64map_get(&dp->idx, ((uint64_t)pid << 32) | d->device_id, MAP_INSERT);
	gp_rec_device copy = *d;
	if (*s) { dp->v[*s - 1] = copy; return; } /* a later record wins */
	VEC_PUSH(dp->v, dp->n, dp->cap, copy);
	*s = dp->n;  /* index + 1: 0 means absent */
}

const gp_rec_device *devprops_get(struct devprops *dp, uint32_t pid, uint32_t dev)
{
	uint64_t *s = u64map_get(&dp->idx, ((uint64_t)pid << 32) | dev, MAP_FIND);
	return s ? &dp->v[*s - 1] : NULL;
}

void devprops_free(struct devprops *dp)
{
	free(dp->v);
	u64map_free(&dp->idx);
	memset(dp, 0, sizeof(*dp));
}
