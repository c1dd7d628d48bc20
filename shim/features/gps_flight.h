/* gps_flight.h — the flight recorder (features/gps_flight.c,
 * docs/FLIGHT.md): armed mode (GPUPROF_FLIGHT_RECORDER: GPU activity off,
 * the last DURATION of records in memory), captures (GPU activity on for K
 * whole steps or T seconds, started by `gpuprof trigger` through the
 * control channel or by an anomaly rule, GPUPROF_TRIGGER), and step
 * sampling (GPUPROF_SAMPLE_STEPS: one whole step in N).  All no-ops when
 * none is configured.
 *
 * Who calls what: the lifecycle (init, file ops, tick via the flush thread,
 * final, after_close, fork); NVTX's and the step finder's step edges
 * through features/gps_steps.c (step_begin, step_end) and range names (range); the CUPTI callback (a
 * CUDA error); the NVML sampler (GPU utilisation); the status file
 * (status); the CUPTI session at bind time (activity_off). */
#ifndef GPS_FLIGHT_H
#define GPS_FLIGHT_H

#include <stdint.h>

#include "core/gps_core.h"
#include "features/gps_steps.h"

/* GP_RULE_* bits in force: the hooks test them before calling in */
extern unsigned gps_flight_rules;

void gps_flight_init(void);
int gps_flight_armed(void);
/* GPU activity starts off at bind (armed or sampling, nothing being
 * captured now) */
int gps_flight_activity_off(void);
/* The spool file's ops for the core (NULL unless armed) */
const struct gps_trace_file_ops *gps_flight_file_ops(void);
/* A step begins / ends on the step thread.  begin: 1 when GPU activity is
 * on for this step (a capture or a sampled step). */
int gps_flight_step_begin(uint64_t step);
void gps_flight_step_end(uint64_t step, uint64_t start_ns, uint64_t end_ns, const struct gps_step_stats *st);
void gps_flight_range(const char *name);
/* Inside a CUPTI callback: noted, acted on at the flush thread's next tick */
void gps_flight_cuda_error(const char *api, int status);
/* Inside a CUPTI callback, a device allocation ran out of memory (bytes
 * asked for, the device's total and free; 0 unknown): noted as above, and
 * also at the final flush (the job usually exits right after). */
void gps_flight_oom(const char *api, uint64_t bytes, uint64_t total, uint64_t free_bytes);
/* CUDA is tearing a context down (resource callback): no more switching of
 * activity kinds; waits (bounded) for a switch in progress */
void gps_flight_cuda_teardown(void);
/* NVML thread: one device's GPU utilisation (%), for the idle and drop rules */
void gps_flight_gpu_util(unsigned dev, unsigned pct);
/* The flush thread: next wake-up (CLOCK_MONOTONIC ns), and the tick (inside
 * gps_enter/gps_leave): requests, timers, the spool, the registration. */
uint64_t gps_flight_next_ns(void);
void gps_flight_tick(uint64_t now_mono);
/* Final flush, recorder open: an open capture or sampled step ends, a
 * pending request is refused. */
void gps_flight_final(void);
/* After the recorder closed: the capture being written gets the last
 * records and is finished; the spool and the registration go.  summary is
 * called once per capture file written in this process. */
void gps_flight_after_close(void (*summary)(const char *file, uint64_t records, uint64_t bytes));
void gps_flight_after_fork_child(void);

struct gps_flight_status {
	const char *state;    /* "armed", "sampling", "pending", "capturing", "writing"; NULL: off */
	unsigned captures;    /* finished */
	int64_t step;         /* the last step begun, -1 none */
	double step_ms;       /* rolling median step time (untraced steps), 0: too few */
	double steps_per_s;   /* over the same window */
	int api_in_captures;  /* the history has no API calls (GPUPROF_FLIGHT_API=capture, or auto switched) */
	uint64_t api_rate;    /* auto's switch: the records a second that made it; 0 none */
	char why[256];        /* of the last capture started */
	char file[4096];      /* of the last capture finished */
};
void gps_flight_status(struct gps_flight_status *st);

#endif
