/* cmd_dump.c — `gpuprof dump FILE`: every record, time-ordered, as text or
 * JSON lines.  The --json schema is a contract (docs/CLI.md): other
 * engineers' GPU test scripts parse it; keys may be added, never renamed. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/tool.h"

static void help(FILE *f)
{
	fprintf(f, "usage: gpuprof dump [--json] [--type T[,T...]] [--strict] FILE\n\n"
		   "Prints every record in time order (metadata first).  String records are not\n"
		   "printed; their text appears inline.\n\n"
		   "  --json          JSON lines (schema in docs/CLI.md)\n"
		   "  --type LIST     only these record types: api, kernel, memcpy, memset,\n"
		   "                  nvtx_range, nvtx_mark, sync, memory, dropped, clock, counter,\n"
		   "                  device, process, thread, source, module, stack, window\n"
		   "  --strict        exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help      this text\n");
}

/* Demangled kernel names, cached by string id. */
struct dcache { u64map idx; char **names; size_t n, cap; };

static const char *dcache_get(struct dcache *c, gp_reader *r, uint32_t id)
{
	uint64_t *s = u64map_get(&c->idx, id, MAP_FIND);
	if (s)
		return c->names[*s];
	char *d = demangle(tool_str(r, id));
	*u64map_get(&c->idx, id, MAP_INSERT) = c->n;
	VEC_PUSH(c->names, c->n, c->cap, d);
	return d;
}

/* ------------------------------------------------------------ JSON */
static void jkey(const char *k) { printf(",\"%s\":", k); }
static void jstr(const char *k, const char *v) { jkey(k); json_str(stdout, v); }
static void ju64(const char *k, uint64_t v) { printf(",\"%s\":%" PRIu64, k, v); }
/* an id that may be TOOL_NO_ID (not applicable): null */
static void jid(const char *k, uint32_t v) { if (v == TOOL_NO_ID) printf(",\"%s\":null", k); else ju64(k, v); }
static void ji64(const char *k, int64_t v) { printf(",\"%s\":%" PRId64, k, v); }
static void jspan(uint64_t s, uint64_t e)
{
	ju64("start", s); ju64("end", e); ju64("dur", e > s ? e - s : 0);
}
static void jdim(const char *k, const uint32_t d[3]) { printf(",\"%s\":[%u,%u,%u]", k, d[0], d[1], d[2]); }

static void dump_json(gp_reader *r, const gp_record *rec, struct dcache *dc)
{
	printf("{\"type\":\"%s\"", rec_type_name(rec->type));
	ju64("pid", tool_pid(r, rec));
	const gp_rec_source *src = gp_reader_source(r, rec->source_id);
	switch (rec->type) {
	case GP_REC_SOURCE: {
		const gp_rec_source *s = &rec->u.source;
		ju64("tid", s->tid); ju64("source", s->source_id);
		jstr("kind", source_kind_name(s->kind)); jstr("name", tool_str(r, s->name_id));
		break;
	}
	case GP_REC_PROCESS: {
		const gp_rec_process *p = &rec->u.process;
		ju64("ppid", p->ppid); jstr("name", tool_str(r, p->name_id));
		jstr("host", tool_str(r, p->host_id)); ji64("rank", p->rank); ju64("start", p->start_ns);
		break;
	}
	case GP_REC_THREAD:
		ju64("tid", rec->u.thread.tid); jstr("name", tool_str(r, rec->u.thread.name_id));
		break;
	case GP_REC_DEVICE: {
		const gp_rec_device *d = &rec->u.device;
		char cc[32];
		snprintf(cc, sizeof(cc), "%u.%u", d->cc_major, d->cc_minor);
		ju64("device", d->device_id); jstr("name", tool_str(r, d->name_id));
		ju64("sm_count", d->sm_count); jstr("cc", cc); ju64("global_mem", d->global_mem_bytes);
		ju64("clock_khz", d->clock_khz); ju64("mem_clock_khz", d->mem_clock_khz);
		ju64("mem_bus_width", d->mem_bus_width); ju64("warp_size", d->warp_size);
		ju64("max_threads_per_block", d->max_threads_per_block); ju64("pci_bus_id", d->pci_bus_id);
		break;
	}
	case GP_REC_API: {
		const gp_rec_api *a = &rec->u.api;
		ju64("tid", a->tid ? a->tid : (src ? src->tid : 0));
		jspan(a->start_ns, a->end_ns);
		jstr("domain", a->domain == GP_API_DRIVER ? "driver" : "runtime");
		ju64("cbid", a->cbid); jstr("name", tool_str(r, a->name_id));
		ju64("corr", a->correlation_id); ji64("status", a->status);
		if (a->stack_id) ju64("stack", a->stack_id);
		break;
	}
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		jspan(k->start_ns, k->end_ns);
		ju64("device", k->device_id); ju64("context", k->context_id); ju64("stream", k->stream_id);
		ju64("corr", k->correlation_id); jstr("name", tool_str(r, k->name_id));
		jstr("demangled", dcache_get(dc, r, k->name_id));
		jdim("grid", k->grid); jdim("block", k->block);
		ju64("registers", k->registers); ju64("static_smem", k->static_smem);
		ju64("dynamic_smem", k->dynamic_smem); ju64("local_mem", k->local_mem);
		jstr("launch_type", launch_type_name(k->launch_type));
		ju64("graph_id", k->graph_id); ju64("graph_node_id", k->graph_node_id);
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		jspan(m->start_ns, m->end_ns);
		ju64("device", m->device_id); ju64("context", m->context_id); ju64("stream", m->stream_id);
		ju64("corr", m->correlation_id); ju64("bytes", m->bytes);
		jstr("kind", copy_kind_name(m->copy_kind));
		jstr("src_kind", mem_kind_name(m->src_kind)); jstr("dst_kind", mem_kind_name(m->dst_kind));
		printf(",\"async\":%s", (m->flags & 1) ? "true" : "false");
		ju64("src_device", m->src_device); ju64("dst_device", m->dst_device);
		ju64("graph_node_id", m->graph_node_id);
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &rec->u.memset;
		jspan(m->start_ns, m->end_ns);
		ju64("device", m->device_id); ju64("context", m->context_id); ju64("stream", m->stream_id);
		ju64("corr", m->correlation_id); ju64("bytes", m->bytes); ju64("value", m->value);
		jstr("mem_kind", mem_kind_name(m->mem_kind));
		printf(",\"async\":%s", (m->flags & 1) ? "true" : "false");
		ju64("graph_node_id", m->graph_node_id);
		break;
	}
	case GP_REC_NVTX_RANGE: {
		const gp_rec_nvtx_range *n = &rec->u.nvtx_range;
		uint32_t tid = n->tid ? n->tid : (src ? src->tid : 0);
		ju64("tid", tid);
		jspan(n->start_ns, n->end_ns);
		jstr("domain", tool_str(r, n->domain_id)); jstr("message", tool_str(r, n->message_id));
		jstr("kind", n->kind == GP_NVTX_STARTEND ? "startend" : "pushpop");
		ju64("depth", n->depth); ju64("category", n->category); ju64("color", n->color);
		ju64("end_tid", n->end_tid ? n->end_tid : tid);
		printf(",\"unterminated\":%s", (n->flags & GP_NVTX_UNTERMINATED) ? "true" : "false");
		ju64("range_id", n->range_id); ji64("payload", n->payload);
		break;
	}
	case GP_REC_NVTX_MARK: {
		const gp_rec_nvtx_mark *m = &rec->u.nvtx_mark;
		ju64("tid", m->tid ? m->tid : (src ? src->tid : 0));
		ju64("ts", m->ts_ns);
		jstr("domain", tool_str(r, m->domain_id)); jstr("message", tool_str(r, m->message_id));
		ju64("category", m->category); ju64("color", m->color);
		break;
	}
	case GP_REC_SYNC: {
		const gp_rec_sync *s = &rec->u.sync;
		jspan(s->start_ns, s->end_ns);
		ju64("corr", s->correlation_id); jstr("sync_type", sync_type_name(s->type));
		jid("context", s->context_id); jid("stream", s->stream_id); jid("event", s->event_id);
		break;
	}
	case GP_REC_MEMORY: {
		const gp_rec_memory *m = &rec->u.memory;
		ju64("ts", m->ts_ns); ju64("corr", m->correlation_id);
		jstr("op", m->op == 1 ? "alloc" : m->op == 2 ? "free" : "unknown");
		ju64("address", m->address); ju64("bytes", m->bytes);
		ju64("device", m->device_id); jid("context", m->context_id); jid("stream", m->stream_id);
		jstr("mem_kind", mem_kind_name(m->mem_kind));
		break;
	}
	case GP_REC_DROPPED: {
		const gp_rec_dropped *d = &rec->u.dropped;
		ju64("ts", d->ts_ns); ju64("count", d->count); jstr("where", drop_where_name(d->where));
		ju64("source", d->source_id);
		break;
	}
	case GP_REC_CLOCK:
		ju64("trace_ns", rec->u.clock.trace_ns); ju64("realtime_ns", rec->u.clock.realtime_ns);
		ju64("gpu_ns", rec->u.clock.gpu_ns);
		break;
	case GP_REC_COUNTER: {
		const gp_rec_counter *c = &rec->u.counter;
		ju64("ts", c->ts_ns); jstr("name", tool_str(r, c->name_id)); ju64("device", c->device_id);
		if (c->kind == GP_COUNTER_DOUBLE) printf(",\"value\":%.17g", c->value.d);
		else ji64("value", c->value.i);
		break;
	}
	case GP_REC_MODULE: {
		const gp_rec_module *m = &rec->u.module;
		ju64("ts", m->ts_ns); ju64("base", m->base); ju64("size", m->size);
		ju64("file_offset", m->file_offset); jstr("path", tool_str(r, m->path_id));
		break;
	}
	case GP_REC_STACK: {
		const gp_rec_stack *s = &rec->u.stack;
		ju64("stack", s->stack_id);
		printf(",\"frames\":[");
		for (uint32_t i = 0; i < s->nframes && s->frames; i++)
			printf("%s%" PRIu64, i ? "," : "", s->frames[i]);
		/* bit 63: a symbolic frame (Python, ctx marker) naming a string */
		printf("],\"frame_strings\":[");
		for (uint32_t i = 0; i < s->nframes && s->frames; i++) {
			if (i) putchar(',');
			if (s->frames[i] >> 63) json_str(stdout, tool_str(r, (uint32_t)s->frames[i]));
			else fputs("null", stdout);
		}
		putchar(']');
		break;
	}
	case GP_REC_WINDOW:
		jspan(rec->u.window.start_ns, rec->u.window.end_ns);
		ju64("device", rec->u.window.device_id);
		break;
	}
	printf("}\n");
}

/* ------------------------------------------------------------ text */
/* Text output is one line per record: control characters in names are
 * shown as \xNN so a hostile or odd string cannot break the line. */
static const char *clean(gp_reader *r, uint32_t id) { return tool_text(tool_str(r, id)); }

static void dump_text(gp_reader *r, const gp_record *rec, struct dcache *dc)
{
	uint64_t t = gp_record_time(rec), e = tool_rec_end(rec);
	uint32_t pid = tool_pid(r, rec);
	const gp_rec_source *src = gp_reader_source(r, rec->source_id);
	printf("%" PRIu64 " %-10s pid=%u", t, rec_type_name(rec->type), pid);
	switch (rec->type) {
	case GP_REC_SOURCE: {
		const gp_rec_source *s = &rec->u.source;
		printf(" tid=%u source=%u kind=%s name=%s", s->tid, s->source_id,
		       source_kind_name(s->kind), clean(r, s->name_id));
		break;
	}
	case GP_REC_PROCESS: {
		const gp_rec_process *p = &rec->u.process;
		printf(" ppid=%u rank=%d host=%s start=%" PRIu64 " cmd=%s", p->ppid, p->rank,
		       clean(r, p->host_id), p->start_ns, clean(r, p->name_id));
		break;
	}
	case GP_REC_THREAD:
		printf(" tid=%u name=%s", rec->u.thread.tid, clean(r, rec->u.thread.name_id));
		break;
	case GP_REC_DEVICE: {
		const gp_rec_device *d = &rec->u.device;
		printf(" device=%u sms=%u cc=%u.%u mem=%" PRIu64 " name=%s", d->device_id, d->sm_count,
		       d->cc_major, d->cc_minor, d->global_mem_bytes, clean(r, d->name_id));
		break;
	}
	case GP_REC_API: {
		const gp_rec_api *a = &rec->u.api;
		printf(" tid=%u dur=%" PRIu64 " %s cbid=%u corr=%" PRIu64 " status=%d %s",
		       a->tid ? a->tid : (src ? src->tid : 0), e - t,
		       a->domain == GP_API_DRIVER ? "driver" : "runtime", a->cbid, a->correlation_id,
		       a->status, clean(r, a->name_id));
		break;
	}
	case GP_REC_KERNEL: {
		const gp_rec_kernel *k = &rec->u.kernel;
		printf(" dur=%" PRIu64 " dev=%u ctx=%u stream=%u corr=%" PRIu64
		       " grid=%u,%u,%u block=%u,%u,%u regs=%u smem=%u+%u %s",
		       e - t, k->device_id, k->context_id, k->stream_id, k->correlation_id,
		       k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
		       k->registers, k->static_smem, k->dynamic_smem, tool_text(dcache_get(dc, r, k->name_id)));
		break;
	}
	case GP_REC_MEMCPY: {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		printf(" dur=%" PRIu64 " dev=%u stream=%u corr=%" PRIu64 " bytes=%" PRIu64 " %s %s->%s%s",
		       e - t, m->device_id, m->stream_id, m->correlation_id, m->bytes,
		       copy_kind_name(m->copy_kind), mem_kind_name(m->src_kind),
		       mem_kind_name(m->dst_kind), (m->flags & 1) ? " async" : "");
		break;
	}
	case GP_REC_MEMSET: {
		const gp_rec_memset *m = &rec->u.memset;
		printf(" dur=%" PRIu64 " dev=%u stream=%u corr=%" PRIu64 " bytes=%" PRIu64 " value=%u",
		       e - t, m->device_id, m->stream_id, m->correlation_id, m->bytes, m->value);
		break;
	}
	case GP_REC_NVTX_RANGE: {
		const gp_rec_nvtx_range *n = &rec->u.nvtx_range;
		const char *dom = clean(r, n->domain_id);
		printf(" tid=%u dur=%" PRIu64 " %s depth=%u%s %s%s%s", n->tid ? n->tid : (src ? src->tid : 0),
		       e - t, n->kind == GP_NVTX_STARTEND ? "startend" : "pushpop", n->depth,
		       (n->flags & GP_NVTX_UNTERMINATED) ? " unterminated" : "",
		       dom, *dom ? ":" : "", clean(r, n->message_id));
		break;
	}
	case GP_REC_NVTX_MARK: {
		const gp_rec_nvtx_mark *m = &rec->u.nvtx_mark;
		const char *dom = clean(r, m->domain_id);
		printf(" tid=%u %s%s%s", m->tid ? m->tid : (src ? src->tid : 0), dom, *dom ? ":" : "",
		       clean(r, m->message_id));
		break;
	}
	case GP_REC_SYNC: {
		const gp_rec_sync *s = &rec->u.sync;
		char st[16] = "-", ev[16] = "-";
		if (s->stream_id != TOOL_NO_ID) snprintf(st, sizeof(st), "%u", s->stream_id);
		if (s->event_id != TOOL_NO_ID) snprintf(ev, sizeof(ev), "%u", s->event_id);
		printf(" dur=%" PRIu64 " corr=%" PRIu64 " type=%s stream=%s event=%s", e - t,
		       s->correlation_id, sync_type_name(s->type), st, ev);
		break;
	}
	case GP_REC_MEMORY: {
		const gp_rec_memory *m = &rec->u.memory;
		printf(" %s dev=%u addr=0x%" PRIx64 " bytes=%" PRIu64 " kind=%s",
		       m->op == 1 ? "alloc" : m->op == 2 ? "free" : "unknown", m->device_id, m->address,
		       m->bytes, mem_kind_name(m->mem_kind));
		break;
	}
	case GP_REC_DROPPED:
		printf(" count=%" PRIu64 " where=%s source=%u", rec->u.dropped.count,
		       drop_where_name(rec->u.dropped.where), rec->u.dropped.source_id);
		break;
	case GP_REC_CLOCK:
		printf(" trace=%" PRIu64 " realtime=%" PRIu64 " gpu=%" PRIu64, rec->u.clock.trace_ns,
		       rec->u.clock.realtime_ns, rec->u.clock.gpu_ns);
		break;
	case GP_REC_COUNTER: {
		const gp_rec_counter *c = &rec->u.counter;
		printf(" dev=%u %s=", c->device_id, clean(r, c->name_id));
		if (c->kind == GP_COUNTER_DOUBLE) printf("%.17g", c->value.d);
		else printf("%" PRId64, c->value.i);
		break;
	}
	case GP_REC_MODULE:
		printf(" base=0x%" PRIx64 " size=%" PRIu64 " off=0x%" PRIx64 " %s", rec->u.module.base,
		       rec->u.module.size, rec->u.module.file_offset, clean(r, rec->u.module.path_id));
		break;
	case GP_REC_STACK:
		printf(" stack=%u frames=%u", rec->u.stack.stack_id, rec->u.stack.nframes);
		for (uint32_t i = 0; i < rec->u.stack.nframes && rec->u.stack.frames; i++) {
			uint64_t f = rec->u.stack.frames[i];
			if (!(f >> 63)) {
				printf(" 0x%" PRIx64, f);
				continue;
			}
			/* symbolic frame: its string, fields shown space-separated */
			char *str = xstrdup(tool_str(r, (uint32_t)f));
			for (char *c = str; *c; c++) if (*c == '\t') *c = ' ';
			printf(" [%s]", tool_text(str));
			free(str);
		}
		break;
	case GP_REC_WINDOW:
		printf(" dur=%" PRIu64 " dev=%u", e - t, rec->u.window.device_id);
		break;
	}
	putchar('\n');
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "type", required_argument, NULL, 't' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int json = 0, strict = 0, c, filter = 0;
	uint8_t want[GP_REC_TYPE_MAX] = { 0 };
	while ((c = getopt_long(argc, argv, "ht:", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': strict = 1; break;
		case 't': {
			char *list = xstrdup(optarg), *save = NULL;
			for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int t = rec_type_from_name(tok);
				if (t < 0) {
					tool_err("unknown record type '%s' (see --help)", tok);
					free(list);
					return EXIT_USAGE;
				}
				want[t] = 1;
				filter = 1;
			}
			free(list);
			break;
		}
		case 'h': help(stdout); return EXIT_OK;
		default: help(stderr); return EXIT_USAGE;
		}
	}
	const char *path;
	gp_reader *r;
	int opened = tool_open_operand(argc, argv, help, &path, &r);
	if (opened != EXIT_OK)
		return opened;
	struct dcache dc;
	memset(&dc, 0, sizeof(dc));
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		if (rec->type == GP_REC_STRING || rec->type >= GP_REC_TYPE_MAX)
			continue;
		if (filter && !want[rec->type])
			continue;
		if (json) dump_json(r, rec, &dc);
		else dump_text(r, rec, &dc);
	}
	fflush(stdout);
	int code = tool_finish(r, path, rc, strict);
	for (size_t i = 0; i < dc.n; i++)
		free(dc.names[i]);
	free(dc.names);
	u64map_free(&dc.idx);
	gp_reader_close(r);
	return code;
}
