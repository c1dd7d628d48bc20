/* steps_pipe.c — see steps_pipe.h. */
#include "analysis/steps/steps_pipe.h"

#include <stdlib.h>
#include <string.h>

#include "common/tool.h"

void step_pass1_add(gp_reader *r, const gp_record *rec, struct attribution *a, struct step_detect *d,
		    struct winset *win)
{
	switch (rec->type) {
	case GP_REC_NVTX_RANGE:
		if (a) {
			char *name = tool_range_name(r, &rec->u.nvtx_range);
			attribution_add_range(a, tool_pid(r, rec), tool_rec_tid(r, rec), &rec->u.nvtx_range, name);
			free(name);
		}
		break;
	case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
		if (d) step_detect_gpu(d, tool_pid(r, rec), rec);
		break;
	case GP_REC_WINDOW:
		if (win) winset_add(win, tool_pid(r, rec), rec->u.window.start_ns, rec->u.window.end_ns);
		break;
	}
}

void step_pass2_add(gp_reader *r, const gp_record *rec, struct opjoin *j, struct steps *st,
		    const struct winset *win, uint64_t *now)
{
	uint32_t pid;
	switch (rec->type) {
	case GP_REC_API: {
		uint32_t tid = tool_rec_tid(r, rec);
		pid = tool_pid(r, rec);
		opjoin_api(j, pid, tid, &rec->u.api, steps_gpu_recorded(win, pid, rec->u.api.start_ns));
		if (st) steps_api(st, pid, tid, &rec->u.api);
		break;
	}
	case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
		opjoin_gpu(j, tool_pid(r, rec), rec);
		break;
	default:
		return;
	}
	uint64_t t = gp_record_time(rec);
	if (t > *now) {
		*now = t;
		opjoin_advance(j, t);
		if (st) steps_advance(st, t, opjoin_frontier(j));
	}
}

void steps_pipe_init(struct steps_pipe *p, gp_reader *r, const struct steps_pipe_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->r = r;
	p->kernel_wait_ns = o->kernel_wait_ns;
	if (o->ranges || o->detect) p->attr = attribution_new(o->rule);
	if (o->detect) p->detect = step_detect_new(r, o->detect);
}

void steps_pipe_pre_add(struct steps_pipe *p, const gp_record *rec)
{
	step_pass1_add(p->r, rec, p->attr, p->detect, &p->win);
}

void steps_pipe_plan_ranges(struct steps_pipe *p)
{
	if (p->attr) attribution_index(p->attr);
	winset_finish(&p->win);
	if (p->detect) step_detect_plan_ranges(p->detect, p->attr);
}

int steps_pipe_plan_steps(struct steps_pipe *p, const char **err)
{
	if (!p->detect) return 0;
	if (step_detect_plan_samples(p->detect, err) < 0) return -1;
	struct steps_opts so = { p->kernel_wait_ns, &p->win };
	p->steps = steps_new(p->r, p->attr, p->detect, &so);
	return 0;
}

void steps_pipe_join(struct steps_pipe *p, const struct opjoin_opts *jo, opjoin_cb on_op, void *arg)
{
	if (p->join) return;
	p->join = on_op ? opjoin_new(p->r, jo, on_op, arg) : opjoin_new(p->r, jo, steps_op, p->steps);
}

void steps_pipe_add(struct steps_pipe *p, const gp_record *rec)
{
	step_pass2_add(p->r, rec, p->join, p->steps_apart ? NULL : p->steps, &p->win, &p->now);
}

void steps_pipe_finish(struct steps_pipe *p)
{
	if (p->join) opjoin_finish(p->join);
	if (p->steps && !p->steps_apart) steps_finish(p->steps);
	p->steps_done = 1;
}

void steps_pipe_free(struct steps_pipe *p)
{
	opjoin_free(p->join);
	steps_free(p->steps);
	step_detect_free(p->detect);
	attribution_free(p->attr);
	winset_free(&p->win);
	memset(p, 0, sizeof(*p));
}

int steps_pipe_pass(struct steps_pipe *p, int pass)
{
	const gp_record *rec;
	uint64_t n = 0;
	int rc = gp_reader_rewind(p->r);
	if (rc < 0) return rc;
	while ((rc = gp_reader_next_ordered(p->r, &rec)) > 0) {
		progress_tick(++n);
		if (pass == 1) steps_pipe_pre_add(p, rec);
		else steps_pipe_add(p, rec);
	}
	return rc;
}

void steps_pipe_bounds(struct steps_pipe *p, steps_bound_fn fn, void *arg)
{
	for (size_t i = 0; i < step_detect_nplans(p->detect); i++) {
		const struct step_plan *pl = step_detect_plan(p->detect, i);
		if (pl->method == STEP_NVTX) {
			for (size_t k = 0; k < pl->nsteps; k++) {
				const struct step_def sd = step_plan_step(pl, pl->a, k);
				const struct step_bound b = { i, sd.number >= 0 ? sd.number : (int64_t)k, sd.s, sd.e, 0 };
				fn(arg, &b);
			}
		} else if (pl->method == STEP_TRACE) {
			const struct steps_proc *sp = steps_proc(p->steps, i);
			for (size_t k = 0; k < sp->nrows; k++) {
				const struct step_row *w = step_row(sp, k);
				const struct step_bound b = { i, w->number, w->s, w->e, w->partial };
				fn(arg, &b);
			}
		}
	}
}

int steps_pipe_trace_planned(const struct steps_pipe *p)
{
	for (size_t i = 0; p->steps && i < step_detect_nplans(p->detect); i++)
		if (step_detect_plan(p->detect, i)->method == STEP_TRACE) return 1;
	return 0;
}
