/* comm.h — `gpuprof stats --report comm`: per rank (process) of a merged
 * multi-process trace, communication (NCCL kernel) time, compute (other
 * kernel) time, their overlap, and how long each rank's collectives waited
 * for the peers; `comm_steps` breaks the same down per top-level NVTX range
 * ("step <i>"), matched across ranks by name and occurrence.
 *
 * Collected while stats streams the trace (kernels, launch calls, top-level
 * push/pop ranges, process ranks); computed at the end.  Memory: 40 bytes
 * per kernel, a map slot per launch call, one entry per top-level range. */
#ifndef GPUPROF_TOOL_COMM_H
#define GPUPROF_TOOL_COMM_H

#include <stdint.h>

#include "gp_trace.h"
#include "common/report.h"

#define COMM_NCOLS 12
#define COMM_STEPS_NCOLS 12
extern const struct col comm_cols[COMM_NCOLS];
extern const struct col comm_steps_cols[COMM_STEPS_NCOLS];

struct comm;

struct comm *comm_new(gp_reader *r);
void comm_free(struct comm *c); /* NULL ok */
/* PROCESS (rank), API (launch calls), KERNEL and NVTX_RANGE records; others
 * are ignored.  pid/tid as stats resolves them. */
void comm_add(struct comm *c, const gp_record *rec, uint32_t pid, uint32_t tid);
/* Whether the report belongs in the default set: the trace has NCCL kernels,
 * or kernels of more than one process. */
int comm_in_default(const struct comm *c);
/* Fills the per-rank table and the per-step table (base: the trace start,
 * for the Start column).  Says on stderr, once, why there are no wait
 * figures (collectives that do not match across ranks) or no rows (no
 * kernels).  Titles and notes point into c: print before comm_free. */
void comm_fill(struct comm *c, struct report *ranks, struct report *steps, uint64_t base);

#endif
