/* stack_work.c — see stack_work.h.  Entries by (pid, tid) -> per-thread
 * map of stack id -> entry. */
#include "analysis/stacks/stack_work.h"

#include <stdlib.h>

#include "common/util.h"

struct stack_work {
	u64map thread_idx;                 /* pid << 32 | tid -> index into maps + 1 */
	u64map *maps; size_t nmaps, cmaps; /* per thread: stack id -> entry index */
	struct stack_work_entry *v; size_t n, cap;
};

struct stack_work *stack_work_new(void)
{
	struct stack_work *w = xcalloc(1, sizeof(*w));
	u64map_init(&w->thread_idx);
	return w;
}

void stack_work_free(struct stack_work *w)
{
	if (!w) return;
	for (size_t i = 0; i < w->nmaps; i++) u64map_free(&w->maps[i]);
	free(w->maps);
	u64map_free(&w->thread_idx);
	free(w->v);
	free(w);
}

static struct stack_work_entry *entry(struct stack_work *w, uint32_t pid, uint32_t tid, uint32_t stack_id)
{
	if (!stack_id) tid = 0;   /* no stack: one entry per process */
	const u64map empty = { 0 };
	u64map *m = VEC_KEYED(&w->thread_idx, ((uint64_t)pid << 32) | tid, w->maps, w->nmaps, w->cmaps, &empty);
	const struct stack_work_entry e = { .pid = pid, .tid = tid, .stack_id = stack_id };
	return VEC_KEYED(m, stack_id, w->v, w->n, w->cap, &e);
}

void stack_work_op(void *ctx, const struct gpu_op *op)
{
	struct stack_work *w = ctx;
	struct stack_work_entry *e = entry(w, op->pid, op->tid, op->has_call ? op->stack_id : 0);
	uint64_t d = op->e - op->s;
	if (op->kind == OP_KERNEL) {
		e->kernels++;
		e->kernel_ns += d;
		if (op->graph) { e->graph_kernels++; e->graph_kernel_ns += d; }
	}
	else { e->memops++; e->memop_ns += d; }
}

void stack_work_call(void *ctx, const struct launch_call *c)
{
	struct stack_work *w = ctx;
	entry(w, c->pid, c->tid, c->stack_id)->launches++;
}

void stack_work_merge(struct stack_work *w, const struct stack_work *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct stack_work_entry *f = &src->v[i];
		struct stack_work_entry *e = entry(w, f->pid, f->tid, f->stack_id);
		e->launches += f->launches;
		e->kernels += f->kernels;
		e->memops += f->memops;
		e->kernel_ns += f->kernel_ns;
		e->memop_ns += f->memop_ns;
		e->graph_kernels += f->graph_kernels;
		e->graph_kernel_ns += f->graph_kernel_ns;
	}
}

const struct stack_work_entry *stack_work_all(const struct stack_work *w, size_t *n)
{
	*n = w->n;
	return w->v;
}
