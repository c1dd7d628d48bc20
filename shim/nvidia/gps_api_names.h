/* gps_api_names.h — the display name of a CUDA API call in the trace
 * (nvidia/gps_api_names.c): its CUPTI callback name, cleaned
 * (gps_cbid_clean_name), interned once per (domain, cbid) and recorder
 * generation.  The hot path (every traced call) is one load and a compare. */
#ifndef GPS_API_NAMES_H
#define GPS_API_NAMES_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/gps_core.h"
#include "nvidia/gps_cbid.h"

#define GPS_API_MAX_CBID 4096

/* name ids per (domain, cbid), tagged with the recorder generation so a
 * forked child's new recorder re-interns: (gen << 32) | id. */
extern _Atomic uint64_t gps_api_name_cache[3][GPS_API_MAX_CBID];

/* The first call of an API in a trace: cuptiGetCallbackName (fallback when
 * CUPTI has no name), interning; never on the hot path again. */
uint32_t gps_api_name_slow(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid, const char *fallback,
			   unsigned gen);

static inline uint32_t gps_api_name_id(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid,
				       const char *fallback)
{
	unsigned gen = atomic_load_explicit(&gps.gen, memory_order_relaxed);
	if (__builtin_expect(cbid < GPS_API_MAX_CBID && (unsigned)(dom - GPS_CB_DRIVER) < 2, 1)) {
		uint64_t v = atomic_load_explicit(&gps_api_name_cache[dom][cbid], memory_order_relaxed);
		if (__builtin_expect((uint32_t)(v >> 32) == gen && (uint32_t)v, 1))
			return (uint32_t)v;
	}
	return gps_api_name_slow(rec, dom, cbid, fallback, gen);
}

#endif
