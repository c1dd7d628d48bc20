/* steps_slice.h — the steps analysis' second pass (the launch join,
 * opjoin.h, feeding the per-step engine, steps.h) in slices of time, with
 * the figures of one pass (`stats --threads N`, reports/stats_shards.h;
 * how: docs/CLI.md "Threads").  Slice i's fresh engine reads from its
 * lead-in, lead[i] <= from[i], and notes its state at its first record at
 * or after from[i] (its mark, record r), where slice i - 1 stops; equal
 * states (and steps_fresh_ok): slice i goes on from r as one pass would,
 * else slice i - 1's engine reads slice i's records itself
 * (cut_slice_merge).
 *
 * What makes a fresh engine's state equal to one pass's (rules the
 * comparison checks, not assumes):
 *  - a GPU operation of the lead-in whose call lies before it never pairs:
 *    the join's frontier does not wait for one that starts before from[i],
 *    and at the mark those still waiting are dropped (one pass had paired
 *    them: its join must hold no waiting operation at r);
 *  - the NVTX steps that ended before the lead-in are not made;
 *  - the slack after a step's end is the longest operation one pass has
 *    seen so far, maybe long before the lead-in: one pass's reading before
 *    the engines (the caller's pre-pass) notes, per process, the longest
 *    GPU operation read before each cut (steps_prefix), and a slice starts
 *    from it (one pass has delivered every operation it read by then, or
 *    its join holds a waiting operation and the states differ);
 *  - a thread's last synchronising call (runtime and driver records of one
 *    call are counted once) may lie before the lead-in: the threads first
 *    seen after the mark are checked against one pass's at r.
 * The order of the stream must be one pass's too.  A slice's reader gives
 * the records of its window in the order of a whole read, so both slices
 * find r (the one before stops at the first record in [from[i], from[i] +
 * STEPS_SLICE_STOP_NS): r, unless no record is timed there).  What is left
 * is a source out of time order across a cut: one pass reads after r a
 * record that slice i does not (timed before its lead-in), or, where no
 * record is timed in [from[i], from[i] + STEPS_SLICE_STOP_NS) before r (a
 * gap), one the slice before cannot place.  A record is read after r only
 * where its source holds a record timed after it earlier (the reader
 * merges the sources by their heads' times), so every slice notes, per
 * source, a record timed before one read earlier in it (CUPTI's late
 * buffers; a runtime call's record after its driver call's), and
 * cut_slice_merge says whether such a pair makes cut c unsure: the earlier
 * at or after from[c] and the later before lead[c]; or, where slice c met
 * a gap (cut_slice.gap), the pair spans from[c] + STEPS_SLICE_STOP_NS.
 * Then the caller runs one engine over the whole trace.
 *
 * Memory: a slice's engine holds what one pass holds at its cut (the
 * join's lag, the steps not finalized) plus the rows it finalized until
 * the merge takes them (steps_take), and its states at the mark
 * and at its end (the same things, as bytes). */
#ifndef GPUPROF_ANALYSIS_STEPS_STEPS_SLICE_H
#define GPUPROF_ANALYSIS_STEPS_STEPS_SLICE_H

#include <stdint.h>
#include <stdio.h>

#include "gp_trace.h"
#include "analysis/join/attribution.h"
#include "analysis/join/opjoin.h"
#include "analysis/steps/steps.h"
#include "analysis/gpu/windows.h"
#include "common/util.h"

/* Per cut and process, the longest GPU operation read before the cut's
 * first API or GPU record (the first in the order of one pass timed at
 * or after the cut; a cut no such record reaches has none): fed every
 * record in the order of one pass (the pre-pass) before the slices start,
 * or set from the pre-pass' slices (reports/stats_prepass_prefix.h). */
struct steps_prefix;
void steps_prefix_add(struct steps_prefix *pf, gp_reader *r, const gp_record *rec);
void steps_prefix_free(struct steps_prefix *pf); /* NULL ok */
/* The cuts: k, and *from the cuts' times (from[0] = 0). */
int steps_prefix_cuts(const struct steps_prefix *pf, const uint64_t **from);
/* Whether rec is a GPU operation the prefix counts (a kernel, copy or
 * set), and then *dur its length (0 when it ends before it starts). */
int steps_prefix_op(const gp_record *rec, uint64_t *dur);
/* Cut c (1 <= c < k) has read an operation of pid ns long (the longest
 * kept; the process is noted even at 0). */
void steps_prefix_raise(struct steps_prefix *pf, int c, uint32_t pid, uint64_t ns);
/* Cut c has read an API call ns long. */
void steps_prefix_raise_call(struct steps_prefix *pf, int c, uint64_t ns);
/* At cut c (1 <= c < k; others 0): the longest GPU operation of pid, and
 * the longest API call of any process, read before it (advise's facts
 * slices, advise_slice.h, start from them as the steps' do). */
uint64_t steps_prefix_longest(const struct steps_prefix *pf, int c, uint32_t pid);
uint64_t steps_prefix_longest_call(const struct steps_prefix *pf, int c);
/* Tests: "prepass prefix cut C pid P longest NS", per cut by pid, then
 * "prepass prefix cut C call longest NS". */
void steps_prefix_print(const struct steps_prefix *pf, FILE *f);

/* The cuts, shared read-only by the slices; slice i stops at the first
 * record in [from[i+1], from[i+1] + STEPS_SLICE_STOP_NS). */
#define STEPS_SLICE_STOP_NS 10000000ull
struct steps_cuts {
	int k;                /* slices */
	const uint64_t *from; /* slice i's own records start at from[i] (from[0] = 0) */
	const uint64_t *lead; /* its engine reads from lead[i] <= from[i] on (lead[0] = 0) */
	const struct steps_prefix *prefix; /* the longest operations before each cut (NULL: none) */
};
/* The cuts of one slice: the whole trace, no prefix. */
extern const struct steps_cuts steps_cuts_one;

/* Per source, the latest time a slice read: a record timed before an
 * earlier one of its source (CUPTI's late buffers; a runtime call's record
 * after its driver call's) marks the cuts the pair makes unsure (see
 * above; cut_slice_merge). */
struct slice_order {
	uint64_t *srcmax; size_t nsrc; /* per source: the latest time read (+ 1; 0: none) */
	uint8_t *lead_crossed;    /* per cut c: a pair of one source, the earlier at or after
				   * from[c], the later before lead[c] */
	uint8_t *stop_crossed;    /* per cut c: a pair that spans from[c] + STEPS_SLICE_STOP_NS */
};

/* How the slices' engines were merged. */
struct steps_slice_merged {
	int crossed;   /* a source out of time order across a cut: one engine read the whole trace */
	int again;     /* slices whose lead-in did not reach one pass's state: read again by the one before */
};

/* A slice's engine of a pass in slices (the steps', below; advise's
 * facts, analysis/advise/advise_slice.h): the launch join feeding the
 * engine's parts, which a struct embedding struct cut_slice first holds,
 * and what the slices do with it (lead-in, mark, stop, the order checks,
 * the merge) written once here.  eng: what the parts do: feed one API or
 * GPU record (through s->j, advancing s->now), drop what came before the
 * mark, append their state (what decides what they do from here on, at
 * cut), finish (the last slice), take a new reader, whether a next
 * slice's parts start as these ended beyond the states (NULL: the states
 * alone), add their results since the mark or the last take to sum (and
 * the join's counts, counts may be NULL), free themselves. */
struct cut_slice;
struct cut_engine {
	void (*feed)(struct cut_slice *s, const gp_record *rec);
	void (*mark)(struct cut_slice *s);
	void (*state)(const struct cut_slice *s, struct bytes *b, int cut);
	void (*finish)(struct cut_slice *s);
	void (*reader)(struct cut_slice *s, gp_reader *r);
	int (*same)(const struct cut_slice *before, const struct cut_slice *s);
	void (*take)(void *sum, struct opjoin_counts *counts, struct cut_slice *s);
	void (*free)(struct cut_slice *s);
};
struct cut_slice {
	const struct cut_engine *eng;
	gp_reader *r;             /* the reader it is fed from (names, processes, threads) */
	struct opjoin *j;
	uint64_t now;             /* step_pass2_add's latest time */
	const struct steps_cuts *cuts;
	int ix, phase;
	int cont;                 /* going on over a later slice's records (the merge) */
	int gap;                  /* no record in [from, from + STEPS_SLICE_STOP_NS) came before its mark */
	uint64_t lead, from, to;  /* to: UINT64_MAX for the last slice */
	struct bytes start, end;  /* the states at the mark and at the end */
	struct slice_order order;
};
/* s (zeroed, its parts made) as slice ix's engine: a join (orphan_before:
 * opjoin_opts') delivering to on_op(ctx), names from r. */
void cut_slice_init(struct cut_slice *s, const struct cut_engine *eng, gp_reader *r, const struct steps_cuts *cuts,
		    int ix, uint64_t orphan_before, opjoin_cb on_op, void *ctx);
/* Every record of the window, in the reader's time order. */
void cut_slice_add(struct cut_slice *s, const gp_record *rec);
/* The end of its records: the last slice finishes (the join's leftovers,
 * the parts'), the others note their state. */
void cut_slice_end(struct cut_slice *s);
/* Feeds the records of r to s (names from r from now on, cut_slice_add, then
 * cut_slice_end); whether they were read whole (*rc: the read status;
 * may be NULL). */
int cut_slice_read(struct cut_slice *s, gp_reader *r, int *rc);
void cut_slice_free(struct cut_slice *s); /* NULL ok; s was xcalloc'd */
/* An engine over the trace r reads alone (cuts: one slice). */
typedef struct cut_slice *(*cut_make)(void *arg, gp_reader *r, const struct steps_cuts *cuts, int ix);
/* The ended engines e[0 .. cuts->k) of the trace at path into sum, in time
 * order: each goes on from the state the one before it ended in, or that
 * one goes on over its records itself; or, where a source is out of time
 * order across a cut, one engine (make's) over the whole trace.  Frees the
 * engines (e[i] NULL).  0, or -1 when a trace read again met damage. */
int cut_slice_merge(void *sum, struct opjoin_counts *counts, struct cut_slice **e, const struct steps_cuts *cuts,
		    const char *path, cut_make make, void *arg, struct steps_slice_merged *how);
/* A pass in the slices of pf (steps_prefix_slices) over the trace at path,
 * which r reads: the engines make(arg, r, cuts, i) made on the caller's
 * thread, each then fed on a thread of its own by a reader of its own
 * (analysis/core/slices.h) over its window (lead-in from steps_slice_lead
 * of d's plans), merged into sum (cut_slice_merge).  0, or -1 when a slice
 * met damage or could not be opened (sum may then hold part of the
 * results: the caller starts again on one thread). */
struct step_detect;
int cut_slice_pass(void *sum, struct opjoin_counts *counts, gp_reader *r, const char *path,
		   const struct steps_prefix *pf, const struct step_detect *d, cut_make make, void *arg,
		   struct steps_slice_merged *how);

/* The steps' engine of a slice. */
struct steps_slice {
	struct cut_slice c;
	struct steps *st;
	struct attribution *a;    /* a view of the caller's index */
	const struct winset *win;
};

/* The engine of slice ix: tmpl's plans and options (steps_new; it must
 * outlive the slice), a view of the attribution index a, the finished
 * GPU-activity windows win (read only), names from r. */
struct steps_slice *steps_slice_new(gp_reader *r, const struct steps *tmpl, const struct attribution *a,
				    const struct winset *win, const struct steps_cuts *cuts, int ix);
/* The steps' engine's parts (the struct steps_slice an engine embeds
 * first), for an engine with parts beside them fed from their join
 * (advise's facts, analysis/advise/advise_slice.h); and s (zeroed) as
 * steps_slice_new makes it, with eng and the join delivering to on_op(ctx)
 * (NULL: steps_op). */
extern const struct cut_engine steps_slice_engine;
void steps_slice_init(struct steps_slice *s, const struct cut_engine *eng, gp_reader *r, const struct steps *tmpl,
		      const struct attribution *a, const struct winset *win, const struct steps_cuts *cuts, int ix,
		      opjoin_cb on_op, void *ctx);
/* The time window slice ix must read (gp_reader_set_time_window). */
void steps_slice_window(const struct steps_cuts *cuts, int ix, uint64_t *from, uint64_t *to);
void steps_slice_free(struct steps_slice *s); /* NULL ok */

/* Where the engine of the slice that starts at cut begins (lead[i]): the
 * lead-in holds what one pass holds at the cut (the join's last second,
 * the steps not finalized), so it reaches back to the start of the NVTX
 * step (d's plans; NULL none) before the one the cut falls in, and
 * STEPS_SLICE_LEAD_NS more.  Too short is not wrong, only slower.
 * GPUPROF_STEPS_LEAD (a duration) sets it for tests. */
#define STEPS_SLICE_LEAD_NS 2000000000ull /* the join's grace (1 s) and the GPU's lag */
uint64_t steps_slice_lead(const struct step_detect *d, uint64_t cut);

/* A prefix whose cuts are those of k slices of the trace r reads
 * (slices_new); NULL when it cannot be cut so. */
struct steps_prefix *steps_prefix_slices(gp_reader *r, int k);

/* cut_slice_merge of the steps' engines into sum (their template:
 * steps_slice_new's tmpl, with a and win). */
int steps_slice_merge(struct steps *sum, struct opjoin_counts *counts, struct steps_slice **e,
		      const struct steps_cuts *cuts, const char *path, const struct attribution *a,
		      const struct winset *win, struct steps_slice_merged *how);

#endif
