/* gps_cupti_alloc.c — see gps_cupti_alloc.h.
 *
 * A failed allocation is rare and usually the job's last act (PyTorch's
 * "CUDA out of memory"), so this path may cost what it needs: one CUPTI
 * query for the context's device and one NVML query for its memory, on the
 * job's thread inside the callback.  It never calls the CUDA runtime or
 * driver (inside a CUPTI callback that would re-enter CUDA); NVML is a
 * separate library. */
#include <string.h>

#include "core/gps_core.h"
#include "gp_alloc.h"
#include "features/gps_flight.h"
#include "nvidia/gps_cupti_alloc.h"
#include "nvidia/gps_cupti_fns.h"
#include "nvidia/gps_cupti_params.h"
#include "nvidia/gps_nvml.h"

unsigned char gps_cupti_alloc_at[3][GPS_ALLOC_MAX_CBID];

void gps_cupti_alloc_bind(const char *(*name)(enum gps_cb_domain dom, uint32_t cbid))
{
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++)
		for (uint32_t cbid = 1; cbid < GPS_ALLOC_MAX_CBID; cbid++) {
			if (gp_alloc_kind(gps_cb_domain_format(dom), cbid) == GP_ALLOC_NONE)
				continue;
			const char *nm = name(dom, cbid);
			char clean[256];
			int at = -1;
			if (nm) {
				gps_cbid_clean_name(nm, clean, sizeof clean);
				at = gps_cupti_alloc_size_at(clean);
			}
			gps_cupti_alloc_at[dom][cbid] = at < 0 || at % 8 ? 1 : (unsigned char)(2 + at / 8);
		}
}

int gps_cupti_alloc_enable(int driver, int (*enable)(enum gps_cb_domain dom, uint32_t cbid))
{
	int n = 0;
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++) {
		if (dom == GPS_CB_DRIVER && !driver)
			continue;
		for (uint32_t cbid = 1; cbid < GPS_ALLOC_MAX_CBID; cbid++)
			if (gps_cupti_alloc_at[dom][cbid] && enable(dom, cbid) == 0)
				n++;
	}
	return n;
}

void gps_cupti_alloc_failed(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid, const char *api, void *ctx,
			    const void *params, uint64_t start, uint64_t correlation_id, int status)
{
	unsigned at = gps_cupti_alloc_at[dom][cbid];
	uint64_t bytes = 0, total = 0, free_bytes = 0;
	if (at >= 2 && params)
		memcpy(&bytes, (const char *)params + (at - 2) * 8u, sizeof bytes);
	uint32_t dev = GP_DEVICE_UNKNOWN;
	if (!gps_p_cuptiGetDeviceId || !ctx || gps_p_cuptiGetDeviceId((CUcontext)ctx, &dev) != CUPTI_SUCCESS)
		dev = GP_DEVICE_UNKNOWN;
	if (dev != GP_DEVICE_UNKNOWN && gps_nvml_device_memory(dev, &total, &free_bytes) != 0)
		total = free_bytes = 0;
	if (rec) {
		gp_record r;
		memset(&r, 0, sizeof r);
		r.type = GP_REC_ALLOC_FAIL;
		r.u.alloc_fail = (gp_rec_alloc_fail){
			.ts_ns = start ? start : gps_now(),
			.correlation_id = correlation_id,
			.bytes = bytes,
			.total_bytes = total,
			.free_bytes = free_bytes,
			.device_id = dev,
			.domain = gps_cb_domain_format(dom),
			.cbid = cbid,
			.status = status,
		};
		gp_emit(rec, &r);
	}
	/* GPUPROF_TRIGGER=oom (armed mode's default) */
	if (status == GP_ALLOC_STATUS_OOM && (gps_flight_rules & GP_RULE_OOM) &&
	    gp_alloc_on_device(gp_alloc_kind(gps_cb_domain_format(dom), cbid)))
		gps_flight_oom(api, bytes, total, free_bytes);
}
