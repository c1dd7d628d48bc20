/* gps_livemem.c — see gps_livemem.h.
 *
 * An open-addressing hash table with linear probing and backward-shift
 * deletion (no tombstones: a job that allocates and frees forever never
 * fills it with dead slots).  Key 0 marks an empty slot (no allocation has
 * address 0).  A cuMemCreate handle and a device address could be the same
 * number: the entry's `handle` bit is part of its identity. */
#include "features/gps_livemem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>


struct live_entry {
	uint64_t key;
	uint64_t bytes;
	uint32_t stack_id;
	uint16_t cbid;
	uint8_t domain;
	uint8_t handle;
	uint32_t dev;
	uint32_t pad;
};
_Static_assert(sizeof(struct live_entry) == 32, "an entry is 32 bytes (GPS_LIVE_SLOTS' memory)");

/* untabled allocations per device; the last slot: device unknown or past it */
#define UNT_DEVS 17

atomic_int gps_livemem_on;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct live_entry *slots;
static uint32_t nlive;
static uint64_t unt_bytes[UNT_DEVS], unt_allocs[UNT_DEVS];

static uint32_t slot_of(uint64_t key) { return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 49); } /* 15 bits */
_Static_assert(GPS_LIVE_SLOTS == 1u << 15, "slot_of takes 15 bits");

int gps_livemem_start(void)
{
	if (gps_livemem_kept())
		return 0;
	slots = calloc(GPS_LIVE_SLOTS, sizeof *slots);
	if (!slots)
		return -1;
	atomic_store_explicit(&gps_livemem_on, 1, memory_order_release);
	return 0;
}

static void untabled_locked(uint64_t bytes, uint32_t dev)
{
	uint32_t d = dev < UNT_DEVS - 1 ? dev : UNT_DEVS - 1;
	unt_bytes[d] += bytes;
	unt_allocs[d]++;
}

void gps_livemem_alloc(uint64_t key, int handle, uint64_t bytes, uint32_t dev, uint32_t domain, uint32_t cbid,
		       uint32_t stack_id)
{
	if (!gps_livemem_kept())
		return;
	pthread_mutex_lock(&live_lock);
	if (!key || nlive >= GPS_LIVE_MAX) {
		untabled_locked(bytes, dev);
	} else {
		uint32_t i = slot_of(key);
		/* the same key again (a free we did not see): the new one wins */
		while (slots[i].key && !(slots[i].key == key && slots[i].handle == !!handle))
			i = (i + 1) & (GPS_LIVE_SLOTS - 1);
		if (!slots[i].key)
			nlive++;
		slots[i] = (struct live_entry){ .key = key, .bytes = bytes, .stack_id = stack_id, .cbid = (uint16_t)cbid,
						.domain = (uint8_t)domain, .handle = (uint8_t)!!handle, .dev = dev };
	}
	pthread_mutex_unlock(&live_lock);
}

void gps_livemem_untabled(uint64_t bytes, uint32_t dev)
{
	if (!gps_livemem_kept())
		return;
	pthread_mutex_lock(&live_lock);
	untabled_locked(bytes, dev);
	pthread_mutex_unlock(&live_lock);
}

void gps_livemem_free(uint64_t key, int handle)
{
	if (!gps_livemem_kept() || !key)
		return;
	pthread_mutex_lock(&live_lock);
	uint32_t i = slot_of(key);
	while (slots[i].key && !(slots[i].key == key && slots[i].handle == !!handle))
		i = (i + 1) & (GPS_LIVE_SLOTS - 1);
	if (slots[i].key) {
		/* backward shift: move up each later entry of the run whose home
		 * slot is not cyclically in (i, j] */
		uint32_t j = i;
		for (;;) {
			j = (j + 1) & (GPS_LIVE_SLOTS - 1);
			if (!slots[j].key)
				break;
			uint32_t h = slot_of(slots[j].key);
			int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
			if (stays)
				continue;
			slots[i] = slots[j];
			i = j;
		}
		slots[i].key = 0;
		nlive--;
	}
	pthread_mutex_unlock(&live_lock);
}

/* a site: what the records of one failure sum by */
static int cmp_site_key(const void *a, const void *b)
{
	const struct live_entry *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->cbid != y->cbid)
		return x->cbid < y->cbid ? -1 : 1;
	/* no stack: the size is part of the site */
	uint64_t sx = x->stack_id ? 0 : x->key, sy = y->stack_id ? 0 : y->key;
	return sx < sy ? -1 : sx > sy;
}

/* summed sites: by device, then most bytes first */
static int cmp_site_bytes(const void *a, const void *b)
{
	const struct live_entry *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return cmp_site_key(a, b);
}

static void emit_live(gp_recorder *rec, uint64_t ts, uint64_t corr, enum gp_mem_live_kind kind, uint32_t dev,
		      const struct live_entry *site, uint64_t bytes, uint64_t allocs)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_MEM_LIVE;
	r.u.mem_live = (gp_rec_mem_live){
		.ts_ns = ts,
		.correlation_id = corr,
		.bytes = bytes,
		.allocs = allocs,
		.size = site && !site->stack_id ? site->key : 0,
		.stack_id = site ? site->stack_id : 0,
		.device_id = dev,
		.domain = site ? site->domain : 0,
		.cbid = site ? site->cbid : 0,
		.kind = kind,
	};
	gp_emit(rec, &r);
}

void gps_livemem_snapshot(gp_recorder *rec, uint64_t ts, uint64_t corr)
{
	if (!gps_livemem_kept() || !rec)
		return;
	/* a copy of the live entries, each made a site of one allocation: key
	 * becomes the size (the site's when it has no stack), pad the count */
	pthread_mutex_lock(&live_lock);
	uint32_t n = 0;
	struct live_entry *v = malloc((nlive ? nlive : 1) * sizeof *v);
	for (uint32_t i = 0; v && i < GPS_LIVE_SLOTS; i++)
		if (slots[i].key) {
			v[n] = slots[i];
			v[n].key = v[n].bytes;
			v[n].pad = 1;
			n++;
		}
	uint64_t ub[UNT_DEVS], ua[UNT_DEVS];
	memcpy(ub, unt_bytes, sizeof ub);
	memcpy(ua, unt_allocs, sizeof ua);
	pthread_mutex_unlock(&live_lock);
	if (!v)
		return;
	/* sum by site: bytes into .bytes, allocations into .pad */
	uint32_t ns = 0;
	if (n) {
		qsort(v, n, sizeof *v, cmp_site_key);
		for (uint32_t i = 1; i < n; i++) {
			if (cmp_site_key(&v[ns], &v[i]) == 0) {
				v[ns].bytes += v[i].bytes;
				v[ns].pad += v[i].pad;
			} else {
				v[++ns] = v[i];
			}
		}
		ns++;
		qsort(v, ns, sizeof *v, cmp_site_bytes);
	}
	for (uint32_t i = 0; i < ns;) {
		uint32_t dev = v[i].dev, k = 0;
		uint64_t rest_bytes = 0, rest_allocs = 0;
		for (; i < ns && v[i].dev == dev; i++, k++) {
			if (k < GPS_LIVE_SITES_WRITTEN) {
				emit_live(rec, ts, corr, GP_MEM_LIVE_SITE, dev, &v[i], v[i].bytes, v[i].pad);
			} else {
				rest_bytes += v[i].bytes;
				rest_allocs += v[i].pad;
			}
		}
		if (rest_allocs)
			emit_live(rec, ts, corr, GP_MEM_LIVE_REST, dev, NULL, rest_bytes, rest_allocs);
	}
	for (uint32_t d = 0; d < UNT_DEVS; d++)
		if (ua[d])
			emit_live(rec, ts, corr, GP_MEM_LIVE_UNTABLED, d < UNT_DEVS - 1 ? d : GP_DEVICE_UNKNOWN, NULL, ub[d],
				  ua[d]);
	free(v);
}

void gps_livemem_failed(gp_recorder *rec, uint64_t ts, uint64_t corr, uint64_t bytes, uint32_t dev, uint32_t domain,
			uint32_t cbid, uint32_t stack_id)
{
	if (!gps_livemem_kept() || !rec)
		return;
	/* the request as a one-allocation site of the table's shape */
	struct live_entry e = { .key = bytes, .bytes = bytes, .stack_id = stack_id, .cbid = (uint16_t)cbid,
				.domain = (uint8_t)domain, .dev = dev };
	emit_live(rec, ts, corr, GP_MEM_LIVE_FAILED, dev, &e, bytes, 1);
}

void gps_livemem_after_fork_child(void)
{
	pthread_mutex_init(&live_lock, NULL);
	if (slots)
		memset(slots, 0, GPS_LIVE_SLOTS * sizeof *slots);
	nlive = 0;
	memset(unt_bytes, 0, sizeof unt_bytes);
	memset(unt_allocs, 0, sizeof unt_allocs);
}
