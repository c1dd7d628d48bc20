/* attribution.h — which NVTX ranges a GPU operation belongs to: the one
 * rule of docs/STEPS.md ("Attribution"), a range open when the operation's
 * launch call (opjoin.h) started, in the same process, from any thread
 * (ATTR_ANY_THREAD) or only from the thread that began the range
 * (ATTR_SAME_THREAD, `--attribution same-thread`).  Used by every report
 * that gives GPU work to ranges or steps.
 *
 * Lifecycle (a component with init/consume/finalize): attribution_new, then
 * every NVTX range of the trace through attribution_add_range (a first pass:
 * push/pop ranges are written when they are popped, after the calls inside
 * them, so the ranges must all be known before the calls are attributed),
 * attribution_index, then any number of attribution_op (or attribution_at)
 * queries, from one thread at a time (attribution_op keeps its last answer
 * for the next query of the same call); attribution_view gives another
 * thread queries of its own over the same index.
 * Memory: independent of the number of ranges: 48 bytes a range in two
 * spills (common/spill.h: 8 MiB each in memory, the rest in $TMPDIR), and
 * in memory 4 bytes a lane's 32 ranges, the names and the lanes
 * (attribution.c); a view or query state, its readers' caches (384 KiB:
 * 2 readers of 4 blocks of 48 KiB). */
#ifndef GPUPROF_ANALYSIS_JOIN_ATTRIBUTION_H
#define GPUPROF_ANALYSIS_JOIN_ATTRIBUTION_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"
#include "analysis/join/opjoin.h"

enum attr_rule { ATTR_ANY_THREAD = 0, ATTR_SAME_THREAD = 1 };

struct attr_range {
	uint64_t s, e;
	uint32_t pid, tid;       /* tid: the thread that began it */
	uint32_t name;           /* index into the name table */
	uint16_t depth;          /* push/pop nesting depth (0 outermost; deeper clamped at 65534) */
	uint8_t kind;            /* gp_nvtx_kind */
};

struct attribution;

struct attribution *attribution_new(enum attr_rule rule);
void attribution_free(struct attribution *a); /* NULL ok */
/* Init phase: one NVTX range record of pid (tid: the thread that began it,
 * as the reader fills it); name: "domain:message", or the message in the
 * default domain.  Returns the range's id (0, 1, 2, ... in call order). */
uint32_t attribution_add_range(struct attribution *a, uint32_t pid, uint32_t tid, const gp_rec_nvtx_range *n,
			       const char *name);
/* The same in two steps: the name's index (the next one when the name is
 * new), then the range with that index (the caller that interns each of
 * its names once saves a lookup a range). */
uint32_t attribution_name_intern(struct attribution *a, const char *name);
uint32_t attribution_add_range_named(struct attribution *a, uint32_t pid, uint32_t tid, const gp_rec_nvtx_range *n,
				     uint32_t name);
/* Ends the init phase. */
void attribution_index(struct attribution *a);
/* After attribution_index: the same index (shared, not copied: a must
 * outlive the view and gets no more ranges) with a query state of its own,
 * so that several threads can query one index at once (one view each: the
 * time shards of `stats --threads`).  attribution_free frees the view
 * alone. */
struct attribution *attribution_view(const struct attribution *a);
/* After attribution_index: another view of v's index that shares v's
 * query state (v a view or the index itself), for two users on one thread
 * that ask of the same call one after the other (a slice's steps' engine
 * and its reports, reports/stats_shards.c): the second answer comes from
 * the first's memo.  The answers are a view's own either way (the state
 * only remembers); each is freed on its own, the state with the last. */
struct attribution *attribution_view_sharing(const struct attribution *v);

size_t attribution_nranges(const struct attribution *a);
/* Range id (a copy: the ranges are stored in a compact form). */
struct attr_range attribution_range(const struct attribution *a, uint32_t id);
size_t attribution_nnames(const struct attribution *a);
const char *attribution_name(const struct attribution *a, uint32_t name);
enum attr_rule attribution_rule(const struct attribution *a);

/* The rule: ids of the ranges that a GPU operation launched by a call
 * starting at t on thread tid of pid belongs to, in no particular order.
 * Writes at most max ids to out; returns how many there are. */
size_t attribution_at(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t *out,
		      size_t max);

/* The push/pop ranges that thread tid of pid began and has open at t,
 * whatever a's rule (the nesting of one thread's ranges: autograd_seq.h),
 * in the order attribution_at gives them; writes and returns as it does.
 * The same as filtering attribution_at's answer by thread and kind,
 * without looking at the process's other lanes. */
size_t attribution_open_on(const struct attribution *a, uint32_t pid, uint32_t tid, uint64_t t, uint32_t *out,
			   size_t max);

/* The rule for a GPU operation joined to its launch call (opjoin.h): the
 * ids of the ranges it belongs to, into *buf (grown as needed, *cap its
 * size; free() it when done); returns how many.  0 for an operation
 * without a recorded call. */
size_t attribution_op(const struct attribution *a, const struct gpu_op *op, uint32_t **buf, size_t *cap);

/* "any-thread" / "same-thread" */
const char *attr_rule_name(enum attr_rule rule);
/* 0 ok, -1 unknown name */
int attr_rule_parse(const char *s, enum attr_rule *out);

#endif
