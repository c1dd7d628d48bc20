/* gps_coexist.c — GPUPROF_COEXIST: gpuprof beside the job's own CUPTI
 * profiler (torch.profiler's Kineto, Lightning's profiler="pytorch", a
 * TrainerCallback, Kineto on demand).  docs/CONFIG.md "Beside the job's own
 * profiler" is the user's contract; this is how.
 *
 * What CUPTI allows (the headers of CUDA 13.0):
 * - one callback subscriber per process: cupti_callbacks.h, cuptiSubscribe:
 *   "Only a single subscriber can be registered at a time ... returns the
 *   error code CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" (also under
 *   Nsight Systems / Compute).
 * - one pair of activity-buffer callbacks: cupti_activity.h,
 *   cuptiActivityRegisterCallbacks lists no error for a second registration:
 *   it replaces the first, and a buffer CUPTI still holds is handed to the
 *   pair registered when it completes (tests/fake/fake_cupti.c models both).
 * - cuptiFinalize detaches CUPTI from the process: every subscriber, kind
 *   and callback is gone; a client may subscribe again afterwards.
 * What Kineto does with them (pytorch/kineto libkineto/src/init.cpp,
 * CuptiCallbackApi.cpp, CuptiActivityApi.cpp): libkineto_init, at torch's
 * first profile, subscribes and keeps the subscription for the life of the
 * process — refused, Kineto turns itself CPU-only ("CUPTI initialization
 * failed - CUDA profiler activities will be missing"); at each start it
 * registers its buffer callbacks and enables its kinds; at stop it disables
 * them and collects its buffers with a forced cuptiActivityFlushAll; with
 * TEARDOWN_CUPTI=1 it unsubscribes and calls cuptiFinalize from an API
 * callback, and subscribes again at its next profile.
 *
 * How we see it: the shim exports cuptiSubscribe and the calls above.
 * Preloaded (LD_PRELOAD, as `gpuprof run` does), its definitions come first
 * in the job's symbol lookup, so the job's calls land here and go on to the
 * libcupti the job loaded (RTLD_NEXT, else the one already loaded); our own
 * calls go through gps_p_* straight to libcupti and never land here.  Only
 * injected (CUDA_INJECTION64_PATH alone) nothing lands here and the job's
 * profiler meets gpuprof as it would any other tool.
 *
 * What we do, when our CUPTI session is bound (GPUPROF_COEXIST):
 *   yield (default)  the job's cuptiSubscribe: it shares ours (see
 *                    "sharing" below; when we have none at that moment —
 *                    after its cuptiFinalize, before our tick — ours is
 *                    given up and the call goes on).  Its
 *                    cuptiActivityRegisterCallbacks: our kinds off, our
 *                    buffers flushed back to us, then its call.  The
 *                    profiler then runs as it would untraced.  Taken back:
 *                    the activity after its forced flush with none of its
 *                    kinds on (or 1 s after its kinds went off), on the
 *                    job's thread once that call returned; after a
 *                    cuptiFinalize (CUPTI forgot ours too) or its
 *                    cuptiUnsubscribe of a real subscription, on the flush
 *                    thread's tick.
 *   keep             its cuptiSubscribe, cuptiActivityRegisterCallbacks,
 *                    cuptiActivityEnable/Disable and cuptiFinalize fail with
 *                    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
 * Each hand-over is in the trace: an NVTX mark in domain "gpuprof" and the
 * counter gpuprof.coexist.shared, .callbacks or .activity (1: the job's
 * profiler shares or holds it, 0: gpuprof's alone again); one gpuprof: line the first
 * time.  Before we are bound every call goes straight on: a profiler that
 * subscribes first makes our own cuptiSubscribe fail (tracing switches
 * itself off, gps_cupti.c). */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/gps_core.h"
#include "nvidia/gps_coexist.h"
#include "nvidia/gps_cupti_fns.h"

#define GPS_EXPORT __attribute__((visibility("default")))
#define SEC 1000000000ull
/* the job's kinds all off this long without its forced flush: take the
 * activity back anyway (its remaining buffers are flushed to it first) */
#define KINDS_OFF_NS SEC

static pthread_mutex_t co_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void gps_coexist_lock(void) { pthread_mutex_lock(&co_lock); }
void gps_coexist_unlock(void) { pthread_mutex_unlock(&co_lock); }

/* co_lock */
static struct {
	int sub_given;        /* our subscription was given up for the job's */
	int bufs_given;       /* our buffer callbacks were given up for the job's */
	int holds_sub;        /* the job holds the subscription */
	CUpti_SubscriberHandle sub;
	int holds_bufs;       /* the job's buffer callbacks are registered */
	CUpti_BuffersCallbackRequestFunc job_req; /* the job's pair, last registered */
	CUpti_BuffersCallbackCompleteFunc job_done;
	uint64_t kinds;       /* kinds (< 64) the job switched on while holding them */
	uint64_t kinds_off;   /* mono: when they all went off; 0 while some are on */
	int finalized;        /* the job called cuptiFinalize: ours to be made again */
	int stay_off;         /* taking back failed: no more tries */
	int said;             /* the stderr line was written */
	char who[96];         /* the caller's object, for the marks and the line */
	char sub_who[96];     /* the object whose cuptiSubscribe holds CUPTI */
} co;

/* ------------------------------------------------------------ helpers */
static void name_caller(const void *ret)
{
	Dl_info di;
	const char *n = ret && dladdr(ret, &di) && di.dli_fname ? di.dli_fname : NULL;
	if (!n || !*n)
		n = "?";
	const char *slash = strrchr(n, '/');
	snprintf(co.who, sizeof co.who, "%s", slash ? slash + 1 : n);
}

static int find_cupti(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char *n = info->dlpi_name, *slash = n ? strrchr(n, '/') : NULL;
	if (!n || strncmp(slash ? slash + 1 : n, "libcupti.so", 11) != 0)
		return 0;
	snprintf(arg, 4096, "%s", n);
	return 1;
}

/* The next definition of `name` after ours: the job's libcupti.  RTLD_NEXT
 * finds it in the global scope; a libcupti loaded RTLD_LOCAL (torch's, under
 * Python) is the one we bound (docs/CONFIG.md: an already loaded libcupti
 * comes first), else found by soname. */
static void *next_fn(const char *name, void *self)
{
	void *f = dlsym(RTLD_NEXT, name);
	if ((!f || f == self) && gps_cupti_handle())
		f = dlsym(gps_cupti_handle(), name);
	static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
	for (size_t i = 0; (!f || f == self) && i < sizeof sonames / sizeof sonames[0]; i++) {
		void *h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
		f = h ? dlsym(h, name) : NULL;
	}
	if (!f || f == self) { /* any loaded libcupti.so* (CUDA 11's libcupti.so.11.8, ...) */
		char path[4096] = "";
		dl_iterate_phdr(find_cupti, path);
		void *h = path[0] ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
		f = h ? dlsym(h, name) : NULL;
	}
	return f == self ? NULL : f;
}

/* A call libcupti makes to its own exported function (through its PLT, it
 * lands here too): straight on, no lock — CUPTI's own threads may make it
 * while we wait for them under the lock. */
static int from_cupti(const void *ret, const void *next)
{
	Dl_info a, b;
	return dladdr(ret, &a) && dladdr(next, &b) && a.dli_fbase == b.dli_fbase;
}
#define NEXT(name)                                                                              \
	static __typeof__(name) *next_;                                                        \
	if (!next_)                                                                             \
		next_ = (__typeof__(name) *)next_fn(#name, (void *)name);                      \
	if (!next_)                                                                             \
		return CUPTI_ERROR_NOT_INITIALIZED;

/* Our session is there to give up or defend. */
static int bound(void)
{
	return gps_gpu_bound() && !gps.disabled && !atomic_load_explicit(&gps.closed, memory_order_relaxed);
}

static const char *mode_word(void)
{
	const char *w = gp_setting_word_of(GP_SET_COEXIST, gps.cfg.coexist);
	return w ? w : "?";
}

/* A hand-over in the trace: the mark, then the counter (1: the job's
 * profiler holds `what`, 0: gpuprof again). */
static void note(const char *counter, int held, const char *msg)
{
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (rec) {
		gp_record r;
		memset(&r, 0, sizeof r);
		r.type = GP_REC_NVTX_MARK;
		r.u.nvtx_mark.ts_ns = gps_now();
		r.u.nvtx_mark.domain_id = gp_intern(rec, "gpuprof");
		r.u.nvtx_mark.message_id = gp_intern(rec, msg);
		r.u.nvtx_mark.tid = gps_gettid();
		gp_emit(rec, &r);
		gps_emit_int_counter(rec, counter, (uint64_t)held);
	}
	gps_leave(t);
}

static void say_once(void)
{
	if (co.said++)
		return;
	if (gps.cfg.coexist == GP_COEXIST_KEEP)
		gps_warn("the job's own CUPTI profiler (%s) started: gpuprof keeps CUPTI and the profiler gets none "
			 "(GPUPROF_COEXIST=keep)",
			 co.who);
	else
		gps_warn("the job's own CUPTI profiler (%s) started: gpuprof gives it %s until it lets go "
			 "(GPUPROF_COEXIST=%s); the gap is marked in the trace",
			 co.who,
			 "CUPTI",
			 mode_word());
}

/* ------------------------------------------------------------ give, take */
static void give_callbacks(void)
{
	if (co.sub_given)
		return;
	say_once();
	gps_cupti_release_callbacks();
	co.sub_given = 1;
	char msg[200];
	snprintf(msg, sizeof msg, "gpuprof gave the CUPTI callbacks to the job's profiler (%s): no API records", co.who);
	note("gpuprof.coexist.callbacks", 1, msg);
}

static void give_activity(void)
{
	if (co.bufs_given)
		return;
	say_once();
	gps_cupti_release_activity(); /* our buffers come back to us in it */
	co.bufs_given = 1;
	gps_gpu_set_yielded(gps_now());
	char msg[200];
	snprintf(msg, sizeof msg, "gpuprof gave the CUPTI activity buffers to the job's profiler (%s): no GPU activity",
		 co.who);
	note("gpuprof.coexist.activity", 1, msg);
}

static void take_activity(void)
{
	if (!co.bufs_given || co.stay_off)
		return;
	gps_cupti_resume_activity(co.finalized);
	co.finalized = 0;
	co.bufs_given = 0;
	co.holds_bufs = 0;
	co.kinds = co.kinds_off = 0;
	gps_gpu_set_yielded(0);
	note("gpuprof.coexist.activity", 0, "gpuprof took the CUPTI activity buffers back");
}

static void take_callbacks(void)
{
	if (!co.sub_given || co.stay_off)
		return;
	if (gps_cupti_resume_callbacks() != 0) {
		co.stay_off = 1;
		gps_warn("cannot take CUPTI back after the job's profiler (%s): another subscriber holds it; "
			 "gpuprof records no more API calls",
			 co.who);
		return;
	}
	co.sub_given = 0;
	note("gpuprof.coexist.callbacks", 0, "gpuprof took the CUPTI callbacks back");
}

void gps_coexist_tick(void)
{
	if (!co.sub_given && !co.bufs_given)
		return; /* unlocked peek: the usual tick */
	int saved = gps_in_shim;
	gps_in_shim = 1;
	pthread_mutex_lock(&co_lock);
	if (co.bufs_given && !co.holds_bufs)
		take_activity(); /* after a cuptiFinalize */
	if (co.bufs_given && co.holds_bufs && co.kinds_off && gps_mono_ns() - co.kinds_off >= KINDS_OFF_NS) {
		/* its kinds are off but it never collected: its buffers go to
		 * it (its callbacks are still the registered ones), then ours */
		GPS_CUPTI_QUIET(cuptiActivityFlushAll, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		take_activity();
	}
	if (co.sub_given && !co.holds_sub)
		take_callbacks();
	pthread_mutex_unlock(&co_lock);
	gps_in_shim = saved;
}

const char *gps_coexist_job_subscriber(void)
{
	pthread_mutex_lock(&co_lock);
	const char *w = co.holds_sub ? co.sub_who : NULL;
	pthread_mutex_unlock(&co_lock);
	return w;
}

void gps_coexist_after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	co_lock = fresh;
}

/* ------------------------------------------------------------ sharing */
/* yield, our subscription live: the job's cuptiSubscribe gets VIRTUAL, a
 * handle in name; what it enables with it is noted in job_on and switched on
 * our subscriber, and on_callback hands those callbacks to its function
 * before its own work.  Our own switches (gps_p_cuptiEnableCallback and
 * gps_p_cuptiEnableDomain, wrapped in gps_coexist_bound) are noted in
 * ours_on: a callback is on at CUPTI while either wants it, and recorded by
 * us only when ours is on.  The two share CUPTI's per-call correlationData
 * (Kineto does not use it). */
#define MAX_CB 2048
static char virtual_tag;
#define VIRTUAL ((CUpti_SubscriberHandle)(void *)&virtual_tag)
atomic_int gps_coexist_sharing;
static CUpti_CallbackFunc job_cb;
static void *job_ud;
static _Atomic unsigned char job_on[CUPTI_CB_DOMAIN_SIZE][MAX_CB];
static _Atomic unsigned char ours_on[CUPTI_CB_DOMAIN_SIZE][MAX_CB];
static __typeof__(cuptiEnableCallback) *real_enable_cb;
static __typeof__(cuptiEnableDomain) *real_enable_dom;

static int cb_ok(int d, uint32_t cbid) { return d > 0 && d < CUPTI_CB_DOMAIN_SIZE && cbid < MAX_CB; }

int gps_coexist_forward(int dom, uint32_t cbid, const void *data)
{
	if (!cb_ok(dom, cbid))
		return 1;
	/* not the CUDA calls gpuprof makes itself: untraced there are none */
	if (atomic_load_explicit(&job_on[dom][cbid], memory_order_relaxed) && job_cb && !gps_in_shim)
		job_cb(job_ud, (CUpti_CallbackDomain)dom, cbid, data);
	return atomic_load_explicit(&ours_on[dom][cbid], memory_order_relaxed);
}

/* Switches (d, cbid) at CUPTI to what either side wants; our subscriber. */
static CUptiResult apply(CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	uint32_t on = atomic_load(&ours_on[d][cbid]) || atomic_load(&job_on[d][cbid]);
	return real_enable_cb(on, (CUpti_SubscriberHandle)gps_cupti_subscriber(), d, cbid);
}

static CUptiResult CUPTIAPI ours_enable_cb(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
					   CUpti_CallbackId cbid)
{
	if (!cb_ok(d, cbid))
		return real_enable_cb(en, h, d, cbid);
	pthread_mutex_lock(&co_lock);
	atomic_store(&ours_on[d][cbid], en ? 1 : 0);
	CUptiResult r = atomic_load(&gps_coexist_sharing) ? apply(d, cbid) : real_enable_cb(en, h, d, cbid);
	pthread_mutex_unlock(&co_lock);
	return r;
}

static CUptiResult CUPTIAPI ours_enable_dom(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d)
{
	if (d <= 0 || d >= CUPTI_CB_DOMAIN_SIZE)
		return real_enable_dom(en, h, d);
	pthread_mutex_lock(&co_lock);
	for (uint32_t c = 0; c < MAX_CB; c++)
		atomic_store(&ours_on[d][c], en ? 1 : 0);
	CUptiResult r = real_enable_dom(en, h, d);
	if (!en && atomic_load(&gps_coexist_sharing)) /* the job's stay on */
		for (uint32_t c = 0; c < MAX_CB; c++)
			if (atomic_load(&job_on[d][c]))
				apply(d, c);
	pthread_mutex_unlock(&co_lock);
	return r;
}

void gps_coexist_bound(void)
{
	if (real_enable_cb || !gps_p_cuptiEnableCallback || !gps_p_cuptiEnableDomain)
		return;
	real_enable_cb = gps_p_cuptiEnableCallback;
	real_enable_dom = gps_p_cuptiEnableDomain;
	gps_p_cuptiEnableCallback = ours_enable_cb;
	gps_p_cuptiEnableDomain = ours_enable_dom;
}

/* co_lock: the job's virtual subscription ends; what only it had on goes. */
static void stop_sharing(void)
{
	if (!atomic_load(&gps_coexist_sharing))
		return;
	atomic_store(&gps_coexist_sharing, 0);
	for (int d = 1; d < CUPTI_CB_DOMAIN_SIZE; d++)
		for (uint32_t c = 0; c < MAX_CB; c++)
			if (atomic_exchange(&job_on[d][c], 0) && !atomic_load(&ours_on[d][c]) && !co.sub_given)
				real_enable_cb(0, (CUpti_SubscriberHandle)gps_cupti_subscriber(), (CUpti_CallbackDomain)d, c);
	co.holds_sub = 0;
	note("gpuprof.coexist.shared", 0, "the job's profiler stopped sharing gpuprof's CUPTI callbacks");
}

/* The job's switch of (d, cbid) on its virtual subscription. */
static CUptiResult job_enable(uint32_t en, CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	if (!cb_ok(d, cbid))
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&job_on[d][cbid], en ? 1 : 0);
	return co.sub_given ? CUPTI_SUCCESS : apply(d, cbid);
}

/* ------------------------------------------------------------ the job's calls */
/* Each: the lock, the decision, the job's call; gps_in_shim set, so API
 * callbacks that fire meanwhile are not taken for the job's. */
#define ENTER()                       \
	int saved_ = gps_in_shim;     \
	gps_in_shim = 1;              \
	pthread_mutex_lock(&co_lock); \
	name_caller(__builtin_return_address(0));
#define LEAVE(r)                        \
	pthread_mutex_unlock(&co_lock); \
	gps_in_shim = saved_;           \
	return (r);

static CUptiResult job_subscribes(CUptiResult (*call)(void *), void *arg, CUpti_SubscriberHandle *h,
				  CUpti_CallbackFunc cb, void *ud)
{
	if (bound() && gps.cfg.coexist == GP_COEXIST_KEEP) {
		say_once();
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; /* what CUPTI says while we hold it */
	}
	if (atomic_load(&gps_coexist_sharing))
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; /* its first one holds it, as untraced */
	if (bound() && !co.sub_given && real_enable_cb) {
		/* share ours: its subscription in name (see "sharing") */
		if (!h)
			return CUPTI_ERROR_INVALID_PARAMETER;
		job_cb = cb;
		job_ud = ud;
		*h = VIRTUAL;
		co.holds_sub = 1;
		co.sub = VIRTUAL;
		snprintf(co.sub_who, sizeof co.sub_who, "%s", co.who);
		say_once();
		atomic_store(&gps_coexist_sharing, 1);
		char msg[200];
		snprintf(msg, sizeof msg, "gpuprof shares its CUPTI callbacks with the job's profiler (%s)", co.who);
		note("gpuprof.coexist.shared", 1, msg);
		return CUPTI_SUCCESS;
	}
	if (bound())
		give_callbacks();
	CUptiResult r = call(arg);
	if (r == CUPTI_SUCCESS && h) {
		co.holds_sub = 1;
		co.sub = *h;
		snprintf(co.sub_who, sizeof co.sub_who, "%s", co.who);
	}
	return r; /* failed: the tick takes ours back */
}

struct sub_args {
	CUpti_CallbackFunc cb;
	void *ud;
	__typeof__(cuptiSubscribe) *fn;
	CUpti_SubscriberHandle *h;
};
static CUptiResult call_subscribe(void *a)
{
	struct sub_args *s = a;
	return s->fn(s->h, s->cb, s->ud);
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
					       void *userdata)
{
	NEXT(cuptiSubscribe)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_(subscriber, callback, userdata);
	ENTER()
	struct sub_args a = {callback, userdata, next_, subscriber};
	CUptiResult r = job_subscribes(call_subscribe, &a, subscriber, callback, userdata);
	LEAVE(r)
}

#ifdef CUpti_SubscriberParams_STRUCT_SIZE
struct sub2_args {
	CUpti_CallbackFunc cb;
	void *ud;
	__typeof__(cuptiSubscribe_v2) *fn;
	CUpti_SubscriberHandle *h;
	CUpti_SubscriberParams *p;
};
static CUptiResult call_subscribe_v2(void *a)
{
	struct sub2_args *s = a;
	return s->fn(s->h, s->cb, s->ud, s->p);
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
						  void *userdata, CUpti_SubscriberParams *params)
{
	NEXT(cuptiSubscribe_v2)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_(subscriber, callback, userdata, params);
	ENTER()
	struct sub2_args a = {callback, userdata, next_, subscriber, params};
	CUptiResult r = job_subscribes(call_subscribe_v2, &a, subscriber, callback, userdata);
	LEAVE(r)
}
#endif

GPS_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	NEXT(cuptiUnsubscribe)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_(subscriber);
	ENTER()
	CUptiResult r;
	if (subscriber == VIRTUAL) {
		stop_sharing();
		r = CUPTI_SUCCESS;
	} else if (co.holds_sub && subscriber == co.sub) {
		r = next_(subscriber);
		if (r == CUPTI_SUCCESS)
			co.holds_sub = 0; /* the tick takes ours back */
	} else if (bound() && !co.sub_given) {
		r = CUPTI_ERROR_INVALID_PARAMETER; /* not the job's: ours is not its to end */
	} else {
		r = next_(subscriber);
	}
	LEAVE(r)
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
							       CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	NEXT(cuptiActivityRegisterCallbacks)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_(funcBufferRequested, funcBufferCompleted);
	ENTER()
	CUptiResult r;
	if (bound() && gps.cfg.coexist == GP_COEXIST_KEEP) {
		say_once();
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		if (bound() && funcBufferRequested && funcBufferCompleted)
			give_activity();
		r = next_(funcBufferRequested, funcBufferCompleted);
		if (r == CUPTI_SUCCESS) {
			co.job_req = funcBufferRequested;
			co.job_done = funcBufferCompleted;
		}
		if (r == CUPTI_SUCCESS && co.bufs_given && !co.holds_bufs) {
			/* newly its: none of its kinds on yet (a registration again
			 * while it holds them keeps the kinds it has on) */
			co.holds_bufs = 1;
			co.kinds = 0;
			co.kinds_off = gps_mono_ns();
		}
	}
	LEAVE(r)
}

/* keep: the job switches none of our kinds */
static int kinds_refused(void) { return bound() && gps.cfg.coexist == GP_COEXIST_KEEP; }

/* A profiler that registered its buffer callbacks long before it switches a
 * kind on (we took the buffers back meanwhile) gets them again first. */
static void regive(void)
{
	static __typeof__(cuptiActivityRegisterCallbacks) *reg;
	if (!reg)
		reg = (__typeof__(cuptiActivityRegisterCallbacks) *)next_fn("cuptiActivityRegisterCallbacks",
									     (void *)cuptiActivityRegisterCallbacks);
	if (!reg || !co.job_req || co.holds_bufs || !bound() || gps.cfg.coexist == GP_COEXIST_KEEP)
		return;
	give_activity();
	if (reg(co.job_req, co.job_done) == CUPTI_SUCCESS) {
		co.holds_bufs = 1;
		co.kinds = 0;
	}
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	NEXT(cuptiActivityEnable)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_(kind);
	ENTER()
	regive();
	CUptiResult r = kinds_refused() ? CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED : next_(kind);
	if (r == CUPTI_SUCCESS && co.holds_bufs && (unsigned)kind < 64) {
		co.kinds |= 1ull << kind;
		co.kinds_off = 0;
	}
	LEAVE(r)
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	NEXT(cuptiActivityDisable)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_(kind);
	ENTER()
	CUptiResult r = kinds_refused() ? CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED : next_(kind);
	if (r == CUPTI_SUCCESS && co.holds_bufs && (unsigned)kind < 64 && (co.kinds & (1ull << kind))) {
		co.kinds &= ~(1ull << kind);
		if (!co.kinds)
			co.kinds_off = gps_mono_ns();
	}
	LEAVE(r)
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	NEXT(cuptiActivityFlushAll)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_(flag);
	ENTER()
	CUptiResult r = next_(flag);
	/* its kinds off and its buffers collected: the profiler stopped */
	if (co.holds_bufs && !co.kinds && co.kinds_off && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))
		take_activity();
	LEAVE(r)
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	NEXT(cuptiFinalize)
	if (from_cupti(__builtin_return_address(0), (void *)next_))
		return next_();
	ENTER()
	CUptiResult r;
	if (kinds_refused()) {
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		int was_bound = bound();
		stop_sharing(); /* CUPTI forgets ours, and so its share */
		r = next_();
		if (r == CUPTI_SUCCESS) {
			/* ours are off at CUPTI too: the resume switches on again
			 * what is wanted then */
			for (int d = 1; d < CUPTI_CB_DOMAIN_SIZE; d++)
				for (uint32_t c = 0; c < MAX_CB; c++)
					atomic_store(&ours_on[d][c], 0);
			/* CUPTI forgot everyone: the job subscribes again if it
			 * wants to (Kineto does); ours is made again on the
			 * tick, not inside the API callback this may run in */
			co.holds_sub = co.holds_bufs = 0;
			co.kinds = co.kinds_off = 0;
			if (was_bound) {
				gps_cupti_lost_all();
				co.finalized = 1;
				if (!co.sub_given)
					give_callbacks();
				if (!co.bufs_given)
					give_activity();
			}
		}
	}
	LEAVE(r)
}

/* The job's switches on the handle it got from us (sharing); any other
 * handle goes straight on. */
GPS_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
						    CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	NEXT(cuptiEnableCallback)
	if (subscriber != VIRTUAL)
		return next_(enable, subscriber, domain, cbid);
	ENTER()
	CUptiResult r = job_enable(enable, domain, cbid);
	LEAVE(r)
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
						  CUpti_CallbackDomain domain)
{
	NEXT(cuptiEnableDomain)
	if (subscriber != VIRTUAL)
		return next_(enable, subscriber, domain);
	ENTER()
	CUptiResult r = domain > 0 && domain < CUPTI_CB_DOMAIN_SIZE ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	for (uint32_t c = 0; r == CUPTI_SUCCESS && c < MAX_CB; c++)
		atomic_store(&job_on[domain][c], enable ? 1 : 0);
	if (r == CUPTI_SUCCESS && !co.sub_given) {
		/* the domain at CUPTI as a whole, then ours back where it is off */
		void *h = gps_cupti_subscriber();
		r = real_enable_dom(enable, (CUpti_SubscriberHandle)h, domain);
		if (!enable)
			for (uint32_t c = 0; c < MAX_CB; c++)
				if (atomic_load(&ours_on[domain][c]))
					apply(domain, c);
	}
	LEAVE(r)
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
	NEXT(cuptiEnableAllDomains)
	if (subscriber != VIRTUAL)
		return next_(enable, subscriber);
	CUptiResult r = CUPTI_SUCCESS;
	for (int d = 1; d < CUPTI_CB_DOMAIN_SIZE && r == CUPTI_SUCCESS; d++)
		r = cuptiEnableDomain(enable, subscriber, (CUpti_CallbackDomain)d);
	return r;
}

GPS_EXPORT CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
						      CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	NEXT(cuptiGetCallbackState)
	if (subscriber != VIRTUAL)
		return next_(enable, subscriber, domain, cbid);
	if (!enable || !cb_ok(domain, cbid))
		return CUPTI_ERROR_INVALID_PARAMETER;
	*enable = atomic_load(&job_on[domain][cbid]);
	return CUPTI_SUCCESS;
}
