/* range_attr.h — which NVTX ranges a kernel is attributed to: the one
 * definition every analysis uses (stats nvtx, stats comm_steps), with the
 * rule as a parameter.
 *
 * A kernel is attributed to the ranges open, under the rule, at the start of
 * the call that launched it: where the host code asked for it, while the GPU
 * may run it later.  Launch calls are those that run kernels
 * (libprof/gp_launch.h: kernel and graph launches) and carry a correlation
 * id; a graph launch's kernels all go where the launch went.  Which ranges
 * are candidates (every push/pop range, or only the outermost ones) is the
 * caller's choice: it hands them in.
 *
 *  RANGE_RULE_THREAD   the ranges of the launching thread (pid, tid) that
 *      contain the launch call's start; nested ranges each get the kernel.
 *      A kernel whose launch call is not in the trace goes nowhere.  Works
 *      as the trace streams: a launch is settled once its thread's enclosing
 *      outermost range has been seen (a push/pop range is written when it is
 *      popped, after the calls inside it), so memory holds the launches of
 *      the open outermost ranges and those still waiting for their kernels.
 *  RANGE_RULE_PROCESS  the ranges of any thread of the launching process
 *      that contain the launch call's start (the earliest start among the
 *      runtime and driver calls of the launch); a kernel whose launch call is
 *      not in the trace counts at its GPU start.  Works as the trace streams
 *      once the caller declares the process's threads (range_attr_thread):
 *      a thread's ranges come at their end (push/pop), so a kernel launched
 *      at t is settled once every declared thread has given an outermost
 *      range that starts after t (all its ranges holding t came before).
 *      Memory then holds the kernels not settled (40 bytes each: those
 *      launched since the slowest thread's last outermost range began), the
 *      launch calls whose kernels have not come, and the last
 *      RANGE_ATTR_KEEP ranges per process.  A thread without ranges holds
 *      everything back: past RANGE_ATTR_PENDING_MAX kernels pending in a
 *      process the oldest half is settled with the ranges known (a range
 *      that arrives later and holds one of them is counted in
 *      range_attr_late).  Without declared threads, settled at the end.
 *
 * Results come through a callback, once per (range, kernel) pair. */
#ifndef GPUPROF_TOOL_RANGE_ATTR_H
#define GPUPROF_TOOL_RANGE_ATTR_H

#include <stdint.h>

#include "gp_trace.h"

enum range_rule { RANGE_RULE_THREAD, RANGE_RULE_PROCESS };

/* Kernel `ref` (as given to range_attr_kernel), of `ns` GPU time, is
 * attributed to the range(s) the caller called `group`. */
typedef void (*range_attr_fn)(void *arg, uint32_t group, uint64_t ref, uint64_t ns);

struct range_attr;

#define RANGE_ATTR_KEEP 256
#define RANGE_ATTR_PENDING_MAX (1u << 20)

struct range_attr *range_attr_new(enum range_rule rule, range_attr_fn fn, void *arg);
/* PROCESS: called once per kernel when it is settled, after its
 * attributions (its ref and ns), so the caller can drop what it keeps for
 * it. */
typedef void (*range_attr_done_fn)(void *arg, uint64_t ref, uint64_t ns);
void range_attr_on_settled(struct range_attr *ra, range_attr_done_fn fn);
/* PROCESS: thread tid of process pid may have ranges (every application
 * thread of the process, before its first range; see above). */
void range_attr_thread(struct range_attr *ra, uint32_t pid, uint32_t tid);
/* PROCESS: ranges that arrived after kernels they hold had been settled
 * without them (see above); 0 when every attribution is exact. */
uint64_t range_attr_late(const struct range_attr *ra);
void range_attr_free(struct range_attr *ra); /* NULL ok */
/* An API call of thread tid of process pid (only launch calls matter). */
void range_attr_call(struct range_attr *ra, uint32_t pid, uint32_t tid, const gp_rec_api *a);
/* A range [s, e) of thread tid at nesting depth `depth` (0: outermost);
 * `group` is the caller's id for it (ranges may share one). */
void range_attr_range(struct range_attr *ra, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e, uint32_t depth,
		      uint32_t group);
/* A kernel of process pid with correlation id corr, starting on the GPU at
 * gpu_start, running ns; ref is passed back to the callback. */
void range_attr_kernel(struct range_attr *ra, uint32_t pid, uint64_t corr, uint64_t gpu_start, uint64_t ns,
		       uint64_t ref);
/* End of the trace: settles everything still open. */
void range_attr_finish(struct range_attr *ra);

#endif
