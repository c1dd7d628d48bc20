/* gps_steps.h — training steps as the job marks them (features/gps_steps.c):
 * an NVTX push/pop range whose whole name is a step word and a number —
 * "step 12", "Step_12", "iteration 12", "iter 12", "ProfilerStep#12" (any
 * case; separators ' ', '_', '#', ':', '=', '-') — on the job's step thread
 * (the first thread that opened one), not nested in another — or, in a job
 * without them, the steps features/gps_stepfind.c finds (gps_steps_found_*).
 * The flight recorder's captures and step sampling start and stop on these
 * edges, its step rule reads their times (docs/FLIGHT.md, "Steps").
 *
 * gps_steps_on: set at start when a feature uses steps; NVTX asks nothing
 * else otherwise.  match: the step number + 1 of a range name, 0 when it is
 * not a step name.  begin: a range named like a step opens on this thread
 * (tid: its id, as the NVTX thread state caches it: no system call per
 * step); 1 when it is taken as a step (the NVTX entry then remembers it), after
 * the flight recorder's step-begin work.  end: a taken step closes (start,
 * end: trace clock; the flight recorder's step-end work, then the step's
 * time joins the rolling window unless it was recorded with GPU activity). */
#ifndef GPS_STEPS_H
#define GPS_STEPS_H

#include <stdatomic.h>
#include <stdint.h>

extern atomic_int gps_steps_on;
/* an NVTX step range was seen in this process: the step finder yields */
extern atomic_int gps_steps_nvtx_seen;

struct gps_step_stats {
	int64_t last;          /* number of the last step begun, -1 none */
	uint64_t count;        /* steps ended */
	uint64_t median_ns;    /* rolling median of the last GPS_STEPS_WINDOW untraced steps, 0: too few */
	uint64_t last_ns;      /* the last step's time */
	uint64_t last_begin_mono; /* CLOCK_MONOTONIC of the last step begin, 0 none */
	double per_s;          /* steps per second over the last window */
};
#define GPS_STEPS_WINDOW 51   /* steps in the rolling window */
#define GPS_STEPS_MIN 10      /* untraced steps before a median is given */

void gps_steps_init(int on);
uint64_t gps_steps_match(const char *name);
int gps_steps_begin(uint64_t number, uint32_t tid);
void gps_steps_end(uint64_t number, uint64_t start_ns, uint64_t end_ns);
/* Steps found without NVTX (features/gps_stepfind.c) on its thread tid:
 * found_begin as begin, 0 once an NVTX step was seen; found_release lets
 * go of the step thread (no step open), so that NVTX steps of any thread
 * are taken from then on.  The end is gps_steps_end. */
int gps_steps_found_begin(uint64_t number, uint32_t tid);
/* A found step that is no step after all (its boundary stopped occurring
 * while the job went on: the step finder learns again): the flight
 * recorder's step-end work (a capture's count, a sampled step's end), but
 * no rule judges it, its time joins no median, nothing publishes it. */
void gps_steps_abandon(uint64_t number, uint64_t start_ns, uint64_t end_ns);
void gps_steps_found_release(void);
void gps_steps_get(struct gps_step_stats *st);
void gps_steps_after_fork_child(void);

#endif
