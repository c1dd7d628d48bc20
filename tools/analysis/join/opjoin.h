/* opjoin.h — GPU operations (kernel, memcpy, memset records) joined to the
 * API call that launched them, by (pid, correlation id), in one streaming
 * pass.  A component in the Babeltrace sense: opjoin_new (init), opjoin_api /
 * opjoin_gpu / opjoin_advance (consume), opjoin_finish (finalize); each
 * joined operation goes to the callback given at init.
 *
 * Either record may come first.  Which calls launch GPU work, the runtime
 * and driver records of one launch as one call, graph launches: docs/STEPS.md
 * ("Attribution"; the call's stack is the first one recorded).  Every
 * report that gives GPU work to a range, a step or a call site joins here.
 *
 * Memory.  The reader merges the sources by time, but a source need not be
 * in time order: CUPTI hands activity buffers back when they fill or at a
 * flush, not necessarily in order, so a GPU operation may come long after
 * its call (on the committed MNIST trace, up to 9 s of trace later).  So a
 * launch call waits for its operation, and an operation for its call, for as
 * long as it takes: the state is the calls and operations of that lag, not
 * of the trace (unless the API calls or the GPU activity were not recorded
 * at all).  Only launch calls are kept; a joined one stays
 * `grace_ns` of trace time more (a later graph kernel, the runtime record of
 * a call whose driver record came first).  Past 4 Mi unpaired calls, or
 * operations, the oldest give up (an operation is then delivered without a call). */
#ifndef GPUPROF_ANALYSIS_JOIN_OPJOIN_H
#define GPUPROF_ANALYSIS_JOIN_OPJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "gp_trace.h"

enum op_kind { OP_KERNEL = 0, OP_MEMCPY = 1, OP_MEMSET = 2 };
/* HTA's kernel classes: communication = NCCL kernels (name contains "nccl",
 * any case, as in comm.c), memory = memcpy/memset, computation = the rest. */
enum op_class { OPC_COMPUTE = 0, OPC_COMM = 1, OPC_MEMORY = 2 };

struct gpu_op {
	uint64_t s, e;           /* GPU interval (e >= s) */
	uint64_t call_s, call_e; /* the launch call (when has_call) */
	uint64_t corr;
	uint32_t pid, tid;       /* tid: thread of the launch call (0: none) */
	uint32_t device, stream;
	uint32_t name_id;        /* kernel name; 0 for memcpy/memset */
	uint32_t call_name_id;   /* API name of the launch call */
	uint8_t kind, cls;       /* op_kind, op_class */
	uint8_t has_call, graph; /* graph: the call was a graph launch */
	uint32_t stack_id;       /* the launch call's recorded stack (0: none) */
	uint64_t bytes;          /* memcpy/memset: bytes (0 for kernels) */
	uint32_t copy_kind;      /* memcpy: gp_copy_kind (0 otherwise) */
	uint64_t graph_node;     /* kernel: its graph node id (graph_sites.h), 0 not from a graph */
};

/* Appends op to b field by field (no padding bytes): the join's and the
 * steps' states (opjoin_state, steps_state). */
struct bytes;
void gpu_op_state(const struct gpu_op *op, struct bytes *b);

/* A launch call as it leaves the join: its operations delivered (and the
 * grace past), given up, or at the end.  The runtime and driver records of
 * one launch are one call.  ops: operations joined to it. */
struct launch_call {
	uint64_t s, e, corr;
	uint32_t pid, tid, name_id, stack_id;
	uint64_t ops;
	uint8_t graph, ok;       /* ok: the call returned success */
};

/* A KERNEL, MEMCPY or MEMSET record of pid as an operation without its
 * call (e >= s; a kernel's class OPC_COMPUTE until the join classes it by
 * name): 1, or 0 for another record.  Inline: a caller that reads a few
 * fields (once a record, in the passes) makes only those. */
static inline int gpu_op_of(const gp_record *rec, uint32_t pid, struct gpu_op *op)
{
	switch (rec->type) {
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		*op = (struct gpu_op){ .s = k->start_ns, .e = k->end_ns, .corr = k->correlation_id, .pid = pid,
				       .device = k->device_id, .stream = k->stream_id, .name_id = k->name_id,
				       .kind = OP_KERNEL, .graph_node = k->graph_node_id };
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		*op = (struct gpu_op){ .s = m->start_ns, .e = m->end_ns, .corr = m->correlation_id, .pid = pid,
				       .device = m->device_id, .stream = m->stream_id, .kind = OP_MEMCPY,
				       .cls = OPC_MEMORY, .bytes = m->bytes, .copy_kind = m->copy_kind };
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &rec->u.memset;
		*op = (struct gpu_op){ .s = m->start_ns, .e = m->end_ns, .corr = m->correlation_id, .pid = pid,
				       .device = m->device_id, .stream = m->stream_id, .kind = OP_MEMSET,
				       .cls = OPC_MEMORY, .bytes = m->bytes };
		break;
	}
	default:
		return 0;
	}
	if (op->e < op->s) op->e = op->s;
	return 1;
}

typedef void (*opjoin_cb)(void *ctx, const struct gpu_op *op);
typedef void (*opjoin_call_cb)(void *ctx, const struct launch_call *c);

struct opjoin_opts {
	uint64_t grace_ns;    /* 0: 1 s */
	opjoin_call_cb call_cb; /* each launch call as it leaves (NULL: none); same ctx */
	/* Time shards (opjoin_merge): where the join's slice of time starts
	 * (0: the trace's start, or no slices).  A call that starts within
	 * grace_ns of it and has no runtime-domain record may be the driver
	 * half of a launch whose runtime record is in the previous slice: its
	 * operations are held (delivered with the whole call's fields once
	 * the runtime record comes, at the merge, or when the call leaves),
	 * and it leaves no earlier than 2 x grace_ns past slice_from. */
	uint64_t slice_from;
	/* The steps' engine of a slice (analysis/steps/steps_slice.h): the GPU
	 * operations starting before this time that wait for their call do
	 * not hold opjoin_frontier (those of its lead-in whose call lies
	 * before the lead-in: they never pair; opjoin_mark drops them).  0:
	 * none. */
	uint64_t orphan_before;
};

struct opjoin_counts {
	uint64_t ops;          /* delivered */
	uint64_t ops_no_call;  /* delivered without a launch call */
	uint64_t calls_no_op;  /* launch calls that never saw an operation */
	uint64_t gave_up;      /* of those, dropped past 4 Mi waiting (not at the end) */
};

struct opjoin;

/* r: for API and kernel names (class by name).  opts may be NULL. */
struct opjoin *opjoin_new(gp_reader *r, const struct opjoin_opts *opts, opjoin_cb cb, void *ctx);
void opjoin_free(struct opjoin *j); /* NULL ok */
/* The reader the names come from from now on (one over the same trace). */
void opjoin_set_reader(struct opjoin *j, gp_reader *r);
/* An API record of pid/tid; calls without a correlation id are ignored.
 * recorded: GPU activity was being recorded when the call was made (a
 * windowed trace records it only inside its windows); when 0 the call's
 * operation is not waited for (opjoin_frontier), though it still joins. */
void opjoin_api(struct opjoin *j, uint32_t pid, uint32_t tid, const gp_rec_api *a, int recorded);
/* A KERNEL, MEMCPY or MEMSET record of pid (others are ignored). */
void opjoin_gpu(struct opjoin *j, uint32_t pid, const gp_record *rec);
/* The stream has reached trace time `now`: drops joined calls past grace. */
void opjoin_advance(struct opjoin *j, uint64_t now);
/* Before this time every GPU operation launched has been delivered: the
 * start of the oldest launch call (a call that launches GPU work and
 * returned success) whose operation has not arrived, or the GPU start of the
 * oldest operation still waiting for its call; UINT64_MAX if neither.
 * (Oldest in arrival order, which is time order within a thread.) */
uint64_t opjoin_frontier(struct opjoin *j);
/* Time shards (reports/stats_shards.h): src joined the records of the
 * next slice of time after dst's (its opts.slice_from: where that slice
 * starts).  A call cut in two (its runtime record before the cut, its
 * driver record after) becomes one, and the operations src held for it go
 * out with the whole call's fields; the operations either one still waits
 * for whose call the other holds are joined now; all delivered through
 * dst's callbacks.  Then dst holds what is left of both (src's calls and
 * waiting operations after dst's), as if it had read src's records
 * itself, and lets go what is past grace by src's latest time.  src is
 * left empty (free it).  The same pairs, calls and counts as one join over
 * both slices (tests/tools/test_opjoin_merge.c), but for an operation that
 * comes more than grace_ns after its call's last one (one join has let the
 * call go by then: the operation goes without a call; a join across a cut
 * may still hold it) and a runtime record more than grace_ns before its
 * driver record across a cut (the two stay two calls). */
void opjoin_merge(struct opjoin *dst, struct opjoin *src);
/* The steps' engines at a cut (analysis/steps/steps_slice.h).  opjoin_mark: the
 * operations still waiting for their call go, undelivered, and the counts
 * start again from 0.  opjoin_state: appends to b what decides the join's
 * behaviour from here on (its calls and waiting operations in arrival
 * order, its latest time): two joins with equal states deliver the same
 * operations, the same way, from the same records on.  opjoin_take_counts:
 * adds the counts to *sum and starts them again from 0. */
void opjoin_mark(struct opjoin *j);
void opjoin_state(const struct opjoin *j, struct bytes *b);
void opjoin_take_counts(struct opjoin *j, struct opjoin_counts *sum);
/* End of stream: delivers the operations still waiting for their call. */
void opjoin_finish(struct opjoin *j);
void opjoin_counts(const struct opjoin *j, struct opjoin_counts *out);

#endif
