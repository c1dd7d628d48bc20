/* gps_cupti_alloc.h — allocation calls on the CUDA side
 * (nvidia/gps_cupti_alloc.c): which API callbacks are allocations
 * (libprof's gp_alloc_kind, by callback id), where each one's requested
 * size is in its params, and what the shim does when one fails: a
 * GP_REC_ALLOC_FAIL record (the size asked for, the device's total and free
 * memory from NVML) and the flight recorder's oom rule. */
#ifndef GPS_CUPTI_ALLOC_H
#define GPS_CUPTI_ALLOC_H

#include <stdint.h>

#include "gp_trace.h"
#include "nvidia/gps_cbid.h"

#define GPS_ALLOC_MAX_CBID 1024
/* Per (domain, cbid): 0 = not an allocation call; 1 = one whose size is
 * not read; 2 + offset/8 = one whose size_t size is at that offset of its
 * params.  Filled at CUPTI bind time. */
extern unsigned char gps_cupti_alloc_at[3][GPS_ALLOC_MAX_CBID];

/* At CUPTI bind (nvidia/gps_cupti.c), once per process: the table above
 * from CUPTI's callback names. */
void gps_cupti_alloc_bind(const char *(*name)(enum gps_cb_domain dom, uint32_t cbid));

static inline int gps_cupti_is_alloc(uint32_t dom, uint32_t cbid)
{
	return dom < 3 && cbid < GPS_ALLOC_MAX_CBID && gps_cupti_alloc_at[dom][cbid];
}

/* The API exit callback of an allocation call that returned status != 0,
 * outermost on its thread, inside gps_enter (rec: NULL when API records
 * are off: the rule is still told).  ctx: the callback's CUcontext;
 * params: its functionParams; start: the call's start on the trace clock
 * (0: not timed: now).  Never calls CUDA. */
void gps_cupti_alloc_failed(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid, const char *api, void *ctx,
			    const void *params, uint64_t start, uint64_t correlation_id, int status);

/* The allocation calls' callbacks on (enable(dom, cbid): 0 when done), for
 * a failure to be seen while API records are off (the flight recorder's
 * GPUPROF_FLIGHT_API=capture or auto switched); how many. */
int gps_cupti_alloc_enable(int driver, int (*enable)(enum gps_cb_domain dom, uint32_t cbid));

#endif
