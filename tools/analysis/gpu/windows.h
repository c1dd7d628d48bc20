/* windows.h — the GPU-activity windows of a windowed trace (`gpuprof run
 * --gpu-window ON/PERIOD`, GP_REC_WINDOW): outside them the shim recorded
 * API calls and NVTX but no GPU activity, so a missing kernel there is not a
 * lost one.  Collected per process, then sorted and merged. */
#ifndef GPUPROF_ANALYSIS_GPU_WINDOWS_H
#define GPUPROF_ANALYSIS_GPU_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/core/intervals.h"

struct gpwin {
	uint32_t pid;
	uint64_t s, e;
	uint64_t kernels; /* starting inside (gpu_activity_finish counts them) */
};
struct winset { struct gpwin *v; size_t n, cap; };

void winset_add(struct winset *w, uint32_t pid, uint64_t s, uint64_t e);
/* Sorts by (pid, start) and merges overlapping windows of one process. */
void winset_finish(struct winset *w);
/* Time inside at least one window, any process (after winset_finish). */
uint64_t winset_covered(const struct winset *w);
/* pid's windows are v[*lo .. *hi) (after winset_finish). */
void winset_range(const struct winset *w, uint32_t pid, size_t *lo, size_t *hi);
/* Index of pid's window with s <= t <= e, or -1 (after winset_finish). */
long winset_find(const struct winset *w, uint32_t pid, uint64_t t);
/* Keeps only the parts of every window inside the intervals iv[0 .. n)
 * (disjoint, ordered); empty ones go (after winset_finish). */
void winset_clip_set(struct winset *w, const struct ival *iv, size_t n);
void winset_free(struct winset *w);

#endif
