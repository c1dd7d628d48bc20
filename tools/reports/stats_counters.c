/* stats_counters.c — `stats --report counters`: the sampled counters
 * (e.g. nvml.*) per name and device, from the context's series
 * (analysis/gpu/counters.h). */
#include <string.h>

#include "reports/stats_report.h"

enum {
	CNT_PID, CNT_DEVICE, CNT_SAMPLES, CNT_MIN, CNT_MEAN, CNT_TW_MEAN, CNT_MAX, CNT_UNIT, CNT_COUNTER,
	CNT_NCOLS
};
static const struct col cnt_cols[CNT_NCOLS] = {
	[CNT_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [CNT_DEVICE] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[CNT_SAMPLES] = { "Samples", "samples", COL_INT, COL_EVERYWHERE },
	[CNT_MIN] = { "Min", "min", COL_F1, COL_EVERYWHERE }, [CNT_MEAN] = { "Mean", "mean", COL_F1, COL_EVERYWHERE },
	[CNT_TW_MEAN] = { "Time-Wtd Mean", "time_weighted_mean", COL_F1, COL_EVERYWHERE },
	[CNT_MAX] = { "Max", "max", COL_F1, COL_EVERYWHERE }, [CNT_UNIT] = { "Unit", "unit", COL_STR, COL_EVERYWHERE },
	[CNT_COUNTER] = { "Counter", "counter", COL_STR, COL_EVERYWHERE },
};

/* Unit hint from the name's last component (nvml.* naming). */
static const char *counter_unit(const char *name)
{
	static const struct { const char *suf, *unit; } u[] = {
		{ "_util", "%" }, { "_bytes", "bytes" }, { "_mw", "mW" }, { "_mhz", "MHz" }, { "_c", "deg C" },
		{ "_pct", "%" }, { "_ns", "ns" }, { "_kbps", "KB/s" },
	};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		size_t l = strlen(u[i].suf);
		if (n > l && !strcmp(name + n - l, u[i].suf)) return u[i].unit;
	}
	return "";
}

static int cnt_in_default(void *self, const struct stats_ctx *ctx)
{
	return ctx->cnt.n > 0;
}

static void cnt_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct report *rep = &tables[0];
	report_define(rep, "Sampled Counters", cnt_cols, CNT_NCOLS);
	rep->note = " Time-Wtd Mean: each sample's value holds until the next sample.\n";
	for (size_t i = 0; i < ctx->cnt.n; i++) {
		const struct cseries *c = &ctx->cnt.v[i];
		struct cfigures f;
		counters_figures(c, &f);
		struct cell *r = report_row(rep);
		cell_num(&r[CNT_PID], c->pid); cell_num(&r[CNT_DEVICE], c->dev);
		cell_num(&r[CNT_SAMPLES], (double)f.n);
		cell_num(&r[CNT_MIN], f.min); cell_num(&r[CNT_MEAN], f.sum / (double)f.n);
		/* each value holds until the next sample */
		uint64_t len = f.t_last - f.t_first;
		if (len) cell_num(&r[CNT_TW_MEAN], f.tw / (double)len);
		cell_num(&r[CNT_MAX], f.max);
		cell_str(&r[CNT_UNIT], counter_unit(c->name)); cell_str(&r[CNT_COUNTER], c->name);
	}
}

static const struct stats_table cnt_tables[] = {
	{ "counters",
	  "sampled counters (e.g. nvml.*) per name and device: samples, min,\n"
	  "mean, time-weighted mean, max.  Part of the default set only\n"
	  "when the trace has counters" },
};

const struct stats_report stats_report_counters = {
	.tables = cnt_tables, .ntables = 1,
	.needs = STATS_NEED_COUNTERS,
	.in_default = cnt_in_default, .fill = cnt_fill,
};
