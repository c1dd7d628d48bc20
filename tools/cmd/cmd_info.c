/* cmd_info.c — `gpuprof info FILE`: what is in a trace, and is it whole. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/windows.h"
#include "cmd/cmd.h"
#include "common/tool.h"

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof info [--json] [--strict] FILE\n\n"
		   "Prints the trace header (version, producer, host, pid, rank, start time in UTC,\n"
		   "clock), processes, threads/sources, devices, time span, record counts by type,\n"
		   "dropped records and integrity (complete / truncated / corrupt frames skipped).\n\n"
		   "  --json     one JSON object instead of text\n"
		   "  --strict   exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help this text\n"
		   "  FILE       the trace; '-' = stdin (copied to a temporary file first)\n");
}

struct info {
	gp_rec_process *procs; size_t nprocs, cprocs;
	gp_rec_thread *threads; size_t nthreads, cthreads;
	gp_rec_source *srcs; size_t nsrcs, csrcs;
	gp_rec_device *devs; uint32_t *dev_pid; size_t ndevs, cdevs, cdevpid;
	uint64_t counts[GP_REC_TYPE_MAX];
	uint64_t dropped[8];
	uint64_t dropped_total;
	uint64_t first, last;
	int have_time;
	u64map seen_proc, seen_thread, seen_src, seen_dev;
	struct winset win;      /* GPU-activity windows (windowed trace) */
};

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

static void collect(struct info *in, gp_reader *r, const gp_record *rec)
{
	uint64_t *slot;
	if (rec->type < GP_REC_TYPE_MAX)
		in->counts[rec->type]++;
	switch (rec->type) {
	case GP_REC_PROCESS:
		slot = u64map_get(&in->seen_proc, rec->u.process.pid, MAP_FIND);
		if (slot) { in->procs[*slot] = rec->u.process; break; }
		*u64map_get(&in->seen_proc, rec->u.process.pid, MAP_INSERT) = in->nprocs;
		VEC_PUSH(in->procs, in->nprocs, in->cprocs, rec->u.process);
		break;
	case GP_REC_THREAD: {
		uint64_t k = ((uint64_t)rec->u.thread.pid << 32) | rec->u.thread.tid;
		slot = u64map_get(&in->seen_thread, k, MAP_FIND);
		if (slot) { in->threads[*slot] = rec->u.thread; break; }
		*u64map_get(&in->seen_thread, k, MAP_INSERT) = in->nthreads;
		VEC_PUSH(in->threads, in->nthreads, in->cthreads, rec->u.thread);
		break;
	}
	case GP_REC_SOURCE:
		slot = u64map_get(&in->seen_src, rec->u.source.source_id, MAP_FIND);
		if (slot) { in->srcs[*slot] = rec->u.source; break; }
		*u64map_get(&in->seen_src, rec->u.source.source_id, MAP_INSERT) = in->nsrcs;
		VEC_PUSH(in->srcs, in->nsrcs, in->csrcs, rec->u.source);
		break;
	case GP_REC_DEVICE: {
		uint32_t pid = tool_pid(r, rec);
		uint64_t k = ((uint64_t)pid << 32) | rec->u.device.device_id;
		slot = u64map_get(&in->seen_dev, k, MAP_FIND);
		if (slot) { in->devs[*slot] = rec->u.device; break; }
		*u64map_get(&in->seen_dev, k, MAP_INSERT) = in->ndevs;
		size_t n = in->ndevs;
		VEC_PUSH(in->devs, in->ndevs, in->cdevs, rec->u.device);
		VEC_PUSH(in->dev_pid, n, in->cdevpid, pid);
		break;
	}
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

static void print_rank(FILE *f, int32_t rank)
{
	if (rank < 0) fputs("-", f);
	else fprintf(f, "%d", rank);
}

static void print_text(struct info *in, gp_reader *r, const char *path, const struct gp_integrity *ig)
{
	const gp_header *h = gp_reader_header(r);
	char buf[128];
	printf("file:       %s\n", path);
	printf("format:     %u.%u\n", h->major, h->minor);
	printf("producer:   %s\n", tool_text(h->producer));
	printf("host:       %s\n", tool_text(h->host));
	printf("pid:        %u\n", h->pid);
	printf("rank:       "); print_rank(stdout, h->rank); putchar('\n');
	fmt_iso8601(buf, sizeof(buf), h->start_realtime_ns);
	printf("start:      %s\n", buf);
	printf("clock:      %s (start at %" PRIu64 " ns)\n", clock_name(h->clock_id), h->start_trace_ns);
	if (in->have_time) {
		fmt_dur(buf, sizeof(buf), in->last - in->first);
		printf("span:       %s (%" PRIu64 " .. %" PRIu64 " ns)\n", buf, in->first, in->last);
	} else {
		printf("span:       - (no timed records)\n");
	}

	if (in->win.n) { /* a windowed trace: say how much of it has GPU activity */
		char cov[32];
		uint64_t c = winset_covered(&in->win), span = in->last - in->first;
		fmt_dur(cov, sizeof(cov), c);
		fmt_dur(buf, sizeof(buf), span);
		printf("windows:    %zu, GPU activity recorded in %s of %s (%.1f %%)\n", in->win.n, cov, buf,
		       span ? 100.0 * (double)c / (double)span : 100.0);
	}
	printf("processes:  %zu\n", in->nprocs);
	for (size_t i = 0; i < in->nprocs; i++) {
		gp_rec_process *p = &in->procs[i];
		printf("  pid %u ppid %u rank ", p->pid, p->ppid);
		print_rank(stdout, p->rank);
		printf(" host %s: %s\n", tool_text(tool_str(r, p->host_id)), tool_text(tool_str(r, p->name_id)));
		if (p->settings_id) /* since format 1.2 */
			printf("    settings: %s\n", tool_text(tool_str(r, p->settings_id)));
	}
	printf("threads:    %zu\n", in->nthreads);
	for (size_t i = 0; i < in->nthreads; i++)
		printf("  pid %u tid %u: %s\n", in->threads[i].pid, in->threads[i].tid,
		       tool_text(tool_str(r, in->threads[i].name_id)));
	printf("sources:    %zu\n", in->nsrcs);
	for (size_t i = 0; i < in->nsrcs; i++) {
		gp_rec_source *s = &in->srcs[i];
		printf("  %u: %s pid %u tid %u%s%s\n", s->source_id, source_kind_name(s->kind),
		       s->pid, s->tid, s->name_id ? " " : "", tool_text(tool_str(r, s->name_id)));
	}
	printf("devices:    %zu\n", in->ndevs);
	for (size_t i = 0; i < in->ndevs; i++) {
		gp_rec_device *d = &in->devs[i];
		printf("  pid %u device %u: %s, %u SMs, %.1f GiB, cc %u.%u\n", in->dev_pid[i],
		       d->device_id, tool_text(tool_str(r, d->name_id)), d->sm_count,
		       d->global_mem_bytes / (1024.0 * 1024 * 1024), d->cc_major, d->cc_minor);
	}
	printf("records:\n");
	for (int t = 1; t < GP_REC_TYPE_MAX; t++)
		if (in->counts[t])
			printf("  %-11s %" PRIu64 "\n", rec_type_name(t), in->counts[t]);
	printf("dropped:    %" PRIu64, in->dropped_total);
	if (in->dropped_total) {
		const char *sep = " (";
		for (int w = 0; w < 8; w++)
			if (in->dropped[w]) {
				printf("%s%s %" PRIu64, sep, drop_where_name(w), in->dropped[w]);
				sep = ", ";
			}
		putchar(')');
	}
	putchar('\n');
	struct gp_footer_info fi;
	memset(&fi, 0, sizeof(fi));
	if (gp_reader_footer(r, &fi) == 0 && fi.present)
		printf("index:      footer present: %" PRIu64 " records in %" PRIu64 " chunks\n",
		       fi.record_count, fi.chunk_count);
	else
		printf("index:      none (file was not closed cleanly)\n");
	printf("integrity:  ");
	if (ig->frames_corrupt)
		printf("%" PRIu64 " corrupt frames skipped (%" PRIu64 " bytes), %" PRIu64 " frames ok%s\n",
		       ig->frames_corrupt, ig->bytes_skipped, ig->frames_ok,
		       ig->truncated ? ", truncated" : "");
	else if (ig->truncated)
		printf("truncated after %" PRIu64 " frames at offset %" PRIu64 "\n", ig->frames_ok,
		       ig->truncated_at);
	else
		printf("complete, %" PRIu64 " frames, %s\n", ig->frames_ok,
		       ig->has_footer ? "footer present" : "no footer");
}

static void print_json(struct info *in, gp_reader *r, const char *path, const struct gp_integrity *ig)
{
	const gp_header *h = gp_reader_header(r);
	char buf[64];
	printf("{\"file\":"); json_str(stdout, path);
	printf(",\"format\":\"%u.%u\",\"producer\":", h->major, h->minor);
	json_str(stdout, h->producer);
	printf(",\"host\":"); json_str(stdout, h->host);
	fmt_iso8601(buf, sizeof(buf), h->start_realtime_ns);
	printf(",\"pid\":%u,\"rank\":%d,\"start\":\"%s\",\"start_realtime_ns\":%" PRIu64
	       ",\"start_trace_ns\":%" PRIu64 ",\"clock\":\"%s\"",
	       h->pid, h->rank, buf, h->start_realtime_ns, h->start_trace_ns, clock_name(h->clock_id));
	if (in->have_time)
		printf(",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64,
		       in->first, in->last, in->last - in->first);
	if (in->win.n)
		printf(",\"windows\":%zu,\"window_ns\":%" PRIu64, in->win.n, winset_covered(&in->win));
	printf(",\"processes\":[");
	for (size_t i = 0; i < in->nprocs; i++) {
		gp_rec_process *p = &in->procs[i];
		printf("%s{\"pid\":%u,\"ppid\":%u,\"rank\":%d,\"host\":", i ? "," : "", p->pid, p->ppid, p->rank);
		json_str(stdout, tool_str(r, p->host_id));
		printf(",\"name\":"); json_str(stdout, tool_str(r, p->name_id));
		printf(",\"start_ns\":%" PRIu64, p->start_ns);
		if (p->settings_id) {
			printf(",\"settings\":");
			json_str(stdout, tool_str(r, p->settings_id));
		}
		putchar('}');
	}
	printf("],\"threads\":[");
	for (size_t i = 0; i < in->nthreads; i++) {
		printf("%s{\"pid\":%u,\"tid\":%u,\"name\":", i ? "," : "", in->threads[i].pid, in->threads[i].tid);
		json_str(stdout, tool_str(r, in->threads[i].name_id));
		putchar('}');
	}
	printf("],\"sources\":[");
	for (size_t i = 0; i < in->nsrcs; i++) {
		gp_rec_source *s = &in->srcs[i];
		printf("%s{\"source\":%u,\"kind\":\"%s\",\"pid\":%u,\"tid\":%u,\"name\":", i ? "," : "",
		       s->source_id, source_kind_name(s->kind), s->pid, s->tid);
		json_str(stdout, tool_str(r, s->name_id));
		putchar('}');
	}
	printf("],\"devices\":[");
	for (size_t i = 0; i < in->ndevs; i++) {
		gp_rec_device *d = &in->devs[i];
		printf("%s{\"pid\":%u,\"device\":%u,\"name\":", i ? "," : "", in->dev_pid[i], d->device_id);
		json_str(stdout, tool_str(r, d->name_id));
		printf(",\"sm_count\":%u,\"cc\":\"%u.%u\",\"global_mem\":%" PRIu64 "}", d->sm_count,
		       d->cc_major, d->cc_minor, d->global_mem_bytes);
	}
	printf("],\"counts\":{");
	int first = 1;
	for (int t = 1; t < GP_REC_TYPE_MAX; t++)
		if (in->counts[t]) {
			printf("%s\"%s\":%" PRIu64, first ? "" : ",", rec_type_name(t), in->counts[t]);
			first = 0;
		}
	printf("},\"dropped\":%" PRIu64 ",\"dropped_by\":{", in->dropped_total);
	first = 1;
	for (int w = 0; w < 8; w++)
		if (in->dropped[w]) {
			printf("%s\"%s\":%" PRIu64, first ? "" : ",", drop_where_name(w), in->dropped[w]);
			first = 0;
		}
	printf("},\"integrity\":{\"status\":\"%s\",\"frames_ok\":%" PRIu64 ",\"frames_corrupt\":%" PRIu64
	       ",\"bytes_skipped\":%" PRIu64 ",\"truncated\":%s,\"truncated_at\":%" PRIu64
	       ",\"has_footer\":%s}}\n",
	       ig->frames_corrupt ? "corrupt" : ig->truncated ? "truncated" : "complete",
	       ig->frames_ok, ig->frames_corrupt, ig->bytes_skipped, ig->truncated ? "true" : "false",
	       ig->truncated_at, ig->has_footer ? "true" : "false");
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int json = 0, strict = 0, c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': strict = 1; break;
		case 'h': help(stdout); return EXIT_OK;
		default: help(stderr); return EXIT_USAGE;
		}
	}
	const char *path;
	gp_reader *r;
	int opened = tool_open_operand(argc, argv, help, &path, &r);
	if (opened != EXIT_OK)
		return opened;
	struct info in;
	memset(&in, 0, sizeof(in));
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next(r, &rec)) > 0) {
		collect(&in, r, rec);
		progress_tick(++n);
	}
	int code = tool_finish(r, path, rc, strict);
	struct gp_integrity ig;
	memset(&ig, 0, sizeof(ig));
	gp_reader_integrity(r, &ig);
	if (in.nsrcs) qsort(in.srcs, in.nsrcs, sizeof(*in.srcs), cmp_src);
	if (in.nthreads) qsort(in.threads, in.nthreads, sizeof(*in.threads), cmp_thread);
	if (in.nprocs) qsort(in.procs, in.nprocs, sizeof(*in.procs), cmp_proc);
	winset_finish(&in.win);
	/* A fatal error before anything was read prints nothing: there is no
	 * intact prefix to describe. */
	if (rc >= 0 || n > 0 || rc == GP_ERR_TRUNCATED || rc == GP_ERR_CORRUPT) {
		if (json) print_json(&in, r, path, &ig);
		else print_text(&in, r, path, &ig);
	}
	free(in.procs); free(in.threads); free(in.srcs); free(in.devs); free(in.dev_pid);
	u64map_free(&in.seen_proc); u64map_free(&in.seen_thread);
	u64map_free(&in.seen_src); u64map_free(&in.seen_dev);
	winset_free(&in.win);
	gp_reader_close(r);
	return code;
}
