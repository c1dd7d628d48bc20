/* stats_selection.c — see stats_selection.h. */
#include "reports/stats_selection.h"

#include <stdio.h>
#include <string.h>

#include "analysis/core/slices.h"
#include "common/tool.h"
#include "reports/stats_prepass_shards.h"
#include "reports/stats_report.h"

int stats_selection_resolve(struct selection *s, gp_reader *r, const char *path, const struct sel_opts *o,
			    const struct step_detect_opts *detect)
{
	char err[512];
	int rc = 0;
	if (!o->have_steps && !o->range) {
		rc = selection_resolve_pipe(s, r, o, NULL, detect, err, sizeof(err));
	} else {
		/* the context's pipe: every range, any thread, detection only for
		 * --steps */
		struct stats_opts so = { .rule = ATTR_ANY_THREAD }; /* detection: the defaults */
		if (detect) so.detect = *detect;
		struct selection none = { 0 };
		struct stats_ctx ctx;
		uint32_t needs = o->have_steps ? STATS_NEED_STEPS : STATS_NEED_RANGES;
		stats_ctx_init(&ctx, r, &so, needs, &none, 0);
		struct stats_prepass_cpu cpu;
		const char *why = NULL;
		if (slices_count(r, path, g_threads) < 2 ||
		    stats_prepass_shards(&ctx, path, g_threads, NULL, NULL, &cpu, &why) != 0) {
			/* not cut, or detection failed: pass 1 on one thread, whose
			 * detection (steps_intervals) says why */
			stats_ctx_free(&ctx);
			stats_ctx_init(&ctx, r, &so, needs, &none, 0);
			if (!gp_reader_recoverable(rc = steps_pipe_pass(&ctx.pipe, 1)))
				snprintf(err, sizeof(err), "cannot read the trace: %s", gp_strerror(rc));
			else
				steps_pipe_plan_ranges(&ctx.pipe);
		}
		rc = gp_reader_recoverable(rc) ? selection_resolve_pipe(s, r, o, &ctx.pipe, detect, err, sizeof(err)) : -1;
		stats_ctx_free(&ctx);
	}
	if (rc >= 0) return EXIT_OK;
	selection_free(s);
	return tool_fail(rc == SELECTION_NONE ? EXIT_USAGE : EXIT_BADINPUT, "%s", err);
}
