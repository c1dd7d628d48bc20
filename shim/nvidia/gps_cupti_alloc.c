/* gps_cupti_alloc.c — see gps_cupti_alloc.h.
 *
 * A failed allocation is rare and usually the job's last act (PyTorch's
 * "CUDA out of memory"), so this path may cost what it needs: one CUPTI
 * query for the context's device and one NVML query for its memory, on the
 * job's thread inside the callback.  It never calls the CUDA runtime or
 * driver (inside a CUPTI callback that would re-enter CUDA); NVML is a
 * separate library.  It writes the live table's snapshot too (the failure
 * is the instant it is for).
 *
 * The live table's bookkeeping (gps_cupti_alloc_track) is on the hot path
 * of every allocation and free while the oom rule is on: two loads from
 * the call's params, a device query cached per thread and context, one
 * hash operation (features/gps_livemem.c). */
#include <string.h>

#include "core/gps_core.h"
#include "core/gps_log.h"
#include "gp_alloc.h"
#include "features/gps_flight.h"
#include "features/gps_livemem.h"
#include "nvidia/gps_cupti_alloc.h"
#include "nvidia/gps_cupti_fns.h"
#include "nvidia/gps_cupti_params.h"
#include "nvidia/gps_nvml.h"

unsigned char gps_cupti_alloc_at[3][GPS_ALLOC_MAX_CBID];
unsigned char gps_cupti_free_tab[3][GPS_ALLOC_MAX_CBID];
/* Per (domain, cbid) of a device allocation call: 0 = the live table cannot
 * hold its result (no size or no out parameter to read); 1 + offset/8 = its
 * out parameter's offset (its size: gps_cupti_alloc_at). */
static unsigned char out_at[3][GPS_ALLOC_MAX_CBID];

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
			int out = nm && at >= 0 ? gps_cupti_alloc_out_at(clean) : -1;
			out_at[dom][cbid] = out < 0 || out % 8 ? 0 : (unsigned char)(1 + out / 8);
		}
	/* the frees, by name: the table's other half */
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++)
		for (uint32_t cbid = 1; cbid < GPS_ALLOC_MAX_CBID; cbid++) {
			const char *nm = name(dom, cbid);
			if (!nm)
				continue;
			char clean[256];
			int handle;
			gps_cbid_clean_name(nm, clean, sizeof clean);
			int at = gps_cupti_free_at(clean, &handle);
			if (at >= 0 && at % 8 == 0)
				gps_cupti_free_tab[dom][cbid] = (unsigned char)((1 + at / 8) | (handle ? GPS_FREE_HANDLE : 0));
		}
	/* the oom rule (armed mode's default) keeps the live table: its
	 * capture then says what was live by site */
	if ((gps_flight_rules & GP_RULE_OOM) && gps_livemem_start() != 0)
		gps_warn("flight recorder: no memory for the live allocation table; an out-of-memory capture will not "
			 "hold the live memory by site");
}

/* CUDA's device of a context: one CUPTI query per thread and context (a
 * thread allocates on one device, nearly always). */
static uint32_t device_of(void *ctx)
{
	static GPS_TLS void *last_ctx;
	static GPS_TLS uint32_t last_dev;
	if (ctx && ctx == last_ctx)
		return last_dev;
	uint32_t dev = GP_DEVICE_UNKNOWN;
	if (!gps_p_cuptiGetDeviceId || !ctx || gps_p_cuptiGetDeviceId((CUcontext)ctx, &dev) != CUPTI_SUCCESS)
		return GP_DEVICE_UNKNOWN;
	last_ctx = ctx;
	last_dev = dev;
	return dev;
}

void gps_cupti_alloc_track(enum gps_cb_domain dom, uint32_t cbid, void *ctx, const void *params, uint32_t stack_id)
{
	if (!params)
		return;
	unsigned fr = gps_cupti_free_tab[dom][cbid];
	if (fr) {
		uint64_t key;
		memcpy(&key, (const char *)params + ((fr & ~GPS_FREE_HANDLE) - 1u) * 8u, sizeof key);
		gps_livemem_free(key, !!(fr & GPS_FREE_HANDLE));
		return;
	}
	unsigned at = gps_cupti_alloc_at[dom][cbid];
	uint32_t fdom = gps_cb_domain_format(dom);
	if (!at || !gp_alloc_on_device(gp_alloc_kind(fdom, cbid)))
		return; /* host and managed memory: not device memory */
	uint64_t bytes = 0, key = 0;
	if (at >= 2)
		memcpy(&bytes, (const char *)params + (at - 2) * 8u, sizeof bytes);
	unsigned out = out_at[dom][cbid];
	void *outp = NULL;
	if (out)
		memcpy(&outp, (const char *)params + (out - 1u) * 8u, sizeof outp);
	if (outp)
		memcpy(&key, outp, sizeof key); /* the call succeeded: it wrote there */
	uint32_t dev = device_of(ctx);
	if (!out || !key)
		gps_livemem_untabled(bytes, dev);
	else
		gps_livemem_alloc(key, gp_alloc_kind(fdom, cbid) == GP_ALLOC_VMM, bytes, dev, fdom, cbid, stack_id);
}

int gps_cupti_alloc_enable(int driver, int (*enable)(enum gps_cb_domain dom, uint32_t cbid))
{
	int n = 0;
	for (enum gps_cb_domain dom = GPS_CB_DRIVER; dom <= GPS_CB_RUNTIME; dom++) {
		if (dom == GPS_CB_DRIVER && !driver)
			continue;
		for (uint32_t cbid = 1; cbid < GPS_ALLOC_MAX_CBID; cbid++)
			if ((gps_cupti_alloc_at[dom][cbid] || (gps_livemem_kept() && gps_cupti_free_tab[dom][cbid])) &&
			    enable(dom, cbid) == 0)
				n++;
	}
	return n;
}

void gps_cupti_alloc_failed(gp_recorder *rec, enum gps_cb_domain dom, uint32_t cbid, const char *api, void *ctx,
			    const void *params, uint64_t start, uint64_t correlation_id, int status, uint32_t stack_id)
{
	unsigned at = gps_cupti_alloc_at[dom][cbid];
	uint64_t bytes = 0, total = 0, free_bytes = 0;
	if (at >= 2 && params)
		memcpy(&bytes, (const char *)params + (at - 2) * 8u, sizeof bytes);
	uint32_t dev = device_of(ctx);
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
		/* what was live at the call's start, by site: the table has not
		 * seen this call (it failed) */
		if (status == GP_ALLOC_STATUS_OOM && gp_alloc_on_device(gp_alloc_kind(gps_cb_domain_format(dom), cbid))) {
			gps_livemem_snapshot(rec, r.u.alloc_fail.ts_ns, correlation_id);
			gps_livemem_failed(rec, r.u.alloc_fail.ts_ns, correlation_id, bytes, dev, gps_cb_domain_format(dom),
					   cbid, stack_id);
		}
	}
	/* GPUPROF_TRIGGER=oom (armed mode's default) */
	if (status == GP_ALLOC_STATUS_OOM && (gps_flight_rules & GP_RULE_OOM) &&
	    gp_alloc_on_device(gp_alloc_kind(gps_cb_domain_format(dom), cbid)))
		gps_flight_oom(api, bytes, total, free_bytes);
}
