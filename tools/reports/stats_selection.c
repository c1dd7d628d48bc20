/* stats_selection.c — see stats_selection.h. */
#include "reports/stats_selection.h"

#include <string.h>

#include "analysis/core/slices.h"
#include "common/tool.h"
#include "reports/stats_prepass_shards.h"
#include "reports/stats_report.h"

int stats_selection_resolve(struct selection *s, gp_reader *r, const char *path, const struct sel_opts *o,
			    const struct step_detect_opts *detect)
{
	char err[512];
	int rc;
	if ((!o->have_steps && !o->range) || slices_count(r, path, g_threads) < 2) {
		rc = selection_resolve(s, r, o, detect, err, sizeof(err));
	} else {
		/* the context's pipe as selection_resolve makes its own: every
		 * range, any thread, detection only for --steps */
		struct stats_opts so = { .rule = ATTR_ANY_THREAD }; /* detection: the defaults */
		if (detect) so.detect = *detect;
		struct selection none = { 0 };
		struct stats_ctx ctx;
		stats_ctx_init(&ctx, r, &so, o->have_steps ? STATS_NEED_STEPS : STATS_NEED_RANGES, &none, 0);
		struct stats_prepass_cpu cpu;
		const char *why = NULL;
		if (stats_prepass_shards(&ctx, path, g_threads, NULL, NULL, &cpu, &why) == 0)
			rc = selection_resolve_pipe(s, r, o, &ctx.pipe, detect, err, sizeof(err));
		else /* not cut, or detection failed: one thread's read says why */
			rc = selection_resolve(s, r, o, detect, err, sizeof(err));
		stats_ctx_free(&ctx);
	}
	if (rc >= 0) return EXIT_OK;
	selection_free(s);
	return tool_fail(rc == SELECTION_NONE ? EXIT_USAGE : EXIT_BADINPUT, "%s", err);
}
