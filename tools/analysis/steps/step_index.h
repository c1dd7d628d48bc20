/* step_index.h — a trace's steps as `--steps A:B` numbers them (per
 * process: number, start, end), kept between runs in a cache directory,
 * so that a window of steps reads only its own chunks: finding the steps
 * reads the whole trace (twice for the trace method's), and a user picks
 * a window after `gpuprof steps` has found them (nsys keeps its SQLite
 * export beside a report the same way).
 *
 * The directory: GPUPROF_CACHE_DIR (gp_settings.h; "off" or empty: no
 * index), else $XDG_CACHE_HOME/gpuprof, else $HOME/.cache/gpuprof.  One
 * file per trace file (its device and inode), replaced when the steps of
 * that file are found again; where the directory's pass 256 MiB
 * together, the least recently used (written or read) go.  An index is
 * used only where everything its steps depend on is as when it was
 * written: the trace file (size, modification time, header start,
 * footer), the gpuprof executable (size and modification time: a build
 * that finds steps otherwise misses it), the detection options and the
 * attribution rule.  Only a cleanly closed trace read without damage is
 * indexed.  Failing to read or write an index is never an error: the
 * steps are found as without one. */
#ifndef GPUPROF_ANALYSIS_STEPS_STEP_INDEX_H
#define GPUPROF_ANALYSIS_STEPS_STEP_INDEX_H

#include <stddef.h>

#include "gp_trace.h"
#include "analysis/join/attribution.h"
#include "analysis/steps/step_detect.h"
#include "analysis/steps/steps_pipe.h"

struct step_index;

/* The steps of p of the trace at path, read through r, found with rule
 * and detect (NULL: the defaults), into the index; nothing where the
 * trace method's steps have not had their pass (steps_done).  verbose: a
 * line on stderr when it could not be written. */
void step_index_save(const char *path, gp_reader *r, struct steps_pipe *p, enum attr_rule rule,
		     const struct step_detect_opts *detect, int verbose);
/* The index of the trace at path (r: its reader) made with rule and
 * detect, or NULL (none, another's, or unusable). */
struct step_index *step_index_open(const char *path, gp_reader *r, enum attr_rule rule,
				   const struct step_detect_opts *detect);
/* How many processes had a plan (step detection's) */
size_t step_index_nplans(const struct step_index *ix);
/* Each step in the order steps_pipe_bounds gives them: 0, or -1 when the
 * file could not be read whole (fn may have been called). */
int step_index_bounds(struct step_index *ix, steps_bound_fn fn, void *arg);
void step_index_close(struct step_index *ix); /* NULL ok */

#endif
