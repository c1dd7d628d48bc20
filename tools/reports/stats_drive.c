/* stats_drive.c — see stats_drive.h. */
#include "reports/stats_drive.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/testenv.h"
#include "analysis/steps/step_index.h"
#include "common/tool.h"
#include "reports/stats_shards.h"

/* The pre-pass (stats_report.h), in k slices when k > 1 and the trace
 * allows (stats_prepass_shards.h; cpu: their CPU seconds), else on this
 * thread, with the caller's consumer of it; EXIT_OK, or the exit code
 * after the message. */
static int prepass(struct stats_drive *d, int k)
{
	struct stats_ctx *ctx = &d->ctx;
	gp_reader *r = d->r;
	struct stats_prepass_cpu *cpu = &d->pt.pre;
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	const char *err = NULL;
	/* tests: on this thread whatever k, for the steps' prefix of one
	 * pass's read to compare with the slices' */
	if (k > 1 && testenv(TESTENV_PREPASS_ONE_THREAD, NULL) &&
	    (rc = stats_prepass_shards(ctx, d->path, k, d->pre, d->pre_st, cpu, &err)) <= 0) {
		if (rc == 0) return EXIT_OK;
		goto failed;
	}
	if (d->pre) {
		/* not cut: the merges may have begun */
		d->pre->free(d->pre_st);
		d->pre_st = d->pre->new(d->pre->arg, 0);
	}
	cpu->k = 0;
	double c0 = thread_cpu_s();
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		stats_ctx_pre_add(ctx, rec);
		if (d->pre) d->pre->add(d->pre_st, r, rec);
		progress_tick(++n);
	}
	/* a truncated or corrupt trace is read again and judged after the main pass */
	if (!gp_reader_recoverable(rc))
		return tool_finish(r, d->path, rc, d->strict);
	if (stats_ctx_pre_finish(ctx, NULL, NULL, &err) < 0) goto failed;
	cpu->here = thread_cpu_s() - c0;
	goto rewind;
failed:
	/* the step detection failed (--step-range names no range) */
	d->steps_err = err;
	if (!d->keep_going) tool_err("%s", err);
	if (d->keep_going != 1) return EXIT_BADINPUT;
rewind:
	if (gp_reader_rewind(r) < 0) {
		tool_err("cannot read %s again", d->path);
		return EXIT_BADINPUT;
	}
	return EXIT_OK;
}

/* stats_pass's verdicts besides an exit code */
enum { PASS_GO, PASS_STOP, PASS_DAMAGED, PASS_PRE_ENOUGH };

/* The context, the report states (self) of every report run: the
 * pre-pass and the pass here for the reports not in shards, beside the
 * shards' threads, then their merge, then stats_ctx_finish.  *code: the
 * exit code so far.  PASS_GO: fill and print; PASS_STOP: nothing to print
 * (message given); PASS_DAMAGED: a shard met damage (nothing said yet:
 * the caller reads the trace again on one thread). */
static int stats_pass(struct stats_drive *d, int nshards, int gpu_threads, int *code)
{
	struct stats_ctx *ctx = &d->ctx;
	struct stats_phase_times *pt = &d->pt;
	void **self = d->self;
	uint32_t needs = 0, shard_needs = 0;
	/* made here at the end from what the shards merged: the span; the
	 * stacks (a slice's, taken by the table the states here were made
	 * with); the steps (their plans from the pre-pass here) and the busy
	 * intervals clipped to their span (stats_shard_end_needs) */
	uint32_t end_needs = STATS_NEED_SPAN | STATS_NEED_STACKS | (nshards ? stats_shard_end_needs(d->shard_needs) : 0);
	int *here = xcalloc(d->nreps ? d->nreps : 1, sizeof(*here));
	for (size_t i = 0; i < d->nreps; i++) {
		if (!d->run[i]) continue;
		shard_needs |= stats_reports[i]->needs & d->shard_needs;
		if (!nshards || !d->sharded[i]) {
			here[i] = 1;
			needs |= stats_reports[i]->needs;
			pt->serial++;
		} else {
			shard_needs |= stats_reports[i]->needs & STATS_SHARD_JOIN_NEEDS;
			needs |= stats_reports[i]->needs & end_needs;
		}
	}
	/* with shards, they compute the analyses they can for every report
	 * (the reports here read them only in fill); what their joins need of
	 * the pre-pass is made here first: the ranges, the windows */
	if (nshards) needs &= ~(d->shard_needs & ~(uint32_t)(STATS_NEED_SPAN | STATS_NEED_STACKS));
	/* the steps run in the shards when every report that needs them does
	 * (all can, with shards: stats_shard_end_needs) */
	int steps_here = (needs & STATS_NEED_STEPS) ||
			 ((needs & STATS_NEED_SPAN) && !d->sel->active && !d->so->whole_trace);
	int sliced = nshards && steps_here && (d->shard_needs & STATS_NEED_STEPS_SLICED);
	for (size_t i = 0; sliced && i < d->nreps; i++)
		if (here[i] && (stats_reports[i]->needs & (STATS_NEED_STEPS | STATS_NEED_SPAN))) sliced = 0;
	if (sliced) {
		needs |= STATS_NEED_STEPS | STATS_NEED_STEPS_SLICED;
		shard_needs |= STATS_NEED_STEPS_SLICED;
	}
	if (shard_needs & STATS_NEED_RANGES) needs |= STATS_NEED_RANGES;
	if (shard_needs & STATS_NEED_OPS) needs |= STATS_NEED_PREJOIN;
	/* the caller's consumer of the pre-pass sets what the pass reads
	 * (ready) before any slice starts */
	int pre_first = (shard_needs & STATS_SHARD_JOIN_NEEDS) || sliced || d->pre;
	stats_ctx_init(ctx, d->r, d->so, needs, d->sel, d->abs_time);
	ctx->names = d->names;
	if (d->pre) d->pre_st = d->pre->new(d->pre->arg, 0);
	/* the steps' engines start from what one pass has read by their cuts */
	if (sliced) ctx->steps_prefix = steps_prefix_slices(d->r, nshards);
	else if (d->want_prefix && gpu_threads) ctx->steps_prefix = steps_prefix_slices(d->r, gpu_threads);
	pt->gpu = (struct stats_gpu_pass){ d->path, gpu_threads, 0, 0 };
	if (gpu_threads) ctx->gpu_slices = &pt->gpu;
	struct stats_shards *sh = NULL;
	int rc = 0, verdict = PASS_GO;
	uint64_t n = 0;
	double t0 = mono_s(), t1 = t0, ts = t0;
	/* the shards start beside the pre-pass, or after it when they need it */
	for (int pre = 0; pre < 2; pre++) {
		if (pre == pre_first && nshards) {
			ts = mono_s();
			sh = stats_shards_start(ctx, d->path, nshards, d->sharded, d->nreps, shard_needs);
			if (!sh) {
				verdict = PASS_DAMAGED;
				goto out;
			}
			pt->nshards = nshards;
		}
		if (pre == 0 && (stats_ctx_prepass(ctx) || d->pre) && (pt->serial || pre_first)) {
			if ((*code = prepass(d, gpu_threads)) != EXIT_OK) {
				verdict = PASS_STOP;
				goto out;
			}
			t1 = mono_s();
			pt->prepass = t1 - t0;
			if (!testenv(TESTENV_PREPASS_DUMP, NULL)) stats_prepass_dump(ctx, stderr);
			if (d->pre && d->pre->ready) d->pre->ready(d->pre->arg, d->pre_st, ctx);
			if (!sh && d->pre_enough && d->pre_enough(ctx)) {
				verdict = PASS_PRE_ENOUGH;
				goto out;
			}
		}
	}
	struct stats_fanout fan;
	int here_pass = pt->serial;
	if (here_pass) {
		for (size_t i = 0; i < d->nreps; i++)
			if (here[i] && stats_reports[i]->new) self[i] = stats_reports[i]->new(ctx);
		stats_fanout_attach(&fan, ctx, self, here);
		/* the caller's part beside the steps here, unless in the shards */
		const struct stats_part *part = ctx->part && !(sh && (shard_needs & STATS_NEED_STEPS_SLICED)) ? ctx->part : NULL;
		struct cut_slice *e = part ? part->make(part->arg, d->r, &steps_cuts_one, 0, 0) : NULL;
		const gp_record *rec;
		while ((rc = gp_reader_next_ordered(d->r, &rec)) > 0) {
			stats_fanout_add(&fan, rec);
			if (e) cut_slice_add(e, rec);
			progress_tick(++n);
		}
		if (e) {
			cut_slice_end(e);
			part->merge(part->arg, &e, &steps_cuts_one, d->path, NULL, NULL);
		}
		pt->pass = mono_s() - t1;
	}
	if (sh) {
		int ok = stats_shards_finish(sh, ctx, !here_pass, self, &pt->sh) == 0;
		pt->shards = mono_s() - ts;
		stats_shards_free(sh);
		sh = NULL;
		if (!ok) {
			verdict = PASS_DAMAGED;
			goto out;
		}
	}
	d->read_rc = rc;
	*code = tool_finish(d->r, d->path, rc, d->strict);
	if (!gp_reader_recoverable(rc) && n == 0 && here_pass) {
		verdict = PASS_STOP;
		goto out;
	}
	double t2 = mono_s();
	stats_ctx_finish(ctx);
	pt->finish = mono_s() - t2;
out:
	if (d->want_prefix && verdict == PASS_GO) d->prefix = ctx->steps_prefix;
	else steps_prefix_free(ctx->steps_prefix);
	ctx->steps_prefix = NULL;
	ctx->gpu_slices = NULL;
	/* the fan-out lives here: nothing joins operations after finish */
	ctx->on_op = NULL;
	ctx->on_call = NULL;
	ctx->on_arg = NULL;
	stats_shards_free(sh);
	free(here);
	return verdict;
}

void stats_drive_malloc(void)
{
#ifdef M_MMAP_THRESHOLD
	/* Blocks of 1 MiB or more (the readers' chunks, the unions' pending
	 * intervals, the tables' values) are mapped and go back to the system
	 * when freed.  glibc raises its threshold after the first such free,
	 * and then the arenas of the slices' threads keep what the slices
	 * freed: at 1e8 events on 16 threads, 643 MiB peak RSS against 410
	 * (docs/PERFORMANCE.md). */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

void stats_drive_plan(struct stats_drive *d)
{
	d->nreps = 0;
	while (stats_reports[d->nreps]) d->nreps++;
	size_t nr = d->nreps ? d->nreps : 1;
	if (!d->sel) {
		selection_none(&d->none, d->r);
		d->sel = &d->none;
	}
	if (!d->run) {
		d->run = d->steps_alone = xcalloc(nr, sizeof(*d->steps_alone));
		for (size_t i = 0; i < d->nreps; i++) d->steps_alone[i] = !strcmp(stats_reports[i]->tables[0].name, "steps");
	}
	d->self = xcalloc(nr, sizeof(*d->self));
	d->sharded = xcalloc(nr, sizeof(*d->sharded));
	/* threads > 1: the reports that can run in shards do, on that many
	 * threads (one less when some report runs here, beside them) */
	int nserial = 0, nsharded = 0;
	uint32_t shard_needs = 0, run_needs = 0;
	for (size_t i = 0; i < d->nreps; i++)
		if (d->run[i]) run_needs |= stats_reports[i]->needs;
	d->shard_needs = stats_shard_needs(d->r, d->so, d->sel, run_needs);
	for (size_t i = 0; i < d->nreps; i++) {
		if (!d->run[i]) continue;
		d->sharded[i] = d->threads > 1 && stats_report_shardable(stats_reports[i], d->r, d->shard_needs);
		nsharded += d->sharded[i];
		nserial += !d->sharded[i];
		shard_needs |= stats_reports[i]->needs & d->shard_needs & ~(uint32_t)STATS_NEED_SPAN;
	}
	/* shards also compute the analyses that merge (kernel shapes,
	 * counters) for the reports that run here */
	d->nshards = d->threads > 1 && (nsharded || shard_needs) ?
		slices_count(d->r, d->path, nserial ? d->threads - 1 : d->threads) : 0;
	if (!d->nshards) memset(d->sharded, 0, nr * sizeof(*d->sharded));
	/* the shards decode their slices themselves: the driver's reader (its
	 * pre-pass, the pass beside them) keeps a few decoding threads, not N
	 * (each holds ~3 chunks of records: ~65 MiB more at 16) */
	if (d->nshards && gp_reader_threads(d->r) > STATS_DRIVER_THREADS) {
		gp_reader *few = tool_open_threads(d->path, STATS_DRIVER_THREADS);
		if (few) {
			gp_reader_close(d->r);
			d->r = few;
		}
	}
	/* the pass over the GPU operations that util's span of the steps
	 * defers to the end, and the pre-pass: in slices too, on every thread */
	d->gpu_threads = d->threads > 1 ? slices_count(d->r, d->path, d->threads) : 0;
}

void stats_drive_fill(struct stats_drive *d, int chosen, struct report *tab, int *want)
{
	size_t k = 0;
	for (size_t i = 0; i < d->nreps; i++) {
		const struct stats_report *rep = stats_reports[i];
		int needed = 0;
		for (int j = 0; j < rep->ntables; j++, k++) {
			report_init(&tab[k], rep->tables[j].name);
			/* the default set: every table of the reports that say they
			 * belong (by-name tables only when an option asked for them) */
			if (!chosen && d->run[i] && (!(rep->by_name & (1u << j)) || want[k]))
				want[k] = !rep->in_default || rep->in_default(d->self[i], &d->ctx);
			needed |= want[k];
		}
		/* a report's tables are adjacent */
		if (needed) rep->fill(d->self[i], &d->ctx, &tab[k - (size_t)rep->ntables]);
	}
}

/* What a run made, for another. */
static void drive_clear(struct stats_drive *d)
{
	for (size_t i = 0; i < d->nreps; i++)
		if (d->self[i] && stats_reports[i]->free) stats_reports[i]->free(d->self[i]);
	memset(d->self, 0, (d->nreps ? d->nreps : 1) * sizeof(*d->self));
	if (d->pre && d->pre_st) d->pre->free(d->pre_st);
	d->pre_st = NULL;
	d->steps_err = NULL;
	stats_ctx_free(&d->ctx);
}

int stats_drive_run(struct stats_drive *d, int *code)
{
	int verdict = stats_pass(d, d->nshards, d->gpu_threads, code);
	if (verdict == PASS_DAMAGED) {
		/* a damaged trace is read on one thread, for the messages and
		 * exit status of --threads 1; so is one whose merge at a cut
		 * could not be exact (stats_ctx.merge_lost) */
		if (d->so->verbose && d->ctx.merge_lost)
			fprintf(stderr, "%s: a merge of two slices could not give the figures of one pass: "
				"read again on one thread\n", g_cmd);
		drive_clear(d);
		gp_reader_rewind(d->r);
		memset(&d->pt, 0, sizeof(d->pt));
		verdict = stats_pass(d, 0, 0, code);
	}
	d->stopped_after_pre = verdict == PASS_PRE_ENOUGH;
	if (verdict != PASS_GO && verdict != PASS_PRE_ENOUGH) return -1;
	/* the steps of the whole trace, kept for the next --steps window */
	if (d->ctx.pipe.steps && !d->steps_err && !d->sel->active && !d->read_rc)
		step_index_save(d->path, d->r, &d->ctx.pipe, d->so->rule, &d->so->detect, d->so->verbose);
	return 0;
}

void stats_drive_free(struct stats_drive *d)
{
	if (d->self) drive_clear(d);
	free(d->self);
	free(d->sharded);
	free(d->steps_alone);
	selection_free(&d->none);
}
