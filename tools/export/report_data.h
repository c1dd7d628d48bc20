/* report_data.h — the data of a `gpuprof report` page: one JSON object that
 * the page's script draws from (docs/REPORT.md, "The data in the page").
 * Aggregates only, never every record, so its size does not follow the
 * trace's: tables capped at rows_max rows, a sample of at most steps_max
 * steps per process, time series in `bins` bins.
 *
 *   { "generator", "command", "charts", "uplot_version", "rows_max",
 *     "runs": [ { "file", "advise" (= `gpuprof advise --format json`'s
 *                 object for the trace, {"error"}, or null),
 *                 "info" (= `gpuprof info --json`),
 *                 "stats" {table: rows} (= `gpuprof stats --format json`,
 *                 the default set, each table's first rows_max rows),
 *                 "stats_rows" {table: rows in full},
 *                 "steps" {table: rows} (= `gpuprof steps --format json`),
 *                 "steps_rows" {table: rows in full}, "steps_error",
 *                 "procs": [ { "pid", "rank", "name", "step_series",
 *                              "devices", "counters", "memory" } ] } ] }
 *
 * The per-process series (times in s after the trace start, durations in
 * ns):
 *   step_series  the steps (all, or a sample that keeps every warm-up,
 *                outlier and uncounted step): index, number, start_s,
 *                time_ns, flag (0 counted, 1 warm-up, 2 outlier, 3 not
 *                counted: partial or outside the GPU-activity windows), and
 *                per bucket its ns;
 *   devices      per device, `bins` equal bins over the trace's span: the
 *                share of each bin in which a kernel ran (busy %, the
 *                `stats --report util` rule bin by bin), the same for copies,
 *                and the mean in each bin of the process's percentage
 *                counters of that device (nvml.*_util, pm.*_pct); null where
 *                no GPU activity was recorded (outside the windows) or no
 *                sample fell;
 *   counters     the other counters, binned means;
 *   memory       per device and memory kind, the most bytes held in each
 *                bin (mem_timeline.h), the peak and the level at the end. */
#ifndef GPUPROF_EXPORT_REPORT_DATA_H
#define GPUPROF_EXPORT_REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gp_trace.h"
#include "analysis/gpu/counters.h"
#include "analysis/gpu/gpu_activity.h"
#include "analysis/memory/mem_timeline.h"
#include "analysis/steps/steps.h"
#include "analysis/gpu/trace_info.h"
#include "analysis/gpu/windows.h"
#include "common/report.h"

/* One trace of the page.  Tables: only those with want[i] set go in. */
struct report_run {
	const char *path;
	gp_reader *r;
	const struct trace_info *info;     /* finished */
	const struct gp_integrity *ig;
	const struct report *stats; const int *stats_want; size_t nstats;
	const struct report *steps; size_t nsteps; /* NULL/0: no steps analysis */
	const char *steps_error;           /* why there is none (NULL: there is) */
	struct steps *st;                  /* summarised rows (steps_reports_fill); NULL: none */
	const struct gpu_activity *gpu;    /* finished */
	const struct winset *win;          /* GPU-activity windows, finished */
	const struct counters *cnt;        /* finished */
	const struct mem_timeline *mem;    /* finished */
	const char *advise_json;           /* the findings as a JSON value (docs/REPORT.md); NULL: null */
};

struct report_data_opts {
	size_t rows_max;     /* rows of each table; 0: 50 */
	size_t steps_max;    /* steps per process in step_series; 0: 2000 */
	size_t bins;         /* bins of the time series; 0: 600 */
	/* With more than 4 processes in a run, steps_max and bins are divided by
	 * nprocs / 4 (at least 100 each), so the page stays a few MB. */
};

#define REPORT_ROWS_MAX 50
#define REPORT_STEPS_MAX 2000
#define REPORT_BINS 600

/* The bins of a run's time series: opts' bins (divided as above) over the
 * span of the trace in info (its first to its last record), which needs
 * only the trace_info of a first pass: given to gpu_activity.bins before
 * the pass that sums the busy time. */
void report_data_bins(const struct trace_info *in, const struct report_data_opts *opts, struct gpu_bins *bn);

/* The JSON object in three parts, so that each run is written and freed
 * before the next is read: the head (command: the command line shown in
 * the header; charts: whether the page has its charting library;
 * uplot_version may be NULL), each run (index 0, 1, ...), the tail. */
void report_data_head(FILE *f, const char *command, int charts, const char *uplot_version,
		      const struct report_data_opts *opts);
void report_data_run(FILE *f, const struct report_run *run, size_t index, const struct report_data_opts *opts);
void report_data_tail(FILE *f);

#endif
