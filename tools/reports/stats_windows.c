/* stats_windows.c — `stats --report windows`: the GPU-activity windows of a
 * trace recorded with `gpuprof run --gpu-window` (the context's windows,
 * with the kernels gpu_activity_finish counted in them). */
#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"
#include "reports/stats_report.h"

enum { WIN_PID, WIN_START, WIN_END, WIN_DURATION, WIN_KERNELS, WIN_NCOLS };
static const struct col win_cols[WIN_NCOLS] = {
	[WIN_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [WIN_START] = { "Start (ns)", "start_ns", COL_INT, COL_EVERYWHERE },
	[WIN_END] = { "End (ns)", "end_ns", COL_INT, COL_EVERYWHERE }, [WIN_DURATION] = { "Duration (ns)", "duration_ns", COL_INT, COL_EVERYWHERE },
	[WIN_KERNELS] = { "Kernels", "kernels", COL_INT, COL_EVERYWHERE },
};

struct win_report { char title[256]; };

static void *win_new(const struct stats_ctx *ctx)
{
	return xcalloc(1, sizeof(struct win_report));
}

static int win_in_default(void *self, const struct stats_ctx *ctx)
{
	return ctx->pipe.win.n > 0;
}

/* One row per window (times after the trace start), kernels by start time. */
static void win_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct win_report *wr = self;
	const struct winset *win = &ctx->pipe.win;
	uint64_t base = ctx->base;
	char cov[32], tot[32];
	uint64_t covered = winset_covered(win), total = ctx->last > base ? ctx->last - base : 0;
	if (covered > total) total = covered;
	fmt_dur(cov, sizeof(cov), covered);
	fmt_dur(tot, sizeof(tot), total);
	snprintf(wr->title, sizeof(wr->title),
		 "GPU Activity Windows: GPU activity was recorded only inside these windows (%s of %s)", cov, tot);
	struct report *rep = &tables[0];
	report_define(rep, win->n ? wr->title : "GPU Activity Windows: none, GPU activity was recorded for the whole run",
		      win_cols, WIN_NCOLS);
	for (size_t i = 0; i < win->n; i++) {
		const struct gpwin *w = &win->v[i];
		struct cell *c = report_row(rep);
		cell_num(&c[WIN_PID], w->pid);
		cell_num(&c[WIN_START], (double)(w->s > ctx->out_base ? w->s - ctx->out_base : 0));
		cell_num(&c[WIN_END], (double)(w->e > ctx->out_base ? w->e - ctx->out_base : 0));
		cell_num(&c[WIN_DURATION], (double)(w->e - w->s));
		cell_num(&c[WIN_KERNELS], (double)w->kernels);
	}
}

static const struct stats_table win_tables[] = {
	{ "windows",
	  "the GPU-activity windows of a trace recorded with `gpuprof run\n"
	  "--gpu-window`: start/end (ns after the trace start), duration and\n"
	  "kernels starting inside; GPU activity outside them was not\n"
	  "recorded (not lost).  Part of the default set only when the\n"
	  "trace has windows" },
};

const struct stats_report stats_report_windows = {
	.tables = win_tables, .ntables = 1,
	.needs = STATS_NEED_GPU,
	.new = win_new, .in_default = win_in_default, .fill = win_fill, .free = free,
};
