/* mem_view.h — device memory held over time by owner and call site, per
 * step, its growth per step, and what was live when an allocation failed
 * (docs/MEMORY.md): `stats --report memory_steps` and advise's
 * out-of-memory rule.
 *
 * Inputs, from the trace:
 *  - GP_REC_MEMORY records of device memory (mem_kind GP_MEM_DEVICE, op 1
 *    alloc / 2 free; `gpuprof run --activity=default,memory`): what is held.
 *    A free without a size takes that of the allocation at its address.
 *  - GP_REC_API records of device allocation calls (libprof's gp_alloc.h,
 *    by callback id: device, stream-ordered and cuMemCreate): joined to their memory
 *    record by correlation id, they give an allocation its call's name, its
 *    thread and its stack (stack_id: with stacks recorded at allocation
 *    calls).  A call whose status is 2 (cudaErrorMemoryAllocation, and
 *    CUDA_ERROR_OUT_OF_MEMORY: both 2) is a failed allocation.
 *  - GP_REC_ALLOC_FAIL records (format 2.1; the shim writes one for each
 *    failed allocation call): joined to the failed call by correlation id,
 *    they give the size it asked for, its device, and the device's total
 *    and free memory at the failure as NVML saw them.
 *  - GP_REC_MEM_LIVE records (format 2.2; the shim writes them at an
 *    out-of-memory failure while its live table is kept: armed mode's oom
 *    rule): joined to the failed call by correlation id, the live memory by
 *    site at that instant, exact for the allocations made while the shim
 *    ran.  They win over the memory records for what was live.
 *  - GP_REC_DEVICE records: the device's total memory.
 *  - the steps, from the caller (mem_view_set_steps).
 *
 * Owner of an allocation (enum mem_owner), first that applies: a
 * stream-ordered call (name with "Async": cudaMallocAsync's pools); a
 * frame of its stack in PyTorch's caching allocator (CUDACachingAllocator,
 * c10::cuda, libc10_cuda), NCCL (nccl), cuBLAS/cuDNN (cublas, cudnn); with
 * no stack: cuMemCreate (virtual memory: PyTorch's expandable segments, NCCL
 * buffers), or a size that is a multiple of 2 MiB (the caching allocator's
 * segments are: "by size", a guess); else other.
 *
 * Site of an allocation: its stack's site (analysis/stacks/stacks.h, the site
 * rule given) with the owner; with no stack, the owner, the call's name and
 * the size ("(no stack) cudaMalloc 4194304 B"): a leak of one size per step
 * is still one site.
 *
 * Figures per process and device (a series):
 *  - per step: held at its start (the level before its first instant), its
 *    peak (the highest level within it, the start's included) and held at
 *    its end;
 *  - growth per step: the least-squares slope of held-at-step-end over the
 *    counted steps (their ordinal 0..n-1 as x), with its standard error;
 *    `bound` = 2 standard errors (about 95 % for normal residuals); the
 *    slope is exact for memory that rises by the same bytes every step.
 *    The series grows when slope > bound and slope > 0.  Per site the same
 *    slope; a site leaks (mem_site_leaks) when, over at least 3 counted
 *    steps, its held-at-step-end never falls and rises from at least half
 *    of the steps to the next, with a slope > 0 (memory that rises step
 *    after step and is never given back; one rise, such as the last step
 *    of a job that died holding its activations, is no leak);
 *  - the run's peak: its level, time, and what was live then by site;
 *  - out of memory: the last failed allocation call of the process (a
 *    caching allocator frees its cache and calls again: earlier failures
 *    that a later success followed are counted, not named), what was live
 *    at its start by site (in the series of the failed call's device when
 *    its alloc_fail record names one, else of the device that held the
 *    most), the device's total memory; with its alloc_fail record the
 *    requested size and NVML's total and free.
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

/* The least-squares slope of n values over x = 0..n-1 (mem_view.h). */
struct mem_slope { size_t n; double slope, bound; };

struct mem_step_row { int64_t number; int counted; int64_t start, peak, end; };

struct mem_site {
	char *label;                 /* the site ("(no stack) ..." without one) */
	enum mem_owner owner;
	uint64_t allocs, frees, bytes_allocated;
	int64_t level;               /* scratch while walking; after finish: held at the trace's end */
	int64_t at_peak;             /* held at the series' peak */
	int64_t first_end, last_end; /* held at the first and last counted step's end */
	int never_falls;             /* held-at-step-end never fell over the counted steps */
	size_t rises;                /* counted steps whose end held more than the one before's */
	struct mem_slope growth;
	double sx, sy, sxx, sxy, syy;/* sums for growth */
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
void mem_view_finish(struct mem_view *m);
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
