/* gps_activity.c — CUPTI activity buffers: hand out aligned buffers from a
 * small bounded free list, decode completed ones into gp_emit calls on the
 * thread CUPTI delivers them on (CUPTI 13 may use several), and account for
 * records CUPTI dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gps_core.h"
#include "features/gps_status.h"
#include "nvidia/gps_activity.h"
#include "nvidia/gps_cbid.h"
#include "nvidia/gps_cupti.h"
#include "nvidia/gps_api_names.h"
#include "nvidia/gps_cupti_fns.h"
#include "nvidia/gps_nvml.h"

#define GPS_BUF_ALIGN 8
#define GPS_FREE_MAX 4      /* buffers kept for reuse */
#define GPS_OUTSTANDING_MAX 32 /* buffers CUPTI may hold at once */

static pthread_mutex_t buf_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *free_list[GPS_FREE_MAX];
static int nfree;
static int outstanding;
static int skip_nested_driver; /* see pending_runtime */
static int64_t gpu_offset;     /* gps_activity_set_gpu_offset */

/* gps_activity_api_on: the gap in API records that ended at gap_t_on;
 * gap_first = the first call recorded after it (0: none yet, so every GPU
 * operation since is without its call) */
static atomic_int gap_open;
static _Atomic uint64_t gap_t_on;
static atomic_uint gap_first;
static atomic_ullong gap_dropped;

void gps_activity_skip_nested_driver(int on) { skip_nested_driver = on; }
void gps_activity_set_gpu_offset(int64_t offset_ns) { gpu_offset = offset_ns; }

void gps_activity_api_on(uint64_t t_on)
{
	atomic_store(&gap_first, 0);
	atomic_store(&gap_t_on, t_on);
	atomic_store(&gap_open, 1);
}

void gps_activity_api_first(uint32_t correlation_id)
{
	unsigned zero = 0;
	atomic_compare_exchange_strong(&gap_first, &zero, correlation_id);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *maxrec)
{
	size_t sz = gps.cfg.buffer_size;
	uint8_t *b = NULL;
	pthread_mutex_lock(&buf_lock);
	if (nfree > 0) {
		b = free_list[--nfree];
	} else if (outstanding < GPS_OUTSTANDING_MAX) {
		b = aligned_alloc(GPS_BUF_ALIGN, sz);
	}
	if (b)
		outstanding++;
	/* else: CUPTI drops and counts the records; they show up through
	 * cuptiActivityGetNumDroppedRecords as GP_DROP_CUPTI */
	pthread_mutex_unlock(&buf_lock);
	*buffer = b;
	*size = b ? sz : 0;
	*maxrec = 0;
}

static void buffer_return(uint8_t *b)
{
	pthread_mutex_lock(&buf_lock);
	outstanding--;
	if (nfree < GPS_FREE_MAX) {
		free_list[nfree++] = b;
		b = NULL;
	}
	pthread_mutex_unlock(&buf_lock);
	free(b);
}

/* Pointer-keyed kernel-name cache: CUPTI's name pointer is stable per
 * function, so the string is hashed/interned once, not once per launch.
 * Shared by all delivery threads; entries are (gen, ptr, id) and a torn read
 * just misses (gp_intern returns the same id again). */
#define NAME_SLOTS 4096
struct name_slot { _Atomic(const char *) ptr; _Atomic uint64_t genid; };
static struct name_slot name_slots[NAME_SLOTS];

static uint32_t kernel_name_id(gp_recorder *rec, const char *name)
{
	if (!name)
		return 0;
	unsigned gen = atomic_load_explicit(&gps.gen, memory_order_relaxed);
	uintptr_t h = ((uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h >> 40) & (NAME_SLOTS - 1);
	struct name_slot *s = &name_slots[i];
	if (atomic_load_explicit(&s->ptr, memory_order_acquire) == name) {
		uint64_t v = atomic_load_explicit(&s->genid, memory_order_relaxed);
		if ((uint32_t)(v >> 32) == gen && (uint32_t)v &&
		    atomic_load_explicit(&s->ptr, memory_order_acquire) == name)
			return (uint32_t)v;
	}
	uint32_t id = gp_intern(rec, name);
	if (id) {
		atomic_store_explicit(&s->genid, 0, memory_order_relaxed);
		atomic_store_explicit(&s->ptr, name, memory_order_release);
		atomic_store_explicit(&s->genid, ((uint64_t)gen << 32) | id, memory_order_relaxed);
	}
	return id;
}

static inline uint64_t gts(uint64_t t)
{
	return t ? (uint64_t)((int64_t)t + gpu_offset) : 0;
}

/* A GPU operation launched by a call made while API records were off:
 * dropped, counted in the counter gpuprof.ops_without_call (its total so
 * far, one record per drop: a few per capture at most). */
static int without_call(gp_recorder *rec, uint32_t correlation_id, uint64_t start_ns)
{
	if (!atomic_load_explicit(&gap_open, memory_order_relaxed) ||
	    start_ns < atomic_load_explicit(&gap_t_on, memory_order_relaxed))
		return 0;
	unsigned first = atomic_load_explicit(&gap_first, memory_order_relaxed);
	if (first && correlation_id >= first)
		return 0;
	gps_emit_int_counter(rec, "gpuprof.ops_without_call", atomic_fetch_add(&gap_dropped, 1) + 1);
	return 1;
}

static void emit_kernel(gp_recorder *rec, const CUpti_ActivityKernel10 *k)
{
	if (without_call(rec, k->correlationId, gts(k->start)))
		return;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_KERNEL;
	gp_rec_kernel *o = &r.u.kernel;
	o->start_ns = gts(k->start);
	o->end_ns = gts(k->end);
	o->correlation_id = k->correlationId;
	o->device_id = k->deviceId;
	o->context_id = k->contextId;
	o->stream_id = k->streamId;
	o->grid[0] = (uint32_t)k->gridX; o->grid[1] = (uint32_t)k->gridY; o->grid[2] = (uint32_t)k->gridZ;
	o->block[0] = (uint32_t)k->blockX; o->block[1] = (uint32_t)k->blockY; o->block[2] = (uint32_t)k->blockZ;
	o->registers = k->registersPerThread;
	o->static_smem = (uint32_t)k->staticSharedMemory;
	o->dynamic_smem = (uint32_t)k->dynamicSharedMemory;
	o->local_mem = k->localMemoryPerThread;
	o->name_id = kernel_name_id(rec, k->name);
	o->launch_type = k->launchType;
	o->graph_id = k->graphId;
	o->graph_node_id = k->graphNodeId;
	gp_emit(rec, &r);
	if (gps_status_active())
		gps_status_kernel(o->start_ns, o->end_ns);
}

/* The fields CUPTI's device-local and peer memcpy records share (two
 * struct types with the same member names), filled once for both. */
#define FILL_MEMCPY(o, m)                                                                            \
	do {                                                                                         \
		(o)->start_ns = gts((m)->start);                                                     \
		(o)->end_ns = gts((m)->end);                                                         \
		(o)->correlation_id = (m)->correlationId;                                            \
		(o)->bytes = (m)->bytes;                                                             \
		(o)->device_id = (m)->deviceId;                                                      \
		(o)->context_id = (m)->contextId;                                                    \
		(o)->stream_id = (m)->streamId;                                                      \
		(o)->copy_kind = (m)->copyKind; /* gp_copy_kind mirrors CUpti_ActivityMemcpyKind */   \
		(o)->src_kind = (m)->srcKind;   /* gp_mem_kind mirrors CUpti_ActivityMemoryKind */    \
		(o)->dst_kind = (m)->dstKind;                                                        \
		(o)->flags = ((m)->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;                 \
		(o)->graph_node_id = (m)->graphNodeId;                                               \
	} while (0)

static void emit_copy(gp_recorder *rec, gp_record *r)
{
	if (without_call(rec, r->u.memcpy.correlation_id, r->u.memcpy.start_ns))
		return;
	gp_emit(rec, r);
	if (gps_status_active())
		gps_status_copy(r->u.memcpy.bytes);
}

static void emit_memcpy(gp_recorder *rec, const CUpti_ActivityMemcpy6 *m)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_MEMCPY;
	gp_rec_memcpy *o = &r.u.memcpy;
	FILL_MEMCPY(o, m);
	o->src_device = o->dst_device = m->deviceId;
	emit_copy(rec, &r);
}

static void emit_peer(gp_recorder *rec, const CUpti_ActivityMemcpyPtoP4 *m)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_MEMCPY;
	gp_rec_memcpy *o = &r.u.memcpy;
	FILL_MEMCPY(o, m);
	o->src_device = m->srcDeviceId;
	o->dst_device = m->dstDeviceId;
	emit_copy(rec, &r);
}

static void emit_memset(gp_recorder *rec, const CUpti_ActivityMemset4 *m)
{
	if (without_call(rec, m->correlationId, gts(m->start)))
		return;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_MEMSET;
	gp_rec_memset *o = &r.u.memset;
	o->start_ns = gts(m->start);
	o->end_ns = gts(m->end);
	o->correlation_id = m->correlationId;
	o->bytes = m->bytes;
	o->device_id = m->deviceId;
	o->context_id = m->contextId;
	o->stream_id = m->streamId;
	o->value = m->value;
	o->mem_kind = m->memoryKind;
	o->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0;
	o->graph_node_id = m->graphNodeId;
	gp_emit(rec, &r);
}

static void emit_sync(gp_recorder *rec, const CUpti_ActivitySynchronization2 *s)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_SYNC;
	r.u.sync.start_ns = gts(s->start);
	r.u.sync.end_ns = gts(s->end);
	r.u.sync.correlation_id = s->correlationId;
	r.u.sync.type = s->type;
	r.u.sync.context_id = s->contextId;
	r.u.sync.stream_id = s->streamId;
	r.u.sync.event_id = s->cudaEventId;
	gp_emit(rec, &r);
}

static void emit_memory(gp_recorder *rec, const CUpti_ActivityMemory4 *m)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_MEMORY;
	r.u.memory.ts_ns = gts(m->timestamp);
	r.u.memory.correlation_id = m->correlationId;
	r.u.memory.address = m->address;
	r.u.memory.bytes = m->bytes;
	r.u.memory.device_id = m->deviceId;
	r.u.memory.context_id = m->contextId;
	r.u.memory.stream_id = m->streamId;
	enum gps_mem_op op = GPS_MEM_OP_OTHER;
	if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		op = GPS_MEM_OP_ALLOC;
	else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		op = GPS_MEM_OP_FREE;
	r.u.memory.op = op;
	r.u.memory.mem_kind = m->memoryKind;
	gp_emit(rec, &r);
	if (gps_status_active())
		gps_status_memory(op, m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, m->bytes);
}

static void emit_device(gp_recorder *rec, const CUpti_ActivityDevice5 *d)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_DEVICE;
	gp_rec_device *o = &r.u.device;
	o->device_id = d->id;
	o->name_id = d->name ? gp_intern(rec, d->name) : 0;
	o->cc_major = d->computeCapabilityMajor;
	o->cc_minor = d->computeCapabilityMinor;
	o->sm_count = d->numMultiprocessors;
	o->max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
	o->max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
	o->max_regs_per_sm = d->maxRegistersPerMultiprocessor;
	o->max_smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
	o->max_smem_per_block = d->maxSharedMemoryPerBlock;
	o->max_threads_per_block = d->maxThreadsPerBlock;
	o->warp_size = d->numThreadsPerWarp;
	o->clock_khz = d->coreClockRate;
	/* CUPTI reports bandwidth (KB/s) rather than memory clock / bus width */
	o->mem_clock_khz = 0;
	o->mem_bus_width = 0;
	o->global_mem_bytes = d->globalMemorySize;
	memcpy(o->uuid, &d->uuid, sizeof o->uuid < sizeof d->uuid ? sizeof o->uuid : sizeof d->uuid);
	gp_emit(rec, &r);
	gps_nvml_cuda_device(o->device_id, o->uuid); /* NVML's counters take CUDA's ids */
}

static void emit_api(gp_recorder *rec, const CUpti_ActivityAPI *a)
{
	/* GPUPROF_API_MODE=activity: the call was made on threadId, but the
	 * record is emitted from the delivery thread; tid says who made it. */
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_API;
	r.u.api.start_ns = gts(a->start);
	r.u.api.end_ns = gts(a->end);
	r.u.api.correlation_id = a->correlationId;
	enum gps_cb_domain dom = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? GPS_CB_RUNTIME : GPS_CB_DRIVER;
	r.u.api.domain = gps_cb_domain_format(dom);
	r.u.api.cbid = a->cbid;
	r.u.api.name_id = gps_api_name_id(rec, dom, a->cbid, NULL);
	r.u.api.tid = a->threadId;
	r.u.api.status = (int32_t)a->returnValue;
	gp_emit(rec, &r);
}

static void emit_dropped(gp_recorder *rec, uint64_t n, uint32_t where_id)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_DROPPED;
	r.u.dropped.ts_ns = gps_now();
	r.u.dropped.count = n;
	r.u.dropped.where = GP_DROP_CUPTI;
	r.u.dropped.source_id = where_id;
	gp_emit(rec, &r);
}

/* Activity mode, default set (skip_nested_driver): CUPTI writes an API record when the call
 * returns, so a driver call the runtime made underneath one of its calls
 * comes BEFORE that runtime record in the buffer.  Driver records wait in
 * a small pending list; a runtime record of the same thread drops those it
 * contains (interval inside, or the same correlation id) and releases the
 * rest (a later runtime record of that thread cannot contain them: calls
 * of one thread return in order).  What is still pending when the list
 * fills or the buffer ends is emitted: a nested pair split across two
 * buffers keeps its driver record (rare, and a true call either way). */
#define PEND_MAX 64
struct pending { const CUpti_ActivityAPI *a[PEND_MAX]; int n; };

static void pending_runtime(gp_recorder *rec, struct pending *p, const CUpti_ActivityAPI *rt)
{
	int k = 0;
	for (int i = 0; i < p->n; i++) {
		const CUpti_ActivityAPI *d = p->a[i];
		if (d->threadId != rt->threadId || d->processId != rt->processId) {
			p->a[k++] = d;
			continue;
		}
		int nested = (d->start >= rt->start && d->end <= rt->end) ||
			     d->correlationId == rt->correlationId;
		if (!nested)
			emit_api(rec, d);
	}
	p->n = k;
}

static void pending_driver(gp_recorder *rec, struct pending *p, const CUpti_ActivityAPI *d)
{
	if (p->n == PEND_MAX) { /* oldest out */
		emit_api(rec, p->a[0]);
		memmove(&p->a[0], &p->a[1], (PEND_MAX - 1) * sizeof p->a[0]);
		p->n--;
	}
	p->a[p->n++] = d;
}

static void decode(gp_recorder *rec, uint8_t *buf, size_t valid)
{
	struct pending pend;
	pend.n = 0;
	int dedup = skip_nested_driver;
	CUpti_Activity *a = NULL;
	while (GPS_CUPTI_QUIET(cuptiActivityGetNextRecord, buf, valid, &a) == CUPTI_SUCCESS) {
		switch (a->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			emit_kernel(rec, (const CUpti_ActivityKernel10 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			emit_memcpy(rec, (const CUpti_ActivityMemcpy6 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY2:
			emit_peer(rec, (const CUpti_ActivityMemcpyPtoP4 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			emit_memset(rec, (const CUpti_ActivityMemset4 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
			emit_sync(rec, (const CUpti_ActivitySynchronization2 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY2:
			emit_memory(rec, (const CUpti_ActivityMemory4 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			emit_device(rec, (const CUpti_ActivityDevice5 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
			if (dedup && pend.n)
				pending_runtime(rec, &pend, (const CUpti_ActivityAPI *)a);
			emit_api(rec, (const CUpti_ActivityAPI *)a);
			break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
			if (dedup)
				pending_driver(rec, &pend, (const CUpti_ActivityAPI *)a);
			else
				emit_api(rec, (const CUpti_ActivityAPI *)a);
			break;
		default:
			break;
		}
	}
	for (int i = 0; i < pend.n; i++) /* the records stay valid until we return the buffer */
		emit_api(rec, pend.a[i]);
}

/* ------------------------------------------------------------ no trace yet */
/* A process that calls cuInit and nothing else (OpenMPI's orted, started by
 * the job's launcher; torch.compile's compile workers) must not get a trace
 * file: the trace is made by the first record worth one (an API call of the
 * recorded set, a context, GPU activity).  CUPTI's DEVICE records are not:
 * they come for every device once the kind is on, context or not.  Until a
 * trace exists they wait here, and go into it first when it comes
 * (gps_activity_emit_kept: the lifecycle's trace hook, or the next buffer). */
#define GPS_KEPT_DEVICES 64
struct kept_device { CUpti_ActivityDevice5 d; char name[256]; };
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf: no emit under it */
static struct kept_device *kept;
static atomic_int nkept; /* written under kept_lock; read without it for the fast no */

/* Whether a buffer holds a record other than a DEVICE record. */
static int worth_a_trace(uint8_t *buf, size_t valid)
{
	CUpti_Activity *a = NULL;
	while (GPS_CUPTI_QUIET(cuptiActivityGetNextRecord, buf, valid, &a) == CUPTI_SUCCESS)
		if (a->kind != CUPTI_ACTIVITY_KIND_DEVICE)
			return 1;
	return 0;
}

/* The DEVICE records of a buffer that came before the trace: kept (copied,
 * the buffer goes back). */
static void keep_devices(uint8_t *buf, size_t valid)
{
	CUpti_Activity *a = NULL;
	pthread_mutex_lock(&kept_lock);
	if (!kept)
		kept = calloc(GPS_KEPT_DEVICES, sizeof *kept);
	while (kept && nkept < GPS_KEPT_DEVICES &&
	       GPS_CUPTI_QUIET(cuptiActivityGetNextRecord, buf, valid, &a) == CUPTI_SUCCESS) {
		if (a->kind != CUPTI_ACTIVITY_KIND_DEVICE)
			continue;
		struct kept_device *k = &kept[atomic_fetch_add(&nkept, 1)];
		memcpy(&k->d, a, sizeof k->d);
		snprintf(k->name, sizeof k->name, "%s", k->d.name ? k->d.name : "");
		k->d.name = NULL;
	}
	pthread_mutex_unlock(&kept_lock);
}

static void emit_device(gp_recorder *rec, const CUpti_ActivityDevice5 *d);

void gps_activity_emit_kept(gp_recorder *rec)
{
	if (!rec || !atomic_load_explicit(&nkept, memory_order_relaxed))
		return;
	pthread_mutex_lock(&kept_lock);
	struct kept_device *k = kept;
	int n = atomic_exchange(&nkept, 0);
	kept = NULL;
	pthread_mutex_unlock(&kept_lock);
	for (int i = 0; i < n; i++) {
		k[i].d.name = k[i].name;
		emit_device(rec, &k[i].d);
	}
	free(k);
}

/* ------------------------------------------------------------ delivery */
static GPS_TLS uint64_t last_clock_ns;

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	(void)size;
	int saved = gps_in_shim;
	gps_in_shim = 1;
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? gps_rec(GPS_REC_EXISTING) : NULL;
	/* a fork child's buffers hold the parent's records (CUDA's exit
	 * teardown or our final flush hand them over there): they make no
	 * trace for the child, a DataLoader worker say */
	if (!rec && t && buf && valid && !gps_cupti_session_inherited()) {
		if (worth_a_trace(buf, valid))
			rec = gps_rec(GPS_REC_CUDA);
		else
			keep_devices(buf, valid);
	}
	gps_activity_emit_kept(rec);
	if (rec && buf) {
		if (t && !t->kind_set) {
			t->kind_set = 1;
			gp_recorder_set_thread_kind(rec, GP_SOURCE_ACTIVITY);
		}
		if (valid)
			decode(rec, buf, valid);
		size_t dropped = 0;
		if (GPS_CUPTI_QUIET(cuptiActivityGetNumDroppedRecords, ctx, stream, &dropped) == CUPTI_SUCCESS &&
		    dropped)
			emit_dropped(rec, dropped, 0);
		uint64_t now = gps_mono_ns();
		if (now - last_clock_ns > 1000000000ull) { /* periodic clock pair */
			last_clock_ns = now;
			gps_emit_clock(rec);
		}
	}
	gps_leave(t);
	if (buf)
		buffer_return(buf);
	gps_in_shim = saved;
}

void gps_activity_register(void)
{
	GPS_CUPTI(cuptiActivityRegisterCallbacks, buffer_requested, buffer_completed);
}

void gps_activity_fork_prepare(void) { pthread_mutex_lock(&buf_lock); }
void gps_activity_fork_parent(void) { pthread_mutex_unlock(&buf_lock); }
void gps_activity_after_fork_child(void)
{
	pthread_mutex_init(&buf_lock, NULL);
	pthread_mutex_init(&kept_lock, NULL); /* kept devices stay: the child sees the same GPUs */
	/* buffers CUPTI held in the parent are gone from the child's view */
	outstanding = 0;
}
