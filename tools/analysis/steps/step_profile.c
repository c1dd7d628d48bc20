/* step_profile.c — see step_profile.h. */
#include "analysis/steps/step_profile.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/kernel_names.h"
#include "analysis/join/opjoin.h"
#include "analysis/steps/steps.h"
#include "common/tool.h"

#define MAX_RANGES 64

struct step_profile {
	gp_reader *r;
	const struct steps_pipe *pipe;
	struct step_profile_proc *p; size_t np, cp;
	struct kernel_names kn;
	uint32_t ids[MAX_RANGES];
};

struct step_profile *step_profile_new(gp_reader *r, const struct steps_pipe *pipe)
{
	struct step_profile *sp = xcalloc(1, sizeof(*sp));
	sp->r = r;
	sp->pipe = pipe;
	sp->kn.r = r;
	return sp;
}

const struct step_profile_proc *step_profile_proc(const struct step_profile *sp, uint32_t pid)
{
	for (size_t i = 0; i < sp->np; i++)
		if (sp->p[i].pid == pid) return &sp->p[i];
	return NULL;
}

static struct step_profile_proc *proc_of(struct step_profile *sp, uint32_t pid, int create)
{
	struct step_profile_proc *p = (struct step_profile_proc *)step_profile_proc(sp, pid);
	if (p || !create) return p;
	struct step_profile_proc new_proc = { .pid = pid };
	VEC_PUSH(sp->p, sp->np, sp->cp, new_proc);
	return &sp->p[sp->np - 1];
}

void step_profile_choose(struct step_profile *sp, uint32_t pid, uint64_t s, uint64_t e)
{
	struct step_profile_proc *p = proc_of(sp, pid, 1);
	struct sp_step st = { s, e };
	VEC_PUSH(p->steps, p->nsteps, p->csteps, st);
}

static int cmp_step(const void *a, const void *b)
{
	const struct sp_step *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* the chosen step of p in which t falls, or NULL */
static const struct sp_step *step_at(const struct step_profile_proc *p, uint64_t t)
{
	size_t lo = FIRST_WHERE(k, p->nsteps, p->steps[k].s > t);
	return lo && t < p->steps[lo - 1].e ? &p->steps[lo - 1] : NULL;
}

static struct sp_entry *entry(struct sp_list *l, const char *name)
{
	int is_new;
	size_t *slot = strmap_get(&l->idx, name, &is_new);
	if (is_new) {
		struct sp_entry e = { .name = xstrdup(name) };
		*slot = l->n;
		VEC_PUSH(l->v, l->n, l->cap, e);
	}
	return &l->v[*slot];
}

/* name's entry of l, with one more of ns */
static struct sp_entry *entry_add(struct sp_list *l, const char *name, uint64_t ns)
{
	struct sp_entry *e = entry(l, name);
	e->count++;
	e->ns += ns;
	return e;
}

/* the opjoin callback: one GPU operation with its launch call */
static void on_op(void *ctx, const struct gpu_op *op)
{
	struct step_profile *sp = ctx;
	struct step_profile_proc *p = proc_of(sp, op->pid, 0);
	if (!p || !op->has_call) return;
	const struct sp_step *st = step_at(p, op->call_s);
	if (!st) return;
	uint64_t dur = op->e - op->s;
	if (op->kind == OP_KERNEL) {
		entry_add(&p->list[SP_KERNEL], kernel_name(&sp->kn, op->name_id), dur);
		/* the ranges open when it was launched, each name once, the step's own
		 * range left out */
		const struct attribution *a = sp->pipe->attr;
		size_t n = attribution_at(a, op->pid, op->tid, op->call_s, sp->ids, MAX_RANGES), nd = 0;
		uint32_t done[MAX_RANGES];
		if (n > MAX_RANGES) n = MAX_RANGES;
		for (size_t i = 0; i < n; i++) {
			const struct attr_range ar = attribution_range(a, sp->ids[i]);
			if (ar.s == st->s && ar.e == st->e) continue;
			size_t d;
			for (d = 0; d < nd && done[d] != ar.name; d++) ;
			if (d < nd) continue;
			done[nd++] = ar.name;
			entry(&p->list[SP_RANGE], attribution_name(a, ar.name))->kernel_ns += dur;
		}
	} else {
		const char *kind = op->kind == OP_MEMSET ? "memset" : copy_kind_name(op->copy_kind);
		entry_add(&p->list[SP_COPY], kind, dur)->bytes += op->bytes;
	}
}

int step_profile_run(struct step_profile *sp)
{
	for (size_t i = 0; i < sp->np; i++)
		qsort(sp->p[i].steps, sp->p[i].nsteps, sizeof(*sp->p[i].steps), cmp_step);
	struct opjoin *j = opjoin_new(sp->r, NULL, on_op, sp);
	const struct winset *win = &sp->pipe->win;
	gp_reader *r = sp->r;
	gp_reader_rewind(r);
	const gp_record *rec;
	int rc;
	uint64_t n = 0, now = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		/* the launch join as the steps' second pass feeds it */
		step_pass2_add(r, rec, j, NULL, win, &now);
		if (rec->type == GP_REC_API) {
			const gp_rec_api *a = &rec->u.api;
			struct step_profile_proc *p = proc_of(sp, tool_pid(r, rec), 0);
			if (!p || !step_at(p, a->start_ns)) continue;
			const char *name = tool_str(r, a->name_id);
			struct sp_entry *e = entry_add(&p->list[SP_API], name,
						       a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0);
			e->flags = (step_api_is_sync(name) ? SP_SYNC : 0) |
				   (strstr(name, "emcpy") ? SP_COPYCALL : 0);
		} else if (rec->type == GP_REC_NVTX_RANGE) {
			const gp_rec_nvtx_range *g = &rec->u.nvtx_range;
			struct step_profile_proc *p = proc_of(sp, tool_pid(r, rec), 0);
			const struct sp_step *st = p ? step_at(p, g->start_ns) : NULL;
			if (!st || (g->start_ns == st->s && g->end_ns == st->e)) continue;
			char *name = tool_range_name(r, g);
			entry_add(&p->list[SP_RANGE], name, g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0);
			free(name);
		}
	}
	opjoin_finish(j);
	opjoin_free(j);
	return rc;
}

void step_profile_free(struct step_profile *sp)
{
	if (!sp) return;
	for (size_t i = 0; i < sp->np; i++) {
		for (int k = 0; k < SP_COUNT; k++) {
			struct sp_list *l = &sp->p[i].list[k];
			for (size_t e = 0; e < l->n; e++) free(l->v[e].name);
			free(l->v);
			strmap_free(&l->idx);
		}
		free(sp->p[i].steps);
	}
	free(sp->p);
	kernel_names_free(&sp->kn);
	free(sp);
}
