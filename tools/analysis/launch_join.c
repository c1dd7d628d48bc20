/* launch_join.c — one entry per (pid, correlation id): 40 bytes plus the map
 * slot per launch, kept to the end because a graph launch's kernels and a
 * late driver record may come at any time. */
#include <stdlib.h>
#include <string.h>

#include "gp_launch.h"
#include "analysis/launch_join.h"
#include "common/util.h"

struct launch_join {
	u64map idx; /* (pid<<40 ^ corr) -> index in v */
	struct joined_launch *v;
	size_t n, cap;
};

struct launch_join *launch_join_new(void)
{
	struct launch_join *j = xcalloc(1, sizeof(*j));
	u64map_init(&j->idx);
	return j;
}

void launch_join_free(struct launch_join *j)
{
	if (!j) return;
	u64map_free(&j->idx);
	free(j->v);
	free(j);
}

static struct joined_launch *entry(struct launch_join *j, uint32_t pid, uint64_t corr)
{
	uint64_t key = ((uint64_t)pid << 40) ^ corr;
	uint64_t *slot = u64map_get(&j->idx, key, MAP_FIND);
	if (slot && j->v[*slot].pid == pid) return &j->v[*slot];
	struct joined_launch l;
	memset(&l, 0, sizeof(l));
	l.pid = pid;
	*u64map_get(&j->idx, key, MAP_INSERT) = j->n;
	VEC_PUSH(j->v, j->n, j->cap, l);
	return &j->v[j->n - 1];
}

void launch_join_api(struct launch_join *j, uint32_t pid, uint32_t tid, const gp_rec_api *a)
{
	if (!a->correlation_id) return;
	struct joined_launch *l = entry(j, pid, a->correlation_id);
	if (!l->has_api || !l->stack_id) {
		if (a->stack_id || !l->has_api) l->tid = tid;
		if (a->stack_id) l->stack_id = a->stack_id;
	}
	l->has_api = 1;
	if (gp_launch_kind(a->domain, a->cbid) != GP_LAUNCH_NONE) l->launch_call = 1;
}

void launch_join_gpu(struct launch_join *j, uint32_t pid, uint64_t corr, enum gpu_work work, uint64_t ns)
{
	struct joined_launch *l = entry(j, pid, corr);
	if (work == GPU_WORK_COPY) { l->memops++; l->memop_ns += ns; }
	else { l->kernels++; l->kernel_ns += ns; }
}

const struct joined_launch *launch_join_all(const struct launch_join *j, size_t *n)
{
	*n = j->n;
	return j->v;
}
