/* gps_flight.c — the flight recorder (gps_flight.h, docs/FLIGHT.md).
 *
 * Armed (GPUPROF_FLIGHT_RECORDER=DURATION): the recorder writes into a spool
 * file in the control directory, unlinked at once; the flush thread reads it
 * back every tick into libprof's spool (libprof/write/gp_spool.h), which keeps the
 * metadata and the last DURATION of data chunks in memory (at most
 * GPUPROF_FLIGHT_MAX_MEMORY) and releases the file's space.  GPU activity is
 * off; API calls and NVTX ranges are recorded as always.
 *
 * Which API calls the history keeps (GPUPROF_FLIGHT_API): `always` all of
 * them; `capture` none (API records follow GPU activity, so the history is
 * NVTX only); `auto`, the default, all of them until the process makes more
 * than GPUPROF_FLIGHT_API_RATE records a second while no capture runs, then
 * as `capture` for the rest of the run.  Why: CUPTI's own dispatch of an
 * empty callback on the default API set cost a launch-bound job (MNIST)
 * 4-11 % of its step time on the H100/H200 (docs/FLIGHT.md), far above
 * armed mode's budget, while a job that makes few calls pays nothing
 * measurable for keeping them.  The switch is one gpuprof: line and the
 * counters gpuprof.flight_api.rate (records a second) and
 * gpuprof.flight_api.history (0) in the trace.
 *
 * A capture: GPU activity on for K whole steps (or T seconds in a process
 * without steps), one capture at a time.  States, all changed under
 * fl_lock:
 *
 *   IDLE -> PENDING      a request (trigger, rule) in a process with steps:
 *                        waits for the next step begin (or start_step)
 *   IDLE/PENDING -> CAPTURING   at that step begin (the job's thread, in its
 *                        NVTX push, before the step's first launch), or at
 *                        once (no steps), or when no step came in time
 *   CAPTURING -> DRAINING after the K-th step's end (its NVTX pop), or T
 *                        (the flush thread); armed only: the GPU records of
 *                        the last steps arrive meanwhile
 *   DRAINING -> IDLE     the flush thread finishes the capture file
 *   CAPTURING -> IDLE    without a flight recorder (step sampling): the
 *                        capture is a span of the one trace file
 *
 * The capture file (armed) is opened by the flush thread at its first tick
 * after the request: the kept history from (request time - DURATION) on,
 * then every chunk as it arrives, then the index and footer after DRAINING.
 * Its name: GPUPROF_OUTPUT's, with "-capN" before the extension.
 *
 * Why a capture was taken is in the trace: an NVTX mark in domain "gpuprof"
 * ("gpuprof capture N: WHY; K steps from step S"), counters gpuprof.capture
 * (N), gpuprof.capture.reason (enum capture_reason), gpuprof.capture.steps
 * and, for the step rule, gpuprof.capture.step_ns / .median_ns, all at the
 * capture's start; and a GP_REC_WINDOW over the span GPU activity was on.
 * A sampled step gets a window only.
 *
 * The oom rule's capture (a device allocation ran out of memory; armed
 * mode's default rule) starts at once and runs by time, steps or not: the
 * job usually ends at its out-of-memory error, and what the capture is for
 * is the history before it.  Noted in the CUPTI callback like cuda-error,
 * acted on at the next tick, or at the final flush when the job exits
 * first (the file is then opened and written after the recorder closed).
 *
 * Rules (GPUPROF_TRIGGER) start a capture unless one is under way, within
 * GPUPROF_TRIGGER_COOLDOWN of a rule capture's end, or past
 * GPUPROF_TRIGGER_MAX rule captures in the last hour.  A failure to write a
 * capture is one line; captures stop for the process, the job runs on.
 *
 * Locks: sp_lock (the spool: the flush thread and, after it stopped, the
 * final flush) -> fl_lock -> CUPTI (activity kinds, API and the step
 * finder's marker callbacks) -> libprof (marks, windows); fl_lock as the
 * capture range's cap_lock.  The job's threads take
 * fl_lock only (at a step edge with work to do, when a rule fires), for a
 * state change and the activity switch. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gp_trace.h"
#include "core/gps_core.h"
#include "features/gps_control.h"
#include "features/gps_drop.h"
#include "features/gps_flight.h"
#include "features/gps_stepfind.h"
#include "features/gps_steps.h"
#include "features/gps_window.h"

#define SEC 1000000000ull
#define HOUR (3600 * SEC)
#define WAIT_STEP_NS (10 * SEC)     /* PENDING: a step must begin within this (+ lead) */
#define STEP_STALL_NS (60 * SEC)    /* CAPTURING by steps: no step end for this long ends it */
#define RULE_TIMES_MAX 60           /* GPUPROF_TRIGGER_MAX's maximum */
#define IDLE_SAMPLES 3              /* consecutive NVML rounds over the idle threshold */

enum fl_state { FL_IDLE = 0, FL_PENDING, FL_CAPTURING, FL_DRAINING };
enum capture_reason { R_TRIGGER = 1, R_STEP = 2, R_IDLE = 3, R_RANGE = 4, R_CUDA_ERROR = 5, R_DROP = 6, R_OOM = 7 };

struct capture {
	unsigned number;
	enum capture_reason reason;
	char why[256];
	uint32_t steps;             /* 0: by time */
	uint64_t seconds_ns;
	int64_t start_step;         /* -1: the next */
	uint64_t reply_id;          /* a trigger's request, 0 none */
	int reply_final;            /* its requester waits for done/failed */
	uint64_t req_trace, req_mono;
	uint64_t start_trace;
	uint64_t deadline;          /* mono: PENDING's wait, CAPTURING's T, DRAINING's end */
	int64_t first_step, last_step;
	uint32_t steps_done;
	uint64_t last_step_mono;
	uint64_t step_ns, median_ns; /* the step rule's values */
};

struct done {
	struct done *next;
	char *file;
	uint64_t records, bytes;
};

unsigned gps_flight_rules;
static int feature_on, armed;
static uint32_t sample_n;

static pthread_mutex_t fl_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int state;       /* enum fl_state; written under fl_lock */
static atomic_int sample_on;   /* a sampled step is open (step thread; fl_lock to change) */
static struct capture cur;     /* fl_lock */
static int act_on;             /* fl_lock: GPU activity switched on by us */
static int api_follows;        /* fl_lock: API records on only with GPU activity */
static uint64_t api_switch_rate; /* fl_lock: auto's switch, the rate that made it */
static uint64_t rate_since, rate_records; /* flush thread: auto's measuring interval */
static uint64_t sample_start;  /* fl_lock */
static int captures_off;       /* fl_lock: no more captures (a write failed) */
static unsigned ncaptures;     /* fl_lock: started */
static uint64_t last_rule_end; /* fl_lock, mono */
static uint64_t rule_times[RULE_TIMES_MAX]; /* fl_lock, mono: rule captures' requests */
static unsigned nrule_times;
static atomic_uint finished;   /* captures finished */
static char last_why[256], last_file[4096]; /* fl_lock */
static atomic_int cuda_gone;   /* CUDA is tearing its context down: no more switching */
static int fl_final;           /* fl_lock: the final flush switched off what was on */
/* a CUDA error seen in a CUPTI callback, for the flush thread's next tick
 * (no lock of ours is taken and no CUPTI call made inside a callback for
 * it) */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ev_pending;
static char ev_why[200];       /* ev_lock */
static enum capture_reason ev_reason; /* ev_lock */
static unsigned idle_rounds;   /* NVML thread only */
static int util_busy_seen;     /* NVML thread only: a round was busy (the job's GPU work began) */
static unsigned util_max_round; /* NVML thread only */
static unsigned util_seen;      /* NVML thread only: devices in this round (bits) */
static struct gps_drop drop;    /* NVML thread only: the drop rule's windows */

/* the spool: the flush thread, then the final flush */
static pthread_mutex_t sp_lock = PTHREAD_MUTEX_INITIALIZER;
static gp_spool *spool;
static int cap_open;           /* sp_lock: the capture file is open */
static unsigned cap_number;    /* sp_lock: whose file it is */
static char cap_file[4096];    /* sp_lock */
static int cap_seq;            /* sp_lock: -capN numbering */
static struct done *done_list; /* sp_lock */
static uint64_t next_register; /* flush thread */
static unsigned markers_changes; /* fl_lock: gps_stepfind_classes_changes when last applied */

static uint64_t keep_ns(void) { return gps.cfg.flight_ns; }
static uint64_t drain_ns(void) { return 2 * (uint64_t)(gps.cfg.flush_ms ? gps.cfg.flush_ms : 500) * 1000000ull + SEC / 2; }

int gps_flight_armed(void) { return armed; }

/* ------------------------------------------------------------ the trace file */
static int spool_path(char *out, size_t n)
{
	if (!gps_control_on()) {
		gps_warn("flight recorder: no control directory for its spool; job runs untraced");
		return -1;
	}
	int w = snprintf(out, n, "%s/%d.spool", gps_control_dir(), (int)gps.pid);
	if (w < 0 || (size_t)w >= n) {
		gps_warn("flight recorder: spool path too long; job runs untraced");
		return -1;
	}
	unlink(out); /* a crashed process's, with our pid */
	return 0;
}

static void spool_created(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	int e = errno;
	unlink(path); /* lives on through the two fds; gone with the process */
	struct gp_spool_opts o = {.sz = sizeof o, .max_bytes = gps.cfg.flight_max_memory};
	gp_spool *s = NULL;
	if (fd < 0 || gp_spool_open(fd, &o, &s) != 0) {
		gps_warn("flight recorder off: cannot read back its spool %s: %s; no captures", path,
			 strerror(fd < 0 ? e : ENOMEM));
		pthread_mutex_lock(&fl_lock);
		captures_off = 1;
		pthread_mutex_unlock(&fl_lock);
		return;
	}
	pthread_mutex_lock(&sp_lock);
	spool = s;
	pthread_mutex_unlock(&sp_lock);
}

static const struct gps_trace_file_ops spool_ops = {.path = spool_path, .created = spool_created};
const struct gps_trace_file_ops *gps_flight_file_ops(void) { return armed ? &spool_ops : NULL; }

/* ------------------------------------------------------------ init */
void gps_flight_init(void)
{
	const struct gps_config *c = &gps.cfg;
	armed = c->flight_ns != 0;
	sample_n = c->sample_steps;
	feature_on = armed || sample_n;
	if (!feature_on)
		return;
	gps_flight_rules = c->rules.what;
	if ((gps_flight_rules & (GP_RULE_IDLE | GP_RULE_DROP)) && !c->gpu_metrics_hz) {
		/* their measure is NVML's GPU utilisation: none is sampled */
		gps_warn("GPUPROF_TRIGGER: %s%s%s need%s GPU metrics (GPUPROF_GPU_METRICS, gpuprof run --gpu-metrics); "
			 "off",
			 gps_flight_rules & GP_RULE_IDLE ? "idle>" : "",
			 (gps_flight_rules & GP_RULE_IDLE) && (gps_flight_rules & GP_RULE_DROP) ? " and " : "",
			 gps_flight_rules & GP_RULE_DROP ? "drop>" : "",
			 (gps_flight_rules & GP_RULE_IDLE) && (gps_flight_rules & GP_RULE_DROP) ? "" : "s");
		gps_flight_rules &= ~(unsigned)(GP_RULE_IDLE | GP_RULE_DROP);
	}
	gps_drop_init(&drop, c->rules.drop_pct, c->rules.drop_window_ns);
	api_follows = c->flight_api == GP_FLIGHT_API_CAPTURE;
	gps_steps_init(c->steps != GP_STEPS_OFF);
	/* steps without NVTX: only where a feature uses steps (a plain trace's
	 * are found offline, at no cost to the job) */
	gps_stepfind_init(c->steps == GP_STEPS_AUTO);
	/* armed: the spool lives in the control directory, served or not */
	if ((c->control || armed) && gps_control_init(c->control) != 0 && armed)
		armed = 0; /* said; the core's path hook is not installed */
}

int gps_flight_activity_off(void)
{
	if (!feature_on)
		return 0;
	return atomic_load(&state) != FL_CAPTURING && !atomic_load(&sample_on);
}

/* ------------------------------------------------------------ activity */
/* fl_lock held: GPU activity on while a capture or a sampled step needs it.
 * Never once CUDA tears its context down (toggling kinds then crashed jobs
 * on the H200: features/gps_window.c) or after the final flush. */
static void activity_update(void)
{
	if (fl_final || atomic_load(&cuda_gone))
		return;
	int want = atomic_load(&state) == FL_CAPTURING || atomic_load(&sample_on);
	if (want != act_on) {
		/* API records follow GPU activity (GPUPROF_FLIGHT_API=capture,
		 * or auto once switched): on first and off last, so that every
		 * GPU operation recorded has the call that made it */
		int api = api_follows;
		if (api && want)
			gps_gpu_api(1);
		gps_gpu_activity(want);
		if (api && !want)
			gps_gpu_api(0);
		act_on = want;
	}
}

static void emit_window(uint64_t start, uint64_t end)
{
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (rec)
		gps_window_emit(rec, start, end);
	gps_leave(t);
}

/* The capture's reason in the trace (see the file comment), fl_lock held. */
static void emit_why(void)
{
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (rec) {
		char msg[512];
		if (cur.steps)
			snprintf(msg, sizeof msg, "gpuprof capture %u: %s; %u steps from step %" PRId64, cur.number,
				 cur.why, cur.steps, cur.first_step);
		else
			snprintf(msg, sizeof msg, "gpuprof capture %u: %s; %.3f s", cur.number, cur.why,
				 (double)cur.seconds_ns / 1e9);
		gp_record r;
		memset(&r, 0, sizeof r);
		r.type = GP_REC_NVTX_MARK;
		r.u.nvtx_mark.ts_ns = cur.start_trace;
		r.u.nvtx_mark.domain_id = gp_intern(rec, "gpuprof");
		r.u.nvtx_mark.message_id = gp_intern(rec, msg);
		r.u.nvtx_mark.tid = gps_gettid();
		gp_emit(rec, &r);
		gps_emit_int_counter(rec, "gpuprof.capture", cur.number);
		gps_emit_int_counter(rec, "gpuprof.capture.reason", cur.reason);
		gps_emit_int_counter(rec, "gpuprof.capture.steps", cur.steps);
		if (cur.reason == R_STEP) {
			gps_emit_int_counter(rec, "gpuprof.capture.step_ns", cur.step_ns);
			gps_emit_int_counter(rec, "gpuprof.capture.median_ns", cur.median_ns);
		}
	}
	gps_leave(t);
}

/* fl_lock held: IDLE/PENDING -> CAPTURING */
static void capture_start(int64_t first_step)
{
	cur.first_step = first_step;
	cur.last_step_mono = gps_mono_ns();
	cur.start_trace = gps_now(); /* before the kinds are on */
	atomic_store(&state, FL_CAPTURING);
	activity_update();
	if (!cur.steps)
		cur.deadline = gps_mono_ns() + cur.seconds_ns;
	snprintf(last_why, sizeof last_why, "%s", cur.why);
	emit_why();
}

static void note_done(const char *file, uint64_t records, uint64_t bytes);

/* fl_lock held: CAPTURING -> DRAINING (armed) or IDLE */
static void capture_stop(void)
{
	atomic_store(&state, armed ? FL_DRAINING : FL_IDLE);
	activity_update();
	uint64_t end = gps_now(); /* after the kinds are off */
	emit_window(cur.start_trace, end);
	if (cur.reason != R_TRIGGER)
		last_rule_end = gps_mono_ns();
	if (armed) {
		cur.deadline = gps_mono_ns() + drain_ns();
		return;
	}
	atomic_fetch_add(&finished, 1);
	snprintf(last_file, sizeof last_file, "%s", gps.trace_path);
	if (cur.reply_id && cur.reply_final) {
		char msg[400];
		snprintf(msg, sizeof msg, "capture %u: %u steps (%" PRId64 "..%" PRId64 ") in the trace", cur.number,
			 cur.steps_done, cur.first_step, cur.last_step);
		gps_control_reply(cur.reply_id, "done", msg, gps.trace_path);
	}
}

/* ------------------------------------------------------------ requests */
/* fl_lock held.  0: accepted (PENDING or CAPTURING); -1: refused, why in
 * `refusal`. */
static int request(enum capture_reason reason, const char *why, uint32_t steps, uint64_t seconds_ns,
		   int64_t start_step, uint64_t reply_id, char *refusal, size_t rn)
{
	int s = atomic_load(&state);
	if (s != FL_IDLE) {
		snprintf(refusal, rn, "capture %u is %s (%s)", cur.number,
			 s == FL_PENDING ? "waiting for its first step" : s == FL_CAPTURING ? "under way" : "being written",
			 cur.why);
		return -1;
	}
	if (captures_off) {
		snprintf(refusal, rn, "captures are off in this process (see its earlier gpuprof: line)");
		return -1;
	}
	uint64_t yielded = gps_gpu_yielded(); /* GPUPROF_COEXIST: a capture would hold no GPU activity */
	if (yielded) {
		snprintf(refusal, rn,
			 "the job's own profiler has held CUPTI for %.1f s (GPUPROF_COEXIST=yield); "
			 "trigger again after it stops",
			 (double)(gps_now() - yielded) / 1e9);
		return -1;
	}
	memset(&cur, 0, sizeof cur);
	cur.number = ++ncaptures;
	cur.reason = reason;
	snprintf(cur.why, sizeof cur.why, "%s", why);
	cur.steps = steps ? steps : gps.cfg.trigger_steps;
	cur.seconds_ns = seconds_ns ? seconds_ns : gps.cfg.trigger_ns;
	cur.start_step = start_step;
	cur.reply_id = reply_id;
	cur.req_trace = gps_now();
	cur.req_mono = gps_mono_ns();
	cur.first_step = cur.last_step = -1;
	struct gps_step_stats st;
	gps_steps_get(&st);
	uint64_t med = st.median_ns ? st.median_ns : st.last_ns;
	uint64_t recent = 10 * med > WAIT_STEP_NS ? 10 * med : WAIT_STEP_NS;
	/* (a step may have begun on the job's thread since req_mono was read) */
	int by_steps = reason != R_OOM && st.last_begin_mono && st.last_begin_mono + recent > cur.req_mono;
	if (!by_steps) {
		cur.steps = 0;
		capture_start(-1);
		return 0;
	}
	uint64_t lead = start_step > st.last ? (uint64_t)(start_step - st.last) * 2 * (med ? med : SEC / 1000) : 0;
	cur.deadline = cur.req_mono + recent + lead;
	atomic_store(&state, FL_PENDING);
	return 0;
}

/* A rule fired (any thread): a capture unless one is under way, in the
 * cool-down, or over the hourly cap. */
static void rule_fire(enum capture_reason reason, const char *why, uint64_t step_ns, uint64_t median_ns)
{
	pthread_mutex_lock(&fl_lock);
	uint64_t now = gps_mono_ns();
	unsigned recent = 0;
	for (unsigned i = 0; i < nrule_times; i++)
		recent += now - rule_times[i] < HOUR;
	int ok = atomic_load(&state) == FL_IDLE && !captures_off && recent < gps.cfg.trigger_max &&
		 (!last_rule_end || now - last_rule_end >= gps.cfg.trigger_cooldown_ns);
	char refusal[300];
	if (ok && request(reason, why, 0, 0, -1, 0, refusal, sizeof refusal) == 0) {
		cur.step_ns = step_ns;
		cur.median_ns = median_ns;
		/* the oldest slot (or a free one) remembers this capture */
		unsigned slot = 0;
		if (nrule_times < RULE_TIMES_MAX)
			slot = nrule_times++;
		else
			for (unsigned i = 1; i < nrule_times; i++)
				if (rule_times[i] < rule_times[slot])
					slot = i;
		rule_times[slot] = now;
	}
	pthread_mutex_unlock(&fl_lock);
}

static void handle_request(const struct gp_control_request *rq)
{
	char why[160], refusal[300], msg[400];
	snprintf(why, sizeof why, "trigger (request %" PRIu64 " from pid %d)", rq->id, (int)rq->from_pid);
	pthread_mutex_lock(&fl_lock);
	int rc = request(R_TRIGGER, why, rq->steps, rq->seconds_ns, rq->start_step, rq->id, refusal, sizeof refusal);
	if (rc == 0) {
		cur.reply_final = rq->wait != 0;
		struct gps_step_stats st;
		gps_steps_get(&st);
		if (cur.steps && cur.start_step >= 0)
			snprintf(msg, sizeof msg, "capture %u: %u whole steps from step %" PRId64 " (now at step %" PRId64 ")",
				 cur.number, cur.steps, cur.start_step, st.last);
		else if (cur.steps)
			snprintf(msg, sizeof msg, "capture %u: %u whole steps from the next step (now at step %" PRId64 ")",
				 cur.number, cur.steps, st.last);
		else
			snprintf(msg, sizeof msg, "capture %u: %.3f s (no steps seen)", cur.number,
				 (double)cur.seconds_ns / 1e9);
	}
	pthread_mutex_unlock(&fl_lock);
	if (rc == 0) {
		gps_control_reply(rq->id, "accepted", msg, NULL);
	} else {
		gps_warn("trigger request %" PRIu64 " refused: %s", rq->id, refusal);
		gps_control_reply(rq->id, "refused", refusal, NULL);
	}
}

/* ------------------------------------------------------------ steps */
int gps_flight_step_begin(uint64_t step)
{
	if (!feature_on)
		return 0;
	int s = atomic_load(&state);
	int sample = sample_n && step % sample_n == 0;
	if (s != FL_PENDING && !sample)
		return s == FL_CAPTURING;
	pthread_mutex_lock(&fl_lock);
	if (atomic_load(&state) == FL_PENDING && (cur.start_step < 0 || (int64_t)step >= cur.start_step))
		capture_start((int64_t)step);
	if (sample && atomic_load(&state) != FL_CAPTURING) {
		sample_start = gps_now();
		atomic_store(&sample_on, 1);
		activity_update();
	}
	int traced = act_on;
	pthread_mutex_unlock(&fl_lock);
	return traced;
}

void gps_flight_step_end(uint64_t step, uint64_t start_ns, uint64_t end_ns, const struct gps_step_stats *st)
{
	if (!feature_on)
		return;
	int s = atomic_load(&state);
	if (s == FL_CAPTURING || atomic_load(&sample_on)) {
		pthread_mutex_lock(&fl_lock);
		if (atomic_load(&state) == FL_CAPTURING && cur.steps && cur.first_step >= 0) {
			cur.steps_done++;
			cur.last_step = (int64_t)step;
			cur.last_step_mono = gps_mono_ns();
			if (cur.steps_done >= cur.steps)
				capture_stop();
		}
		if (atomic_load(&sample_on)) {
			atomic_store(&sample_on, 0);
			activity_update();
			emit_window(sample_start, gps_now());
		}
		pthread_mutex_unlock(&fl_lock);
		return;
	}
	/* the step rule: on steps recorded without GPU activity only (tracing
	 * makes the others slower) */
	if (s != FL_IDLE || !(gps_flight_rules & GP_RULE_STEP) || !st->median_ns)
		return;
	uint64_t dur = end_ns > start_ns ? end_ns - start_ns : 0;
	if ((double)dur > gps.cfg.rules.step_factor * (double)st->median_ns) {
		char why[200];
		snprintf(why, sizeof why, "rule step>%gx: step %" PRIu64 " took %.1f ms, %.1f x the median %.3f ms",
			 gps.cfg.rules.step_factor, step, (double)dur / 1e6, (double)dur / (double)st->median_ns,
			 (double)st->median_ns / 1e6);
		rule_fire(R_STEP, why, dur, st->median_ns);
	}
}

void gps_flight_range(const char *name)
{
	if (!(gps_flight_rules & GP_RULE_RANGE) || !name || strcmp(name, gps.cfg.rules.range))
		return;
	char why[160];
	snprintf(why, sizeof why, "rule range=%s", name);
	rule_fire(R_RANGE, why, 0, 0);
}

/* Inside a CUPTI callback: noted for the flush thread (a trylock: the job's
 * thread never waits; a second error while one is noted is the same
 * anomaly). */
void gps_flight_cuda_error(const char *api, int status)
{
	/* cudaErrorNotReady / CUDA_ERROR_NOT_READY (600): a query's "not yet",
	 * not an error */
	if (!(gps_flight_rules & GP_RULE_CUDA_ERROR) || status == 0 || status == 600 ||
	    atomic_load(&ev_pending) || pthread_mutex_trylock(&ev_lock) != 0)
		return;
	snprintf(ev_why, sizeof ev_why, "rule cuda-error: %s returned %d", api ? api : "a CUDA call", status);
	ev_reason = R_CUDA_ERROR;
	atomic_store(&ev_pending, 1);
	pthread_mutex_unlock(&ev_lock);
}

/* As gps_flight_cuda_error; an out-of-memory error noted replaces a
 * cuda-error one (the same failure, named better). */
void gps_flight_oom(const char *api, uint64_t bytes, uint64_t total, uint64_t free_bytes)
{
	if (!(gps_flight_rules & GP_RULE_OOM) || pthread_mutex_trylock(&ev_lock) != 0)
		return;
	if (atomic_load(&ev_pending) && ev_reason == R_OOM) {
		pthread_mutex_unlock(&ev_lock);
		return;
	}
	char req[64] = "", mem[96] = "";
	if (bytes)
		snprintf(req, sizeof req, " of %" PRIu64 " B", bytes);
	if (total)
		snprintf(mem, sizeof mem, " (%" PRIu64 " B free of %" PRIu64 " B)", free_bytes, total);
	snprintf(ev_why, sizeof ev_why, "rule oom: %s%s out of memory%s", api ? api : "an allocation", req, mem);
	ev_reason = R_OOM;
	atomic_store(&ev_pending, 1);
	pthread_mutex_unlock(&ev_lock);
}

/* A noted CUDA event's rule fires (the flush thread's tick, the final
 * flush) */
static void take_event(void)
{
	if (!atomic_load(&ev_pending))
		return;
	char why[200];
	pthread_mutex_lock(&ev_lock);
	snprintf(why, sizeof why, "%s", ev_why);
	enum capture_reason reason = ev_reason;
	atomic_store(&ev_pending, 0);
	pthread_mutex_unlock(&ev_lock);
	rule_fire(reason, why, 0, 0);
}

void gps_flight_cuda_teardown(void)
{
	if (!feature_on)
		return;
	atomic_store(&cuda_gone, 1);
	/* a switch in progress ends first (bounded: it may wait on a CUPTI lock
	 * this thread holds) */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += 200000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&fl_lock, &dl) == 0)
		pthread_mutex_unlock(&fl_lock);
}

/* NVML samples every device in turn: a round is over when a device comes
 * again; its value is the busiest device's utilisation.
 *
 * The idle rule holds when even the busiest device of the round was idle
 * above the threshold, IDLE_SAMPLES rounds in a row, once the job has run
 * GPS_STEPS_MIN steps (start-up is idle too) — or, in a process with no
 * step at all (none found, GPUPROF_STEPS=off), once a round was busy (its
 * busiest device at most the threshold idle: the job's GPU work has
 * begun).  The window is time either way: IDLE_SAMPLES NVML rounds
 * (GPUPROF_GPU_METRICS).
 *
 * The drop rule works on time alone, steps or none (features/gps_drop.c):
 * the mean busy of a window of W against the rolling median of the windows
 * before it.  NVML busy is what every mode sees alike (armed, GPU activity
 * is off; after GPUPROF_FLIGHT_API=auto's switch, launches are not seen). */
static void util_round(unsigned busy)
{
	if (gps_flight_rules & GP_RULE_DROP) {
		struct gps_drop_hit h;
		if (gps_drop_round(&drop, gps_mono_ns(), busy, &h)) {
			char why[200];
			snprintf(why, sizeof why,
				 "rule drop>%u%%: GPU busy %.1f%% over %.1f s, the median of the %u windows before it %.1f%%",
				 gps.cfg.rules.drop_pct, h.busy, (double)gps.cfg.rules.drop_window_ns / 1e9, h.windows,
				 h.median);
			rule_fire(R_DROP, why, 0, 0);
		}
	}
	if (!(gps_flight_rules & GP_RULE_IDLE))
		return;
	struct gps_step_stats st;
	gps_steps_get(&st);
	unsigned idle = 100 - busy;
	if (idle <= gps.cfg.rules.idle_pct)
		util_busy_seen = 1;
	int ready = st.count >= GPS_STEPS_MIN || (st.count == 0 && util_busy_seen);
	idle_rounds = idle > gps.cfg.rules.idle_pct && ready ? idle_rounds + 1 : 0;
	if (idle_rounds >= IDLE_SAMPLES) {
		char why[160];
		snprintf(why, sizeof why, "rule idle>%u%%: GPU idle %u%% for %u NVML rounds", gps.cfg.rules.idle_pct,
			 idle, idle_rounds);
		idle_rounds = 0;
		rule_fire(R_IDLE, why, 0, 0);
	}
}

void gps_flight_gpu_util(unsigned dev, unsigned pct)
{
	if (!(gps_flight_rules & (GP_RULE_IDLE | GP_RULE_DROP)) || dev >= 32)
		return;
	if (util_seen & (1u << dev)) {
		util_round(util_max_round > 100 ? 100 : util_max_round);
		util_seen = 0;
		util_max_round = 0;
	}
	util_seen |= 1u << dev;
	if (pct > util_max_round)
		util_max_round = pct;
}

/* ------------------------------------------------------------ the flush thread */
uint64_t gps_flight_next_ns(void)
{
	if (!feature_on)
		return UINT64_MAX;
	int s = atomic_load(&state);
	if (s == FL_IDLE)
		return UINT64_MAX;
	pthread_mutex_lock(&fl_lock);
	uint64_t d = (s == FL_CAPTURING && cur.steps) ? UINT64_MAX : cur.deadline;
	pthread_mutex_unlock(&fl_lock);
	return d;
}

static void capture_name(char *out, size_t n, int seq)
{
	char pat[GP_SETTING_TEXT_MAX + 4], path[4096];
	gps_descendant_pattern(gps.cfg.output, pat, sizeof pat);
	if (gps_expand_pattern(pat, path, sizeof path, (int)gps.pid, gps.host, gps.rank, gps.start_time) != 0) {
		out[0] = 0;
		return;
	}
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash : path, '.');
	size_t at = dot && dot != (slash ? slash + 1 : path) ? (size_t)(dot - path) : strlen(path);
	if ((size_t)snprintf(out, n, "%.*s-cap%d%s", (int)at, path, seq, path + at) >= n)
		out[0] = 0;
}

static void note_done(const char *file, uint64_t records, uint64_t bytes)
{
	struct done *d = calloc(1, sizeof *d);
	if (d && (d->file = strdup(file))) {
		d->records = records;
		d->bytes = bytes;
		d->next = done_list;
		done_list = d;
	} else {
		free(d);
	}
}

/* sp_lock held: the capture could not be written.  One line; captures stop. */
static void capture_failed(unsigned number, const char *file, int err)
{
	gp_spool_capture_abort(spool);
	cap_open = 0;
	gps_warn("capture %u: cannot write %s: %s; partial file removed, no more captures in this process", number,
		 file[0] ? file : "(GPUPROF_OUTPUT too long)", strerror(err));
	pthread_mutex_lock(&fl_lock);
	captures_off = 1;
	if (cur.number == number) {
		int s = atomic_load(&state);
		if (s == FL_CAPTURING) {
			capture_stop();
		}
		atomic_store(&state, FL_IDLE);
		activity_update();
		if (cur.reply_id && cur.reply_final) {
			char msg[600];
			snprintf(msg, sizeof msg, "capture %u: cannot write %.400s: %s", number, file, strerror(err));
			gps_control_reply(cur.reply_id, "failed", msg, NULL);
		}
	}
	pthread_mutex_unlock(&fl_lock);
}

/* sp_lock held: index and footer; the answer; back to IDLE. */
static void capture_finish(const struct capture *c)
{
	int rc = gp_spool_capture_end(spool);
	int e = errno;
	cap_open = 0;
	if (rc != 0) {
		cap_open = 1; /* capture_failed's bookkeeping: the file is gone already */
		capture_failed(c->number, cap_file, e);
		return;
	}
	struct gp_spool_stats st = {.sz = sizeof st};
	gp_spool_get_stats(spool, &st);
	note_done(cap_file, st.capture_records, st.capture_bytes);
	atomic_fetch_add(&finished, 1);
	char msg[700];
	if (c->steps)
		snprintf(msg, sizeof msg, "capture %u (%s): steps %" PRId64 "..%" PRId64 " and %.1f s of history",
			 c->number, c->why, c->first_step, c->last_step, (double)keep_ns() / 1e9);
	else
		snprintf(msg, sizeof msg, "capture %u (%s): %.3f s and %.1f s of history", c->number, c->why,
			 (double)c->seconds_ns / 1e9, (double)keep_ns() / 1e9);
	gps_info("%s -> %s", msg, cap_file);
	pthread_mutex_lock(&fl_lock);
	snprintf(last_file, sizeof last_file, "%s", cap_file);
	if (cur.number == c->number && atomic_load(&state) == FL_DRAINING)
		atomic_store(&state, FL_IDLE);
	pthread_mutex_unlock(&fl_lock);
	if (c->reply_id && c->reply_final)
		gps_control_reply(c->reply_id, "done", msg, cap_file);
}

/* sp_lock held: opens the capture's file (the next free -capN name) */
static void capture_open(const struct capture *c)
{
	int rc = -1, e = 0;
	for (int tries = 0; tries < 100; tries++) {
		capture_name(cap_file, sizeof cap_file, ++cap_seq);
		if (!cap_file[0]) {
			e = ENAMETOOLONG;
			break;
		}
		uint64_t from = c->req_trace > keep_ns() ? c->req_trace - keep_ns() : 0;
		rc = gp_spool_capture_begin(spool, cap_file, from);
		e = errno;
		if (rc == 0 || e != EEXIST)
			break;
	}
	cap_number = c->number;
	if (rc == 0) {
		cap_open = 1;
		return;
	}
	cap_open = 1;
	capture_failed(c->number, cap_file, e);
}

/* The flush thread's spool work: read what was written, open, feed and
 * finish the capture's file. */
static void spool_tick(uint64_t now, const struct capture *c, int s)
{
	pthread_mutex_lock(&sp_lock);
	if (!spool) {
		pthread_mutex_unlock(&sp_lock);
		return;
	}
	uint64_t tnow = gps_now(), horizon = tnow > keep_ns() ? tnow - keep_ns() : 0;
	/* a request pins its history until the file has it */
	if (s != FL_IDLE && !cap_open && c->req_trace) {
		uint64_t from = c->req_trace > keep_ns() ? c->req_trace - keep_ns() : 0;
		if (from < horizon)
			horizon = from;
	}
	int rc = gp_spool_poll(spool, horizon);
	if (rc == GP_ERR_FULL || rc == GP_ERR_IO || rc == GP_ERR_NOMEM) {
		gps_warn("flight recorder off: %s; no captures from now on",
			 rc == GP_ERR_FULL ? "the trace's metadata alone exceeds GPUPROF_FLIGHT_MAX_MEMORY"
					   : "cannot read back its spool");
		if (cap_open)
			capture_failed(cap_number, cap_file, rc == GP_ERR_FULL ? ENOMEM : EIO);
		gp_spool_close(spool);
		spool = NULL;
		pthread_mutex_lock(&fl_lock);
		captures_off = 1;
		pthread_mutex_unlock(&fl_lock);
		pthread_mutex_unlock(&sp_lock);
		return;
	}
	if (s != FL_IDLE && !cap_open && cap_number != c->number)
		capture_open(c);
	if (cap_open && gp_spool_capture_error(spool))
		capture_failed(cap_number, cap_file, gp_spool_capture_error(spool));
	if (s == FL_DRAINING && cap_open && now >= c->deadline) {
		/* the last steps' GPU records: out of CUPTI, through the writer,
		 * into the file */
		gps_gpu_flush_completed();
		gp_recorder *rec = atomic_load(&gps.rec);
		if (rec)
			gp_recorder_flush(rec);
		gp_spool_poll(spool, horizon);
		if (gp_spool_capture_error(spool))
			capture_failed(cap_number, cap_file, gp_spool_capture_error(spool));
		else
			capture_finish(c);
	}
	pthread_mutex_unlock(&sp_lock);
}

static const char *state_name(int s)
{
	switch (s) {
	case FL_PENDING: return "pending";
	case FL_CAPTURING: return "capturing";
	case FL_DRAINING: return "writing";
	default: return armed ? "armed" : "sampling";
	}
}

/* a value of a key=value line: no line break in it (a range name may
 * hold one) */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

static void register_self(void)
{
	struct gps_step_stats st;
	gps_steps_get(&st);
	char lines[6000], why[256], file[4096];
	pthread_mutex_lock(&fl_lock);
	snprintf(why, sizeof why, "%s", last_why);
	snprintf(file, sizeof file, "%s", last_file);
	int s = atomic_load(&state);
	pthread_mutex_unlock(&fl_lock);
	one_line(why);
	one_line(file);
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	const char *root = getenv(gp_setting_get(GP_SET_ROOT_PID)->name);
	snprintf(lines, sizeof lines,
		 "pid=%d\nroot_pid=%s\nuid=%d\nhost=%s\nrank=%d\nmode=%s\nstate=%s\nstep=%" PRId64
		 "\nstep_ms=%.3f\nsteps_per_s=%.3f\ncaptures=%u\nupdated_ns=%" PRIu64 "\nlast_why=%s\nlast_file=%s\n",
		 (int)gps.pid, root ? root : "", (int)geteuid(), gps.host, gps.rank, armed ? "flight" : "sample",
		 state_name(s), st.last, (double)st.median_ns / 1e6, st.per_s, atomic_load(&finished),
		 (uint64_t)((uint64_t)rt.tv_sec * SEC + (uint64_t)rt.tv_nsec), why, file);
	gps_control_register(lines);
}

/* fl_lock held, the flush thread: GPUPROF_FLIGHT_API=auto's switch.  The
 * rate is the recorder's accepted records (API calls, NVTX, counters: GPU
 * activity is off) over at least RATE_WINDOW_NS in which no capture or
 * sampled step had GPU activity on; a capture restarts the interval. */
/* Short, so that a launch-bound job pays for its API history only in its
 * first second or less (at the default 500 ms flush interval: the second
 * tick after records start); long enough that one burst of set-up calls
 * (allocations, a model's copies) is averaged with what follows it. */
#define RATE_WINDOW_NS (SEC * 4 / 10)
static void api_rate_check(uint64_t now)
{
	if (!armed || api_follows || gps.cfg.flight_api != GP_FLIGHT_API_AUTO || fl_final ||
	    atomic_load(&cuda_gone))
		return;
	struct gps_thread *t = gps_enter();
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (!rec) {
		gps_leave(t);
		return;
	}
	struct gp_recorder_stats st = {.sz = sizeof st};
	gp_recorder_get_stats(rec, &st);
	if (act_on || !rate_since || st.records < rate_records) {
		rate_since = now; /* (re)start: first tick, a capture, a new recorder */
		rate_records = st.records;
		gps_leave(t);
		return;
	}
	if (now - rate_since < RATE_WINDOW_NS) {
		gps_leave(t);
		return;
	}
	uint64_t rate = (st.records - rate_records) * SEC / (now - rate_since);
	rate_since = now;
	rate_records = st.records;
	if (rate > gps.cfg.flight_api_rate) {
		api_follows = 1;
		api_switch_rate = rate;
		gps_gpu_api(0);
		gps_emit_int_counter(rec, "gpuprof.flight_api.rate", rate);
		gps_emit_int_counter(rec, "gpuprof.flight_api.history", 0);
		gps_info("flight recorder: %" PRIu64 " records a second (above GPUPROF_FLIGHT_API_RATE=%u): "
			 "API calls are kept only in captures from now on, the history is NVTX "
			 "(GPUPROF_FLIGHT_API=always keeps them, at CUPTI's cost per call)",
			 rate, gps.cfg.flight_api_rate);
	}
	gps_leave(t);
}

void gps_flight_tick(uint64_t now)
{
	if (!feature_on)
		return;
	struct gp_control_request rq;
	if (gps_control_poll(&rq) == 1)
		handle_request(&rq);
	take_event();
	pthread_mutex_lock(&fl_lock);
	int s = atomic_load(&state);
	if (s == FL_PENDING && now >= cur.deadline) {
		/* no step began in time: T seconds instead */
		cur.steps = 0;
		capture_start(-1);
	} else if (s == FL_CAPTURING && !cur.steps && now >= cur.deadline) {
		capture_stop();
	} else if (s == FL_CAPTURING && cur.steps && now > cur.last_step_mono + STEP_STALL_NS) {
		capture_stop(); /* the steps stopped: what was captured is kept */
	}
	if (atomic_load(&sample_on) && gps_now() > sample_start + STEP_STALL_NS) {
		/* the steps stopped (the step finder lost its boundary when the
		 * API callbacks went off, the step thread ended): the sampled step
		 * ends here rather than never */
		atomic_store(&sample_on, 0);
		activity_update();
		emit_window(sample_start, gps_now());
	}
	activity_update(); /* a fork child's inherited "on" goes off here */
	api_rate_check(now);
	unsigned changes = gps_stepfind_classes_changes();
	if (changes != markers_changes) {
		markers_changes = changes;
		gps_gpu_step_markers(); /* (records off) the finder's callbacks to its classes now */
	}
	struct capture c = cur;
	s = atomic_load(&state);
	pthread_mutex_unlock(&fl_lock);
	if (armed)
		spool_tick(now, &c, s);
	if (now >= next_register) {
		next_register = now + SEC;
		register_self();
	}
}

/* ------------------------------------------------------------ exit */
/* Step sampling in a process that used CUDA and had no step: its trace has
 * no GPU activity at all; one line says so and why (it was silent). */
static void no_steps_sampled(void)
{
	struct gps_step_stats st;
	gps_steps_get(&st);
	if (!sample_n || st.count || !gps_gpu_bound() || !atomic_load(&gps.rec))
		return;
	char why[300];
	if (gps.cfg.steps == GP_STEPS_OFF)
		snprintf(why, sizeof why, "GPUPROF_STEPS=off");
	else if (gps.cfg.steps == GP_STEPS_NVTX)
		snprintf(why, sizeof why, "no NVTX step range, and GPUPROF_STEPS=nvtx");
	else
		gps_stepfind_describe(why, sizeof why);
	gps_warn("step sampling (GPUPROF_SAMPLE_STEPS=1/%u): no training step in this process (%s); its trace holds "
		 "API calls and NVTX only, no GPU activity (GPUPROF_GPU_WINDOW samples by time instead)",
		 sample_n, why);
}

void gps_flight_final(void)
{
	if (!feature_on)
		return;
	/* an out-of-memory error just before the exit: its capture (its
	 * history) is written yet (gps_flight_after_close) */
	pthread_mutex_lock(&ev_lock);
	int oom = atomic_load(&ev_pending) && ev_reason == R_OOM;
	pthread_mutex_unlock(&ev_lock);
	if (oom)
		take_event();
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	if (pthread_mutex_timedlock(&fl_lock, &dl) != 0)
		return; /* a thread stuck in CUPTI mid-switch: its capture ends unwritten */
	int s = atomic_load(&state);
	if (s == FL_CAPTURING)
		capture_stop();
	else if (s == FL_PENDING) {
		atomic_store(&state, FL_IDLE);
		if (cur.reply_id && cur.reply_final)
			gps_control_reply(cur.reply_id, "refused", "the job exited before its next step", NULL);
	}
	if (atomic_load(&sample_on)) {
		atomic_store(&sample_on, 0);
		activity_update();
		emit_window(sample_start, gps_now());
	}
	captures_off = 1; /* nothing starts from here on */
	fl_final = 1;     /* nor is anything switched */
	pthread_mutex_unlock(&fl_lock);
	no_steps_sampled();
}

void gps_flight_after_close(void (*summary)(const char *file, uint64_t records, uint64_t bytes))
{
	if (!feature_on)
		return;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	if (pthread_mutex_timedlock(&sp_lock, &dl) == 0) {
		if (spool) {
			struct capture c;
			pthread_mutex_lock(&fl_lock);
			c = cur;
			int s = atomic_load(&state);
			pthread_mutex_unlock(&fl_lock);
			gp_spool_poll(spool, 0);
			/* a capture the final flush started (the oom rule's): the
			 * flush thread never opened its file (the spool is read
			 * first: a job this short may not have had a tick) */
			if (s == FL_DRAINING && !cap_open && c.number && cap_number != c.number) {
				capture_open(&c);
				if (cap_open)
					gp_spool_poll(spool, 0);
			}
			if (cap_open) {
				if (gp_spool_capture_error(spool))
					capture_failed(cap_number, cap_file, gp_spool_capture_error(spool));
				else
					capture_finish(&c);
			}
			gp_spool_close(spool);
			spool = NULL;
		}
		for (struct done *d = done_list; d && summary; d = d->next)
			summary(d->file, d->records, d->bytes);
		pthread_mutex_unlock(&sp_lock);
	}
	gps_control_final();
}

void gps_flight_after_fork_child(void)
{
	/* the parent's capture and spool are the parent's; a child that traces
	 * starts armed (or sampling) with a spool of its own */
	pthread_mutex_init(&fl_lock, NULL);
	pthread_mutex_init(&sp_lock, NULL);
	pthread_mutex_init(&ev_lock, NULL);
	atomic_store(&ev_pending, 0);
	atomic_store(&cuda_gone, 0);
	fl_final = 0;
	if (spool)
		gp_spool_forget_after_fork(spool);
	spool = NULL;
	cap_open = 0;
	cap_number = 0;
	cap_seq = 0;
	done_list = NULL; /* the parent's list: leaked on purpose (its heap is the parent's) */
	atomic_store(&state, FL_IDLE);
	atomic_store(&sample_on, 0);
	/* act_on stays: CUPTI's kinds are as the parent left them; the child's
	 * first tick switches them off */
	memset(&cur, 0, sizeof cur);
	ncaptures = 0;
	nrule_times = 0;
	last_rule_end = 0;
	atomic_store(&finished, 0);
	last_why[0] = last_file[0] = 0;
	next_register = 0;
	idle_rounds = util_seen = util_max_round = 0;
	util_busy_seen = 0;
	gps_drop_init(&drop, gps.cfg.rules.drop_pct, gps.cfg.rules.drop_window_ns);
	gps_control_after_fork_child();
}

void gps_flight_status(struct gps_flight_status *st)
{
	memset(st, 0, sizeof *st);
	if (!feature_on)
		return;
	struct gps_step_stats ss;
	gps_steps_get(&ss);
	st->step = ss.last;
	st->step_ms = (double)ss.median_ns / 1e6;
	st->steps_per_s = ss.per_s;
	st->captures = atomic_load(&finished);
	pthread_mutex_lock(&fl_lock);
	st->state = state_name(atomic_load(&state));
	st->api_in_captures = api_follows;
	st->api_rate = api_switch_rate;
	snprintf(st->why, sizeof st->why, "%s", last_why);
	snprintf(st->file, sizeof st->file, "%s", last_file);
	pthread_mutex_unlock(&fl_lock);
}
