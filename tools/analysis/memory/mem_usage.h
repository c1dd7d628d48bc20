/* mem_usage.h — memory in use from GP_REC_MEMORY records (`gpuprof run
 * --activity=default,memory`), per process, device and memory kind.
 *
 * In use = the bytes of the allocations seen minus the bytes of the frees
 * seen, in time order; a free that would take it below 0 (memory allocated
 * before the trace, or before --since) leaves it at 0.  Peak = its largest
 * value.  Records with another operation than alloc (1) or free (2) are
 * ignored. */
#ifndef GPUPROF_ANALYSIS_MEMORY_MEM_USAGE_H
#define GPUPROF_ANALYSIS_MEMORY_MEM_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "common/util.h"

struct mem_use {
	uint32_t pid, dev, kind;              /* kind: gp_mem_kind */
	uint64_t allocs, frees, alloc_bytes, free_bytes, largest_alloc;
	uint64_t in_use, peak;
	/* For mem_usage_merge: the bytes allocated minus freed with no floor at
	 * 0, and its largest value after any record (0 before the first).  A
	 * later slice's in use, started from x instead of 0, is then
	 * max(x + net, in_use) and its peak max(x + max_net, peak): the floor
	 * can only have been met where the slice's own net was at its lowest. */
	int64_t net, max_net;
};

/* Zero-initialised = empty. */
struct mem_usage { strmap idx; struct mem_use *v; size_t n, cap; };

/* A memory record of process pid, in time order. */
void mem_usage_add(struct mem_usage *mu, uint32_t pid, const gp_rec_memory *m);
/* Adds src, the records of the next slice of time (after every record of
 * mu), to mu, as if mu had seen them itself.  src is left as it was. */
void mem_usage_merge(struct mem_usage *mu, const struct mem_usage *src);
/* Sorts the entries by process, device and kind. */
void mem_usage_finish(struct mem_usage *mu);
void mem_usage_free(struct mem_usage *mu);

#endif
