/* gps_cupti_markers.h — the API calls the step finder is fed
 * (nvidia/gps_cupti_markers.c; features/gps_stepfind.h): per (domain,
 * cbid) the class of event a call is (copy and direction, synchronisation,
 * graph launch, kernel launch), and its signature, read from the call's
 * parameters as CUPTI hands them to the callback. */
#ifndef GPS_CUPTI_MARKERS_H
#define GPS_CUPTI_MARKERS_H

#include <stdint.h>

#include "nvidia/gps_cbid.h"

#define GPS_MK_MAX_CBID 4096
/* Per (domain, cbid): 0 = not fed; else enum gps_sig_class.  Filled at
 * CUPTI bind time when the step finder is on. */
extern unsigned char gps_cupti_marker_class[3][GPS_MK_MAX_CBID];

/* At CUPTI bind, once per process (name(dom, cbid): CUPTI's callback name) */
void gps_cupti_markers_bind(const char *(*name)(enum gps_cb_domain dom, uint32_t cbid));
/* The signature of a call of a class above (features/gps_period.h) */
uint64_t gps_cupti_marker_sig(enum gps_cb_domain dom, uint32_t cbid, const void *params);
/* Callbacks on for the calls of the classes in `classes` (bits 1 <<
 * GPS_SIG_*), through enable(dom, cbid); how many. */
int gps_cupti_markers_enable(unsigned classes, int driver, int (*enable)(enum gps_cb_domain dom, uint32_t cbid));
/* The marker calls' callbacks not of classes off (disable: 0 when done);
 * how many were switched off */
int gps_cupti_markers_narrow(unsigned classes, int driver, int (*disable)(enum gps_cb_domain dom, uint32_t cbid));

#endif
