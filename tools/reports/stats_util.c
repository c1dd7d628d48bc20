/* stats_util.c — `stats --report util`: GPU utilisation per device and
 * stream, from the context's busy intervals (analysis/gpu/gpu_activity.h), the
 * kernel shapes' weighted time (analysis/gpu/kernel_shapes.h) and the
 * nvml.gpu_util samples (analysis/gpu/counters.h).  Over the context's span
 * (STATS_NEED_SPAN): by default the steps', when the trace has steps; the
 * title and the Span Of column say which. */
#include <stdio.h>
#include <stdlib.h>

#include "reports/stats_report.h"

enum {
	UTIL_PID, UTIL_DEVICE, UTIL_STREAM, UTIL_KERNELS, UTIL_BUSY, UTIL_SPAN, UTIL_BUSY_PCT,
	UTIL_SM_WTD, UTIL_OCC_WTD, UTIL_NVML, UTIL_GAPS, UTIL_LARGEST_GAP, UTIL_COPY, UTIL_OVERLAP,
	UTIL_SPAN_OF, UTIL_NCOLS
};
static const struct col util_cols[UTIL_NCOLS] = {
	[UTIL_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [UTIL_DEVICE] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[UTIL_STREAM] = { "Stream", "stream", COL_STR, COL_EVERYWHERE },
	[UTIL_KERNELS] = { "Kernels", "kernels", COL_INT, COL_EVERYWHERE }, [UTIL_BUSY] = { "Busy (ns)", "busy_ns", COL_INT, COL_EVERYWHERE },
	[UTIL_SPAN] = { "Span (ns)", "span_ns", COL_INT, COL_EVERYWHERE }, [UTIL_BUSY_PCT] = { "Busy (%)", "busy_pct", COL_F1, COL_EVERYWHERE },
	[UTIL_SM_WTD] = { "SM-Wtd (%)", "sm_weighted_pct", COL_F1, COL_EVERYWHERE },
	[UTIL_OCC_WTD] = { "Occ-Wtd (%)", "occ_weighted_pct", COL_F1, COL_EVERYWHERE },
	[UTIL_NVML] = { "NVML (%)", "nvml_util_pct", COL_F1, COL_EVERYWHERE },
	[UTIL_GAPS] = { "Idle Gaps", "idle_gaps", COL_INT, COL_EVERYWHERE },
	[UTIL_LARGEST_GAP] = { "Largest Gap (ns)", "largest_gap_ns", COL_INT, COL_EVERYWHERE },
	[UTIL_COPY] = { "Copy (ns)", "copy_ns", COL_INT, COL_EVERYWHERE }, [UTIL_OVERLAP] = { "Overlap (%)", "overlap_pct", COL_F1, COL_EVERYWHERE },
	[UTIL_SPAN_OF] = { "Span Of", "span_of", COL_STR, COL_EVERYWHERE },
};

static const char util_note[] =
	" Busy = some kernel is running (union of kernel intervals / span): what nvidia-smi calls\n"
	"   'GPU utilization'; one 1-thread kernel makes it 100%.\n"
	" SM-Wtd = sum of kernel time x min(1, blocks / SMs) / span: an upper bound on the share\n"
	"   of SM time with work resident (cf. DCGM SM activity), capped at 100.\n"
	" Occ-Wtd = the same x the theoretical occupancy the grid reaches on an occupied SM:\n"
	"   an estimate comparable to DCGM SM occupancy.  Both from launch shapes, not measured.\n"
	" NVML = mean of the trace's nvml.gpu_util samples inside the span ('-': none).\n"
	" Span Of: what the span is - the steps (from the first counted step's start to the last\n"
	"   one's end; the default when the trace has steps; --whole-trace: the whole trace), the\n"
	"   selection of --steps/--range, the GPU-activity windows, or the trace (first to last\n"
	"   GPU operation).\n";

struct util_report { char title[480], note[sizeof(util_note) + 256]; };

static void *util_new(const struct stats_ctx *ctx)
{
	return xcalloc(1, sizeof(struct util_report));
}

/* The cells a device row and a stream row share. */
static void busy_cells(struct cell *c, uint32_t pid, uint32_t dev, const char *stream,
		       const struct ivsum *k, const struct ivsum *cp, uint64_t span, const char *span_of)
{
	cell_str(&c[UTIL_SPAN_OF], span_of);
	cell_num(&c[UTIL_PID], pid); cell_num(&c[UTIL_DEVICE], dev); cell_str(&c[UTIL_STREAM], stream);
	cell_num(&c[UTIL_KERNELS], (double)k->count); cell_num(&c[UTIL_BUSY], (double)k->busy);
	cell_num(&c[UTIL_SPAN], (double)span);
	cell_num(&c[UTIL_BUSY_PCT], span ? 100.0 * (double)k->busy / (double)span : 0);
	cell_num(&c[UTIL_GAPS], (double)k->gaps); cell_num(&c[UTIL_LARGEST_GAP], (double)k->largest);
	cell_num(&c[UTIL_COPY], (double)cp->busy);
}

/* One row per device ("all" streams), then one per stream of it. */
static void util_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct util_report *u = self;
	struct report *rep = &tables[0];
	char span[320] = "";
	if (ctx->nspan_of == 1)
		snprintf(span, sizeof(span), " (span: %.300s)", ctx->span_of[0].what);
	else if (ctx->nspan_of > 1)
		snprintf(span, sizeof(span), " (span per process: Span Of)");
	if (ctx->pipe.win.n)
		snprintf(u->title, sizeof(u->title),
			 "GPU Utilization, inside the %zu GPU-activity windows only (Span = recorded time)%s",
			 ctx->pipe.win.n, span);
	else
		snprintf(u->title, sizeof(u->title), "GPU Utilization%s", span);
	report_define(rep, u->title, util_cols, UTIL_NCOLS);
	rep->note = util_note;
	uint64_t late_ns, late = gpu_activity_late(&ctx->gpu, &late_ns);
	if (late) {
		snprintf(u->note, sizeof(u->note),
			 "%s %llu GPU records arrived more than %u records after their start time was\n"
			 "   summed: Busy may be short by up to %llu ns (docs/CLI.md, stats memory).\n",
			 util_note, (unsigned long long)late, (unsigned)(ctx->gpu.lag ? ctx->gpu.lag : GPU_ACTIVITY_LAG),
			 (unsigned long long)late_ns);
		rep->note = u->note;
	}
	const struct gpu_activity *g = &ctx->gpu;
	size_t si = 0;
	for (size_t i = 0; i < g->ndevs; i++) {
		const struct gpu_dev *d = &g->devs[i];
		const char *span_of = stats_span_of(ctx, d->pid);
		if (!span_of) span_of = d->windowed ? "windows" : "trace";
		struct cell *c = report_row(rep);
		busy_cells(c, d->pid, d->dev, "all", &d->ksum, &d->csum, d->span, span_of);
		/* concurrent kernels can sum past the span: capped, it is a bound */
		const struct kshape_dev *w = kshapes_device(&ctx->shapes, d->pid, d->dev);
		if (w) {
			double smw = d->span ? 100.0 * w->smw_ns / (double)d->span : 0;
			double occw = d->span ? 100.0 * w->occw_ns / (double)d->span : 0;
			if (w->cov_known == 1) cell_num(&c[UTIL_SM_WTD], smw > 100 ? 100 : smw);
			if (w->occ_known == 1) cell_num(&c[UTIL_OCC_WTD], occw > 100 ? 100 : occw);
		}
		/* NVML's samples over the span: the steps', or the first to the last operation */
		uint64_t ns = d->span_s, ne = d->span_e;
		size_t lo, hi;
		winset_range(&ctx->span, d->pid, &lo, &hi);
		if (lo < hi) { ns = ctx->span.v[lo].s; ne = ctx->span.v[hi - 1].e; }
		double nv = counters_mean(&ctx->cnt, "nvml.gpu_util", d->pid, d->dev, ns, ne);
		if (nv >= 0) cell_num(&c[UTIL_NVML], nv);
		if (d->csum.busy) cell_num(&c[UTIL_OVERLAP], 100.0 * (double)d->overlap / (double)d->csum.busy);
		/* streams and devices are both sorted by (pid, device) */
		for (; si < g->nstrs && (g->strs[si].pid < d->pid ||
					 (g->strs[si].pid == d->pid && g->strs[si].dev <= d->dev)); si++) {
			const struct gpu_stream *s = &g->strs[si];
			char sname[16];
			snprintf(sname, sizeof(sname), "%u", s->stream);
			busy_cells(report_row(rep), s->pid, s->dev, sname, &s->ksum, &s->csum, d->span, span_of);
		}
	}
}

static const struct stats_table util_tables[] = {
	{ "util",
	  "GPU utilisation per device and stream: busy % = union of kernel\n"
	  "intervals / span of the device's GPU activity, idle gaps, largest\n"
	  "gap, copy time and compute/copy overlap % (of copy time); in a\n"
	  "windowed trace only the time inside the windows counts.  Beside\n"
	  "busy % (some kernel running, what nvidia-smi calls utilisation):\n"
	  "SM-Wtd % = sum of kernel time x SM coverage / span (upper bound\n"
	  "on SM activity), Occ-Wtd % = the same x grid occupancy (an\n"
	  "estimate comparable to DCGM SM occupancy), NVML % = mean of the\n"
	  "trace's nvml.gpu_util samples inside the span.  The span: from\n"
	  "the first counted step's start to the last one's end when the\n"
	  "trace has steps (warm-up left out; --whole-trace: the whole\n"
	  "trace); the selection of --steps or --range; else the first to\n"
	  "the last GPU operation (Span Of says which)" },
};

const struct stats_report stats_report_util = {
	.tables = util_tables, .ntables = 1,
	.needs = STATS_NEED_SPAN | STATS_NEED_GPU | STATS_NEED_SHAPES | STATS_NEED_COUNTERS,
	.new = util_new, .fill = util_fill, .free = free,
};
