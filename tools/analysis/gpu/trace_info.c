/* trace_info.c — see trace_info.h. */
#include "analysis/gpu/trace_info.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/tool.h"

static int timed_type(uint32_t t)
{
	switch (t) {
	case GP_REC_API: case GP_REC_KERNEL: case GP_REC_MEMCPY: case GP_REC_MEMSET:
	case GP_REC_NVTX_RANGE: case GP_REC_NVTX_MARK: case GP_REC_SYNC: case GP_REC_MEMORY:
	case GP_REC_DROPPED: case GP_REC_COUNTER: case GP_REC_WINDOW:
		return 1;
	default:
		return 0;
	}
}

/* The entry of key in seen's vector arr: *x over it when there, else *x
 * appended (a later record's, as in one read). */
#define PUT(seen, key, arr, n, cap, x) memcpy(VEC_KEYED(seen, key, arr, n, cap, x), (x), sizeof(*(arr)))

static void dev_put(struct trace_info *in, uint32_t pid, const gp_rec_device *d)
{
	size_t n = in->ndevs;
	PUT(&in->seen_dev, ((uint64_t)pid << 32) | d->device_id, in->devs, in->ndevs, in->cdevs, d);
	if (in->ndevs > n) VEC_PUSH(in->dev_pid, n, in->cdevpid, pid);
}

void trace_info_add(struct trace_info *in, gp_reader *r, const gp_record *rec)
{
	if (rec->type < GP_REC_TYPE_MAX)
		in->counts[rec->type]++;
	switch (rec->type) {
	case GP_REC_PROCESS:
		PUT(&in->seen_proc, rec->u.process.pid, in->procs, in->nprocs, in->cprocs, &rec->u.process);
		break;
	case GP_REC_THREAD:
		PUT(&in->seen_thread, ((uint64_t)rec->u.thread.pid << 32) | rec->u.thread.tid, in->threads, in->nthreads,
		    in->cthreads, &rec->u.thread);
		break;
	case GP_REC_SOURCE:
		PUT(&in->seen_src, rec->u.source.source_id, in->srcs, in->nsrcs, in->csrcs, &rec->u.source);
		break;
	case GP_REC_DEVICE:
		dev_put(in, tool_pid(r, rec), &rec->u.device);
		break;
	case GP_REC_WINDOW:
		winset_add(&in->win, tool_pid(r, rec), rec->u.window.start_ns, rec->u.window.end_ns);
		break;
	case GP_REC_DROPPED:
		in->dropped_total += rec->u.dropped.count;
		in->dropped[rec->u.dropped.where < 8 ? rec->u.dropped.where : 0] += rec->u.dropped.count;
		break;
	}
	if (timed_type(rec->type)) {
		uint64_t t0 = gp_record_time(rec), t1 = tool_rec_end(rec);
		if (t1 < t0) t1 = t0;
		if (!in->have_time || t0 < in->first) in->first = t0;
		if (!in->have_time || t1 > in->last) in->last = t1;
		in->have_time = 1;
	}
}

void trace_info_merge(struct trace_info *in, const struct trace_info *src)
{
	for (int t = 0; t < GP_REC_TYPE_MAX; t++) in->counts[t] += src->counts[t];
	for (int w = 0; w < 8; w++) in->dropped[w] += src->dropped[w];
	in->dropped_total += src->dropped_total;
	if (src->have_time) {
		if (!in->have_time || src->first < in->first) in->first = src->first;
		if (!in->have_time || src->last > in->last) in->last = src->last;
		in->have_time = 1;
	}
	for (size_t i = 0; i < src->nprocs; i++)
		PUT(&in->seen_proc, src->procs[i].pid, in->procs, in->nprocs, in->cprocs, &src->procs[i]);
	for (size_t i = 0; i < src->nthreads; i++)
		PUT(&in->seen_thread, ((uint64_t)src->threads[i].pid << 32) | src->threads[i].tid, in->threads,
		    in->nthreads, in->cthreads, &src->threads[i]);
	for (size_t i = 0; i < src->nsrcs; i++)
		PUT(&in->seen_src, src->srcs[i].source_id, in->srcs, in->nsrcs, in->csrcs, &src->srcs[i]);
	for (size_t i = 0; i < src->ndevs; i++) dev_put(in, src->dev_pid[i], &src->devs[i]);
	for (size_t i = 0; i < src->win.n; i++) winset_add(&in->win, src->win.v[i].pid, src->win.v[i].s, src->win.v[i].e);
}

static int cmp_src(const void *a, const void *b)
{
	const gp_rec_source *x = a, *y = b;
	return x->source_id < y->source_id ? -1 : x->source_id > y->source_id;
}

static int cmp_thread(const void *a, const void *b)
{
	const gp_rec_thread *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_proc(const void *a, const void *b)
{
	const gp_rec_process *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void trace_info_print_json(FILE *f, const struct trace_info *in, gp_reader *r, const char *path,
			   const struct gp_integrity *ig)
{
	const gp_header *h = gp_reader_header(r);
	char buf[64];
	fprintf(f, "{\"file\":"); json_str(f, path);
	fprintf(f, ",\"format\":\"%u.%u\",\"producer\":", h->major, h->minor);
	json_str(f, h->producer);
	fprintf(f, ",\"host\":"); json_str(f, h->host);
	fmt_iso8601(buf, sizeof(buf), h->start_realtime_ns);
	fprintf(f, ",\"pid\":%u,\"rank\":%d,\"start\":\"%s\",\"start_realtime_ns\":%" PRIu64
	       ",\"start_trace_ns\":%" PRIu64 ",\"clock\":\"%s\"",
	       h->pid, h->rank, buf, h->start_realtime_ns, h->start_trace_ns, clock_name(h->clock_id));
	if (in->have_time)
		fprintf(f, ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64,
		       in->first, in->last, in->last - in->first);
	if (in->win.n)
		fprintf(f, ",\"windows\":%zu,\"window_ns\":%" PRIu64, in->win.n, winset_covered(&in->win));
	fprintf(f, ",\"processes\":[");
	for (size_t i = 0; i < in->nprocs; i++) {
		gp_rec_process *p = &in->procs[i];
		fprintf(f, "%s{\"pid\":%u,\"ppid\":%u,\"rank\":%d,\"host\":", i ? "," : "", p->pid, p->ppid, p->rank);
		json_str(f, tool_str(r, p->host_id));
		fprintf(f, ",\"name\":"); json_str(f, tool_str(r, p->name_id));
		fprintf(f, ",\"start_ns\":%" PRIu64, p->start_ns);
		if (p->settings_id) {
			fprintf(f, ",\"settings\":");
			json_str(f, tool_str(r, p->settings_id));
		}
		fputc('}', f);
	}
	fprintf(f, "],\"threads\":[");
	for (size_t i = 0; i < in->nthreads; i++) {
		fprintf(f, "%s{\"pid\":%u,\"tid\":%u,\"name\":", i ? "," : "", in->threads[i].pid, in->threads[i].tid);
		json_str(f, tool_str(r, in->threads[i].name_id));
		fputc('}', f);
	}
	fprintf(f, "],\"sources\":[");
	for (size_t i = 0; i < in->nsrcs; i++) {
		gp_rec_source *s = &in->srcs[i];
		fprintf(f, "%s{\"source\":%u,\"kind\":\"%s\",\"pid\":%u,\"tid\":%u,\"name\":", i ? "," : "",
		       s->source_id, source_kind_name(s->kind), s->pid, s->tid);
		json_str(f, tool_str(r, s->name_id));
		fputc('}', f);
	}
	fprintf(f, "],\"devices\":[");
	for (size_t i = 0; i < in->ndevs; i++) {
		gp_rec_device *d = &in->devs[i];
		fprintf(f, "%s{\"pid\":%u,\"device\":%u,\"name\":", i ? "," : "", in->dev_pid[i], d->device_id);
		json_str(f, tool_str(r, d->name_id));
		fprintf(f, ",\"sm_count\":%u,\"cc\":\"%u.%u\",\"global_mem\":%" PRIu64 "}", d->sm_count,
		       d->cc_major, d->cc_minor, d->global_mem_bytes);
	}
	fprintf(f, "],\"counts\":{");
	int first = 1;
	for (int t = 1; t < GP_REC_TYPE_MAX; t++)
		if (in->counts[t]) {
			fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", gp_rec_type_name(t), in->counts[t]);
			first = 0;
		}
	fprintf(f, "},\"dropped\":%" PRIu64 ",\"dropped_by\":{", in->dropped_total);
	first = 1;
	for (int w = 0; w < 8; w++)
		if (in->dropped[w]) {
			fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", drop_where_name(w), in->dropped[w]);
			first = 0;
		}
	fprintf(f, "},\"integrity\":{\"status\":\"%s\",\"frames_ok\":%" PRIu64 ",\"frames_corrupt\":%" PRIu64
	       ",\"bytes_skipped\":%" PRIu64 ",\"truncated\":%s,\"truncated_at\":%" PRIu64
	       ",\"has_footer\":%s}}\n",
	       ig->frames_corrupt ? "corrupt" : ig->truncated ? "truncated" : "complete",
	       ig->frames_ok, ig->frames_corrupt, ig->bytes_skipped, ig->truncated ? "true" : "false",
	       ig->truncated_at, ig->has_footer ? "true" : "false");
}

void trace_info_finish(struct trace_info *in)
{
	if (in->nsrcs) qsort(in->srcs, in->nsrcs, sizeof(*in->srcs), cmp_src);
	if (in->nthreads) qsort(in->threads, in->nthreads, sizeof(*in->threads), cmp_thread);
	if (in->nprocs) qsort(in->procs, in->nprocs, sizeof(*in->procs), cmp_proc);
	winset_finish(&in->win);
}

void trace_info_free(struct trace_info *in)
{
	free(in->procs); free(in->threads); free(in->srcs); free(in->devs); free(in->dev_pid);
	u64map_free(&in->seen_proc); u64map_free(&in->seen_thread);
	u64map_free(&in->seen_src); u64map_free(&in->seen_dev);
	winset_free(&in->win);
	memset(in, 0, sizeof(*in));
}
