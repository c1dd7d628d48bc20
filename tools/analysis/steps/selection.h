/* selection.h — the part of a trace a command looks at (common/selopt.h's
 * --since/--until, --steps A:B, --range NAME), resolved against the trace
 * into a set of absolute time intervals.  A timed record is selected when
 * its time (its start) lies in one; metadata records (sources, processes,
 * threads, devices, modules, stacks, clocks, strings) always are.
 *
 *  --since/--until  [start + since, start + until)
 *  --steps A:B      per process, from the start of the first step numbered
 *                   A or more to the end of the last numbered B or less
 *                   (step detection, analysis/steps/step_detect.h: a pass over the
 *                   trace; trace-detected steps need the steps analysis, a
 *                   second one); the processes' intervals united
 *  --range NAME     the intervals of the NVTX ranges so named, united (a pass)
 * Several given: their intersection.  The reader is rewound afterwards. */
#ifndef GPUPROF_ANALYSIS_STEPS_SELECTION_H
#define GPUPROF_ANALYSIS_STEPS_SELECTION_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/core/intervals.h"
#include "analysis/steps/step_detect.h"
#include "common/selopt.h"

struct selection {
	uint64_t base;          /* the trace start (header start_trace_ns) */
	int active;             /* something was selected (else every record) */
	int by_steps_or_range;  /* --steps or --range took part */
	struct ivset iv;        /* absolute, disjoint, ordered (when active) */
	char what[256];         /* how, for titles and notes: "steps 2..54", ... */
};

/* Resolves o against the trace of r (detect: how --steps finds steps; NULL:
 * the defaults), with pass 1 over the trace (the NVTX ranges; with
 * --steps, the step detection) made by the caller in p (NULL without
 * --steps and --range), its ranges planned (steps_pipe_plan_ranges; the
 * steps too, or here: reports/stats_selection.h): what is left of it
 * (--steps by the trace method: the steps analysis' pass) runs on p, which
 * stays the caller's.  0, or <0 with a message in err (n bytes):
 * SELECTION_NONE when the options name nothing in the trace (no steps, no
 * step numbered so, no NVTX range so named: a usage error, exit 1), -1
 * when the trace cannot be read (exit 2). */
enum { SELECTION_NONE = -3 };
/* No selection: the whole trace (its base time set), as resolving no
 * options gives, without a read. */
void selection_none(struct selection *s, gp_reader *r);
struct steps_pipe;
int selection_resolve_pipe(struct selection *s, gp_reader *r, const struct sel_opts *o, struct steps_pipe *p,
			   const struct step_detect_opts *detect, char *err, size_t n);
/* As selection_resolve_pipe for --steps without --range, the steps from
 * the index ix (step_index.h) instead of a read of the trace: 0, or <0
 * with err; -1: the index could not be read whole (the caller frees s
 * and resolves from the trace). */
struct step_index;
int selection_resolve_index(struct selection *s, gp_reader *r, const struct sel_opts *o, struct step_index *ix,
			    const struct step_detect_opts *detect, char *err, size_t n);
/* Whether time t is selected (always when nothing was). */
int selection_has(const struct selection *s, uint64_t t);
/* Whether a record is selected: its time for timed records; a window when
 * it overlaps the selection; metadata always. */
int selection_keeps(const struct selection *s, const gp_record *rec);
/* Sets r's time window (gp_reader_set_time_window) to the selection's span,
 * so that the pass after it decodes only the chunks of that span, when the
 * trace keeps every record selected whatever its time in chunks such a
 * window still reads (gp_reader_meta_apart: format 1.4); the records and
 * their order are those of a whole read.  1 when set, 0 when the whole
 * trace must be read (nothing selected, an older trace), <0 on error. */
int selection_window(const struct selection *s, gp_reader *r);
void selection_free(struct selection *s);

#endif
