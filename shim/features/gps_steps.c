/* gps_steps.c — which NVTX ranges are training steps, and their times
 * (gps_steps.h).  Everything here runs on the job's step thread, inside its
 * NVTX push and pop or the step finder's boundary callback (the flight
 * recorder's hooks included); other threads
 * read the published values through atomics (the flush thread writes them
 * into the control registration and the status file).  Costs when steps are
 * in use: a prefix compare per NVTX push; per step, a few atomics, a clock
 * read and the rolling median's update (features/gps_rolling.c: no sort, no
 * system call). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "core/gps_core.h"
#include "features/gps_flight.h"
#include "features/gps_rolling.h"
#include "features/gps_steps.h"

_Static_assert(GPS_STEPS_WINDOW == GPS_ROLLING_MAX, "the rolling median's window is the steps' window");

atomic_int gps_steps_on;
atomic_int gps_steps_nvtx_seen;

/* the step thread: its tid (0 until the first step) */
static atomic_uint step_tid;
static atomic_int tid_by_finder; /* step_tid is the step finder's (features/gps_stepfind.c) */
/* step thread only */
static int open_steps;        /* a step is open (nested step names are not steps) */
static int cur_traced;        /* GPU activity was on in the open step */
static struct gps_rolling durs; /* untraced steps' durations */
static uint64_t begins[GPS_STEPS_WINDOW]; /* their begins, in durs's ring order */
static uint64_t prev_end;     /* trace clock: the end of the last step that ended, 0 none */
/* published */
static _Atomic int64_t pub_last = -1;
static _Atomic uint64_t pub_count, pub_median, pub_last_ns, pub_begin_mono, pub_per_ms; /* steps/s x 1000 */

static int step_begin(uint64_t number);

void gps_steps_init(int on) { atomic_store(&gps_steps_on, on); }

uint64_t gps_steps_match(const char *name)
{
	static const char *const words[] = {"profilerstep", "iteration", "step", "iter"};
	if (!name)
		return 0;
	/* every push asks: most names are no step, and their first letter
	 * says so without a compare per step word */
	int c0 = name[0] | 0x20;
	if (c0 != 'p' && c0 != 'i' && c0 != 's')
		return 0;
	const char *p = NULL;
	for (size_t i = 0; i < sizeof words / sizeof words[0] && !p; i++) {
		size_t n = strlen(words[i]);
		if (!strncasecmp(name, words[i], n))
			p = name + n;
	}
	if (!p)
		return 0;
	while (*p == ' ' || *p == '_' || *p == '#' || *p == ':' || *p == '=' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return 0;
	uint64_t v = 0;
	for (int d = 0; isdigit((unsigned char)*p); p++, d++) {
		if (d >= 18)
			return 0; /* more than 18 digits: not a step count */
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return *p ? 0 : v + 1;
}

/* NVTX steps win over found ones: the finder sees the flag at its next
 * boundary, ends its step there and lets go of the step thread; until then
 * an NVTX step on another thread, or nested in the finder's, is not taken. */
int gps_steps_begin(uint64_t number, uint32_t tid)
{
	if (!atomic_load_explicit(&gps_steps_nvtx_seen, memory_order_relaxed))
		atomic_store(&gps_steps_nvtx_seen, 1);
	uint32_t me = tid, expect = 0;
	if (!atomic_compare_exchange_strong(&step_tid, &expect, me) && expect != me)
		return 0; /* another thread's steps: the first step thread's count */
	if (open_steps || atomic_load_explicit(&tid_by_finder, memory_order_relaxed))
		return 0;
	return step_begin(number);
}

int gps_steps_found_begin(uint64_t number, uint32_t tid)
{
	uint32_t me = tid, expect = 0;
	if (atomic_load(&gps_steps_nvtx_seen))
		return 0;
	if (!atomic_compare_exchange_strong(&step_tid, &expect, me)) {
		if (expect != me)
			return 0;
	} else {
		atomic_store(&tid_by_finder, 1);
	}
	if (open_steps)
		return 0;
	return step_begin(number);
}

void gps_steps_found_release(void)
{
	if (!atomic_load(&tid_by_finder) || open_steps)
		return;
	atomic_store(&tid_by_finder, 0);
	atomic_store(&step_tid, 0);
}

/* the step thread: a step is taken */
static int step_begin(uint64_t number)
{
	open_steps = 1;
	atomic_store_explicit(&pub_last, (int64_t)number, memory_order_relaxed);
	atomic_store_explicit(&pub_begin_mono, gps_mono_ns(), memory_order_relaxed);
	cur_traced = gps_flight_step_begin(number);
	return 1;
}

void gps_steps_abandon(uint64_t number, uint64_t start_ns, uint64_t end_ns)
{
	open_steps = 0;
	prev_end = end_ns;
	struct gps_step_stats st;
	gps_steps_get(&st);
	st.median_ns = 0; /* no rule judges it */
	st.last_ns = end_ns > start_ns ? end_ns - start_ns : 0;
	gps_flight_step_end(number, start_ns, end_ns, &st);
}

/* A step's time (for the rules, the median and the status) runs from the
 * previous step's end to its own end: its range and the host time before it.
 * A job that marks only the compute of a step (an HF TrainerCallback's
 * on_step_begin/on_step_end, Lightning's on_train_batch_start/end) fetches
 * the batch between the ranges: a stall in its data loading belongs to the
 * step it feeds, and a range's duration alone never shows it.  Found steps
 * (features/gps_stepfind.c) tile the time: there it is the range. */
void gps_steps_end(uint64_t number, uint64_t start_ns, uint64_t end_ns)
{
	open_steps = 0;
	uint64_t from = prev_end && prev_end < start_ns ? prev_end : start_ns;
	prev_end = end_ns;
	uint64_t dur = end_ns > from ? end_ns - from : 0;
	struct gps_step_stats st;
	gps_steps_get(&st); /* the median of the steps before this one */
	st.last_ns = dur;
	gps_flight_step_end(number, from, end_ns, &st);
	atomic_store_explicit(&pub_last_ns, dur, memory_order_relaxed);
	atomic_fetch_add_explicit(&pub_count, 1, memory_order_relaxed);
	/* a step recorded with GPU activity on is slower by what tracing costs:
	 * not a measure of the job's normal step */
	if (cur_traced)
		return;
	begins[durs.pos] = atomic_load_explicit(&pub_begin_mono, memory_order_relaxed);
	gps_rolling_add(&durs, dur);
	unsigned nwin = durs.n, wpos = durs.pos;
	atomic_store_explicit(&pub_median, nwin < GPS_STEPS_MIN ? 0 : gps_rolling_median(&durs),
			      memory_order_relaxed);
	if (nwin >= 2) {
		uint64_t newest = begins[(wpos + GPS_STEPS_WINDOW - 1) % GPS_STEPS_WINDOW];
		uint64_t oldest = begins[nwin < GPS_STEPS_WINDOW ? 0 : wpos];
		if (newest > oldest)
			atomic_store_explicit(&pub_per_ms, (uint64_t)((double)(nwin - 1) * 1e12 / (double)(newest - oldest)),
					      memory_order_relaxed);
	}
}

void gps_steps_get(struct gps_step_stats *st)
{
	st->last = atomic_load_explicit(&pub_last, memory_order_relaxed);
	st->count = atomic_load_explicit(&pub_count, memory_order_relaxed);
	st->median_ns = atomic_load_explicit(&pub_median, memory_order_relaxed);
	st->last_ns = atomic_load_explicit(&pub_last_ns, memory_order_relaxed);
	st->last_begin_mono = atomic_load_explicit(&pub_begin_mono, memory_order_relaxed);
	st->per_s = (double)atomic_load_explicit(&pub_per_ms, memory_order_relaxed) / 1000.0;
}

void gps_steps_after_fork_child(void)
{
	/* the child's steps are its own (a forked worker that traces) */
	atomic_store(&step_tid, 0);
	atomic_store(&tid_by_finder, 0);
	atomic_store(&gps_steps_nvtx_seen, 0);
	open_steps = 0;
	cur_traced = 0;
	prev_end = 0;
	gps_rolling_reset(&durs);
	atomic_store(&pub_last, -1);
	atomic_store(&pub_count, 0);
	atomic_store(&pub_median, 0);
	atomic_store(&pub_last_ns, 0);
	atomic_store(&pub_begin_mono, 0);
	atomic_store(&pub_per_ms, 0);
}
