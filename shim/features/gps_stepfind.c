/* gps_stepfind.c — training steps found online, without NVTX (gps_stepfind.h;
 * docs/STEPS.md, "Steps found online (shim)").
 *
 * States (`state`, changed by the owner thread only, read by any):
 *
 *   LEARN   the owner (the first thread that feeds an event) buffers the
 *           first events: markers (copies, synchronisations, graph
 *           launches: few a step) and kernel launches apart, each a
 *           sliding window of the latest MK_CAP / KN_CAP.  At 16, 32, ...
 *           markers (then every MK_CAP / 4) it asks gps_period_find for a
 *           marker boundary; at KN_CAP / 4, / 2, KN_CAP kernels (then every
 *           KN_CAP), for a kernel boundary if no marker one is found.
 *           A boundary needs MIN_ALIKE alike steps.
 *   TRACK   every occurrence of the boundary on the owner thread ends step
 *           k and begins step k + 1 (features/gps_steps.c: the consumers of
 *           NVTX steps see these alike); k starts at the boundary's
 *           occurrences while learning, so a step's number is its place in
 *           the run.  The boundary missing for RELEARN_PERIODS periods of
 *           events of its level (markers, or kernels) while the job makes
 *           others: the structure changed (evaluation, a new phase), learn
 *           again (at most MAX_LEARNS times); the open step is abandoned
 *           (no range, no rule).  A stall makes no events and is a long
 *           step, for the step rule.
 *   YIELD   an NVTX step was seen: its step, if open, ends at the next
 *           boundary, and NVTX steps are the only ones from then on.
 *   BLIND   the boundary is a kernel launch and the API callbacks for
 *           launches were switched off (the flight recorder's auto switch).
 *   NONE    nothing repeats in what was looked at (MAX_MARKERS markers
 *           and MAX_KERNELS launches): off.
 *
 * Cost per event while learning: a compare-and-exchange the first time,
 * then a thread-id compare and a store (an amortised sort every so many
 * events, on the job's thread: a few ms in all), and the handover's
 * atomics (the owner: a sequentially consistent store and a
 * compare-and-exchange, and a load and at most once a store for its first
 * launch; another thread: two loads, a third for a launch, and an atomic add
 * for a launch while the owner has made none); while tracking a compare,
 * and per step the step edge (as an NVTX step's).  No lock, no system call;
 * the only allocation is the period finder's scratch, per attempt. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gps_core.h"
#include "features/gps_period.h"
#include "features/gps_stepfind.h"
#include "features/gps_steps.h"

#define MK_CAP 1024
#define KN_CAP 4096
#define MIN_ALIKE 6
#define RELEARN_PERIODS 64
#define MAX_LEARNS 8
#define MAX_MARKERS (64u * 1024)
#define MAX_KERNELS (256u * 1024)

enum { SF_OFF = 0, SF_LEARN, SF_TRACK, SF_YIELD, SF_BLIND, SF_NONE };

atomic_int gps_stepfind_on;
static atomic_int state;
static atomic_uint owner;       /* the thread whose events are looked at */

/* owner thread only */
static struct gps_period_ev mk[MK_CAP], kn[KN_CAP];
static unsigned nmk, nkn;
static uint64_t mk_total, kn_total, next_mk_try, next_kn_try;
static uint64_t bound;          /* the boundary's signature (in its context, for ctx > 1) */
static unsigned ctx = 1;        /* events whose signatures make the boundary's (gps_period_context) */
static uint64_t hist[GPS_PERIOD_MAX_CONTEXT]; /* the latest markers' signatures, newest first */
static struct gps_period_ev mkctx[MK_CAP];    /* the learning window's markers in context */
static struct gps_period_ev mksl[MK_CAP];     /* ... without the copies' sizes */
static int sizeless;            /* the boundary's (and its context's) copies are compared without their size */
static uint64_t since;          /* events of its level since it last occurred */
static uint64_t number;         /* the next step's number */
static int open_step;
static uint64_t open_start, open_number;
/* the open step for the final flush (gps_stepfind_final), from another
 * thread: its start, then its number + 1 (0: none) with release */
static _Atomic uint64_t pub_open_start, pub_open;
static atomic_uint classes_gen; /* changes of gps_stepfind_classes (gps_stepfind_classes_changes) */
static unsigned learns;
/* published for messages */
static _Atomic uint64_t pub_sig, pub_mk, pub_kn;
static atomic_uint pub_len, pub_alike, pub_steps, pub_ctx, pub_sizeless;

static const char *const class_words[GPS_SIG_NCLASS] = {
	"an API call", "a host-to-device copy", "a device-to-host copy", "a copy",
	"a synchronisation", "a CUDA graph launch", "a kernel launch",
};

static void learn_reset(void);

void gps_stepfind_init(int on)
{
	learn_reset();
	atomic_store(&state, on ? SF_LEARN : SF_OFF);
	atomic_store(&gps_stepfind_on, on);
}

static void learn_reset(void)
{
	sizeless = 0;
	atomic_store(&pub_sizeless, 0);
	nmk = nkn = 0;
	mk_total = kn_total = 0;
	next_mk_try = 16;
	next_kn_try = KN_CAP / 4;
}

/* The found step as the trace's NVTX range "step N", domain "gpuprof" (as
 * a job's own: `gpuprof steps` picks them; docs/STEPS.md). */
static void emit_range(const char *name, uint64_t start, uint64_t end, uint32_t tid)
{
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? gps_rec(GPS_REC_CUDA) : NULL;
	if (rec) {
		gp_record r;
		memset(&r, 0, sizeof r);
		r.type = GP_REC_NVTX_RANGE;
		gp_rec_nvtx_range *o = &r.u.nvtx_range;
		o->start_ns = start;
		o->end_ns = end;
		o->kind = GP_NVTX_PUSHPOP;
		o->domain_id = gp_intern(rec, "gpuprof");
		o->message_id = gp_intern(rec, name);
		o->tid = o->end_tid = tid;
		gp_emit(rec, &r);
	}
	gps_leave(t);
}

static void emit_step(uint64_t n, uint64_t start, uint64_t end, uint32_t tid)
{
	char name[32];
	snprintf(name, sizeof name, "step %" PRIu64, n);
	emit_range(name, start, end, tid);
}

/* What was found, once, in the trace: an NVTX mark in domain "gpuprof". */
static void emit_found(uint32_t tid, uint64_t now)
{
	char what[200], msg[300];
	gps_stepfind_describe(what, sizeof what);
	snprintf(msg, sizeof msg, "gpuprof %s", what);
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? gps_rec(GPS_REC_CUDA) : NULL;
	if (rec) {
		gp_record r;
		memset(&r, 0, sizeof r);
		r.type = GP_REC_NVTX_MARK;
		r.u.nvtx_mark.ts_ns = now;
		r.u.nvtx_mark.domain_id = gp_intern(rec, "gpuprof");
		r.u.nvtx_mark.message_id = gp_intern(rec, msg);
		r.u.nvtx_mark.tid = tid;
		gp_emit(rec, &r);
	}
	gps_leave(t);
}

/* The step thread: the open step is no more (0) or step open_number (1) */
static void set_open(int on)
{
	open_step = on;
	if (on)
		atomic_store_explicit(&pub_open_start, open_start, memory_order_relaxed);
	atomic_store_explicit(&pub_open, on ? open_number + 1 : 0, memory_order_release);
}

static void end_step(uint32_t tid, uint64_t now)
{
	if (!open_step)
		return;
	set_open(0);
	emit_step(open_number, open_start, now, tid); /* before the end: a capture's last step is in it */
	gps_steps_end(open_number, open_start, now);
}

static void stop(int why)
{
	atomic_store(&state, why);
	atomic_store(&gps_stepfind_on, 0);
}

/* A boundary on the owner thread */
static void edge(uint32_t tid, uint64_t now)
{
	end_step(tid, now);
	if (atomic_load_explicit(&gps_steps_nvtx_seen, memory_order_relaxed)) {
		gps_steps_found_release();
		stop(SF_YIELD);
		return;
	}
	if (gps_steps_found_begin(number, tid)) {
		open_number = number;
		open_start = gps_now(); /* after the begin's work: as an NVTX step's */
		set_open(1);
	}
	number++;
}

/* raw: the events' own signatures, for the description (ev, for k > 1) */
static int try_find(const struct gps_period_ev *ev, const struct gps_period_ev *raw, unsigned k, unsigned n,
		    uint32_t tid, uint64_t now)
{
	size_t sz = gps_period_scratch_size(n);
	void *scratch = malloc(sz);
	struct gps_period_result r;
	int found = scratch && gps_period_find(ev, n, MIN_ALIKE, scratch, &r);
	free(scratch);
	if (!found)
		return 0;
	bound = r.sig;
	ctx = k;
	if (sizeless) /* the context of the next boundary, as the events to come */
		for (unsigned i = 0; i < GPS_PERIOD_MAX_CONTEXT; i++)
			hist[i] = gps_sig_sizeless(hist[i]);
	for (unsigned i = 0; i < n; i++)
		if (ev[i].sig == r.sig) {
			r.sig = raw[i].sig; /* what the boundary is, for the messages */
			break;
		}
	since = 0;
	/* the steps so far: the boundary's occurrences in the window (exact
	 * unless the window slid or steps before the first occurrence were
	 * unlike, warm-up); after a relearning, on from the last number */
	number += r.count;
	atomic_store(&pub_sig, r.sig);
	atomic_store(&pub_len, r.len);
	atomic_store(&pub_alike, r.alike);
	atomic_store(&pub_steps, r.steps);
	atomic_store(&pub_ctx, k);
	atomic_store(&state, SF_TRACK);
	atomic_fetch_add(&classes_gen, 1);
	emit_found(tid, now);
	return 1;
}

/* A marker into the latest markers (hist), for a boundary told apart by
 * its context */
static void hist_push(uint64_t sig)
{
	if (GPS_SIG_MARKER(sig)) {
		memmove(hist + 1, hist, (GPS_PERIOD_MAX_CONTEXT - 1) * sizeof *hist);
		hist[0] = sig;
	}
}

static void push(struct gps_period_ev *buf, unsigned *n, unsigned cap, uint64_t sig, uint64_t now)
{
	if (*n == cap) { /* slide: keep the latest half */
		memmove(buf, buf + cap / 2, (cap - cap / 2) * sizeof *buf);
		*n = cap - cap / 2;
	}
	buf[*n].sig = sig;
	buf[*n].t = now;
	(*n)++;
}

/* The markers ev[] (mk's, or mksl's) as they are, then each told apart by
 * the 1, 2, 3 markers before it (gps_period_context): the shortest context
 * that repeats once a step. */
static int try_contexts(const struct gps_period_ev *ev, uint32_t tid, uint64_t now)
{
	if (try_find(ev, mk, 1, nmk, tid, now))
		return 1;
	for (unsigned k = 2; k <= GPS_PERIOD_MAX_CONTEXT; k++) {
		for (unsigned i = 0; i < nmk; i++) {
			uint64_t last[GPS_PERIOD_MAX_CONTEXT];
			unsigned m = i + 1 < k ? i + 1 : k;
			for (unsigned j = 0; j < m; j++)
				last[j] = ev[i - j].sig;
			mkctx[i].sig = gps_period_context(last, m);
			mkctx[i].t = ev[i].t;
		}
		if (try_find(mkctx, mk, k, nmk, tid, now))
			return 1;
	}
	return 0;
}

/* With the copies' sizes, then (no step alike with them: an HF Trainer's
 * batches padded to their longest sample) without; that only once the
 * window has slid (over MK_CAP markers): a model's parameter copies at
 * start-up, each with its synchronisation, are alike without their sizes
 * and would be taken for steps (the padded HF Trainer's finder cut at each
 * of its three input copies so, on the H100) */
static int try_markers(uint32_t tid, uint64_t now)
{
	if (try_contexts(mk, tid, now))
		return 1;
	if (mk_total <= MK_CAP)
		return 0;
	for (unsigned i = 0; i < nmk; i++) {
		mksl[i].sig = gps_sig_sizeless(mk[i].sig);
		mksl[i].t = mk[i].t;
	}
	sizeless = 1; /* (for try_find's message and tracking) */
	atomic_store(&pub_sizeless, 1);
	if (try_contexts(mksl, tid, now))
		return 1;
	sizeless = 0;
	atomic_store(&pub_sizeless, 0);
	return 0;
}

static void learn(uint64_t sig, uint32_t tid, uint64_t now)
{
	if (GPS_SIG_MARKER(sig)) {
		push(mk, &nmk, MK_CAP, sig, now);
		atomic_store_explicit(&pub_mk, ++mk_total, memory_order_relaxed);
		if (mk_total >= next_mk_try) {
			next_mk_try = mk_total < MK_CAP ? mk_total * 2 : mk_total + MK_CAP / 4;
			if (try_markers(tid, now))
				return;
		}
	} else if (kn_total < MAX_KERNELS) { /* (past it: launches are no longer looked at) */
		push(kn, &nkn, KN_CAP, sig, now);
		atomic_store_explicit(&pub_kn, ++kn_total, memory_order_relaxed);
		if (kn_total >= next_kn_try) {
			next_kn_try = kn_total < KN_CAP ? kn_total * 2 : kn_total + KN_CAP;
			/* a marker boundary first: it stays visible when launches' callbacks go */
			if ((nmk >= 16 && try_markers(tid, now)) || try_find(kn, kn, 1, nkn, tid, now))
				return;
		}
	}
	/* nothing repeats in all that was looked at; a job that makes no
	 * markers (or no launches seen) gives up on the other alone */
	if ((mk_total >= MAX_MARKERS || !mk_total) && (kn_total >= MAX_KERNELS || !kn_total) && mk_total + kn_total)
		stop(SF_NONE);
}

/* Another thread takes the step thread's place while the finder learns
 * when the owner has made no event for TAKE_IDLE_NS and other threads made
 * TAKE_EVENTS since (counted only then: while the owner is busy, another
 * thread's event costs two loads, no atomic write): a job that loads its model on one thread and trains on
 * another.  Or when another thread made TAKE_LAUNCHES kernel or graph launches
 * while the owner had made none since it began learning: JAX's first CUDA
 * calls are its transfer threads' parameter copies, and its main thread
 * then launches each step as one CUDA graph before the copier has been
 * idle for long.  A PyTorch main thread makes calls every step, so
 * keeps its place: it launches the forward before the autograd thread
 * launches any backward, and its backward's launches come while it waits,
 * for less than TAKE_IDLE_NS unless a step is that long.
 *
 * The handover without a lock (Dekker's): the owner, in a LEARN event,
 * publishes itself in `inside` and then reads `owner`; a thread that took
 * `owner` (compare-and-exchange) reads `inside` before it touches the
 * learning state.  One of the two sees the other: the old owner backs off
 * before it touches anything, or the new one skips its events until the old
 * one is out. */
#define TAKE_IDLE_NS 2000000000ull
/* the GPU work a step is made of: a kernel launch or a CUDA graph's */
#define IS_LAUNCH(sig) (GPS_SIG_CLASS(sig) == GPS_SIG_KERNEL || GPS_SIG_CLASS(sig) == GPS_SIG_GRAPH)
#define TAKE_EVENTS 1024u
/* a few steps' launches: a stray launch or two does not move the finder */
#define TAKE_LAUNCHES 64u
static _Atomic uint64_t owner_last; /* LEARN: the owner's latest event */
static atomic_uint others;          /* LEARN: other threads' events since */
static atomic_uint launches_apart;  /* LEARN: other threads' launches while the owner made none */
static atomic_int owner_launched;   /* LEARN: the owner made a kernel or graph launch */
static atomic_uint inside;          /* LEARN: the thread in an owner's event (0: none) */
static atomic_uint took;            /* the thread that took the place: its first event learns afresh */

static void take_over(uint32_t o, uint32_t tid, uint64_t sig, uint64_t now)
{
	if (atomic_load_explicit(&state, memory_order_relaxed) != SF_LEARN)
		return;
	if (now < atomic_load_explicit(&owner_last, memory_order_relaxed) + TAKE_IDLE_NS) {
		/* the owner is busy: only a launcher beside an owner that launches nothing */
		if (!IS_LAUNCH(sig) || atomic_load_explicit(&owner_launched, memory_order_relaxed) ||
		    atomic_fetch_add_explicit(&launches_apart, 1, memory_order_relaxed) + 1 < TAKE_LAUNCHES)
			return;
	} else if (atomic_fetch_add_explicit(&others, 1, memory_order_relaxed) + 1 < TAKE_EVENTS)
		return;
	if (atomic_compare_exchange_strong(&owner, &o, tid))
		atomic_store(&took, tid);
}

/* A LEARN event's start on the owner thread: 0, back off (no longer the
 * owner, or the old owner is still inside) */
static int learn_enter(uint32_t tid, uint64_t now)
{
	uint32_t in = atomic_load(&inside);
	if (in && in != tid)
		return 0;
	atomic_store(&inside, tid);
	if (atomic_load(&owner) != tid) {
		uint32_t me = tid;
		atomic_compare_exchange_strong(&inside, &me, 0);
		return 0;
	}
	if (atomic_load(&took) == tid) {
		atomic_store(&took, 0);
		learn_reset();
		memset(hist, 0, sizeof hist);
		atomic_store(&pub_mk, 0);
		atomic_store(&pub_kn, 0);
		atomic_store(&launches_apart, 0);
		atomic_store(&owner_launched, 0);
	}
	atomic_store_explicit(&owner_last, now, memory_order_relaxed);
	if (atomic_load_explicit(&others, memory_order_relaxed))
		atomic_store_explicit(&others, 0, memory_order_relaxed);
	return 1;
}

static void learn_leave(uint32_t tid)
{
	uint32_t me = tid;
	atomic_compare_exchange_strong(&inside, &me, 0);
}

int gps_stepfind_event(uint64_t sig, uint32_t tid, uint64_t now)
{
	uint32_t o = atomic_load_explicit(&owner, memory_order_relaxed);
	if (o != tid) {
		if (o != 0) {
			take_over(o, tid, sig, now);
			return 0;
		}
		uint32_t expect = 0;
		if (!atomic_compare_exchange_strong(&owner, &expect, tid) && expect != tid)
			return 0;
	}
	int s = atomic_load_explicit(&state, memory_order_relaxed);
	if (s == SF_LEARN) {
		if (!learn_enter(tid, now))
			return 0;
		hist_push(sig);
		if (IS_LAUNCH(sig) && !atomic_load_explicit(&owner_launched, memory_order_relaxed))
			atomic_store_explicit(&owner_launched, 1, memory_order_relaxed);
		if (atomic_load_explicit(&gps_steps_nvtx_seen, memory_order_relaxed))
			stop(SF_YIELD);
		else
			learn(sig, tid, now);
		learn_leave(tid);
		return 0;
	}
	if (sizeless && s == SF_TRACK)
		sig = gps_sig_sizeless(sig);
	hist_push(sig);
	if (s == SF_TRACK) {
		if ((ctx > 1 && GPS_SIG_MARKER(sig) ? gps_period_context(hist, ctx) : sig) == bound) {
			since = 0;
			edge(tid, now);
			return 1;
		}
		if (GPS_SIG_MARKER(sig) != GPS_SIG_MARKER(bound))
			return 0;
		if (++since > (uint64_t)RELEARN_PERIODS * (atomic_load(&pub_len) + 1)) {
			/* the boundary is gone while the job goes on: learn again.
			 * The open step is no step (a new phase, an evaluation):
			 * not recorded, judged by no rule */
			if (open_step) {
				set_open(0);
				gps_steps_abandon(open_number, open_start, now);
			}
			if (++learns >= MAX_LEARNS) {
				stop(SF_NONE);
				return 1;
			}
			learn_reset();
			atomic_store(&state, SF_LEARN);
			atomic_fetch_add(&classes_gen, 1);
			return 1;
		}
		return 0;
	}
	return 0;
}

unsigned gps_stepfind_classes_changes(void) { return atomic_load(&classes_gen); }

unsigned gps_stepfind_classes(void)
{
	int s = atomic_load(&state);
	if (s == SF_LEARN)
		return (1u << GPS_SIG_HTOD) | (1u << GPS_SIG_DTOH) | (1u << GPS_SIG_COPY) | (1u << GPS_SIG_SYNC) |
		       (1u << GPS_SIG_GRAPH) | (1u << GPS_SIG_KERNEL);
	if (s == SF_TRACK && atomic_load(&pub_ctx) > 1) /* the boundary's context: every marker */
		return (1u << GPS_SIG_HTOD) | (1u << GPS_SIG_DTOH) | (1u << GPS_SIG_COPY) | (1u << GPS_SIG_SYNC) |
		       (1u << GPS_SIG_GRAPH);
	if (s == SF_TRACK)
		return 1u << GPS_SIG_CLASS(atomic_load(&pub_sig));
	return 0;
}

void gps_stepfind_kernels_gone(void)
{
	if (atomic_load(&state) != SF_TRACK || GPS_SIG_MARKER(atomic_load(&pub_sig)))
		return;
	/* (the owner may be at an edge now: its open step ends at the final
	 * flush's, or stays open; the rules fall back to time) */
	stop(SF_BLIND);
	gps_warn("steps: each step starts at a kernel launch, and the API callbacks for launches are now off "
		 "(GPUPROF_FLIGHT_API=auto): no more steps are seen; rules on steps fall back to time "
		 "(GPUPROF_FLIGHT_API=always keeps them, at CUPTI's cost per call)");
}

void gps_stepfind_describe(char *buf, size_t n)
{
	int s = atomic_load(&state);
	uint64_t sig = atomic_load(&pub_sig);
	enum gps_sig_class c = GPS_SIG_CLASS(sig);
	char bytes[64] = "";
	if ((c == GPS_SIG_HTOD || c == GPS_SIG_DTOH || c == GPS_SIG_COPY) && atomic_load(&pub_sizeless))
		snprintf(bytes, sizeof bytes, " of any size");
	else if (c == GPS_SIG_HTOD || c == GPS_SIG_DTOH || c == GPS_SIG_COPY)
		snprintf(bytes, sizeof bytes, " of %" PRIu64 " bytes", (uint64_t)(sig & ((1ull << 48) - 1)));
	switch (s) {
	case SF_TRACK:
	case SF_BLIND:
	case SF_YIELD:
		if (atomic_load(&pub_len)) {
			char told[64] = "";
			if (atomic_load(&pub_ctx) > 1)
				snprintf(told, sizeof told, ", told apart by the %u calls before it", atomic_load(&pub_ctx) - 1);
			snprintf(buf, n, "steps found online: each starts at %s%s%s (period %u API events, %u of %u alike)%s",
				 class_words[c < GPS_SIG_NCLASS ? c : 0], bytes, told, atomic_load(&pub_len),
				 atomic_load(&pub_alike), atomic_load(&pub_steps),
				 s == SF_YIELD ? "; NVTX steps took over" : s == SF_BLIND ? "; not seen since the API callbacks went off" : "");
			return;
		}
		snprintf(buf, n, "NVTX steps (the step finder yielded)");
		return;
	case SF_LEARN:
		snprintf(buf, n, "no repeating step found in %" PRIu64 " copies, synchronisations and graph launches and %" PRIu64
			 " kernel launches", atomic_load(&pub_mk), atomic_load(&pub_kn));
		return;
	case SF_NONE:
		snprintf(buf, n, "no step structure: nothing repeats in %" PRIu64
			 " copies, synchronisations and graph launches and %" PRIu64 " kernel launches",
			 atomic_load(&pub_mk), atomic_load(&pub_kn));
		return;
	default:
		snprintf(buf, n, "the step finder is off (GPUPROF_STEPS)");
	}
}

/* The last found step never meets the boundary that would end it: the
 * final flush records it up to now as the range "step N (partial)" — not a
 * step name (a step's whole name ends in its number: docs/STEPS.md), so no
 * analysis takes it for a whole step, and no rule judges it.  A step edge
 * on the step thread while the final flush runs is seen as a number that
 * changed under the read: then nothing is recorded; nor when the finder no
 * longer tracks (blind after the API switch: the step was left open then). */
void gps_stepfind_final(void)
{
	uint64_t n = atomic_load_explicit(&pub_open, memory_order_acquire);
	uint64_t start = atomic_load_explicit(&pub_open_start, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (!n || atomic_load_explicit(&pub_open, memory_order_relaxed) != n || atomic_load(&state) != SF_TRACK)
		return;
	char name[48];
	snprintf(name, sizeof name, "step %" PRIu64 " (partial)", n - 1);
	emit_range(name, start, gps_now(), atomic_load(&owner));
}

void gps_stepfind_after_fork_child(void)
{
	/* the child's steps are its own: learnt afresh */
	int on = atomic_load(&state) != SF_OFF;
	atomic_store(&owner, 0);
	atomic_store(&inside, 0);
	atomic_store(&others, 0);
	atomic_store(&launches_apart, 0);
	atomic_store(&owner_launched, 0);
	atomic_store(&took, 0);
	set_open(0);
	learns = 0;
	number = 0;
	ctx = 1;
	memset(hist, 0, sizeof hist);
	learn_reset();
	atomic_store(&pub_sig, 0);
	atomic_store(&pub_len, 0);
	atomic_store(&pub_ctx, 0);
	atomic_store(&pub_mk, 0);
	atomic_store(&pub_kn, 0);
	gps_stepfind_init(on);
}
