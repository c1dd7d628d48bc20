/* steps_run.c — see steps_run.h. */
#include "analysis/steps_run.h"

#include <stdlib.h>
#include <string.h>

#include "common/tool.h"

char *steps_range_name(gp_reader *r, const gp_rec_nvtx_range *n)
{
	const char *dom = tool_str(r, n->domain_id), *msg = tool_str(r, n->message_id);
	char *name = xmalloc(strlen(dom) + strlen(msg) + 2);
	if (*dom) sprintf(name, "%s:%s", dom, msg);
	else strcpy(name, msg);
	return name;
}

int step_want_parse(const char *s, int *want)
{
	if (!strcmp(s, "auto")) *want = STEP_WANT_AUTO;
	else if (!strcmp(s, "nvtx")) *want = STEP_WANT_NVTX;
	else if (!strcmp(s, "trace")) *want = STEP_WANT_TRACE;
	else return -1;
	return 0;
}

static uint32_t source_tid(gp_reader *r, const gp_record *rec)
{
	const gp_rec_source *src = gp_reader_source(r, rec->source_id);
	return src ? src->tid : 0;
}

/* a read status after which the intact records are still worth analysing */
static int read_ok(int rc) { return rc >= 0 || rc == GP_ERR_TRUNCATED || rc == GP_ERR_CORRUPT; }

static int pass_ranges(gp_reader *r, struct steps_run *sr)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		if (rec->type == GP_REC_NVTX_RANGE) {
			const gp_rec_nvtx_range *g = &rec->u.nvtx_range;
			char *name = steps_range_name(r, g);
			attribution_add_range(sr->a, tool_pid(r, rec), g->tid ? g->tid : source_tid(r, rec), g, name);
			free(name);
		} else if (rec->type == GP_REC_KERNEL || rec->type == GP_REC_MEMCPY || rec->type == GP_REC_MEMSET) {
			step_detect_gpu(sr->d, tool_pid(r, rec), rec);
		} else if (rec->type == GP_REC_WINDOW) {
			winset_add(&sr->win, tool_pid(r, rec), rec->u.window.start_ns, rec->u.window.end_ns);
		} else if (rec->type == GP_REC_PROCESS) {
			struct steps_run_proc p = { rec->u.process.pid, rec->u.process.rank };
			size_t k;
			for (k = 0; k < sr->nprocs && sr->procs[k].pid != p.pid; k++) ;
			if (k < sr->nprocs) sr->procs[k] = p;
			else VEC_PUSH(sr->procs, sr->nprocs, sr->cprocs, p);
		}
	}
	return rc;
}

static int pass_steps(gp_reader *r, struct steps_run *sr)
{
	const gp_record *rec;
	int rc;
	uint64_t n = 0, now = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		uint64_t t = gp_record_time(rec);
		switch (rec->type) {
		case GP_REC_API: {
			uint32_t pid = tool_pid(r, rec), tid = rec->u.api.tid ? rec->u.api.tid : source_tid(r, rec);
			opjoin_api(sr->j, pid, tid, &rec->u.api, steps_gpu_recorded(&sr->win, pid, rec->u.api.start_ns));
			steps_api(sr->st, pid, tid, &rec->u.api);
			break;
		}
		case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
			opjoin_gpu(sr->j, tool_pid(r, rec), rec);
			break;
		default:
			continue;
		}
		if (t > now) {
			now = t;
			opjoin_advance(sr->j, now);
			steps_advance(sr->st, now, opjoin_frontier(sr->j));
		}
	}
	return rc;
}

int steps_run(gp_reader *r, const struct steps_run_opts *opts, struct steps_run *out, int *read_rc,
	      const char **err)
{
	struct steps_run_opts o = { sizeof(o), { sizeof(struct step_detect_opts), STEP_WANT_AUTO, NULL, 0 },
				    ATTR_ANY_THREAD, 0 };
	if (opts) memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	memset(out, 0, sizeof(*out));
	*err = NULL;
	out->a = attribution_new(o.rule);
	out->d = step_detect_new(r, &o.detect);
	gp_reader_rewind(r);
	int rc = pass_ranges(r, out);
	*read_rc = rc;
	if (!read_ok(rc)) return -1;
	attribution_index(out->a);
	winset_finish(&out->win);
	if (step_detect_finish(out->d, out->a, err) < 0) return -1;
	struct steps_opts so = { sizeof(so), o.kernel_wait_ns, &out->win };
	out->st = steps_new(r, out->a, out->d, &so);
	out->j = opjoin_new(r, NULL, steps_op, out->st);
	gp_reader_rewind(r);
	rc = pass_steps(r, out);
	*read_rc = rc; /* the same file read again: the same status */
	if (!read_ok(rc)) return -1;
	opjoin_finish(out->j);
	steps_finish(out->st);
	return 0;
}

void steps_run_free(struct steps_run *sr)
{
	opjoin_free(sr->j);
	steps_free(sr->st);
	step_detect_free(sr->d);
	attribution_free(sr->a);
	winset_free(&sr->win);
	free(sr->procs);
	memset(sr, 0, sizeof(*sr));
}

int32_t steps_run_rank(const struct steps_run *sr, uint32_t pid)
{
	for (size_t k = 0; k < sr->nprocs; k++)
		if (sr->procs[k].pid == pid) return sr->procs[k].rank;
	return -1;
}
