/* step_passes.c — see step_passes.h. */
#include "analysis/step_passes.h"

#include <stdlib.h>

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
