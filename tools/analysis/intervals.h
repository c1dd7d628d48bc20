/* intervals.h — sets of time intervals [s, e) in ns: collect, merge into
 * their union, measure busy time, gaps and the overlap of two unions.  Used
 * by the utilisation (analysis/gpu_activity.c) and comm (reports/stats_comm.c)
 * analyses. */
#ifndef GPUPROF_TOOL_INTERVALS_H
#define GPUPROF_TOOL_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

struct ival { uint64_t s, e; };
/* Zero-initialised = empty; the owner frees v. */
struct ivset { struct ival *v; size_t n, cap; };
/* Of a union: time covered, number of gaps between its intervals, the
 * largest gap, and how many intervals went in. */
struct ivsum { uint64_t busy, gaps, largest, count; };

/* Adds [s, e); an end before the start counts as an instant at s. */
void ivset_add(struct ivset *set, uint64_t s, uint64_t e);
/* Sorts the set and rewrites it in place as its union (disjoint, ordered). */
struct ivsum ivset_union(struct ivset *set);
/* Time covered by both of two unions (each disjoint and ordered). */
uint64_t ivset_overlap(const struct ivset *a, const struct ivset *b);

#endif
