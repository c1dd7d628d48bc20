/* stats_selection.c — see stats_selection.h. */
#include "reports/stats_selection.h"

#include <stdio.h>
#include <string.h>

#include "analysis/core/slices.h"
#include "analysis/steps/step_index.h"
#include "common/tool.h"
#include "reports/stats_drive.h"
#include "reports/stats_prepass_shards.h"
#include "reports/stats_report.h"

/* A pre-pass that planned no process's steps by the trace method has
 * found every step */
static int nvtx_enough(const struct stats_ctx *ctx) { return !steps_pipe_trace_planned(&ctx->pipe); }

/* --steps in slices on g_threads: the steps analysis driven as `gpuprof
 * steps` drives it, whose pre-pass finds NVTX steps and plans the trace
 * method's; the run ends there unless some process's steps are the trace
 * method's, which its pass then finds in slices (a window's cost: the
 * trace read once before it, or twice; docs/PERFORMANCE.md).  pre_so: the
 * pre-pass's options.  1: not run (fall back), else
 * selection_resolve_pipe's. */
static int resolve_in_slices(struct selection *s, gp_reader *r, const char *path, const struct sel_opts *o,
			     const struct stats_opts *pre_so, const struct step_detect_opts *detect, char *err, size_t n)
{
	gp_reader *dr = tool_open_threads(path, g_threads);
	if (!dr) return 1;
	struct stats_opts so = *pre_so;
	so.whole_trace = 1;
	struct stats_drive d = { .r = dr, .path = path, .so = &so, .names = NAME_FULL, .threads = g_threads,
				 .keep_going = 1, .pre_enough = nvtx_enough };
	stats_drive_plan(&d);
	int code = EXIT_OK, rc = 1;
	if (stats_drive_run(&d, &code) == 0 && code == EXIT_OK && d.ctx.pipe.steps && !d.steps_err) {
		d.ctx.pipe.steps_done = !d.stopped_after_pre;
		rc = selection_resolve_pipe(s, r, o, &d.ctx.pipe, detect, err, n);
	}
	dr = d.r; /* (the drive's plan may have opened another) */
	stats_drive_free(&d);
	gp_reader_close(dr);
	return rc;
}

/* --steps from the steps' index a run before kept (step_index.h): 1 when
 * there is none or it cannot be read (s left free), else
 * selection_resolve_index's */
static int from_index(struct selection *s, gp_reader *r, const char *path, const struct sel_opts *o,
		      const struct step_detect_opts *detect, char *err, size_t n)
{
	struct step_index *ix = step_index_open(path, r, ATTR_ANY_THREAD, detect);
	if (!ix) return 1;
	int rc = selection_resolve_index(s, r, o, ix, detect, err, n);
	step_index_close(ix);
	if (rc != -1) return rc;
	selection_free(s);
	return 1;
}

int stats_selection_resolve(struct selection *s, gp_reader *r, const char *path, const struct sel_opts *o,
			    const struct step_detect_opts *detect)
{
	char err[512];
	int rc = 1; /* 1: not resolved yet: from a read of the trace, below */
	if (!o->have_steps && !o->range)
		rc = selection_resolve_pipe(s, r, o, NULL, detect, err, sizeof(err));
	else if (!o->range)
		rc = from_index(s, r, path, o, detect, err, sizeof(err)); /* the steps as a run before found them */
	if (rc == 1) {
		rc = 0;
		/* the context's pipe: every range, any thread, detection only for
		 * --steps */
		struct stats_opts so = { .rule = ATTR_ANY_THREAD }; /* detection: the defaults */
		if (detect) so.detect = *detect;
		struct selection none = { 0 };
		struct stats_ctx ctx;
		uint32_t needs = o->have_steps ? STATS_NEED_STEPS : STATS_NEED_RANGES;
		struct stats_prepass_cpu cpu;
		const char *why = NULL;
		int sliced = slices_count(r, path, g_threads) >= 2;
		if (sliced && o->have_steps) {
			if ((rc = resolve_in_slices(s, r, path, o, &so, detect, err, sizeof(err))) != 1) goto out;
			rc = 0;
			sliced = 0; /* it did not run: the pre-pass on one thread, as below */
		}
		stats_ctx_init(&ctx, r, &so, needs, &none, 0);
		if (sliced) sliced = stats_prepass_shards(&ctx, path, g_threads, NULL, NULL, &cpu, &why) == 0;
		if (!sliced) {
			/* not cut, or detection failed: pass 1 on one thread, whose
			 * detection (steps_intervals) says why */
			stats_ctx_free(&ctx);
			stats_ctx_init(&ctx, r, &so, needs, &none, 0);
			if (!gp_reader_recoverable(rc = steps_pipe_pass(&ctx.pipe, 1)))
				snprintf(err, sizeof(err), "cannot read the trace: %s", gp_strerror(rc));
			else
				steps_pipe_plan_ranges(&ctx.pipe);
		}
		int read_rc = rc;
		rc = gp_reader_recoverable(rc) ? selection_resolve_pipe(s, r, o, &ctx.pipe, detect, err, sizeof(err)) : -1;
		/* the steps found here, for the next window (step_index.h) */
		if (rc == 0 && !read_rc && o->have_steps && ctx.pipe.steps)
			step_index_save(path, r, &ctx.pipe, ATTR_ANY_THREAD, detect, 0);
		stats_ctx_free(&ctx);
	}
out:
	if (rc >= 0) return EXIT_OK;
	selection_free(s);
	return tool_fail(rc == SELECTION_NONE ? EXIT_USAGE : EXIT_BADINPUT, "%s", err);
}
