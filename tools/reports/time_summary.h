/* time_summary.h — the table shape the api, kernels, memops and nvtx
 * reports share (nsys *_sum style): one row per name within a process (and
 * device), by total time, with these columns first and the report's own
 * after them. */
#ifndef GPUPROF_REPORTS_TIME_SUMMARY_H
#define GPUPROF_REPORTS_TIME_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/core/summary.h"
#include "common/report.h"
#include "reports/stats_report.h"

enum time_summary_col {
	TS_TIME_PCT, TS_TOTAL, TS_COUNT, TS_AVG, TS_MED, TS_MIN, TS_MAX, TS_STDDEV,
	TS_PID, TS_RANK, TS_DEVICE,
	TS_NCOLS   /* the report's own columns start here */
};

/* The TS_* entries of a column array; count_head/key name the TS_COUNT
 * column ("Num Calls", "Instances", "Count"); dev_head the Device column,
 * NULL for a report without devices.  PID, Rank (of the process record;
 * null: none) and Device leave the table when every row has the same value:
 * they show in a merged multi-process trace. */
#define TIME_SUMMARY_COLS(count_head, count_key, dev_head) \
	[TS_TIME_PCT] = { "Time (%)", "time_pct", COL_F1, COL_EVERYWHERE }, \
	[TS_TOTAL] = { "Total Time (ns)", "total_ns", COL_INT, COL_EVERYWHERE }, \
	[TS_COUNT] = { count_head, count_key, COL_INT }, \
	[TS_AVG] = { "Avg (ns)", "avg_ns", COL_F1, COL_EVERYWHERE }, \
	[TS_MED] = { "Med (ns)", "med_ns", COL_F1, COL_EVERYWHERE }, \
	[TS_MIN] = { "Min (ns)", "min_ns", COL_INT, COL_EVERYWHERE }, \
	[TS_MAX] = { "Max (ns)", "max_ns", COL_INT, COL_EVERYWHERE }, \
	[TS_STDDEV] = { "StdDev (ns)", "stddev_ns", COL_F1, COL_EVERYWHERE }, \
	[TS_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, \
	[TS_RANK] = { "Rank", "rank", COL_ID, COL_EVERYWHERE }, \
	[TS_DEVICE] = { dev_head, "device", COL_ID }


/* The state of a time-summary report (new/free as struct stats_report
 * functions): groups by process, device and name.  A report without
 * devices (api, nvtx, sync) passes device 0. */
struct summary_state {
	gp_reader *r;
	struct summary groups;  /* keyed by "PID/DEVICE/NAME" */
	struct ts_meta {
		uint32_t pid, dev, id; size_t name_at;
		/* the report's own figures of the group (memops: its bytes;
		 * nvtx: its kernels' time, its range styles), 0 when made;
		 * summary_state_merge adds the sums and ors the bits */
		uint64_t sum; uint32_t bits;
	} *meta; size_t cmeta; /* per group */
	u64map cache;           /* hash of (pid, device, string id) -> group + 1 */
};
void *summary_state_new(const struct stats_ctx *ctx);
void summary_state_free(void *self);
/* The same for a summary_state inside a report's own state. */
void summary_state_init(struct summary_state *s, const struct stats_ctx *ctx);
void summary_state_release(struct summary_state *s);
/* The group of string id `id` in process pid on device dev, named
 * name_of(r, id) (malloc'd) the first time the id is seen there. */
size_t summary_state_group(struct summary_state *s, uint32_t pid, uint32_t dev, uint32_t id,
			   char *(*name_of)(gp_reader *r, uint32_t id));
/* The group `name` in process pid (device 0, string id 0: api, nvtx, sync). */
size_t summary_state_named(struct summary_state *s, uint32_t pid, const char *name);
/* Adds the groups of src (another part of the same trace, later in time;
 * the same process, device and name = the same group) to s.  Each group's
 * values are sorted first (qsketch_sorted), so the merged ones stay
 * sorted.  src is left emptied of values. */
void summary_state_merge(struct summary_state *s, struct summary_state *src);
/* A report's merge (stats_report.h) whose state is a summary_state. */
int summary_state_merge_report(void *self, void *src, const struct stats_ctx *ctx);
/* A group's name and the string id it was made for (0: by name). */
const char *summary_state_name(const struct summary_state *s, size_t g);

/* The table's footnote when some medians are estimated (analysis/core/summary.h:
 * past its limit of exact values), else NULL; its text, for a report that
 * puts it after its own note. */
const char *time_summary_note(const struct summary *t);
#define TIME_SUMMARY_APPROX_NOTE                                                            \
	" Med: for the names with the most values, estimated from a log-bucketed histogram\n" \
	"   (more than 2^20 values in the table): within 0.5 % of the exact median.\n"
/* The groups in row order (below); free() the array. */
size_t *summary_state_order(const struct summary_state *s, const struct stats_ctx *ctx);
/* Every group as a row: by rank (processes without one last), process,
 * device, then total (largest first) and name.  Time (%) is of the total of
 * the row's process and device.  Fills the TS_* cells, the name in
 * name_col, then own(arg, row, group index) for the report's other cells
 * (NULL: none); hides uniform PID/Rank/Device columns from the table; sets
 * the footnote of time_summary_note. */
typedef void (*time_summary_own)(void *arg, struct cell *row, size_t g);
void time_summary_fill(struct report *rep, struct summary_state *s, const struct stats_ctx *ctx, int name_col,
		       time_summary_own own, void *arg);

/* memops/memsize: the group of a memcpy or memset record of process pid:
 * its operation ("[CUDA memcpy Host-to-Device]", "[CUDA memset]") and
 * memory kinds (a copy's source and destination, a memset's memory: pinned
 * and pageable host memory apart) on its device, its id those parts (not
 * a string id).  *dur and *bytes set. */
size_t memop_group(struct summary_state *s, uint32_t pid, const gp_record *rec, uint64_t *dur, uint64_t *bytes);
/* The parts of memop group g: operation, source and destination memory
 * kinds (mem_kind_name; src NULL for a memset). */
struct memop_parts { char op[64]; const char *src, *dst; };
void memop_group_parts(const struct summary_state *s, size_t g, struct memop_parts *out);

#endif
