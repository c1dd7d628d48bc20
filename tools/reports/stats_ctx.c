/* stats_ctx.c — the context of `gpuprof stats` (stats_report.h): which
 * records reach the reports, with which process and thread, and the shared
 * analyses more than one report reads: device properties, windows, GPU
 * activity, kernel shapes, counters; and, when a report needs them, the NVTX
 * ranges (analysis/join/attribution.h), the correlation-id join
 * (analysis/join/opjoin.h) and the steps (analysis/steps/step_detect.h, steps.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps/step_summary.h"
#include "common/testenv.h"
#include "common/tool.h"
#include "reports/stats_report.h"
#include "reports/stats_shards.h"

void stats_ctx_init(struct stats_ctx *ctx, gp_reader *r, const struct stats_opts *opts, uint32_t needs,
		    const struct selection *sel, int abs_time)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->r = r;
	ctx->opts = opts;
	ctx->kn.r = r;
	ctx->cnt.limit = COUNTERS_EXACT_SAMPLES;
	ctx->base = gp_reader_header(r)->start_trace_ns;
	ctx->out_base = abs_time ? 0 : ctx->base;
	ctx->sel = sel;
	if ((needs & STATS_NEED_SPAN) && !sel->active && !opts->whole_trace) needs |= STATS_NEED_STEPS;
	/* the steps' join is the context's, unless the shards run it */
	if (needs & STATS_NEED_STEPS) needs |= STATS_NEED_RANGES | (needs & STATS_NEED_STEPS_SLICED ? 0 : STATS_NEED_OPS);
	if (needs & STATS_NEED_STACKS) {
		ctx->stacks = stacks_new(r);
		stacks_set_site_rule(ctx->stacks, &opts->site);
	}
	/* the pre-pass's (its records feed them: stats_ctx_pre_add) */
	if (needs & STATS_NEED_PREJOIN) {
		ctx->graphs = graph_sites_new();
		ctx->graphs_pre = 1;
	}
	ctx->needs = needs;
	/* The span util measures in clips the busy intervals, so those summed
	 * as they stream must be clipped as they come: the steps' span is
	 * known at the end (a pass of its own then feeds the intervals,
	 * stats_ctx_finish); a --steps/--range selection may be many windows
	 * (the intervals of the selection are kept). */
	if ((needs & STATS_NEED_GPU) && (needs & STATS_NEED_SPAN)) {
		if (!sel->active && !opts->whole_trace) ctx->gpu_later = 1;
		else if (sel->by_steps_or_range) ctx->gpu.keep = 1;
	}
	/* tests: a small lag makes the streaming unions of a small trace cut,
	 * and so the slices' unions keep heads to merge (docs/CLI.md) */
	uint64_t lag;
	if (!testenv(TESTENV_UNION_LAG, &lag)) ctx->union_lag = (size_t)lag;
	ctx->gpu.lag = ctx->union_lag;
	struct steps_pipe_opts po = { (needs & STATS_NEED_RANGES) != 0, opts->rule,
				      needs & STATS_NEED_STEPS ? &opts->detect : NULL, opts->kernel_wait_ns };
	steps_pipe_init(&ctx->pipe, r, &po);
	ctx->pipe.steps_apart = (needs & STATS_NEED_STEPS_SLICED) != 0;
}

int stats_ctx_prepass(const struct stats_ctx *ctx)
{
	return (ctx->needs & (STATS_NEED_RANGES | STATS_NEED_STEPS | STATS_NEED_PREJOIN)) != 0;
}

/* The graphs' capture sites from an API or GRAPH_NODE record. */
static void ctx_graphs_add(struct stats_ctx *ctx, const gp_record *rec)
{
	if (rec->type == GP_REC_API) graph_sites_api(ctx->graphs, tool_pid(ctx->r, rec), &rec->u.api);
	else if (rec->type == GP_REC_GRAPH_NODE) graph_sites_node(ctx->graphs, tool_pid(ctx->r, rec), &rec->u.graph_node);
}

/* Pre-pass: the NVTX ranges, the GPU-activity windows, and a sample of the
 * GPU operations for the trace method of step detection; for the shards'
 * joins (STATS_NEED_PREJOIN) the graphs' capture sites (a graph is
 * captured before its launches, so the complete sites answer as the ones
 * so far would in the pass). */
void stats_ctx_pre_add(struct stats_ctx *ctx, const gp_record *rec)
{
	steps_pipe_pre_add(&ctx->pipe, rec);
	if (ctx->steps_prefix) steps_prefix_add(ctx->steps_prefix, ctx->r, rec);
	if (ctx->needs & STATS_NEED_PREJOIN) ctx_graphs_add(ctx, rec);
}

/* A joined GPU operation: to the steps (unless the shards run them),
 * then to the reports. */
static void ctx_op(void *arg, const struct gpu_op *op)
{
	struct stats_ctx *ctx = arg;
	if (ctx->pipe.steps && !ctx->pipe.steps_apart) steps_op(ctx->pipe.steps, op);
	if (ctx->on_op) ctx->on_op(ctx->on_arg, op);
}

static void ctx_call(void *arg, const struct launch_call *c)
{
	struct stats_ctx *ctx = arg;
	if (ctx->on_call) ctx->on_call(ctx->on_arg, c);
}

int stats_ctx_pre_finish(struct stats_ctx *ctx, void (*sample)(struct stats_ctx *ctx, void *arg), void *arg,
			 const char **err)
{
	ctx->prepassed = 1;
	steps_pipe_plan_ranges(&ctx->pipe);
	if (ctx->pipe.detect && sample) sample(ctx, arg);
	return steps_pipe_plan_steps(&ctx->pipe, err);
}

/* A process record's settings, for whether its GPU intervals can be summed
 * as they stream (gpu_activity.h). */
static void gpu_process(struct gpu_activity *g, gp_reader *r, const gp_rec_process *p)
{
	const char *set = p->settings_id ? tool_str(r, p->settings_id) : "";
	gpu_activity_process(g, p->pid, *set != 0, strstr(set, "gpu_window=") || strstr(set, "capture_range="));
}

/* A GPU operation of pid into the busy intervals. */
static void gpu_add(struct gpu_activity *g, const gp_record *rec, uint32_t pid)
{
	struct gpu_op op;
	if (gpu_op_of(rec, pid, &op))
		gpu_activity_add(g, pid, op.device, op.stream, op.s, op.e,
				 op.kind == OP_KERNEL ? GPU_WORK_KERNEL : GPU_WORK_COPY);
}

void stats_ctx_gpu_feed(const struct stats_ctx *ctx, struct gpu_activity *g, gp_reader *r, const gp_record *rec)
{
	if (rec->type == GP_REC_PROCESS) gpu_process(g, r, &rec->u.process);
	else if (selection_has(ctx->sel, gp_record_time(rec))) gpu_add(g, rec, tool_pid(r, rec));
}

/* The join and the graph sites, made at the first record. */
static void ctx_join(struct stats_ctx *ctx)
{
	struct opjoin_opts jo = { 0, ctx_call, ctx->join_from, 0 };
	steps_pipe_join(&ctx->pipe, &jo, ctx_op, ctx);
	if (!ctx->graphs) ctx->graphs = graph_sites_new();
}

int stats_ctx_add(struct stats_ctx *ctx, const gp_record *rec, struct stats_rec *out)
{
	uint64_t t = gp_record_time(rec);
	if (t) {
		uint64_t e = tool_rec_end(rec);
		if (e < t) e = t;
		if (e > ctx->last) ctx->last = e;
	}
	out->rec = rec;
	out->pid = out->tid = 0;
	if ((ctx->needs & STATS_NEED_OPS) && !ctx->pipe.join) ctx_join(ctx);
	if (ctx->graphs && !ctx->graphs_pre) ctx_graphs_add(ctx, rec);
	/* every API call and GPU operation goes through the join, selected or
	 * not: the steps and the ranges span the selection's edges */
	if (ctx->pipe.join) steps_pipe_add(&ctx->pipe, rec);
	switch (rec->type) {
	case GP_REC_WINDOW: /* clipped to --since/--until at the end; the pre-pass had them */
		if (!ctx->prepassed)
			winset_add(&ctx->pipe.win, tool_pid(ctx->r, rec), rec->u.window.start_ns, rec->u.window.end_ns);
		return 0;
	case GP_REC_DEVICE:
		devprops_add(&ctx->dev, tool_pid(ctx->r, rec), &rec->u.device);
		return 0;
	case GP_REC_PROCESS:
		gpu_process(&ctx->gpu, ctx->r, &rec->u.process);
		out->pid = rec->u.process.pid;
		*u64map_get(&ctx->rank_of, out->pid, MAP_INSERT) = (uint64_t)((int64_t)rec->u.process.rank + 1);
		return 1;
	case GP_REC_MODULE: case GP_REC_STACK: case GP_REC_THREAD: case GP_REC_SOURCE:
		if (ctx->stacks) stacks_add(ctx->stacks, rec);
		return 1;
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET: case GP_REC_NVTX_RANGE:
	case GP_REC_COUNTER: case GP_REC_SYNC: case GP_REC_MEMORY: case GP_REC_ALLOC_FAIL:
	case GP_REC_MEM_LIVE:
		if (!selection_has(ctx->sel, t)) return 0;
		break;
	default:
		return 0;
	}
	out->pid = tool_pid(ctx->r, rec);
	const gp_rec_source *src = gp_reader_source(ctx->r, rec->source_id);
	out->tid = src ? src->tid : 0;
	if ((ctx->needs & STATS_NEED_GPU) && !ctx->gpu_later) gpu_add(&ctx->gpu, rec, out->pid);
	switch (rec->type) {
	case GP_REC_KERNEL:
		if (ctx->needs & STATS_NEED_SHAPES)
			kshapes_add(&ctx->shapes, out->pid, &rec->u.kernel, kernel_name(&ctx->kn, rec->u.kernel.name_id));
		break;
	case GP_REC_COUNTER:
		if (ctx->needs & STATS_NEED_COUNTERS)
			counters_add(&ctx->cnt, out->pid, &rec->u.counter, tool_str(ctx->r, rec->u.counter.name_id));
		break;
	}
	return 1;
}

/* What pid's span is (stats_span_of); its intervals go to ctx->span. */
static void span_of_add(struct stats_ctx *ctx, uint32_t pid, const char *what)
{
	struct span_of so = { .pid = pid };
	snprintf(so.what, sizeof(so.what), "%s", what);
	VEC_PUSH(ctx->span_of, ctx->nspan_of, ctx->cspan_of, so);
}

/* Per process with counted steps: from the first counted step's start to
 * the last one's end. */
static void span_of_steps(struct stats_ctx *ctx)
{
	int keep = ctx->opts->keep_warmup;
	for (size_t i = 0; i < steps_nprocs(ctx->pipe.steps); i++) {
		struct steps_proc *p = steps_proc(ctx->pipe.steps, i);
		struct step_summary sm;
		step_summarize(p, keep, &sm);
		step_summary_free(&sm, p->nrows);
		struct step_row a, b; /* the first and last counted */
		size_t n = 0;
		for (size_t k = 0; k < p->nrows; k++)
			if (step_counted(step_row(p, k), keep)) {
				if (!n++) a = *step_row(p, k);
				b = *step_row(p, k);
			}
		if (!n) continue;
		char what[128];
		snprintf(what, sizeof(what), "steps %" PRId64 "..%" PRId64 "%s", a.number, b.number,
			 sm.nwarm && !keep ? " (warm-up left out)" : "");
		winset_add(&ctx->span, p->pid, a.s, b.e);
		span_of_add(ctx, p->pid, what);
	}
}

/* --steps/--range: the selected time, for every process with GPU work. */
static void span_of_selection(struct stats_ctx *ctx)
{
	char what[288];
	snprintf(what, sizeof(what), "selection: %.250s", ctx->sel->what);
	for (size_t i = 0; i < ctx->gpu.ndevs; i++) {
		uint32_t pid = ctx->gpu.devs[i].pid;
		if (stats_span_of(ctx, pid)) continue;
		for (size_t j = 0; j < ctx->sel->iv.n; j++)
			winset_add(&ctx->span, pid, ctx->sel->iv.v[j].s, ctx->sel->iv.v[j].e);
		span_of_add(ctx, pid, what);
	}
}

const char *stats_span_of(const struct stats_ctx *ctx, uint32_t pid)
{
	for (size_t i = 0; i < ctx->nspan_of; i++)
		if (ctx->span_of[i].pid == pid) return ctx->span_of[i].what;
	return NULL;
}

/* The windows GPU activity is measured in: the GPU-activity windows, inside
 * the span where a process has one; the span where it has no windows. */
static void span_windows(const struct stats_ctx *ctx, struct winset *eff)
{
	for (size_t i = 0; i < ctx->pipe.win.n; i++) {
		const struct gpwin *w = &ctx->pipe.win.v[i];
		size_t lo, hi;
		winset_range(&ctx->span, w->pid, &lo, &hi);
		if (lo == hi) { winset_add(eff, w->pid, w->s, w->e); continue; }
		for (size_t j = lo; j < hi; j++) {
			uint64_t s = w->s > ctx->span.v[j].s ? w->s : ctx->span.v[j].s;
			uint64_t e = w->e < ctx->span.v[j].e ? w->e : ctx->span.v[j].e;
			if (e > s) winset_add(eff, w->pid, s, e);
		}
	}
	for (size_t i = 0; i < ctx->span.n; i++) {
		size_t lo, hi;
		winset_range(&ctx->pipe.win, ctx->span.v[i].pid, &lo, &hi);
		if (lo == hi) winset_add(eff, ctx->span.v[i].pid, ctx->span.v[i].s, ctx->span.v[i].e);
	}
	winset_finish(eff);
}

/* The deferred GPU intervals (ctx->gpu_later): the span is known now, so a
 * pass over the GPU operations sums them clipped to it (eff: span_windows)
 * as they stream (in slices of time when the driver gave one:
 * ctx->gpu_slices). */
static void gpu_pass(struct stats_ctx *ctx, const struct winset *eff)
{
	/* emptied, as it was set up (a pass summed per bin again: at
	 * GPU_ACTIVITY_LAG now, gpu_activity_redo) */
	struct gpu_activity g = { .keep = ctx->gpu.keep, .bins = ctx->gpu.bins,
				  .lag = ctx->union_lag ? ctx->union_lag : GPU_ACTIVITY_LAG };
	gpu_activity_free(&ctx->gpu);
	ctx->gpu = g;
	if (ctx->gpu_slices && stats_shards_gpu_pass(ctx, eff, ctx->gpu_slices) == 0) return;
	gpu_activity_free(&ctx->gpu);
	ctx->gpu = g;
	ctx->gpu.clip = eff;
	const gp_record *rec;
	if (gp_reader_rewind(ctx->r) == 0)
		while (gp_reader_next_ordered(ctx->r, &rec) > 0) stats_ctx_gpu_feed(ctx, &ctx->gpu, ctx->r, rec);
	ctx->gpu.clip = NULL;
}

void stats_ctx_finish(struct stats_ctx *ctx)
{
	steps_pipe_finish(&ctx->pipe);
	winset_finish(&ctx->pipe.win);
	if (ctx->sel->active) winset_clip_set(&ctx->pipe.win, ctx->sel->iv.v, ctx->sel->iv.n);
	if (ctx->needs & STATS_NEED_SPAN) {
		if (ctx->sel->by_steps_or_range) span_of_selection(ctx);
		else if (ctx->pipe.steps && !ctx->sel->active && !ctx->opts->whole_trace) span_of_steps(ctx);
		winset_finish(&ctx->span);
	}
	struct winset eff = { 0 };
	if (ctx->span.n) span_windows(ctx, &eff);
	if (ctx->gpu_later || ctx->gpu_redo || gpu_activity_redo(&ctx->gpu)) gpu_pass(ctx, &eff);
	/* the windows report counts the kernels in the recorded windows */
	if (ctx->span.n) gpu_activity_count_windows(&ctx->gpu, &ctx->pipe.win);
	gpu_activity_finish(&ctx->gpu, ctx->span.n ? &eff : &ctx->pipe.win);
	winset_free(&eff);
	kshapes_finish(&ctx->shapes, &ctx->dev);
	counters_finish(&ctx->cnt);
}

void stats_ctx_merge(struct stats_ctx *ctx, struct stats_ctx *src, int meta)
{
	if (src->last > ctx->last) ctx->last = src->last;
	/* before the join's operations: the reports read the stacks in op() */
	if (ctx->stacks && src->stacks) stacks_adopt(ctx->stacks, src->stacks, ctx->r);
	if (src->pipe.join) {
		if (!ctx->pipe.join) ctx_join(ctx);
		opjoin_merge(ctx->pipe.join, src->pipe.join);
	}
	kshapes_merge(&ctx->shapes, &src->shapes);
	counters_merge(&ctx->cnt, &src->cnt);
	/* at the bins' lag, the GPU intervals alone are summed again */
	int gpu_lost = gpu_activity_merge(&ctx->gpu, &src->gpu) < 0;
	if (src->gpu_redo || (gpu_lost && !ctx->gpu.lag && ctx->gpu.bins)) ctx->gpu_redo = 1;
	else if (gpu_lost) ctx->merge_lost = 1;
	if (src->merge_lost) ctx->merge_lost = 1;
	if (!meta) return;
	/* the windows the slice read in its pass (ctx read none itself, and
	 * had no pre-pass that read them all) */
	if (!ctx->prepassed && !src->prepassed)
		for (size_t i = 0; i < src->pipe.win.n; i++) VEC_PUSH(ctx->pipe.win.v, ctx->pipe.win.n, ctx->pipe.win.cap, src->pipe.win.v[i]);
	/* a merged trace may hold a process's records in its timed chunks,
	 * which only some slices read: every slice's, a later one's winning
	 * as a later record does */
	for (size_t i = 0; i < src->rank_of.cap; i++)
		if (src->rank_of.used[i])
			*u64map_get(&ctx->rank_of, src->rank_of.slot[i].key, MAP_INSERT) = src->rank_of.slot[i].val;
	for (size_t i = 0; i < src->dev.idx.cap; i++)
		if (src->dev.idx.used[i])
			devprops_add(&ctx->dev, (uint32_t)(src->dev.idx.slot[i].key >> 32), &src->dev.v[src->dev.idx.slot[i].val - 1]);
}

void stats_ctx_slice(struct stats_ctx *ctx, gp_reader *r, const struct stats_ctx *main, uint32_t needs, uint64_t from)
{
	/* the ranges and the pre-pass's graph sites are main's, not made again */
	stats_ctx_init(ctx, r, main->opts,
		       needs & ~(uint32_t)(STATS_NEED_RANGES | STATS_NEED_STEPS_SLICED | STATS_NEED_PREJOIN), main->sel,
		       main->out_base == 0);
	if (needs & STATS_SHARD_JOIN_NEEDS) {
		if (main->pipe.attr) ctx->pipe.attr = attribution_view(main->pipe.attr);
		ctx->graphs = main->graphs; /* read only (graph_sites_find) */
		ctx->graphs_pre = 1;
		ctx->graphs_shared = 1;
		for (size_t i = 0; i < main->pipe.win.n; i++)
			VEC_PUSH(ctx->pipe.win.v, ctx->pipe.win.n, ctx->pipe.win.cap, main->pipe.win.v[i]);
		ctx->prepassed = main->prepassed;
	}
	ctx->join_from = from;
	ctx->gpu.slice = from > 0;
	ctx->gpu.bins = main->gpu.bins; /* main's busy bins (report), summed per slice */
	ctx->names = main->names;
}

void stats_ctx_end_join(struct stats_ctx *ctx)
{
	if (!ctx->pipe.join) return;
	opjoin_finish(ctx->pipe.join);
	opjoin_free(ctx->pipe.join);
	ctx->pipe.join = NULL;
}

static void fanout_op(void *arg, const struct gpu_op *op)
{
	const struct stats_fanout *f = arg;
	for (size_t i = 0; stats_reports[i]; i++)
		if (f->run[i] && stats_reports[i]->op) stats_reports[i]->op(f->self[i], f->ctx, op);
}

static void fanout_call(void *arg, const struct launch_call *c)
{
	const struct stats_fanout *f = arg;
	for (size_t i = 0; stats_reports[i]; i++)
		if (f->run[i] && stats_reports[i]->call) stats_reports[i]->call(f->self[i], f->ctx, c);
}

void stats_fanout_attach(struct stats_fanout *f, struct stats_ctx *ctx, void **self, const int *run)
{
	*f = (struct stats_fanout){ ctx, self, run };
	ctx->on_op = fanout_op;
	ctx->on_call = fanout_call;
	ctx->on_arg = f;
}

int stats_fanout_add(const struct stats_fanout *f, const gp_record *rec)
{
	struct stats_rec sr;
	if (!stats_ctx_add(f->ctx, rec, &sr)) return 0;
	for (size_t i = 0; stats_reports[i]; i++)
		if (f->run[i] && (stats_reports[i]->types & STATS_TYPE(rec->type)))
			stats_reports[i]->add(f->self[i], f->ctx, &sr);
	return 1;
}

int stats_ctx_rank(const struct stats_ctx *ctx, uint32_t pid)
{
	uint64_t *v = u64map_get((u64map *)&ctx->rank_of, pid, MAP_FIND);
	return v ? (int)((int64_t)*v - 1) : -1;
}

void stats_ctx_free(struct stats_ctx *ctx)
{
	u64map_free(&ctx->rank_of);
	devprops_free(&ctx->dev);
	kernel_names_free(&ctx->kn);
	kshapes_free(&ctx->shapes);
	gpu_activity_free(&ctx->gpu);
	counters_free(&ctx->cnt);
	winset_free(&ctx->span);
	free(ctx->span_of);
	if (!ctx->graphs_shared) graph_sites_free(ctx->graphs);
	stacks_free(ctx->stacks);
	steps_pipe_free(&ctx->pipe);
}
