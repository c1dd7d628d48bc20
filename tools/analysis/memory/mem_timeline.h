/* mem_timeline.h — memory held over time, from the trace's memory records
 * (GP_REC_MEMORY: CUDA allocations and frees that CUPTI reported): one
 * series per process, device and memory kind (device, device_static,
 * pinned, ...), the bytes allocated and not yet freed.  A free that carries
 * no size takes the size of the allocation at its address.  This is memory
 * as the CUDA driver sees it: a framework's caching allocator keeps what it
 * got, so the level is what the process holds, not what its tensors use.
 *
 * A component: mem_timeline_add for each memory record (any order), then
 * mem_timeline_finish (sorts each series by time and sums it up), then the
 * series.  Memory: 16 bytes per record up to MEM_TIMELINE_MAX_EVENTS (later
 * records, in the order they came, are counted in `dropped`, not used) plus
 * the live allocations.
 *
 * Slices of time (mem_timeline_merge): a slice after the first (`slice`
 * set before its first record) also keeps the addresses it freed last and
 * its frees without a size of addresses it did not allocate, which the
 * merge after the earlier slices sizes from their live allocations. */
#ifndef GPUPROF_ANALYSIS_MEMORY_MEM_TIMELINE_H
#define GPUPROF_ANALYSIS_MEMORY_MEM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "common/util.h"

#define MEM_TIMELINE_MAX_EVENTS (1u << 20)

/* before finish v is the size an event adds (< 0: a free); after, the bytes
 * held from t on (t ascending) */
struct mem_point { uint64_t t; int64_t v; };

struct mem_series {
	uint32_t pid, dev, kind;   /* kind: gp_mem_kind */
	struct mem_point *p; size_t n, cap;
	int64_t peak;              /* highest level */
	uint64_t allocs, frees;
	u64map live;               /* address -> bytes of the allocations not yet freed */
	/* a slice's: address -> 1 when freed and not allocated again; its
	 * frees (p index) of an address allocated before the slice */
	u64map gone;
	struct mem_unsized { size_t at; uint64_t address; } *unsized;
	size_t nunsized, cunsized;
};

/* Zero-initialised = empty. */
struct mem_timeline {
	struct mem_series *v; size_t n, cap;
	size_t events;             /* kept over all series */
	uint64_t dropped;          /* records past MEM_TIMELINE_MAX_EVENTS */
	int slice;                 /* a slice of time after the first (above) */
};

void mem_timeline_add(struct mem_timeline *m, uint32_t pid, const gp_rec_memory *rec);
/* Adds src, the records of the next slice of time, to m (before finish;
 * src is left empty).  0, or -1 when the figures could not be those of one
 * read (the two hold more than MEM_TIMELINE_MAX_EVENTS records: which ones
 * one read drops depends on the order of the series' records). */
int mem_timeline_merge(struct mem_timeline *m, struct mem_timeline *src);
/* Sorts the series by (pid, device, kind) and each one's events by time,
 * turning sizes into levels.  Nothing is added after this. */
void mem_timeline_finish(struct mem_timeline *m);
/* The highest level of series s within [a, b] (the level in force at a
 * counts); its level at a when no event falls inside. */
int64_t mem_series_max(const struct mem_series *s, uint64_t a, uint64_t b);
void mem_timeline_free(struct mem_timeline *m);

#endif
