/* export_perfetto.c — Chrome trace-event JSON, the format ui.perfetto.dev and
 * chrome://tracing load; its tracks, events and --summary: docs/CLI.md
 * ("gpuprof export").  Streamed in time order: memory holds only the
 * launch calls whose GPU work has not appeared yet, and the track names.
 * The stacks and modules are read in a first pass over the file (over its
 * metadata chunks only, format 1.4), so a stream-ordered record never
 * waits for one.  A selection reads only the chunks of its span where the
 * trace allows it (selection_window).  --summary's size grows with the
 * steps and the buckets, not with the records. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gp_launch.h"
#include "analysis/gpu/kernel_names.h"
#include "analysis/join/opjoin.h"
#include "analysis/stacks/stacks.h"
#include "analysis/core/time_buckets.h"
#include "common/gzout.h"
#include "common/tool.h"
#include "export/export.h"

#define GPU_PID_BASE 0x40000000u
#define WINDOW_TID 0x7ffffff0u /* the windows' track in their process */
#define SUMMARY_BUCKETS 2000

/* --summary: the bucketed series, key = pid << 32 | kind << 28 | string id
 * (counters: their name) */
enum summary_kind {
	SK_KERNEL_TIME = 1, SK_COPY_TIME, SK_KERNELS, SK_API_CALLS, SK_COUNTER_SUM, SK_COUNTER_N, SK_MEMORY
};
static uint64_t sk_key(uint32_t pid, enum summary_kind kind, uint32_t id)
{
	return (uint64_t)pid << 32 | (uint64_t)kind << 28 | (id & 0x0fffffffu);
}

struct launch { uint64_t ts; uint32_t pid, tid; int graph; };

struct px {
	gp_reader *r;
	FILE *f;
	int first;
	uint64_t base;      /* ts count from it: the trace start, or 0 (--abs-time) */
	const struct selection *sel;
	uint32_t hdr_pid;
	u64map gpu_pid;     /* (pid<<32|device) -> synthetic pid */
	u64map named;       /* tracks already named: (pid<<32|tid) */
	u64map launches;    /* (pid<<40 ^ corr) -> struct launch * */
	struct kernel_names kn; /* demangled kernel names */
	u64map memuse;      /* (pid<<32|device) -> bytes allocated */
	uint32_t ngpus;
	uint64_t flow_id, async_id;
	struct stacks *stacks;
	int summary;
	struct time_buckets tb;
};

static void ev_begin(struct px *p)
{
	fputs(p->first ? "\n" : ",\n", p->f);
	p->first = 0;
}

static void dur_key(struct px *p, uint64_t s, uint64_t e)
{
	fputs(",\"dur\":", p->f);
	fprint_us(p->f, e > s ? (int64_t)(e - s) : 0);
}

/* An event up to its time: `{HEAD,"name":NAME` then "id" (id >= 0), "pid",
 * "tid" (tid >= 0) and "ts"; HEAD is its phase and category. */
static void ev(struct px *p, const char *head, const char *name, int64_t id, uint32_t pid, int64_t tid, uint64_t ts)
{
	ev_begin(p);
	fprintf(p->f, "{%s,\"name\":", head);
	json_str(p->f, name);
	if (id >= 0) fprintf(p->f, ",\"id\":%" PRId64, id);
	fprintf(p->f, ",\"pid\":%u", pid);
	if (tid >= 0) fprintf(p->f, ",\"tid\":%" PRId64, tid);
	fputs(",\"ts\":", p->f);
	fprint_us(p->f, (int64_t)(ts - p->base));
}

static void meta_name(struct px *p, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	ev_begin(p);
	fprintf(p->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":", what, pid, tid);
	json_str(p->f, name);
	fputs("}}", p->f);
}

/* A thread's track named, once. */
static void name_track(struct px *p, uint32_t pid, uint32_t tid, const char *name)
{
	uint64_t *named = u64map_get(&p->named, ((uint64_t)pid << 32) | tid, MAP_INSERT);
	if (!*named) meta_name(p, "thread_name", pid, tid, name);
	*named = 1;
}

/* The synthetic process of a GPU, named when new. */
static uint32_t gpu_pid(struct px *p, uint32_t pid, uint32_t dev)
{
	uint64_t *s = u64map_get(&p->gpu_pid, ((uint64_t)pid << 32) | dev, MAP_INSERT);
	uint32_t gpid = (uint32_t)*s;
	if (!gpid) { /* new (GPU_PID_BASE is not 0) */
		*s = gpid = GPU_PID_BASE + p->ngpus++;
		char name[64];
		if (pid == p->hdr_pid) snprintf(name, sizeof(name), "GPU %u", dev);
		else snprintf(name, sizeof(name), "GPU %u (pid %u)", dev, pid);
		meta_name(p, "process_name", gpid, 0, name);
		ev_begin(p);
		fprintf(p->f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"tid\":0,"
			"\"args\":{\"sort_index\":%u}}", gpid, 1000 + p->ngpus);
	}
	return gpid;
}

/* The track of a GPU stream, named when new. */
static uint32_t gpu_track(struct px *p, uint32_t pid, uint32_t dev, uint32_t stream)
{
	uint32_t gpid = gpu_pid(p, pid, dev);
	char name[32];
	snprintf(name, sizeof(name), "Stream %u", stream);
	name_track(p, gpid, stream, name);
	return gpid;
}

static void on_api(struct px *p, const gp_record *rec, uint32_t pid, uint32_t tid)
{
	const gp_rec_api *a = &rec->u.api;
	const char *name = tool_str(p->r, a->name_id);
	ev(p, "\"ph\":\"X\",\"cat\":\"cuda_api\"", *name ? name : "cuda_api", -1, pid, tid, a->start_ns);
	dur_key(p, a->start_ns, a->end_ns);
	fprintf(p->f, ",\"args\":{\"corr\":%" PRIu64 ",\"cbid\":%u,\"domain\":\"%s\",\"status\":%d",
		a->correlation_id, a->cbid, a->domain == GP_API_DRIVER ? "driver" : "runtime", a->status);
	const struct stack_view *v = stacks_view(p->stacks, a->stack_id, pid, tid);
	if (v) {
		fputs(",\"stack\":[", p->f);
		for (uint32_t i = 0; i < v->nframes; i++) {
			if (i) fputc(',', p->f);
			json_str(p->f, v->frames[i]);
		}
		fputs("],\"launch_site\":", p->f);
		json_str(p->f, v->site);
	} else if (a->stack_id) {
		fprintf(p->f, ",\"stack_id\":%u", a->stack_id); /* not defined in the trace */
	}
	fputs("}}", p->f);
	enum gp_launch_kind kind = gp_launch_kind(a->domain, a->cbid);
	if (!a->correlation_id || kind == GP_LAUNCH_NONE)
		return;
	if (p->launches.n > (1u << 22)) {
		/* launches that never got GPU work (activity off?): start over */
		for (size_t i = 0; i < p->launches.cap; i++)
			if (p->launches.used[i]) free((void *)(uintptr_t)p->launches.slot[i].val);
		u64map_free(&p->launches);
	}
	uint64_t *slot = u64map_get(&p->launches, ((uint64_t)pid << 40) ^ a->correlation_id, MAP_INSERT);
	struct launch *l = (struct launch *)(uintptr_t)*slot;
	if (!l) l = xmalloc(sizeof(*l));
	l->ts = a->start_ns; l->pid = pid; l->tid = tid; l->graph = kind == GP_LAUNCH_GRAPH;
	*slot = (uint64_t)(uintptr_t)l;
}

/* Emits the flow pair for a GPU op that has a recorded launch. */
static void flow(struct px *p, uint32_t pid, uint64_t corr, uint32_t gpid, uint32_t stream, uint64_t ts)
{
	uint64_t key = ((uint64_t)pid << 40) ^ corr;
	uint64_t *slot = u64map_get(&p->launches, key, MAP_FIND);
	if (!slot) return;
	struct launch *l = (struct launch *)(uintptr_t)*slot;
	int64_t id = (int64_t)++p->flow_id;
	ev(p, "\"ph\":\"s\",\"cat\":\"launch\"", "launch", id, l->pid, l->tid, l->ts);
	fputs("}", p->f);
	ev(p, "\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\"", "launch", id, gpid, stream, ts);
	fputs("}", p->f);
	if (!l->graph) {
		free(l);
		u64map_del(&p->launches, key);
	}
}

/* The args of an NVTX event up to its domain: `,"args":{"domain":DOMAIN`. */
static void args_domain(struct px *p, const char *domain)
{
	fputs(",\"args\":{\"domain\":", p->f);
	json_str(p->f, domain);
}

/* A slice: an "X" event up to its duration. */
static void slice(struct px *p, const char *head, const char *name, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e)
{
	ev(p, head, name, -1, pid, tid, s);
	dur_key(p, s, e);
}

/* The device memory allocated by a process on a device, after the
 * allocation or free m (other operations: NULL). */
static const uint64_t *mem_use(struct px *p, uint32_t pid, const gp_rec_memory *m)
{
	if (m->op != 1 && m->op != 2) return NULL;
	uint64_t *use = u64map_get(&p->memuse, ((uint64_t)pid << 32) | m->device_id, MAP_INSERT);
	if (m->op == 1) *use += m->bytes;
	else *use = *use > m->bytes ? *use - m->bytes : 0;
	return use;
}

/* --summary: API calls and GPU work go into the buckets only; 1 when the
 * record was taken so. */
static int summarised(struct px *p, const gp_record *rec, uint32_t pid)
{
	struct time_buckets *tb = &p->tb;
	struct gpu_op op;
	switch (rec->type) {
	case GP_REC_API:
		time_buckets_add(tb, time_buckets_series(tb, sk_key(pid, SK_API_CALLS, 0)), rec->u.api.start_ns, 1);
		return 1;
	case GP_REC_COUNTER: {
		const gp_rec_counter *c = &rec->u.counter;
		uint32_t gpid = gpu_pid(p, pid, c->device_id);
		double v = c->kind == GP_COUNTER_DOUBLE ? c->value.d : (double)c->value.i;
		time_buckets_add(tb, time_buckets_series(tb, sk_key(gpid, SK_COUNTER_SUM, c->name_id)), c->ts_ns, v);
		time_buckets_add(tb, time_buckets_series(tb, sk_key(gpid, SK_COUNTER_N, c->name_id)), c->ts_ns, 1);
		return 1;
	}
	case GP_REC_MEMORY: {
		const gp_rec_memory *m = &rec->u.memory;
		const uint64_t *use = mem_use(p, pid, m);
		if (!use) return 1;
		uint32_t gpid = gpu_pid(p, pid, m->device_id);
		time_buckets_max(tb, time_buckets_series(tb, sk_key(gpid, SK_MEMORY, 0)), m->ts_ns, (double)*use);
		return 1;
	}
	case GP_REC_NVTX_RANGE: /* the steps: outermost push/pop ranges */
		return rec->u.nvtx_range.kind == GP_NVTX_PUSHPOP && rec->u.nvtx_range.depth > 0;
	}
	if (!gpu_op_of(rec, pid, &op)) return 0;
	uint32_t gpid = gpu_pid(p, pid, op.device);
	int kernel = op.kind == OP_KERNEL;
	time_buckets_busy(tb, time_buckets_series(tb, sk_key(gpid, kernel ? SK_KERNEL_TIME : SK_COPY_TIME, 0)), op.s, op.e);
	if (kernel) time_buckets_add(tb, time_buckets_series(tb, sk_key(gpid, SK_KERNELS, 0)), op.s, 1);
	return 1;
}

static void summary_value(struct px *p, const char *name, uint32_t pid, uint64_t ts, double v)
{
	ev(p, "\"ph\":\"C\"", name, -1, pid, -1, ts);
	fprintf(p->f, ",\"args\":{\"value\":%.6g}}", v);
}

/* --summary: every series as a counter, one value per bucket: rates and
 * shares through the end (0 after it); sampled counters (mean) and memory
 * (peak) only in buckets that had a sample, holding until the next. */
static void summary_counters(struct px *p)
{
	static const char *const names[] = {
		[SK_KERNEL_TIME] = "GPU kernel time (%)", [SK_COPY_TIME] = "GPU copy time (%)",
		[SK_KERNELS] = "kernels started (per s)", [SK_API_CALLS] = "CUDA API calls (per s)",
		[SK_MEMORY] = "device memory (bytes)",
	};
	struct time_buckets *b = &p->tb;
	for (size_t k = 0; k < b->ns; k++) {
		uint64_t key = b->s[k].key;
		uint32_t pid = (uint32_t)(key >> 32), id = (uint32_t)(key & 0x0fffffffu);
		enum summary_kind kind = (enum summary_kind)((key >> 28) & 0xf);
		if (kind == SK_COUNTER_N) continue;
		size_t nk = kind == SK_COUNTER_SUM ? time_buckets_series(b, sk_key(pid, SK_COUNTER_N, id)) : 0;
		for (size_t i = 0; i <= b->len; i++) {
			uint64_t ts = b->t0 + (uint64_t)i * b->width;
			double v = time_buckets_get(b, k, i);
			switch (kind) {
			case SK_KERNEL_TIME: case SK_COPY_TIME:
				summary_value(p, names[kind], pid, ts, i < b->len ? 100.0 * v / (double)b->width : 0);
				break;
			case SK_KERNELS: case SK_API_CALLS:
				summary_value(p, names[kind], pid, ts, i < b->len ? v * 1e9 / (double)b->width : 0);
				break;
			case SK_COUNTER_SUM: {
				double n = time_buckets_get(b, nk, i);
				if (n) summary_value(p, tool_str(p->r, id), pid, ts, v / n);
				break;
			}
			case SK_MEMORY:
				if (v) summary_value(p, names[kind], pid, ts, v);
				break;
			default:
				break;
			}
		}
	}
}

static void on_record(struct px *p, const gp_record *rec)
{
	if (!selection_keeps(p->sel, rec)) return;
	uint32_t pid = tool_pid(p->r, rec);
	const gp_rec_source *src = gp_reader_source(p->r, rec->source_id);
	uint32_t stid = src ? src->tid : 0;
	if (p->summary && summarised(p, rec, pid))
		return;
	switch (rec->type) {
	case GP_REC_PROCESS: {
		const gp_rec_process *pr = &rec->u.process;
		char name[512];
		const char *cmd = tool_str(p->r, pr->name_id);
		if (pr->rank >= 0) snprintf(name, sizeof(name), "%s [rank %d]", *cmd ? cmd : "process", pr->rank);
		else snprintf(name, sizeof(name), "%s", *cmd ? cmd : "process");
		meta_name(p, "process_name", pr->pid, 0, name);
		break;
	}
	case GP_REC_THREAD: {
		*u64map_get(&p->named, ((uint64_t)rec->u.thread.pid << 32) | rec->u.thread.tid, MAP_INSERT) = 1;
		meta_name(p, "thread_name", rec->u.thread.pid, rec->u.thread.tid, tool_str(p->r, rec->u.thread.name_id));
		break;
	}
	case GP_REC_SOURCE: {
		const gp_rec_source *s = &rec->u.source;
		if (s->kind == GP_SOURCE_THREAD && s->name_id) name_track(p, s->pid, s->tid, tool_str(p->r, s->name_id));
		break;
	}
	case GP_REC_API:
		on_api(p, rec, pid, rec->u.api.tid ? rec->u.api.tid : stid);
		break;
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		uint32_t gpid = gpu_track(p, pid, k->device_id, k->stream_id);
		slice(p, "\"ph\":\"X\",\"cat\":\"kernel\"", kernel_name_demangled(&p->kn, k->name_id), gpid, k->stream_id,
		      k->start_ns, k->end_ns);
		fprintf(p->f, ",\"args\":{\"corr\":%" PRIu64 ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]"
			",\"registers\":%u,\"static_smem\":%u,\"dynamic_smem\":%u,\"device\":%u,\"context\":%u"
			",\"stream\":%u",
			k->correlation_id, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
			k->block[2], k->registers, k->static_smem, k->dynamic_smem, k->device_id,
			k->context_id, k->stream_id);
		if (k->graph_node_id) fprintf(p->f, ",\"graph_node_id\":%" PRIu64, k->graph_node_id);
		fputs(",\"mangled\":", p->f);
		json_str(p->f, tool_str(p->r, k->name_id));
		fputs("}}", p->f);
		flow(p, pid, k->correlation_id, gpid, k->stream_id, k->start_ns);
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		uint32_t gpid = gpu_track(p, pid, m->device_id, m->stream_id);
		char name[64];
		snprintf(name, sizeof(name), "[CUDA memcpy %s]", copy_kind_long(m->copy_kind));
		slice(p, "\"ph\":\"X\",\"cat\":\"memcpy\"", name, gpid, m->stream_id, m->start_ns, m->end_ns);
		fprintf(p->f, ",\"args\":{\"corr\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"kind\":\"%s\""
			",\"src_kind\":\"%s\",\"dst_kind\":\"%s\",\"async\":%s}}",
			m->correlation_id, m->bytes, copy_kind_name(m->copy_kind), mem_kind_name(m->src_kind),
			mem_kind_name(m->dst_kind), (m->flags & 1) ? "true" : "false");
		flow(p, pid, m->correlation_id, gpid, m->stream_id, m->start_ns);
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &rec->u.memset;
		uint32_t gpid = gpu_track(p, pid, m->device_id, m->stream_id);
		slice(p, "\"ph\":\"X\",\"cat\":\"memset\"", "[CUDA memset]", gpid, m->stream_id, m->start_ns, m->end_ns);
		fprintf(p->f, ",\"args\":{\"corr\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"value\":%u}}",
			m->correlation_id, m->bytes, m->value);
		flow(p, pid, m->correlation_id, gpid, m->stream_id, m->start_ns);
		break;
	}
	case GP_REC_NVTX_RANGE: {
		const gp_rec_nvtx_range *n = &rec->u.nvtx_range;
		uint32_t tid = n->tid ? n->tid : stid;
		const char *dom = tool_str(p->r, n->domain_id);
		if (n->kind == GP_NVTX_STARTEND) {
			int64_t id = (int64_t)++p->async_id;
			for (int end = 0; end < 2; end++) {
				ev(p, end ? "\"ph\":\"e\",\"cat\":\"nvtx\"" : "\"ph\":\"b\",\"cat\":\"nvtx\"",
				   tool_str(p->r, n->message_id), id, pid, end && n->end_tid ? n->end_tid : tid,
				   end ? n->end_ns : n->start_ns);
				if (!end) {
					args_domain(p, dom);
					fprintf(p->f, ",\"category\":%u,\"color\":%u}", n->category, n->color);
				}
				fputs("}", p->f);
			}
			break;
		}
		slice(p, "\"ph\":\"X\",\"cat\":\"nvtx\"", tool_str(p->r, n->message_id), pid, tid, n->start_ns, n->end_ns);
		args_domain(p, dom);
		fprintf(p->f, ",\"depth\":%u,\"category\":%u,\"color\":%u,\"payload\":%" PRId64 "%s}}",
			n->depth, n->category, n->color, n->payload,
			(n->flags & GP_NVTX_UNTERMINATED) ? ",\"unterminated\":true" : "");
		break;
	}
	case GP_REC_NVTX_MARK: {
		const gp_rec_nvtx_mark *m = &rec->u.nvtx_mark;
		ev(p, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx\"", tool_str(p->r, m->message_id), -1, pid,
		   m->tid ? m->tid : stid, m->ts_ns);
		args_domain(p, tool_str(p->r, m->domain_id));
		fputs("}}", p->f);
		break;
	}
	case GP_REC_COUNTER: {
		const gp_rec_counter *c = &rec->u.counter;
		uint32_t gpid = gpu_track(p, pid, c->device_id, 0);
		ev(p, "\"ph\":\"C\"", tool_str(p->r, c->name_id), -1, gpid, -1, c->ts_ns);
		if (c->kind == GP_COUNTER_DOUBLE) fprintf(p->f, ",\"args\":{\"value\":%.17g}}", c->value.d);
		else fprintf(p->f, ",\"args\":{\"value\":%" PRId64 "}}", c->value.i);
		break;
	}
	case GP_REC_MEMORY: {
		const gp_rec_memory *m = &rec->u.memory;
		const uint64_t *use = mem_use(p, pid, m);
		if (!use) break;
		ev(p, "\"ph\":\"C\"", "device memory (bytes)", -1, gpu_track(p, pid, m->device_id, 0), -1, m->ts_ns);
		fprintf(p->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", *use);
		break;
	}
	case GP_REC_WINDOW: {
		const gp_rec_window *w = &rec->u.window;
		name_track(p, pid, WINDOW_TID, "GPU activity windows");
		slice(p, "\"ph\":\"X\",\"cat\":\"gpuprof\"", "GPU activity recorded", pid, WINDOW_TID, w->start_ns,
		      w->end_ns);
		fprintf(p->f, ",\"args\":{\"duration_ns\":%" PRIu64 "}}",
			w->end_ns > w->start_ns ? w->end_ns - w->start_ns : 0);
		break;
	}
	case GP_REC_DROPPED: {
		const gp_rec_dropped *d = &rec->u.dropped;
		char name[96];
		snprintf(name, sizeof(name), "dropped %" PRIu64 " records (%s)", d->count, drop_where_name(d->where));
		ev(p, "\"ph\":\"i\",\"s\":\"p\",\"cat\":\"gpuprof\"", name, -1, pid, 0, d->ts_ns);
		fputs("}", p->f);
		break;
	}
	}
}

int export_perfetto(const char *in, const char *out, int strict, const struct export_opts *o)
{
	gp_reader *r = tool_open(in);
	if (!r)
		return EXIT_BADINPUT;
	struct px p = { .r = r, .kn.r = r, .first = 1 };
	const gp_header *h = gp_reader_header(r);
	int abs_time = o && o->abs_time;
	p.base = abs_time ? 0 : h->start_trace_ns;
	p.sel = o ? o->sel : NULL;
	p.hdr_pid = h->pid;
	p.stacks = stacks_new(r);
	int pre = stacks_preload(p.stacks, r);
	if (pre >= 0) pre = selection_window(p.sel, r); /* the selection's chunks only */
	int code = EXIT_BADINPUT;
	if (pre < 0) {
		tool_err("cannot read %s: %s", in, gp_strerror(pre));
		goto out;
	}
	p.summary = o && o->summary;
	if (p.summary) {
		uint64_t first, last;
		if (gp_reader_time_range(r, &first, &last)) first = last = p.base;
		uint64_t t0 = first < p.base ? first : p.base;
		time_buckets_init(&p.tb, t0, time_buckets_width(last > t0 ? last - t0 : 0, SUMMARY_BUCKETS));
	}
	p.f = gzout_open(out, (o && o->gzip) || gzout_wanted(out));
	if (!p.f) {
		tool_err("cannot write %s: %s", out, strerror(errno));
		goto out;
	}
	char iso[64];
	fmt_iso8601(iso, sizeof(iso), h->start_realtime_ns);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":", p.f);
	json_str(p.f, h->producer);
	fputs(",\"host\":", p.f);
	json_str(p.f, h->host);
	fprintf(p.f, ",\"start\":\"%s\",\"start_trace_ns\":%" PRIu64 ",\"time_base\":\"%s\"",
		iso, h->start_trace_ns, abs_time ? "us on the trace clock" : "us since trace start");
	if (p.sel && p.sel->active) {
		fputs(",\"selection\":", p.f);
		json_str(p.f, p.sel->what);
	}
	if (p.summary) fprintf(p.f, ",\"summary\":true,\"bucket_ns\":%" PRIu64, p.tb.width);
	fputs("},\"traceEvents\":[", p.f);
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		on_record(&p, rec);
		progress_tick(++n);
	}
	if (p.summary) summary_counters(&p);
	fputs("\n]}\n", p.f);
	int werr = gzout_close(p.f);
	code = tool_finish(r, in, rc, strict);
	if (werr) {
		tool_err("cannot write %s: %s", out, strerror(errno));
		code = EXIT_BADINPUT;
	}
out:
	for (size_t i = 0; i < p.launches.cap; i++)
		if (p.launches.used[i]) free((void *)(uintptr_t)p.launches.slot[i].val);
	u64map_free(&p.launches); u64map_free(&p.gpu_pid); u64map_free(&p.named);
	u64map_free(&p.memuse);
	kernel_names_free(&p.kn);
	time_buckets_free(&p.tb);
	stacks_free(p.stacks);
	gp_reader_close(r);
	return code;
}
