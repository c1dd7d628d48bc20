/* gps_livemem.h — the live table: the device allocations this process has
 * made and not freed since the shim saw its first one (address or handle ->
 * size, device, call, stack), kept while the flight recorder's oom rule is
 * on, so that an out-of-memory failure's capture holds what was live at
 * that instant by site, however short the history before it
 * (docs/MEMORY.md "Live at the failure").  Vendor-neutral: the CUDA side
 * (nvidia/gps_cupti_alloc.c) reads the calls' parameters and tells it.
 *
 * Bounded: GPS_LIVE_SLOTS entries of 32 bytes, allocated once at start;
 * past GPS_LIVE_MAX live entries an allocation is counted as untabled (its
 * bytes too) and said so in the snapshot.  Each allocation and free costs a
 * hash lookup under one leaf mutex (never held across a libprof call). */
#ifndef GPS_LIVEMEM_H
#define GPS_LIVEMEM_H

#include <stdatomic.h>
#include <stdint.h>

#include "gp_trace.h"

#define GPS_LIVE_SLOTS (1u << 15)                  /* 1 MiB of entries */
#define GPS_LIVE_MAX (GPS_LIVE_SLOTS / 4 * 3)      /* live entries at most (load 3/4) */
#define GPS_LIVE_SITES_WRITTEN 256                 /* sites written per device; the rest summed */

/* The table is kept (gps_livemem_start succeeded): set once, before the
 * callbacks that use it are on; read with gps_livemem_kept(). */
extern atomic_int gps_livemem_on;
static inline int gps_livemem_kept(void) { return atomic_load_explicit(&gps_livemem_on, memory_order_acquire); }

/* Allocates the table; 0 when kept.  Once per process, before the first
 * allocation callback can fire (at CUPTI bind). */
int gps_livemem_start(void);

/* An allocation of bytes made: key is its address (handle: 0) or its
 * cuMemCreate handle (handle: 1); dev CUDA's device id; domain (libprof's
 * gp_api_domain) and cbid the call; stack_id its stack, 0 none. */
void gps_livemem_alloc(uint64_t key, int handle, uint64_t bytes, uint32_t dev, uint32_t domain, uint32_t cbid,
		       uint32_t stack_id);
/* A device allocation the table cannot hold (no size or address to read:
 * the pitched and 3D calls, the legacy cuMemAlloc): counted as untabled. */
void gps_livemem_untabled(uint64_t bytes, uint32_t dev);
/* A free of key (address, or handle for cuMemRelease); a key not in the
 * table (allocated before it, or untabled) is ignored. */
void gps_livemem_free(uint64_t key, int handle);

/* Writes the table, summed by site, as GP_REC_MEM_LIVE records stamped
 * (ts, corr) — the failed call's — from the calling thread (inside
 * gps_enter).  Per device the GPS_LIVE_SITES_WRITTEN largest sites, then
 * one REST record for the others, then one UNTABLED record per device when
 * anything was not tabled.  Mallocs a copy of the live entries (at a failure only). */
void gps_livemem_snapshot(gp_recorder *rec, uint64_t ts, uint64_t corr);
/* The failed request's own GP_MEM_LIVE_FAILED record, after the snapshot:
 * its call, size and stack (the failing line even where API records are
 * off and no API record holds the call's stack). */
void gps_livemem_failed(gp_recorder *rec, uint64_t ts, uint64_t corr, uint64_t bytes, uint32_t dev, uint32_t domain,
			uint32_t cbid, uint32_t stack_id);

/* Fork child: an empty table, a fresh lock (the parent's allocations are
 * not the child's: a CUDA context does not survive fork). */
void gps_livemem_after_fork_child(void);

#endif
