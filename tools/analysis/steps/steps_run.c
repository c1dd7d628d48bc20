/* steps_run.c — see steps_run.h. */
#include "analysis/steps/steps_run.h"

#include <stdlib.h>
#include <string.h>

#include "common/tool.h"

int step_want_parse(const char *s, int *want)
{
	if (!strcmp(s, "auto")) *want = STEP_WANT_AUTO;
	else if (!strcmp(s, "nvtx")) *want = STEP_WANT_NVTX;
	else if (!strcmp(s, "trace")) *want = STEP_WANT_TRACE;
	else return -1;
	return 0;
}

/* Pass 1's extra: the processes and the threads with records. */
static void pass1_procs(void *arg, const gp_record *rec)
{
	struct steps_run *sr = arg;
	gp_reader *r = sr->pipe.r;
	if (rec->type == GP_REC_PROCESS) {
		const char *cmd = gp_reader_string(r, rec->u.process.name_id);
		const char *set = rec->u.process.settings_id ? gp_reader_string(r, rec->u.process.settings_id) : NULL;
		struct steps_run_proc p = { rec->u.process.pid, rec->u.process.rank, cmd ? xstrdup(cmd) : NULL,
					    set ? xstrdup(set) : NULL };
		size_t k;
		for (k = 0; k < sr->nprocs && sr->procs[k].pid != p.pid; k++) ;
		if (k < sr->nprocs) {
			free(sr->procs[k].cmd);
			free(sr->procs[k].settings);
			sr->procs[k] = p;
		} else {
			VEC_PUSH(sr->procs, sr->nprocs, sr->cprocs, p);
		}
	} else if (rec->type == GP_REC_SOURCE && rec->u.source.kind == GP_SOURCE_THREAD) {
		uint64_t key = (uint64_t)rec->u.source.pid << 32 | rec->u.source.tid;
		VEC_KEYED(&sr->seen_thread, key, sr->threads, sr->nthreads, sr->cthreads, &key);
	}
}

int steps_run(gp_reader *r, const struct steps_run_opts *opts, struct steps_run *out, int *read_rc,
	      const char **err)
{
	struct steps_run_opts o = { { STEP_WANT_AUTO, NULL, 0 }, ATTR_ANY_THREAD, 0 };
	if (opts) o = *opts;
	memset(out, 0, sizeof(*out));
	u64map_init(&out->seen_thread);
	struct steps_pipe_opts po = { 1, o.rule, &o.detect, o.kernel_wait_ns };
	steps_pipe_init(&out->pipe, r, &po);
	return steps_pipe_run(&out->pipe, pass1_procs, out, read_rc, err);
}

void steps_run_free(struct steps_run *sr)
{
	steps_pipe_free(&sr->pipe);
	for (size_t k = 0; k < sr->nprocs; k++) {
		free(sr->procs[k].cmd);
		free(sr->procs[k].settings);
	}
	free(sr->procs);
	free(sr->threads);
	u64map_free(&sr->seen_thread);
	memset(sr, 0, sizeof(*sr));
}

const struct steps_run_proc *steps_run_process(const struct steps_run *sr, uint32_t pid)
{
	for (size_t k = 0; k < sr->nprocs; k++)
		if (sr->procs[k].pid == pid) return &sr->procs[k];
	return NULL;
}

int32_t steps_run_rank(const struct steps_run *sr, uint32_t pid)
{
	const struct steps_run_proc *p = steps_run_process(sr, pid);
	return p ? p->rank : -1;
}

size_t steps_run_threads(const struct steps_run *sr, uint32_t pid)
{
	size_t n = 0;
	for (size_t k = 0; k < sr->nthreads; k++) n += sr->threads[k] >> 32 == pid;
	return n;
}
