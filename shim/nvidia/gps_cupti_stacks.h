/* gps_cupti_stacks.h — GPUPROF_STACKS on the CUDA side
 * (nvidia/gps_cupti_stacks.c): which API callbacks take a call stack, and
 * where in each call's parameters the key that tells its call sites apart
 * (the kernel function, the graph) is.  The stacks themselves are
 * features/gps_stacks.c's. */
#ifndef GPS_CUPTI_STACKS_H
#define GPS_CUPTI_STACKS_H

#include <stdint.h>

#include "gp_trace.h"
#include "nvidia/gps_cbid.h"

#define GPS_STK_MAX_CBID 4096
/* Per (domain, cbid): 0 = no stack; GPS_STK_EVERY = a stack at every call
 * (allocations, gps_cupti_stacks.c); else 1 + how the call's site key is
 * found in its params.  Filled at CUPTI bind time. */
#define GPS_STK_EVERY 255
extern unsigned char gps_cupti_stack_want[3][GPS_STK_MAX_CBID];

/* At CUPTI bind (nvidia/gps_cupti.c), once per process: builds the want
 * table from CUPTI's callback names (name(dom, cbid) gives them) and has
 * features/gps_stacks.c bind its unwinder.  No-op when GPUPROF_STACKS is
 * off. */
void gps_cupti_stacks_bind(const char *(*name)(enum gps_cb_domain dom, uint32_t cbid));
/* The API exit callback of a call with gps_cupti_stack_want set, outermost
 * on its thread, inside gps_enter: the stack id for its record
 * (gps_stacks_for_site). */
uint32_t gps_cupti_stack_for_call(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid,
				  const void *params);

#endif
