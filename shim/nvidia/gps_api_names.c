/* gps_api_names.c — the interned display names of CUDA API calls
 * (nvidia/gps_api_names.h), for the callback path (nvidia/gps_cupti.c) and
 * per-API activity records (nvidia/gps_activity.c) alike. */
#include "core/gps_core.h"
#include "nvidia/gps_api_names.h"
#include "nvidia/gps_cbid.h"
#include "nvidia/gps_cupti_fns.h"

_Atomic uint64_t gps_api_name_cache[3][GPS_API_MAX_CBID];

__attribute__((noinline)) uint32_t gps_api_name_slow(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid,
						     const char *fallback, unsigned gen)
{
	const char *name = NULL;
	if (GPS_CUPTI_QUIET(cuptiGetCallbackName, (CUpti_CallbackDomain)dom, cbid, &name) != CUPTI_SUCCESS ||
	    !name)
		name = fallback;
	if (!name)
		return 0;
	char clean[256];
	gps_cbid_clean_name(name, clean, sizeof clean);
	uint32_t id = gp_intern(rec, clean);
	if (id && cbid < GPS_API_MAX_CBID && (dom == GPS_CB_DRIVER || dom == GPS_CB_RUNTIME))
		atomic_store_explicit(&gps_api_name_cache[dom][cbid], ((uint64_t)gen << 32) | id,
				      memory_order_relaxed);
	return id;
}
