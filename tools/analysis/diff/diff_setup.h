/* diff_setup.h — what differs between the runs of side A and those of side
 * B besides their timing, for the first words of `gpuprof diff`'s headline
 * (docs/REPORT.md, "What differs"): the command line (option by option),
 * the tracer's settings (word by word), the number of processes in the
 * trace and of threads that recorded something, and the kernel set (the
 * kernels launched in every run of one side and in no run of the other).
 *
 * An item differs when every run of A has one value for it (or none has
 * it), every run of B has one value, and the two differ; an item whose
 * value changes between the runs of one side "varies" (a seed, an output
 * path) and is not named as the change. */
#ifndef GPUPROF_ANALYSIS_DIFF_DIFF_SETUP_H
#define GPUPROF_ANALYSIS_DIFF_DIFF_SETUP_H

#include <stddef.h>

#include "analysis/steps/step_profile.h"
#include "common/report.h"

struct diff_pair;
struct diff_side;

#define DIFF_KSET_PCT 5.0  /* own kernels named when one side's take >= this % of its kernel time */

/* One line naming what differs ("--amp bf16 added; kernels only in A: ...")
 * into buf (empty when nothing differs), and one row per item that differs
 * or varies into t (the diff_setup table). */
void diff_setup_compare(const struct diff_pair *d, char *buf, size_t n, struct report *t);

/* List k (SP_KERNEL, ...) of a side's profiles summed over its runs, by
 * name (names borrowed); runs[i]: in how many runs v[i] is; ns: of all. */
struct side_list { strmap idx; struct sp_entry *v; size_t *runs; size_t n, cap, crun; uint64_t ns; };
void side_list_fill(struct side_list *l, const struct diff_side *s, int k);
void side_list_free(struct side_list *l);

/* A kernel name cut for a headline: without a leading "void " and the
 * parameter list, at most 60 characters ("..." when cut). */
void diff_short_name(const char *name, char *buf, size_t n);

#endif
