/* gps_cbid.h — which CUDA API calls the trace records, chosen by callback
 * NAME (nvidia/gps_cbid.c); pure string code, unit-tested without CUPTI.
 * Which of them record a call stack (the launch calls) is libprof's
 * gp_launch_kind, by callback id (nvidia/gps_cupti_stacks.c). */
#ifndef GPS_CBID_H
#define GPS_CBID_H

#include <stddef.h>

#include "gp_trace.h"

/* The API callback domains, numbered as CUPTI numbers them
 * (CUpti_CallbackDomain; nvidia/gps_cupti.c checks that they agree) — not
 * the trace format's gp_api_domain, which numbers them the other way round:
 * gps_cb_domain_format is the one conversion. */
enum gps_cb_domain { GPS_CB_DRIVER = 1, GPS_CB_RUNTIME = 2 };
static inline enum gp_api_domain gps_cb_domain_format(enum gps_cb_domain d)
{
	return d == GPS_CB_RUNTIME ? GP_API_RUNTIME : GP_API_DRIVER;
}

/* Does this API name belong to the default set of the domain? */
int gps_cbid_default(enum gps_cb_domain domain, const char *name);
/* Writes the display form of a CUPTI callback name ("cudaMemcpy_v3020" ->
 * "cudaMemcpy"). */
void gps_cbid_clean_name(const char *name, char *out, size_t outsz);

#endif
