/* time_summary.h — the table shape the api, kernels, memops and nvtx
 * reports share (nsys *_sum style): one row per name, by total time, with
 * these columns first and the report's own after them. */
#ifndef GPUPROF_TOOL_TIME_SUMMARY_H
#define GPUPROF_TOOL_TIME_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/summary.h"
#include "common/report.h"
#include "reports/stats_report.h"

enum time_summary_col {
	TS_TIME_PCT, TS_TOTAL, TS_COUNT, TS_AVG, TS_MED, TS_MIN, TS_MAX, TS_STDDEV,
	TS_NCOLS   /* the report's own columns start here */
};

/* The TS_* entries of a column array; count_head/key name the TS_COUNT
 * column ("Num Calls", "Instances", "Count"). */
#define TIME_SUMMARY_COLS(count_head, count_key) \
	[TS_TIME_PCT] = { "Time (%)", "time_pct", COL_F1 }, \
	[TS_TOTAL] = { "Total Time (ns)", "total_ns", COL_INT }, \
	[TS_COUNT] = { count_head, count_key, COL_INT }, \
	[TS_AVG] = { "Avg (ns)", "avg_ns", COL_F1 }, \
	[TS_MED] = { "Med (ns)", "med_ns", COL_F1 }, \
	[TS_MIN] = { "Min (ns)", "min_ns", COL_INT }, \
	[TS_MAX] = { "Max (ns)", "max_ns", COL_INT }, \
	[TS_STDDEV] = { "StdDev (ns)", "stddev_ns", COL_F1 }

/* Sum of the groups' totals (the 100 % of Time (%)). */
uint64_t time_summary_sum(const struct summary *t);
/* The TS_* cells of group g's row; sum from time_summary_sum. */
void time_summary_cells(struct cell *row, struct sgroup *g, uint64_t sum);
/* The table's footnote when some medians are estimated (analysis/summary.h:
 * past its limit of exact values), else NULL. */
const char *time_summary_note(const struct summary *t);
/* Every group as a row, by total: TS_* cells and the name in name_col; the
 * footnote of time_summary_note. */
void time_summary_fill(struct report *rep, struct summary *t, int name_col);

/* The state of a time-summary report (new/free as struct stats_report
 * functions): its groups, and the group of each string id seen. */
struct summary_state {
	gp_reader *r;
	struct summary groups;
	u64map id2g;   /* string id -> group */
};
void *summary_state_new(const struct stats_ctx *ctx);
void summary_state_free(void *self);
/* The group of string id `id`, named name_of(r, id) (malloc'd)
 * the first time the id is seen. */
size_t summary_state_group(struct summary_state *s, uint32_t id, char *(*name_of)(gp_reader *r, uint32_t id));

/* memops/memsize: a memcpy or memset record into its group ("[CUDA memcpy
 * Host-to-Device]", "[CUDA memset]"), by duration or by bytes. */
enum memop_measure { MEMOP_TIME, MEMOP_BYTES };
void memop_summary_add(struct summary_state *s, const gp_record *rec, enum memop_measure m);

#endif
