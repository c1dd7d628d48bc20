/* mem_view.h — device memory held over time by owner and call site, per
 * step, its growth per step, and what was live when an allocation failed:
 * `stats --report memory_steps` and advise's out-of-memory rule.  The
 * records it reads, how they join, the owners, sites and every figure:
 * docs/MEMORY.md ("What the trace holds", "Owners", "Sites",
 * "Definitions"); the steps come from the caller (mem_view_set_steps).
 *
 * Component: mem_view_new, mem_view_add for every record (any order), the
 * steps, mem_view_finish, then the series and failures.  Memory: 48 bytes
 * per memory record up to MEM_VIEW_MAX_EVENTS (later ones counted in
 * `dropped`), 16 per allocation call awaiting its memory record. */
#ifndef GPUPROF_ANALYSIS_MEMORY_MEM_VIEW_H
#define GPUPROF_ANALYSIS_MEMORY_MEM_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/stacks/stacks.h"

#define MEM_VIEW_MAX_EVENTS (1u << 23)
#define MEM_SEG_BYTES (2ull << 20) /* the caching allocator's segment granule */

enum mem_owner { MO_TORCH, MO_TORCH_BY_SIZE, MO_NCCL, MO_BLAS, MO_POOL, MO_VMM, MO_OTHER, MO_COUNT };
extern const char *const mem_owner_names[MO_COUNT];

/* A step as the caller found it: [s, e], its number, whether it is counted
 * (step_summary.h step_counted). */
struct mem_step { uint64_t s, e; int64_t number; int counted; };

struct mem_site;
int mem_site_leaks(const struct mem_site *t);

/* The least-squares slope of n values over x = 0..n-1 (docs/MEMORY.md). */
struct mem_slope { size_t n; double slope, bound; };
/* The sums a least-squares slope is made from. */
struct mem_sums { double sx, sy, sxx, sxy, syy; };

struct mem_step_row { int64_t number; int counted; int64_t start, peak, end; };

struct mem_site {
	char *label;                 /* the site ("(no stack) ..." without one) */
	enum mem_owner owner;
	uint64_t allocs, frees;
	int64_t level;               /* scratch while walking; after finish: held at the trace's end */
	int64_t at_peak;             /* held at the series' peak */
	int64_t last_end;            /* held at the last counted step's end so far */
	int never_falls;             /* held-at-step-end never fell over the counted steps */
	size_t rises;                /* counted steps whose end held more than the one before's */
	struct mem_slope growth;
	struct mem_sums sums;        /* for growth */
};

struct mem_series_view {
	uint32_t pid, dev;
	uint64_t global_mem;         /* the device's total memory; 0 unknown */
	uint64_t allocs, frees;
	int64_t peak, end;           /* highest level; level at the end */
	uint64_t peak_t;
	int64_t owner_peak[MO_COUNT];/* each owner's own highest level */
	int64_t owner_at_peak[MO_COUNT], owner_end[MO_COUNT];
	struct mem_step_row *steps; size_t nsteps;
	struct mem_slope growth;
	int grows;                   /* growth.slope > growth.bound and > 0 */
	struct mem_site *sites; size_t nsites, csites; /* sorted: leaking first, by slope, then by held at peak */
};

struct mem_failure {
	uint32_t pid, tid, dev;      /* dev: the series with the most live memory at the failure */
	uint32_t stack_id;           /* the call's stack, 0 none */
	uint64_t t;                  /* the call's start */
	const char *call;            /* its name */
	int32_t status;
	uint32_t failures;           /* failed allocation calls of the process (nested runtime/driver once) */
	const char *site;            /* the call's site; "(no stack)" */
	int64_t live;                /* device memory live at t (that series) */
	uint64_t global_mem;         /* the device's total; 0 unknown */
	struct mem_site *by_site; size_t nby_site; /* live at t by site, most first (labels borrowed) */
	int has_request;             /* the call's alloc_fail record was found: the three below */
	uint64_t requested;          /* the size asked for; 0 not known for this call */
	uint64_t nvml_total, nvml_free; /* the device's memory at the failure (NVML); total 0: unknown */
	int from_table;              /* by_site and live from the shim's live table (mem_live records) */
	uint64_t table_allocs;       /* from_table: the live allocations it held on dev */
	uint64_t untabled_bytes, untabled_allocs; /* from_table: allocations seen but not tabled (an upper bound) */
};

struct mem_view;

/* stk: the stacks to read sites from (fed by the caller; NULL: no sites
 * from stacks). */
struct mem_view *mem_view_new(gp_reader *r, struct stacks *stk);
/* Any record; those above are used.  pid/tid: the record's (tool_pid,
 * tool_rec_tid). */
void mem_view_add(struct mem_view *m, uint32_t pid, uint32_t tid, const gp_record *rec);
/* Adds src, the records of the next slice of time (before finish), to m:
 * every list as one read's, the order of the records aside (finish sorts
 * them on every field).  0, or -1 when the two hold more than
 * MEM_VIEW_MAX_EVENTS memory records (which ones one read drops depends
 * on its order). */
int mem_view_merge(struct mem_view *m, struct mem_view *src);
/* The steps of pid (copied); a process without steps gets no per-step rows
 * and no growth. */
void mem_view_set_steps(struct mem_view *m, uint32_t pid, const struct mem_step *v, size_t n);
/* dp: the devices' properties (their totals; NULL: none known). */
struct devprops;
void mem_view_finish(struct mem_view *m, const struct devprops *dp);
size_t mem_view_nseries(const struct mem_view *m);
const struct mem_series_view *mem_view_series(const struct mem_view *m, size_t i);
size_t mem_view_nfailures(const struct mem_view *m);
const struct mem_failure *mem_view_failure(const struct mem_view *m, size_t i);
/* The failed call's request in words, one definition for the memory
 * report and advise: "requested 1.1 TB; 80.0 GB free of 85.9 GB (NVML)",
 * "requested size unknown for cuMemAllocPitch", or "requested size: not
 * recorded (a trace from before format 2.1)". */
void mem_failure_request(const struct mem_failure *f, char *out, size_t n);
/* Where the live memory by site came from, in words, one definition for
 * the memory report and advise; "" unless from the shim's live table:
 * "live by site from the shim's live table (102 allocations made while it
 * ran); NVML's used 1.2 GB is 1.1 GB more (the CUDA context, memory
 * allocated before the shim, other processes)", and what it could not
 * hold. */
void mem_failure_live_source(const struct mem_failure *f, char *out, size_t n);
/* The series of (pid, dev), NULL none. */
const struct mem_series_view *mem_view_find(const struct mem_view *m, uint32_t pid, uint32_t dev);
uint64_t mem_view_dropped(const struct mem_view *m);
void mem_view_free(struct mem_view *m); /* NULL ok */

#endif
