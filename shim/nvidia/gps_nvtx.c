/* gps_nvtx.c — NVTX v3 injection: NVTX (header-only, in the job) loads us via
 * NVTX_INJECTION64_PATH at its first call and we fill its function tables
 * (InitializeInjectionNvtx2, in gps_lifecycle.c, calls gps_nvtx_inject).
 * Push/pop ranges live on a per-thread stack and are emitted at pop; start/end
 * ranges (which may end on another thread) live in a small locked table. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core/gps_core.h"
#include "features/gps_capture.h"
#include "features/gps_flight.h"
#include "features/gps_status.h"
#include "features/gps_steps.h"
#include "nvidia/gps_nvtx.h"

_Static_assert(__builtin_types_compatible_p(gps_nvtx_get_export_table, NvtxGetExportTableFunc_t),
	       "gps_nvtx_get_export_table is NVTX's NvtxGetExportTableFunc_t");

struct gps_nvtx_entry {
	uint64_t start;
	const struct gps_domain *dom;
	uint32_t domain_id, message_id, category, color, depth;
	int64_t payload;
	unsigned capture_seen; /* capture_state() at the range's start */
	uint64_t step;         /* a training step (features/gps_steps.c): its number + 1, else 0 */
};

/* GPUPROF_CAPTURE_RANGE: a range is kept when it overlaps a capture range:
 * began in one, ends in one, or a capture range started while it was open
 * (the state below changed); a mark when it falls in one.  Without a
 * capture range never paused. */
static inline int capture_paused(void)
{
	return atomic_load_explicit(&gps_capture_paused, memory_order_relaxed);
}
static inline unsigned capture_state(void)
{
	return atomic_load_explicit(&gps_capture_starts, memory_order_relaxed) * 2u + !capture_paused();
}
static inline int capture_keep(unsigned seen_at_start)
{
	return (seen_at_start & 1u) || seen_at_start != capture_state();
}

/* nvtxDomainHandle_t / nvtxStringHandle_t point at these: the handle must
 * outlive a recorder (a fork child gets a new one), so ids are re-interned
 * per recorder generation: genid = (gen << 32) | id. */
struct gps_domain { char *name; _Atomic uint64_t genid; };
struct gps_regstr { char *str; _Atomic uint64_t genid; };

static uint32_t cached_intern(gp_recorder *rec, const char *s, _Atomic uint64_t *genid)
{
	unsigned gen = atomic_load_explicit(&gps.gen, memory_order_relaxed);
	uint64_t v = atomic_load_explicit(genid, memory_order_relaxed);
	if ((uint32_t)(v >> 32) == gen && (uint32_t)v)
		return (uint32_t)v;
	uint32_t id = gp_intern(rec, s);
	atomic_store_explicit(genid, ((uint64_t)gen << 32) | id, memory_order_relaxed);
	return id;
}

static uint32_t domain_id(gp_recorder *rec, nvtxDomainHandle_t d)
{
	struct gps_domain *dom = (struct gps_domain *)d;
	return dom && dom->name ? cached_intern(rec, dom->name, &dom->genid) : 0;
}

/* wchar_t (UTF-32 on Linux) -> UTF-8 */
static char *wide_to_utf8(const wchar_t *w)
{
	if (!w)
		return NULL;
	size_t n = wcslen(w);
	char *o = malloc(n * 4 + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = (uint32_t)w[i];
		if (c < 0x80) {
			*p++ = (char)c;
		} else if (c < 0x800) {
			*p++ = (char)(0xC0 | (c >> 6));
			*p++ = (char)(0x80 | (c & 0x3F));
		} else if (c < 0x10000) {
			*p++ = (char)(0xE0 | (c >> 12));
			*p++ = (char)(0x80 | ((c >> 6) & 0x3F));
			*p++ = (char)(0x80 | (c & 0x3F));
		} else if (c < 0x110000) {
			*p++ = (char)(0xF0 | (c >> 18));
			*p++ = (char)(0x80 | ((c >> 12) & 0x3F));
			*p++ = (char)(0x80 | ((c >> 6) & 0x3F));
			*p++ = (char)(0x80 | (c & 0x3F));
		} else {
			*p++ = '?';
		}
	}
	*p = 0;
	return o;
}

static uint32_t intern_wide(gp_recorder *rec, const wchar_t *w)
{
	char *s = wide_to_utf8(w);
	uint32_t id = s ? gp_intern(rec, s) : 0;
	free(s);
	return id;
}

/* Fills the descriptive fields of an entry from event attributes. */
static void from_attr(gp_recorder *rec, const nvtxEventAttributes_t *a, struct gps_nvtx_entry *e)
{
	if (!a)
		return;
	/* fields past `size` were not provided by an older NVTX */
	e->category = a->category;
	e->color = a->colorType == NVTX_COLOR_ARGB ? a->color : 0;
	switch (a->payloadType) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: e->payload = (int64_t)a->payload.ullValue; break;
	case NVTX_PAYLOAD_TYPE_INT64: e->payload = a->payload.llValue; break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: e->payload = a->payload.uiValue; break;
	case NVTX_PAYLOAD_TYPE_INT32: e->payload = a->payload.iValue; break;
	case NVTX_PAYLOAD_TYPE_DOUBLE: e->payload = (int64_t)a->payload.dValue; break;
	case NVTX_PAYLOAD_TYPE_FLOAT: e->payload = (int64_t)a->payload.fValue; break;
	default: break;
	}
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		e->message_id = a->message.ascii ? gp_intern(rec, a->message.ascii) : 0;
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		e->message_id = intern_wide(rec, a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED: {
		struct gps_regstr *r = (struct gps_regstr *)a->message.registered;
		e->message_id = r && r->str ? cached_intern(rec, r->str, &r->genid) : 0;
		break;
	}
	default: break;
	}
}

/* GPUPROF_STATUS: the message of the range just opened (push or start) is
 * the status file's last_nvtx_range. */
static void status_range(const nvtxEventAttributes_t *a, const char *ascii, const wchar_t *wide)
{
	if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII) {
		ascii = a->message.ascii;
	} else if (a && a->messageType == NVTX_MESSAGE_TYPE_UNICODE) {
		wide = a->message.unicode;
	} else if (a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
		const struct gps_regstr *r = (const struct gps_regstr *)a->message.registered;
		ascii = r ? r->str : NULL;
	}
	if (wide && !ascii) {
		char *s = wide_to_utf8(wide);
		gps_status_nvtx(s ? s : "");
		free(s);
	} else {
		gps_status_nvtx(ascii ? ascii : "");
	}
}

/* The range's name when it is plain text (ASCII, or a registered string),
 * else NULL: what step names and the range rule are matched against. */
static const char *ascii_name(const nvtxEventAttributes_t *a, const char *ascii)
{
	if (!a)
		return ascii;
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
		return a->message.ascii;
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
		const struct gps_regstr *r = (const struct gps_regstr *)a->message.registered;
		return r ? r->str : NULL;
	}
	return NULL;
}

/* Guard + recorder for an NVTX entry point; NULL: do nothing. */
static inline gp_recorder *nvtx_enter(void)
{
	if (gps_in_shim || atomic_load_explicit(&gps.closed, memory_order_relaxed))
		return NULL;
	return gps_rec(GPS_REC_NVTX);
}

static void emit_range(gp_recorder *rec, const struct gps_nvtx_entry *e, uint64_t end,
		       uint32_t kind, uint32_t flags, uint64_t id, uint32_t tid, uint32_t end_tid)
{
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_NVTX_RANGE;
	gp_rec_nvtx_range *o = &r.u.nvtx_range;
	o->start_ns = e->start;
	o->end_ns = end;
	o->range_id = id;
	o->kind = kind;
	o->flags = flags;
	o->domain_id = e->domain_id;
	o->message_id = e->message_id;
	o->category = e->category;
	o->color = e->color;
	o->depth = e->depth;
	o->tid = tid;
	o->end_tid = end_tid;
	o->payload = e->payload;
	gp_emit(rec, &r);
}

/* ------------------------------------------------------------ push / pop */
#define GPS_NVTX_MAX_DEPTH 1024

static int push_entry(gp_recorder *rec, nvtxDomainHandle_t d, const nvtxEventAttributes_t *a,
		      const char *ascii, const wchar_t *wide)
{
	struct gps_thread *t = gps_thread_get();
	if (!t)
		return -1;
	gps_in_shim = 1;
	if (t->depth == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 16;
		if (nc > GPS_NVTX_MAX_DEPTH) {
			gps_in_shim = 0;
			return -1;
		}
		void *p = realloc(t->stack, nc * sizeof *t->stack);
		if (!p) {
			gps_in_shim = 0;
			return -1;
		}
		t->stack = p;
		t->cap = nc;
	}
	struct gps_nvtx_entry *e = &t->stack[t->depth];
	memset(e, 0, sizeof *e);
	e->dom = (const struct gps_domain *)d;
	e->domain_id = domain_id(rec, d);
	if (a)
		from_attr(rec, a, e);
	else if (ascii)
		e->message_id = gp_intern(rec, ascii);
	else if (wide)
		e->message_id = intern_wide(rec, wide);
	uint32_t depth = 0;
	for (uint32_t i = 0; i < t->depth; i++)
		if (t->stack[i].dom == e->dom)
			depth++;
	e->depth = depth;
	e->capture_seen = capture_state();
	t->depth++;
	if (gps_status_active())
		status_range(a, ascii, wide);
	/* the flight recorder: a step begins (GPU activity may switch on for
	 * it: before its start time, so that the step is whole inside), or a
	 * range a rule waits for opens */
	if (__builtin_expect(atomic_load_explicit(&gps_steps_on, memory_order_relaxed), 0)) {
		const char *name = ascii_name(a, ascii);
		uint64_t step = gps_steps_match(name);
		if (step && gps_steps_begin(step - 1, t->tid))
			e->step = step;
		gps_flight_range(name);
	}
	e->start = gps_now(); /* last: the range excludes our own bookkeeping */
	gps_in_shim = 0;
	return (int)depth;
}

static int pop_entry(gp_recorder *rec, nvtxDomainHandle_t d)
{
	uint64_t end = gps_now();
	struct gps_thread *t = gps_thread_get();
	if (!t || t->depth == 0)
		return -1;
	const struct gps_domain *dom = (const struct gps_domain *)d;
	uint32_t i = t->depth;
	while (i > 0 && t->stack[i - 1].dom != dom)
		i--;
	if (i == 0)
		return -1; /* pop without push in this domain */
	gps_in_shim = 1;
	struct gps_nvtx_entry e = t->stack[i - 1];
	memmove(&t->stack[i - 1], &t->stack[i], (t->depth - i) * sizeof e);
	t->depth--;
	if (capture_keep(e.capture_seen))
		emit_range(rec, &e, end, GP_NVTX_PUSHPOP, 0, 0, t->tid, t->tid);
	if (e.step) /* after the range's record: a capture's last step is in it */
		gps_steps_end(e.step - 1, e.start, end);
	gps_in_shim = 0;
	return (int)e.depth;
}

/* ------------------------------------------------------------ start / end */
#define SE_BUCKETS 256
struct se_node {
	struct se_node *next;
	uint64_t id;
	uint32_t tid;
	unsigned gen;
	struct gps_nvtx_entry e;
};
static pthread_mutex_t se_lock = PTHREAD_MUTEX_INITIALIZER;
static struct se_node *se_table[SE_BUCKETS];
static atomic_uint_fast64_t next_range_id = 1;

static nvtxRangeId_t start_range(gp_recorder *rec, nvtxDomainHandle_t d,
				 const nvtxEventAttributes_t *a, const char *ascii,
				 const wchar_t *wide)
{
	gps_in_shim = 1;
	struct se_node *n = calloc(1, sizeof *n);
	if (!n) {
		gps_in_shim = 0;
		return 0;
	}
	n->e.dom = (const struct gps_domain *)d;
	n->e.domain_id = domain_id(rec, d);
	if (a)
		from_attr(rec, a, &n->e);
	else if (ascii)
		n->e.message_id = gp_intern(rec, ascii);
	else if (wide)
		n->e.message_id = intern_wide(rec, wide);
	n->tid = gps_gettid();
	n->gen = atomic_load(&gps.gen);
	n->e.capture_seen = capture_state();
	n->id = atomic_fetch_add(&next_range_id, 1);
	pthread_mutex_lock(&se_lock);
	n->next = se_table[n->id % SE_BUCKETS];
	se_table[n->id % SE_BUCKETS] = n;
	pthread_mutex_unlock(&se_lock);
	if (gps_status_active())
		status_range(a, ascii, wide);
	if (__builtin_expect(gps_flight_rules & GP_RULE_RANGE, 0))
		gps_flight_range(ascii_name(a, ascii));
	n->e.start = gps_now();
	gps_in_shim = 0;
	return n->id;
}

static void end_range(gp_recorder *rec, nvtxRangeId_t id)
{
	uint64_t end = gps_now();
	gps_in_shim = 1;
	struct se_node *n = NULL;
	pthread_mutex_lock(&se_lock);
	for (struct se_node **pp = &se_table[id % SE_BUCKETS]; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id) {
			n = *pp;
			*pp = n->next;
			break;
		}
	pthread_mutex_unlock(&se_lock);
	if (n) {
		if (n->gen == atomic_load(&gps.gen) && capture_keep(n->e.capture_seen))
			emit_range(rec, &n->e, end, GP_NVTX_STARTEND, 0, id, n->tid, gps_gettid());
		free(n);
	}
	gps_in_shim = 0;
}

/* ------------------------------------------------------------ marks */
static void mark(gp_recorder *rec, nvtxDomainHandle_t d, const nvtxEventAttributes_t *a,
		 const char *ascii, const wchar_t *wide)
{
	if (__builtin_expect(gps_flight_rules & GP_RULE_RANGE, 0))
		gps_flight_range(ascii_name(a, ascii));
	if (capture_paused())
		return;
	uint64_t ts = gps_now();
	gps_in_shim = 1;
	struct gps_nvtx_entry e;
	memset(&e, 0, sizeof e);
	e.domain_id = domain_id(rec, d);
	if (a)
		from_attr(rec, a, &e);
	else if (ascii)
		e.message_id = gp_intern(rec, ascii);
	else if (wide)
		e.message_id = intern_wide(rec, wide);
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_NVTX_MARK;
	r.u.nvtx_mark.ts_ns = ts;
	r.u.nvtx_mark.domain_id = e.domain_id;
	r.u.nvtx_mark.message_id = e.message_id;
	r.u.nvtx_mark.category = e.category;
	r.u.nvtx_mark.color = e.color;
	r.u.nvtx_mark.tid = gps_gettid();
	gp_emit(rec, &r);
	gps_in_shim = 0;
}

/* ------------------------------------------------------------ entry points */
/* Runs BODY (which uses `rec`) inside gps_enter/gps_leave; `ret` is the
 * value when tracing is off. */
#define NVTX_DO(type, ret, body)                                  \
	gp_recorder *rec = nvtx_enter();                          \
	if (!rec)                                                 \
		return ret;                                       \
	struct gps_thread *t_ = gps_enter();                      \
	if (!t_)                                                  \
		return ret;                                       \
	type r_ = body;                                           \
	gps_leave(t_);                                            \
	return r_;
#define NVTX_DO_VOID(body)                                        \
	gp_recorder *rec = nvtx_enter();                          \
	if (!rec)                                                 \
		return;                                           \
	struct gps_thread *t_ = gps_enter();                      \
	if (!t_)                                                  \
		return;                                           \
	body;                                                     \
	gps_leave(t_);

static void NVTX_API x_MarkEx(const nvtxEventAttributes_t *a) { NVTX_DO_VOID(mark(rec, NULL, a, NULL, NULL)) }
static void NVTX_API x_MarkA(const char *m) { NVTX_DO_VOID(mark(rec, NULL, NULL, m, NULL)) }
static void NVTX_API x_MarkW(const wchar_t *m) { NVTX_DO_VOID(mark(rec, NULL, NULL, NULL, m)) }
static nvtxRangeId_t NVTX_API x_RangeStartEx(const nvtxEventAttributes_t *a) { NVTX_DO(nvtxRangeId_t, 0, start_range(rec, NULL, a, NULL, NULL)) }
static nvtxRangeId_t NVTX_API x_RangeStartA(const char *m) { NVTX_DO(nvtxRangeId_t, 0, start_range(rec, NULL, NULL, m, NULL)) }
static nvtxRangeId_t NVTX_API x_RangeStartW(const wchar_t *m) { NVTX_DO(nvtxRangeId_t, 0, start_range(rec, NULL, NULL, NULL, m)) }
static void NVTX_API x_RangeEnd(nvtxRangeId_t id) { NVTX_DO_VOID(end_range(rec, id)) }
static int NVTX_API x_RangePushEx(const nvtxEventAttributes_t *a) { NVTX_DO(int, -1, push_entry(rec, NULL, a, NULL, NULL)) }
static int NVTX_API x_RangePushA(const char *m) { NVTX_DO(int, -1, push_entry(rec, NULL, NULL, m, NULL)) }
static int NVTX_API x_RangePushW(const wchar_t *m) { NVTX_DO(int, -1, push_entry(rec, NULL, NULL, NULL, m)) }
static int NVTX_API x_RangePop(void) { NVTX_DO(int, -1, pop_entry(rec, NULL)) }

static void name_thread(uint32_t tid, const char *name)
{
	gp_recorder *rec = nvtx_enter();
	if (!rec || !name)
		return;
	struct gps_thread *t = gps_enter();
	if (!t)
		return;
	gps_in_shim = 1;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_THREAD;
	r.u.thread.pid = (uint32_t)gps.pid;
	r.u.thread.tid = tid;
	r.u.thread.name_id = gp_intern(rec, name);
	gp_emit(rec, &r);
	gps_in_shim = 0;
	gps_leave(t);
}
static void NVTX_API x_NameOsThreadA(uint32_t tid, const char *n) { name_thread(tid, n); }
static void NVTX_API x_NameOsThreadW(uint32_t tid, const wchar_t *n)
{
	char *s = wide_to_utf8(n);
	name_thread(tid, s);
	free(s);
}

static void NVTX_API x_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) { NVTX_DO_VOID(mark(rec, d, a, NULL, NULL)) }
static nvtxRangeId_t NVTX_API x_DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) { NVTX_DO(nvtxRangeId_t, 0, start_range(rec, d, a, NULL, NULL)) }
static void NVTX_API x_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { (void)d; NVTX_DO_VOID(end_range(rec, id)) }
static int NVTX_API x_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) { NVTX_DO(int, -1, push_entry(rec, d, a, NULL, NULL)) }
static int NVTX_API x_DomainRangePop(nvtxDomainHandle_t d) { NVTX_DO(int, -1, pop_entry(rec, d)) }

static nvtxDomainHandle_t new_domain(char *name)
{
	if (!name)
		return NULL;
	struct gps_domain *d = calloc(1, sizeof *d);
	if (!d) {
		free(name);
		return NULL;
	}
	d->name = name;
	return (nvtxDomainHandle_t)d;
}
static nvtxDomainHandle_t NVTX_API x_DomainCreateA(const char *n) { return new_domain(n ? strdup(n) : NULL); }
static nvtxDomainHandle_t NVTX_API x_DomainCreateW(const wchar_t *n) { return new_domain(wide_to_utf8(n)); }
static void NVTX_API x_DomainDestroy(nvtxDomainHandle_t d)
{
	/* Kept alive on purpose: ranges still open (or a racing thread) may
	 * point at it; domains are few. */
	(void)d;
}
static nvtxStringHandle_t new_regstr(char *s)
{
	if (!s)
		return NULL;
	struct gps_regstr *r = calloc(1, sizeof *r);
	if (!r) {
		free(s);
		return NULL;
	}
	r->str = s;
	return (nvtxStringHandle_t)r;
}
static nvtxStringHandle_t NVTX_API x_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s) { (void)d; return new_regstr(s ? strdup(s) : NULL); }
static nvtxStringHandle_t NVTX_API x_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s) { (void)d; return new_regstr(wide_to_utf8(s)); }

static void set_fn(NvtxFunctionTable table, unsigned size, unsigned idx, NvtxFunctionPointer fn)
{
	if (table && idx < size && table[idx])
		*table[idx] = fn;
}

int gps_nvtx_inject(gps_nvtx_get_export_table getExportTable)
{
	const NvtxExportTableCallbacks *cb =
		(const NvtxExportTableCallbacks *)getExportTable(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
		return 0;
	NvtxFunctionTable t = NULL;
	unsigned n = 0;
#define F(x) ((NvtxFunctionPointer)(x))
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
		set_fn(t, n, NVTX_CBID_CORE_MarkEx, F(x_MarkEx));
		set_fn(t, n, NVTX_CBID_CORE_MarkA, F(x_MarkA));
		set_fn(t, n, NVTX_CBID_CORE_MarkW, F(x_MarkW));
		set_fn(t, n, NVTX_CBID_CORE_RangeStartEx, F(x_RangeStartEx));
		set_fn(t, n, NVTX_CBID_CORE_RangeStartA, F(x_RangeStartA));
		set_fn(t, n, NVTX_CBID_CORE_RangeStartW, F(x_RangeStartW));
		set_fn(t, n, NVTX_CBID_CORE_RangeEnd, F(x_RangeEnd));
		set_fn(t, n, NVTX_CBID_CORE_RangePushEx, F(x_RangePushEx));
		set_fn(t, n, NVTX_CBID_CORE_RangePushA, F(x_RangePushA));
		set_fn(t, n, NVTX_CBID_CORE_RangePushW, F(x_RangePushW));
		set_fn(t, n, NVTX_CBID_CORE_RangePop, F(x_RangePop));
		set_fn(t, n, NVTX_CBID_CORE_NameOsThreadA, F(x_NameOsThreadA));
		set_fn(t, n, NVTX_CBID_CORE_NameOsThreadW, F(x_NameOsThreadW));
	}
	t = NULL;
	n = 0;
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
		set_fn(t, n, NVTX_CBID_CORE2_DomainMarkEx, F(x_DomainMarkEx));
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, F(x_DomainRangeStartEx));
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangeEnd, F(x_DomainRangeEnd));
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangePushEx, F(x_DomainRangePushEx));
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangePop, F(x_DomainRangePop));
		set_fn(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, F(x_DomainRegisterStringA));
		set_fn(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, F(x_DomainRegisterStringW));
		set_fn(t, n, NVTX_CBID_CORE2_DomainCreateA, F(x_DomainCreateA));
		set_fn(t, n, NVTX_CBID_CORE2_DomainCreateW, F(x_DomainCreateW));
		set_fn(t, n, NVTX_CBID_CORE2_DomainDestroy, F(x_DomainDestroy));
	}
#undef F
	return 1;
}

/* ------------------------------------------------------------ final / fork */
struct unterm_ctx { gp_recorder *rec; uint64_t now; };

static void flush_thread(struct gps_thread *t, void *arg)
{
	struct unterm_ctx *c = arg;
	if (t->gen != atomic_load(&gps.gen))
		return; /* its entries were interned for another recorder */
	for (uint32_t i = 0; i < t->depth; i++)
		emit_range(c->rec, &t->stack[i], c->now, GP_NVTX_PUSHPOP, GP_NVTX_UNTERMINATED, 0,
			   t->tid, t->tid);
	t->depth = 0;
}

void gps_nvtx_flush_unterminated(gp_recorder *rec)
{
	struct unterm_ctx c = {rec, gps_now()};
	gps_threads_foreach(flush_thread, &c);
	unsigned gen = atomic_load(&gps.gen);
	pthread_mutex_lock(&se_lock);
	for (int b = 0; b < SE_BUCKETS; b++) {
		struct se_node *n = se_table[b];
		se_table[b] = NULL;
		while (n) {
			struct se_node *next = n->next;
			if (n->gen == gen)
				emit_range(rec, &n->e, c.now, GP_NVTX_STARTEND, GP_NVTX_UNTERMINATED,
					   n->id, n->tid, 0);
			free(n);
			n = next;
		}
	}
	pthread_mutex_unlock(&se_lock);
}

void gps_nvtx_after_fork_child(void)
{
	pthread_mutex_init(&se_lock, NULL);
	/* the parent's open start/end ranges are the parent's to report */
	memset(se_table, 0, sizeof se_table);
}
