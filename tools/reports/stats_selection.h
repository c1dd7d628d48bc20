/* stats_selection.h — a selection (analysis/steps/selection.h) whose --steps or
 * --range reads the trace first, with that read in slices of time on k
 * threads, then the intervals from it (selection_resolve_pipe).  The
 * windowed commands (`export --steps A:B`, `dump --steps A:B`) read the
 * selection's chunks only; this read of the whole trace before was what
 * such a window cost.
 *
 * --range: the pre-pass of `stats --threads` (stats_prepass_shards.h: the
 * NVTX ranges, merged into exactly what one thread makes).  --steps: the
 * steps analysis driven as `gpuprof steps` drives it (stats_drive.h),
 * whose pre-pass finds NVTX steps and plans the trace method's (no NVTX);
 * it ends after the pre-pass unless some process's steps are the trace
 * method's, which its pass then finds in slices (the trace read twice).
 *
 * Where the read is not cut (k < 2, no footer, damage, an error or a
 * failed detection) the context's pass 1 runs on one thread (then the
 * trace method's pass), and the detection's message is
 * selection_resolve_pipe's. */
#ifndef GPUPROF_REPORTS_STATS_SELECTION_H
#define GPUPROF_REPORTS_STATS_SELECTION_H

#include <stddef.h>

#include "analysis/steps/selection.h"

/* The selection of o over the trace at path that r reads, in g_threads
 * slices: EXIT_OK, or the exit code after the message (EXIT_USAGE: no
 * such step or range; EXIT_BADINPUT), s freed. */
int stats_selection_resolve(struct selection *s, gp_reader *r, const char *path, const struct sel_opts *o,
			    const struct step_detect_opts *detect);

#endif
