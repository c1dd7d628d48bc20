/* stats_ctx.c — the context of `gpuprof stats` (stats_report.h): which
 * records reach the reports, with which process and thread, and the shared
 * analyses more than one report reads. */
#include <string.h>

#include "common/tool.h"
#include "reports/stats_report.h"

void stats_ctx_init(struct stats_ctx *ctx, gp_reader *r, uint64_t since, int have_since,
		    uint64_t until, int have_until)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->needs = STATS_NEED_ALL;
	ctx->r = r;
	ctx->kn.r = r;
	ctx->base = gp_reader_header(r)->start_trace_ns;
	ctx->since = have_since ? ctx->base + since : 0;
	ctx->until = have_until ? ctx->base + until : UINT64_MAX;
	ctx->clipped = have_since || have_until;
}

int stats_ctx_add(struct stats_ctx *ctx, const gp_record *rec, struct stats_rec *out)
{
	uint64_t t = gp_record_time(rec);
	if (t) {
		uint64_t e = tool_rec_end(rec);
		if (e < t) e = t;
		if (e > ctx->last) ctx->last = e;
	}
	out->rec = rec;
	out->pid = out->tid = 0;
	switch (rec->type) {
	case GP_REC_WINDOW: /* clipped to --since/--until at the end */
		winset_add(&ctx->win, tool_pid(ctx->r, rec), rec->u.window.start_ns, rec->u.window.end_ns);
		return 0;
	case GP_REC_DEVICE:
		devprops_add(&ctx->dev, tool_pid(ctx->r, rec), &rec->u.device);
		return 0;
	case GP_REC_PROCESS: {
		/* a process recorded without GPU-activity windows: its GPU
		 * intervals can be summed as they stream (gpu_activity.h) */
		const char *set = rec->u.process.settings_id ? tool_str(ctx->r, rec->u.process.settings_id) : "";
		gpu_activity_process(&ctx->gpu, rec->u.process.pid, *set != 0,
				     strstr(set, "gpu_window=") || strstr(set, "capture_range="));
		out->pid = rec->u.process.pid;
		*u64map_get(&ctx->rank_of, out->pid, MAP_INSERT) = (uint64_t)((int64_t)rec->u.process.rank + 1);
		return 1;
	}
	case GP_REC_MODULE: case GP_REC_STACK: case GP_REC_THREAD: case GP_REC_SOURCE:
		return 1;
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET: case GP_REC_NVTX_RANGE:
	case GP_REC_COUNTER: case GP_REC_SYNC: case GP_REC_MEMORY:
		if (t < ctx->since || t >= ctx->until) return 0;
		break;
	default:
		return 0;
	}
	out->pid = tool_pid(ctx->r, rec);
	const gp_rec_source *src = gp_reader_source(ctx->r, rec->source_id);
	out->tid = src ? src->tid : 0;
	int gpu = ctx->needs & STATS_NEED_GPU;
	switch (rec->type) {
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		if (gpu)
			gpu_activity_add(&ctx->gpu, out->pid, k->device_id, k->stream_id, k->start_ns, k->end_ns,
					 GPU_WORK_KERNEL);
		if (ctx->needs & STATS_NEED_SHAPES)
			kshapes_add(&ctx->shapes, out->pid, k, kernel_name(&ctx->kn, k->name_id));
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		if (gpu)
			gpu_activity_add(&ctx->gpu, out->pid, m->device_id, m->stream_id, m->start_ns, m->end_ns,
					 GPU_WORK_COPY);
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &rec->u.memset;
		if (gpu)
			gpu_activity_add(&ctx->gpu, out->pid, m->device_id, m->stream_id, m->start_ns, m->end_ns,
					 GPU_WORK_COPY);
		break;
	}
	case GP_REC_COUNTER:
		if (ctx->needs & STATS_NEED_COUNTERS)
			counters_add(&ctx->cnt, out->pid, &rec->u.counter, tool_str(ctx->r, rec->u.counter.name_id));
		break;
	}
	return 1;
}

void stats_ctx_finish(struct stats_ctx *ctx)
{
	winset_finish(&ctx->win);
	if (ctx->clipped) winset_clip(&ctx->win, ctx->since, ctx->until);
	gpu_activity_finish(&ctx->gpu, &ctx->win);
	kshapes_finish(&ctx->shapes, &ctx->dev);
	counters_finish(&ctx->cnt);
}

int stats_ctx_rank(const struct stats_ctx *ctx, uint32_t pid)
{
	uint64_t *v = u64map_get((u64map *)&ctx->rank_of, pid, MAP_FIND);
	return v ? (int)((int64_t)*v - 1) : -1;
}

void stats_ctx_free(struct stats_ctx *ctx)
{
	u64map_free(&ctx->rank_of);
	winset_free(&ctx->win);
	devprops_free(&ctx->dev);
	kernel_names_free(&ctx->kn);
	kshapes_free(&ctx->shapes);
	gpu_activity_free(&ctx->gpu);
	counters_free(&ctx->cnt);
}
