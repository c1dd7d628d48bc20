/* stats_shards.c — see stats_shards.h. */
#include "reports/stats_shards.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/slices.h"
#include "analysis/steps/steps_slice.h"
#include "analysis/core/summary.h"
#include "common/tool.h"

/* One slice of time (the records timed in [from, to): the slice
 * runner's bounds) and its thread. */
struct shard {
	gp_reader *r;
	struct stats_ctx ctx;
	void **self;           /* per report of the list */
	struct stats_fanout fan; /* its join's operations and calls to self */
	int ok;                /* read whole (and so are the slices merged into it) */
	uint64_t n;            /* records read */
	struct steps_slice *steps; /* the steps' engine of the slice (STATS_NEED_STEPS_SLICED; the
				    * caller's part's, stats_ctx.part, when set) */
};

struct stats_shards {
	/* the caller's context: its options, selection, form of names and
	 * time base, and its pre-pass (ranges, windows, the steps' plans), do
	 * not change while the shards run (its analyses do) */
	const struct stats_ctx *main;
	const char *path;
	const int *run;
	size_t nreps;
	uint32_t needs;        /* the shards' contexts' */
	int k;
	struct slices *cut;    /* the slices, their threads */
	struct slice_pass pass;
	struct shard *sh;
	struct summary_board *board; /* per report */
	/* STATS_NEED_STEPS_SLICED: the cuts of the steps' engines */
	struct steps_cuts cuts;
	uint64_t *cut_from, *cut_lead;
};

/* The records without a time: a slice's reader may not see all of them
 * (a merged trace holds some in timed chunks) */
#define META_TYPES (STATS_TYPE(GP_REC_DEVICE) | STATS_TYPE(GP_REC_PROCESS) | STATS_TYPE(GP_REC_MODULE) | \
		    STATS_TYPE(GP_REC_STACK) | STATS_TYPE(GP_REC_THREAD) | STATS_TYPE(GP_REC_SOURCE))

uint32_t stats_shard_needs(gp_reader *r, const struct stats_opts *so, const struct selection *sel, uint32_t run_needs)
{
	uint32_t n = STATS_SHARD_NEEDS;
	/* the span of the steps needs the steps analysis: in the shards
	 * (steps_slice.h), merged before the driver makes the span */
	int span_steps = (run_needs & STATS_NEED_SPAN) && !sel->active && !so->whole_trace;
	if (span_steps || (run_needs & STATS_NEED_STEPS)) n |= STATS_NEED_STEPS_SLICED;
	if (!span_steps) n |= STATS_NEED_SPAN;
	/* the busy intervals merge when every slice knows every process's
	 * settings (streamed or kept), and are not clipped to the steps' span
	 * (then a pass of their own feeds them: stats_shards_gpu_pass) */
	if (gp_reader_meta_apart(r) && !((run_needs & STATS_NEED_GPU) && span_steps)) n |= STATS_NEED_GPU;
	if (gp_reader_meta_apart(r)) n |= STATS_NEED_STACKS; /* every slice reads them */
	return n;
}

uint32_t stats_shard_end_needs(uint32_t shard_needs)
{
	if (!(shard_needs & STATS_NEED_STEPS_SLICED)) return 0;
	/* the steps' span, and the busy intervals clipped to it (a pass of
	 * their own at the end, stats_shards_gpu_pass), unless shards make them */
	return STATS_NEED_STEPS | STATS_NEED_SPAN | (shard_needs & STATS_NEED_SPAN ? 0 : STATS_NEED_GPU);
}

int stats_report_shardable(const struct stats_report *rep, gp_reader *r, uint32_t shard_needs)
{
	uint32_t ok = shard_needs | STATS_SHARD_JOIN_NEEDS | stats_shard_end_needs(shard_needs);
	return (rep->merge || !(rep->add || rep->op || rep->call)) && !(rep->needs & ~ok) &&
	       (!(rep->types & META_TYPES) || gp_reader_meta_apart(r));
}

/* The records of slice ix through its context to its reports (the slice
 * runner's read). */
static void shard_read(void *arg, int ix, uint64_t from, uint64_t to)
{
	struct stats_shards *a = arg;
	struct shard *s = &a->sh[ix];
	/* the steps' engine reads a lead-in before the slice, and up to the
	 * next slice's first record (steps_slice.h) */
	uint64_t lo = from, hi = to;
	if (a->cuts.k) steps_slice_window(&a->cuts, ix, &lo, &hi);
	if (!(s->r = slices_open(a->path, lo, hi))) return;
	const struct stats_part *part = a->main->part;
	if (a->cuts.k && part)
		s->steps = (struct steps_slice *)part->make(part->arg, s->r, &a->cuts, ix, 1);
	else if (a->cuts.k)
		s->steps = steps_slice_new(s->r, a->main->pipe.steps, a->main->pipe.attr, &a->main->pipe.win, &a->cuts, ix);
	stats_ctx_slice(&s->ctx, s->r, a->main, a->needs, from);
	/* Both joins here deliver an operation at the same record, the steps'
	 * engine first, and each asks the ranges of its call (attribution_op):
	 * one query state for the two, so that the reports' question is
	 * answered from the engine's, as one pass's context answers both. */
	if (s->steps && s->ctx.pipe.attr && s->steps->a) {
		attribution_free(s->ctx.pipe.attr);
		s->ctx.pipe.attr = attribution_view_sharing(s->steps->a);
	}
	s->self = xcalloc(a->nreps ? a->nreps : 1, sizeof(*s->self));
	for (size_t i = 0; i < a->nreps; i++)
		if (a->run[i] && stats_reports[i]->new) {
			s->ctx.board = &a->board[i];
			s->self[i] = stats_reports[i]->new(&s->ctx);
		}
	s->ctx.board = NULL;
	stats_fanout_attach(&s->fan, &s->ctx, s->self, a->run);
	const gp_record *rec;
	int rc;
	while ((rc = gp_reader_next_ordered(s->r, &rec)) > 0) {
		s->n++;
		if (s->steps) cut_slice_add(&s->steps->c, rec);
		int meta = (META_TYPES & STATS_TYPE(rec->type)) != 0;
		uint64_t t = gp_record_time(rec);
		if (!meta && (t < from || t >= to)) continue;
		/* the metadata every slice reads go to the reports that take
		 * them (stats_report_shardable) */
		stats_fanout_add(&s->fan, rec);
	}
	s->ok = slices_whole(s->r, rc);
	if (s->steps) cut_slice_end(&s->steps->c);
}

static void shard_free(struct shard *s, size_t nreps)
{
	for (size_t i = 0; s->self && i < nreps; i++)
		if (s->self[i] && stats_reports[i]->free) stats_reports[i]->free(s->self[i]);
	free(s->self);
	s->self = NULL;
	if (s->r) stats_ctx_free(&s->ctx);
	gp_reader_close(s->r);
	s->r = NULL;
}

/* Adds slice src (the next after dst's, and those merged into it) to dst
 * (the slice runner's merge). */
static void shard_merge(void *arg, int dst_ix, int src_ix)
{
	struct stats_shards *a = arg;
	struct shard *dst = &a->sh[dst_ix], *src = &a->sh[src_ix];
	dst->ok &= src->ok;
	dst->n += src->n;
	if (src->ctx.merge_lost) dst->ctx.merge_lost = 1; /* not damage: for --verbose */
	if (dst->ok) {
		/* the joins first: the operations whose call is on the other
		 * side of the cut go to dst's states before src's join them */
		stats_ctx_merge(&dst->ctx, &src->ctx, 1);
		for (size_t i = 0; i < a->nreps; i++)
			if (a->run[i] && stats_reports[i]->merge &&
			    stats_reports[i]->merge(dst->self[i], src->self[i], &dst->ctx) != 0)
				dst->ctx.merge_lost = 1;
		dst->ok = !dst->ctx.merge_lost;
	}
	shard_free(src, a->nreps);
}

/* The cuts of the steps' engines: the slices' starts and lead-ins. */
static void steps_cuts(struct stats_shards *a, const struct stats_ctx *ctx)
{
	a->cut_from = xcalloc((size_t)a->k, sizeof(*a->cut_from));
	a->cut_lead = xcalloc((size_t)a->k, sizeof(*a->cut_lead));
	for (int i = 1; i < a->k; i++) {
		uint64_t to;
		slices_bounds(a->cut, i, &a->cut_from[i], &to);
		a->cut_lead[i] = steps_slice_lead(ctx->pipe.detect, a->cut_from[i]);
	}
	a->cuts = (struct steps_cuts){ a->k, a->cut_from, a->cut_lead, ctx->steps_prefix };
}

struct stats_shards *stats_shards_start(const struct stats_ctx *ctx, const char *path, int k,
					const int *run, size_t nreps, uint32_t needs)
{
	struct slices *cut = slices_new(ctx->r, k);
	if (!cut) return NULL;
	struct stats_shards *a = xmalloc(sizeof(*a));
	*a = (struct stats_shards){ .main = ctx, .path = path, .run = run, .nreps = nreps, .needs = needs, .k = k,
				    .cut = cut, .board = xcalloc(nreps ? nreps : 1, sizeof(*a->board)) };
	for (size_t i = 0; i < nreps; i++) summary_board_init(&a->board[i], (size_t)k);
	a->sh = xcalloc((size_t)k, sizeof(*a->sh));
	if ((needs & STATS_NEED_STEPS_SLICED) && ctx->pipe.steps) steps_cuts(a, ctx);
	a->pass = (struct slice_pass){ a, shard_read, shard_merge };
	slices_start(cut, &a->pass);
	return a;
}

/* The slices' steps' engines into ctx->pipe.steps (steps_slice_merge).
 * 0, or -1 when a trace read again met damage. */
static int steps_merge(struct stats_shards *a, struct stats_ctx *ctx)
{
	struct opjoin_counts counts = { 0 };
	struct steps_slice **e = xcalloc((size_t)a->k, sizeof(*e));
	for (int i = 0; i < a->k; i++) {
		e[i] = a->sh[i].steps;
		a->sh[i].steps = NULL;
	}
	struct steps_slice_merged how;
	const struct stats_part *part = ctx->part;
	int rc = part ? part->merge(part->arg, (struct cut_slice **)e, &a->cuts, a->path, &counts, &how)
		      : steps_slice_merge(ctx->pipe.steps, &counts, e, &a->cuts, a->path, ctx->pipe.attr, &ctx->pipe.win, &how);
	free(e);
	ctx->steps_counts = counts;
	if (ctx->opts->verbose) {
		if (how.crossed)
			fprintf(stderr, "%s: the steps analysis: a source out of time order across a cut of the slices: "
				"read again on one thread\n", g_cmd);
		else if (how.again)
			fprintf(stderr, "%s: the steps analysis in %d slices: %d of them read again on one thread "
				"(where the slice's lead-in did not reach one pass's state)\n", g_cmd, a->k, how.again);
		else
			fprintf(stderr, "%s: the steps analysis in %d slices: each went on from the state the one "
				"before it ended in\n", g_cmd, a->k);
	}
	return rc;
}

int stats_shards_finish(struct stats_shards *a, struct stats_ctx *ctx, int meta, void **self,
			struct stats_shards_times *t)
{
	struct shard *s0 = &a->sh[0];
	slices_wait(a->cut);
	t->records = s0->n;
	slices_cpu(a->cut, &t->cpu_sum, &t->cpu_max);
	double t0 = mono_s();
	int ok = s0->ok;
	if (s0->ctx.merge_lost) ctx->merge_lost = 1; /* not damage: say so */
	if (ok && a->cuts.k && steps_merge(a, ctx) != 0) ok = 0;
	if (ok) {
		/* the end of the trace for the join, into slice 0's states (which
		 * hold every slice's now) */
		stats_ctx_end_join(&s0->ctx);
		stats_ctx_merge(ctx, &s0->ctx, meta); /* the stacks before the states' merges read them */
		for (size_t i = 0; i < a->nreps; i++) {
			if (!a->run[i] || !stats_reports[i]->new) continue;
			self[i] = stats_reports[i]->new(ctx);
			if (stats_reports[i]->merge && stats_reports[i]->merge(self[i], s0->self[i], ctx) != 0)
				ctx->merge_lost = 1;
		}
		ok = !ctx->merge_lost;
	}
	shard_free(s0, a->nreps);
	t->merge = mono_s() - t0;
	return ok ? 0 : -1;
}

void stats_shards_free(struct stats_shards *a)
{
	if (!a) return;
	slices_free(a->cut);
	for (int i = 0; i < a->k; i++) {
		shard_free(&a->sh[i], a->nreps);
		steps_slice_free(a->sh[i].steps);
	}
	free(a->cut_from);
	free(a->cut_lead);
	free(a->sh);
	for (size_t i = 0; i < a->nreps; i++) summary_board_free(&a->board[i]);
	free(a->board);
	free(a);
}

/* ------------------------------------------------------------ the GPU pass */

/* The deferred pass over the GPU operations: per slice, its busy
 * intervals and whether it was read whole. */
struct gpu_slices {
	struct stats_ctx *ctx;
	const char *path;
	const struct winset *clip;
	struct gpu_activity *g;
	int *ok;
};

static void gpu_slice_read(void *arg, int ix, uint64_t from, uint64_t to)
{
	struct gpu_slices *a = arg;
	struct gpu_activity *g = &a->g[ix];
	gp_reader *r = slices_open(a->path, from, to);
	if (!r) return;
	*g = (struct gpu_activity){ .clip = a->clip, .keep = a->ctx->gpu.keep, .bins = a->ctx->gpu.bins, .lag = a->ctx->gpu.lag,
				    .slice = from > 0 };
	const gp_record *rec;
	int rc;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		uint64_t t = gp_record_time(rec);
		if (rec->type == GP_REC_PROCESS || (t >= from && t < to)) stats_ctx_gpu_feed(a->ctx, g, r, rec);
	}
	a->ok[ix] = slices_whole(r, rc);
	g->clip = NULL;
	gp_reader_close(r);
}

int stats_shards_gpu_pass(struct stats_ctx *ctx, const struct winset *clip, struct stats_gpu_pass *p)
{
	struct slices *cut = p->k < 2 ? NULL : slices_new(ctx->r, p->k);
	if (!cut) return -1;
	int k = p->k, ok = 1;
	struct gpu_slices a = { ctx, p->path, clip, xcalloc((size_t)k, sizeof(*a.g)), xcalloc((size_t)k, sizeof(int)) };
	struct slice_pass pass = { &a, gpu_slice_read, NULL };
	double sum, max;
	slices_run(cut, &pass);
	slices_cpu(cut, &sum, &max);
	p->cpu_sum += sum;
	if (max > p->cpu_max) p->cpu_max = max;
	for (int i = 0; i < k; i++) {
		/* in time order; ctx->gpu holds nothing yet (gpu_later) */
		ok = ok && a.ok[i] && gpu_activity_merge(&ctx->gpu, &a.g[i]) == 0;
		gpu_activity_free(&a.g[i]);
	}
	free(a.g);
	free(a.ok);
	slices_free(cut);
	if (!ok && ctx->opts->verbose)
		fprintf(stderr, "%s: the pass over the GPU operations in slices met damage or could not merge "
			"exactly: read again on one thread\n", g_cmd);
	return ok ? 0 : -1;
}
