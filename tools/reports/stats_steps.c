/* stats_steps.c — `stats --report steps`: the training step as the unit
 * (docs/STEPS.md).  The analysis is the context's (stats_ctx.steps,
 * STATS_NEED_STEPS: step detection in the pre-pass, the per-step figures in
 * the main pass); this report only turns it into its six tables
 * (analysis/steps/steps_report.h).  `gpuprof steps` is `gpuprof stats --report
 * steps` (cli/main.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps/steps_report.h"
#include "common/tool.h"
#include "reports/stats_report.h"

static void *steps_report_new(const struct stats_ctx *ctx)
{
	return xcalloc(1, sizeof(struct steps_reports));
}

/* In the default set when some process has steps. */
static int steps_report_in_default(void *self, const struct stats_ctx *ctx)
{
	for (size_t i = 0; ctx->pipe.steps && i < steps_nprocs(ctx->pipe.steps); i++)
		if (steps_proc(ctx->pipe.steps, i)->nrows) return 1;
	return 0;
}

/* --verbose: what the join could not pair and, per process, the most
 * records held at once (the memory bound). */
static void print_verbose(const struct stats_ctx *ctx)
{
	struct opjoin_counts oc = ctx->steps_counts; /* the slices' (STATS_NEED_STEPS_SLICED) */
	if (!(ctx->needs & STATS_NEED_STEPS_SLICED)) opjoin_counts(ctx->pipe.join, &oc);
	fprintf(stderr, "%s: %" PRIu64 " GPU operations, %" PRIu64 " without a launch call; %" PRIu64
		" launch calls without an operation\n", g_cmd, oc.ops, oc.ops_no_call, oc.calls_no_op);
	for (size_t i = 0; i < steps_nprocs(ctx->pipe.steps); i++) {
		const struct steps_proc *p = steps_proc(ctx->pipe.steps, i);
		fprintf(stderr, "%s: pid %u: %zu steps; held at most %" PRIu64
			" GPU operations and API calls at once; %" PRIu64 " came after their step\n",
			g_cmd, p->pid, p->nrows, p->pending_max, p->late_ops);
	}
}

/* A step is reported when it starts in the selection. */
static int row_selected(void *arg, const struct step_row *w)
{
	return stats_selected(arg, w->s);
}

static void steps_report_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct steps_reports *s = self;
	if (ctx->opts->verbose) print_verbose(ctx);
	struct steps_reports_opts o = { ctx->out_base, ctx->opts->keep_warmup,
					ctx->sel->active ? row_selected : NULL, ctx };
	steps_reports_fill(s, ctx->pipe.steps, &o);
	/* the tables move to the driver's; their notes stay here until free */
	for (int k = 0; k < SR_COUNT; k++) {
		report_free(&tables[k]);
		tables[k] = s->rep[k];
		memset(&s->rep[k], 0, sizeof(s->rep[k]));
	}
}

static void steps_report_free(void *self)
{
	steps_reports_free(self);
	free(self);
}

/* In the order of SR_* (analysis/steps/steps_report.h). */
static const struct stats_table steps_tables[SR_COUNT] = {
	{ "steps",
	  "training steps (docs/STEPS.md), one row per process: how they\n"
	  "were found (NVTX ranges like 'step 12', or the trace's periodic\n"
	  "GPU work), count, warm-up, step-time Med/P90/Max/Min, spread, GPU\n"
	  "busy %, outliers; also prints step_buckets, step_launch,\n"
	  "step_outliers and step_phases.  In the default set when the trace\n"
	  "has steps" },
	{ "step_buckets",
	  "where the counted steps' wall time went: compute, comm, memory,\n"
	  "and GPU idle by why (host_wait, sync, launch, other); adds up to\n"
	  "the step time" },
	{ "step_launch",
	  "HTA's kernel launch statistics over the counted steps" },
	{ "step_outliers",
	  "steps far from the median step time and what differs in each" },
	{ "step_phases",
	  "GPU work launched in each NVTX range directly inside the steps\n"
	  "(forward, backward, optimizer), from any thread" },
	{ "step_rows",
	  "one row per step (warm-up ones included, flagged); only when\n"
	  "named or with --per-step" },
};

const struct stats_report stats_report_steps = {
	.tables = steps_tables, .ntables = SR_COUNT,
	.needs = STATS_NEED_STEPS,
	.by_name = 1u << SR_ROWS,
	.new = steps_report_new, .in_default = steps_report_in_default,
	.fill = steps_report_fill,
	.free = steps_report_free,
};
