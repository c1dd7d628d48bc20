/* cmd_dump.c — `gpuprof dump FILE`: every record, time-ordered, as text or
 * JSON lines.  The --json schema is a contract (docs/CLI.md): other
 * engineers' GPU test scripts parse it; keys may be added, never renamed. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu/kernel_names.h"
#include "analysis/steps/selection.h"
#include "cmd/cmd.h"
#include "common/selopt.h"
#include "common/tool.h"
#include "reports/stats_selection.h"

void cmd_dump_help(FILE *f)
{
	fprintf(f, "usage: gpuprof dump [--json] [--type T[,T...]] [--since T] [--until T] [--steps A:B]\n"
		   "                    [--range NAME] [--abs-time] [--strict] FILE\n\n"
		   "Prints every record in time order (metadata first).  String records are not\n"
		   "printed; their text appears inline.  Times are ns since the trace start\n"
		   "(--abs-time: on the trace clock).\n\n"
		   "  --json            JSON lines (schema in docs/CLI.md)\n"
		   "  --type LIST       only these record types: api, kernel, memcpy, memset,\n"
		   "                    nvtx_range, nvtx_mark, sync, memory, dropped, clock, counter,\n"
		   "                    device, process, thread, source, module, stack, window\n"
		   SELOPT_HELP
		   "  --strict          exit 2 when the trace is truncated (default: warn, exit 0)\n"
		   "  -h, --help        this text\n");
}

/* ------------------------------------------------------------ layouts
 * What dump prints of each record type follows the field table
 * (libprof/common/gp_fields.h).  A layout lists, per type and output, the
 * fields in the order printed with their JSON key or text label and how to
 * show them; `hide` names the fields left out on purpose.  Every other
 * field of the table (one added after this was written) is printed after
 * the layout's ones, under its table name, in its kind's default format:
 * adding a field to the table shows it here without an edit.  The styles
 * that join or derive values (SPAN, CC, SMEM, SRCDST, DOMMSG...) are the
 * outputs' existing quirks, kept byte for byte (tests/tools/golden). */
enum style {
	S_DEF,       /* by kind: string id -> its text, INT signed, else unsigned;
			a SRC_TID tid of 0 -> the source's tid */
	S_SPAN,      /* JSON: start (this TIME field), end (field2), dur */
	S_DUR,       /* text: dur=end-start (field2 - field) */
	S_NAME,      /* an enum's name (name()) */
	S_FLAG,      /* JSON true/false of (value & mask); text: " key" when set */
	S_NONZERO,   /* shown only when not 0 */
	S_HEX,       /* text: 0x... */
	S_ENDTID,    /* nvtx end_tid: 0 -> the range's tid (field2) */
	S_CC,        /* device: "major.minor" (field, field2) */
	S_DEMANGLED, /* kernel: the demangled name of a string id */
	S_SMEM,      /* text: static+dynamic (field, field2) */
	S_SRCDST,    /* text: memory kinds "src->dst" (field, field2) */
	S_DOMMSG,    /* text: "domain:message" or "message" (field, field2) */
	S_COUNTER,   /* counter value by kind (JSON); text: "name=value" (field2 = value) */
	S_FRAMES,    /* stack frames (field = frames) */
	S_ID,        /* an id CUPTI may mark not applicable (TOOL_NO_ID): JSON null, text "-" */
};

struct col {
	const char *key;               /* JSON key / text label; text NULL: value alone */
	const char *field, *field2;    /* table field names the style reads */
	uint8_t style;
	const char *(*name)(uint32_t); /* S_NAME */
	uint32_t mask;                 /* S_FLAG */
};
#define C(key, field) { key, field, NULL, S_DEF, NULL, 0 }
#define CS(key, field, style) { key, field, NULL, style, NULL, 0 }
#define C2(key, field, field2, style) { key, field, field2, style, NULL, 0 }
#define CN(key, field, name) { key, field, NULL, S_NAME, name, 0 }
#define CF(key, field, mask) { key, field, NULL, S_FLAG, NULL, mask }
#define END_COLS { NULL, NULL, NULL, 0, NULL, 0 }
struct layout { const struct col *cols; const char *const *hide; };

static const char *api_domain_name(uint32_t d) { return d == GP_API_DRIVER ? "driver" : "runtime"; }
static const char *nvtx_kind_name(uint32_t k) { return k == GP_NVTX_STARTEND ? "startend" : "pushpop"; }
static const char *memory_op_name(uint32_t op) { return op == 1 ? "alloc" : op == 2 ? "free" : "unknown"; }
static const char *call_domain_name(uint32_t d) { return d ? api_domain_name(d) : "none"; }
static const char *mem_live_kind_name(uint32_t k)
{
	return k == GP_MEM_LIVE_SITE ? "site" : k == GP_MEM_LIVE_REST ? "rest" : k == GP_MEM_LIVE_UNTABLED ? "untabled"
	       : k == GP_MEM_LIVE_FAILED   ? "failed"
					   : "unknown";
}

/* ---- JSON (after "type" and "pid", the record's process) */
static const struct col j_source[] = {
	C("tid", "tid"), C("source", "source_id"), CN("kind", "kind", source_kind_name),
	C("name", "name_id"), END_COLS };
static const char *const j_pid_hide[] = { "pid", NULL }; /* the record's own pid: as "pid" first */
static const struct col j_process[] = {
	C("ppid", "ppid"), C("name", "name_id"), C("host", "host_id"), C("rank", "rank"), C("start", "start_ns"),
	END_COLS };
static const char *const j_process_hide[] = { "pid", "settings_id", NULL };
static const struct col j_thread[] = { C("tid", "tid"), C("name", "name_id"), END_COLS };
static const struct col j_device[] = {
	C("device", "device_id"), C("name", "name_id"), C("sm_count", "sm_count"),
	C2("cc", "cc_major", "cc_minor", S_CC), C("global_mem", "global_mem_bytes"), C("clock_khz", "clock_khz"),
	C("mem_clock_khz", "mem_clock_khz"), C("mem_bus_width", "mem_bus_width"), C("warp_size", "warp_size"),
	C("max_threads_per_block", "max_threads_per_block"), C("pci_bus_id", "pci_bus_id"), END_COLS };
static const char *const j_device_hide[] = { "max_threads_per_sm", "max_blocks_per_sm", "max_regs_per_sm",
	"max_smem_per_sm", "max_smem_per_block", "uuid", NULL };
static const struct col j_api[] = {
	C("tid", "tid"), C2("start", "start_ns", "end_ns", S_SPAN),
	CN("domain", "domain", api_domain_name), C("cbid", "cbid"), C("name", "name_id"),
	C("corr", "correlation_id"), C("status", "status"), CS("stack", "stack_id", S_NONZERO), END_COLS };
static const struct col j_kernel[] = {
	C2("start", "start_ns", "end_ns", S_SPAN), C("device", "device_id"), C("context", "context_id"),
	C("stream", "stream_id"), C("corr", "correlation_id"), C("name", "name_id"),
	CS("demangled", "name_id", S_DEMANGLED), C("grid", "grid"), C("block", "block"),
	C("registers", "registers"), C("static_smem", "static_smem"), C("dynamic_smem", "dynamic_smem"),
	C("local_mem", "local_mem"), CN("launch_type", "launch_type", launch_type_name), C("graph_id", "graph_id"),
	C("graph_node_id", "graph_node_id"), END_COLS };
static const struct col j_memcpy[] = {
	C2("start", "start_ns", "end_ns", S_SPAN), C("device", "device_id"), C("context", "context_id"),
	C("stream", "stream_id"), C("corr", "correlation_id"), C("bytes", "bytes"),
	CN("kind", "copy_kind", copy_kind_name), CN("src_kind", "src_kind", mem_kind_name),
	CN("dst_kind", "dst_kind", mem_kind_name), CF("async", "flags", 1),
	C("src_device", "src_device"), C("dst_device", "dst_device"), C("graph_node_id", "graph_node_id"), END_COLS };
static const struct col j_memset[] = {
	C2("start", "start_ns", "end_ns", S_SPAN), C("device", "device_id"), C("context", "context_id"),
	C("stream", "stream_id"), C("corr", "correlation_id"), C("bytes", "bytes"), C("value", "value"),
	CN("mem_kind", "mem_kind", mem_kind_name), CF("async", "flags", 1),
	C("graph_node_id", "graph_node_id"), END_COLS };
static const struct col j_nvtx_range[] = {
	C("tid", "tid"), C2("start", "start_ns", "end_ns", S_SPAN), C("domain", "domain_id"),
	C("message", "message_id"), CN("kind", "kind", nvtx_kind_name), C("depth", "depth"),
	C("category", "category"), C("color", "color"), C2("end_tid", "end_tid", "tid", S_ENDTID),
	CF("unterminated", "flags", GP_NVTX_UNTERMINATED), C("range_id", "range_id"),
	C("payload", "payload"), END_COLS };
static const struct col j_nvtx_mark[] = {
	C("tid", "tid"), C("ts", "ts_ns"), C("domain", "domain_id"), C("message", "message_id"),
	C("category", "category"), C("color", "color"), END_COLS };
static const struct col j_sync[] = {
	C2("start", "start_ns", "end_ns", S_SPAN), C("corr", "correlation_id"), CN("sync_type", "type", sync_type_name),
	CS("context", "context_id", S_ID), CS("stream", "stream_id", S_ID), CS("event", "event_id", S_ID), END_COLS };
static const struct col j_memory[] = {
	C("ts", "ts_ns"), C("corr", "correlation_id"), CN("op", "op", memory_op_name),
	C("address", "address"), C("bytes", "bytes"), C("device", "device_id"), CS("context", "context_id", S_ID),
	CS("stream", "stream_id", S_ID), CN("mem_kind", "mem_kind", mem_kind_name), END_COLS };
static const struct col j_dropped[] = {
	C("ts", "ts_ns"), C("count", "count"), CN("where", "where", drop_where_name),
	C("source", "source_id"), END_COLS };
static const struct col j_clock[] = {
	C("trace_ns", "trace_ns"), C("realtime_ns", "realtime_ns"), C("gpu_ns", "gpu_ns"), END_COLS };
static const struct col j_counter[] = {
	C("ts", "ts_ns"), C("name", "name_id"), C("device", "device_id"), C2("value", "kind", "value", S_COUNTER),
	END_COLS };
static const struct col j_module[] = {
	C("ts", "ts_ns"), C("base", "base"), C("size", "size"), C("file_offset", "file_offset"),
	C("path", "path_id"), END_COLS };
static const struct col j_stack[] = { C("stack", "stack_id"), CS("frames", "frames", S_FRAMES), END_COLS };
static const char *const j_stack_hide[] = { "nframes", NULL };
static const struct col j_window[] = { C2("start", "start_ns", "end_ns", S_SPAN), C("device", "device_id"), END_COLS };
static const struct col j_alloc_fail[] = {
	C("tid", "tid"), C("ts", "ts_ns"), C("corr", "correlation_id"), CN("domain", "domain", api_domain_name),
	C("cbid", "cbid"), C("status", "status"), C("bytes", "bytes"), CS("device", "device_id", S_ID),
	C("total_bytes", "total_bytes"), C("free_bytes", "free_bytes"), END_COLS };
static const struct col j_mem_live[] = {
	C("tid", "tid"), C("ts", "ts_ns"), C("corr", "correlation_id"), CN("kind", "kind", mem_live_kind_name),
	CS("device", "device_id", S_ID), C("bytes", "bytes"), C("allocs", "allocs"), C("stack", "stack_id"),
	CN("domain", "domain", call_domain_name), C("cbid", "cbid"), C("size", "size"), END_COLS };

static const struct layout json_layout[GP_REC_TYPE_MAX] = {
	[GP_REC_SOURCE] = { j_source, j_pid_hide }, [GP_REC_PROCESS] = { j_process, j_process_hide },
	[GP_REC_THREAD] = { j_thread, j_pid_hide }, [GP_REC_DEVICE] = { j_device, j_device_hide },
	[GP_REC_API] = { j_api, NULL }, [GP_REC_KERNEL] = { j_kernel, NULL }, [GP_REC_MEMCPY] = { j_memcpy, NULL },
	[GP_REC_MEMSET] = { j_memset, NULL }, [GP_REC_NVTX_RANGE] = { j_nvtx_range, NULL },
	[GP_REC_NVTX_MARK] = { j_nvtx_mark, NULL }, [GP_REC_SYNC] = { j_sync, NULL },
	[GP_REC_MEMORY] = { j_memory, NULL }, [GP_REC_DROPPED] = { j_dropped, NULL },
	[GP_REC_CLOCK] = { j_clock, NULL }, [GP_REC_COUNTER] = { j_counter, NULL },
	[GP_REC_MODULE] = { j_module, NULL }, [GP_REC_STACK] = { j_stack, j_stack_hide },
	[GP_REC_WINDOW] = { j_window, NULL }, [GP_REC_ALLOC_FAIL] = { j_alloc_fail, NULL },
	[GP_REC_MEM_LIVE] = { j_mem_live, NULL },
};

/* ---- text (after "TIME TYPE pid=PID"; TIME is the record's primary time); source and
 * thread records as in JSON */
static const struct col t_process[] = {
	C("ppid", "ppid"), C("rank", "rank"), C("host", "host_id"), C("start", "start_ns"), C("cmd", "name_id"),
	END_COLS };
static const struct col t_device[] = {
	C("device", "device_id"), C("sms", "sm_count"), C2("cc", "cc_major", "cc_minor", S_CC),
	C("mem", "global_mem_bytes"), C("name", "name_id"), END_COLS };
static const char *const t_device_hide[] = { "max_threads_per_sm", "max_blocks_per_sm", "max_regs_per_sm",
	"max_smem_per_sm", "max_smem_per_block", "max_threads_per_block", "warp_size", "clock_khz",
	"mem_clock_khz", "mem_bus_width", "uuid", "pci_bus_id", NULL };
static const struct col t_api[] = {
	C("tid", "tid"), C2("dur", "start_ns", "end_ns", S_DUR), CN(NULL, "domain", api_domain_name),
	C("cbid", "cbid"), C("corr", "correlation_id"), C("status", "status"), C(NULL, "name_id"), END_COLS };
static const char *const t_api_hide[] = { "stack_id", NULL };
static const struct col t_kernel[] = {
	C2("dur", "start_ns", "end_ns", S_DUR), C("dev", "device_id"), C("ctx", "context_id"),
	C("stream", "stream_id"), C("corr", "correlation_id"), C("grid", "grid"), C("block", "block"),
	C("regs", "registers"), C2("smem", "static_smem", "dynamic_smem", S_SMEM),
	CS(NULL, "name_id", S_DEMANGLED), END_COLS };
static const char *const t_kernel_hide[] = { "local_mem", "launch_type", "graph_id", "graph_node_id", NULL };
static const struct col t_memcpy[] = {
	C2("dur", "start_ns", "end_ns", S_DUR), C("dev", "device_id"), C("stream", "stream_id"),
	C("corr", "correlation_id"), C("bytes", "bytes"), CN(NULL, "copy_kind", copy_kind_name),
	C2(NULL, "src_kind", "dst_kind", S_SRCDST), CF("async", "flags", 1), END_COLS };
static const char *const t_memcpy_hide[] = { "context_id", "src_device", "dst_device", "graph_node_id", NULL };
static const struct col t_memset[] = {
	C2("dur", "start_ns", "end_ns", S_DUR), C("dev", "device_id"), C("stream", "stream_id"),
	C("corr", "correlation_id"), C("bytes", "bytes"), C("value", "value"), END_COLS };
static const char *const t_memset_hide[] = { "context_id", "mem_kind", "flags", "graph_node_id", NULL };
static const struct col t_nvtx_range[] = {
	C("tid", "tid"), C2("dur", "start_ns", "end_ns", S_DUR), CN(NULL, "kind", nvtx_kind_name),
	C("depth", "depth"), CF("unterminated", "flags", GP_NVTX_UNTERMINATED),
	C2(NULL, "domain_id", "message_id", S_DOMMSG), END_COLS };
static const char *const t_nvtx_range_hide[] = { "range_id", "category", "color", "end_tid", "payload", NULL };
static const struct col t_nvtx_mark[] = { C("tid", "tid"), C2(NULL, "domain_id", "message_id", S_DOMMSG), END_COLS };
static const char *const t_nvtx_mark_hide[] = { "ts_ns", "category", "color", NULL };
static const struct col t_sync[] = {
	C2("dur", "start_ns", "end_ns", S_DUR), C("corr", "correlation_id"), CN("type", "type", sync_type_name),
	CS("stream", "stream_id", S_ID), CS("event", "event_id", S_ID), END_COLS };
static const char *const t_sync_hide[] = { "context_id", NULL };
static const struct col t_memory[] = {
	CN(NULL, "op", memory_op_name), C("dev", "device_id"), CS("addr", "address", S_HEX),
	C("bytes", "bytes"), CN("kind", "mem_kind", mem_kind_name), END_COLS };
static const char *const t_memory_hide[] = { "ts_ns", "correlation_id", "context_id", "stream_id", NULL };
static const struct col t_dropped[] = {
	C("count", "count"), CN("where", "where", drop_where_name), C("source", "source_id"), END_COLS };
static const char *const t_ts_hide[] = { "ts_ns", NULL };
static const struct col t_clock[] = {
	C("trace", "trace_ns"), C("realtime", "realtime_ns"), C("gpu", "gpu_ns"), END_COLS };
static const struct col t_counter[] = { C("dev", "device_id"), C2(NULL, "name_id", "value", S_COUNTER), END_COLS };
static const char *const t_counter_hide[] = { "ts_ns", "kind", NULL };
static const struct col t_module[] = {
	CS("base", "base", S_HEX), C("size", "size"), CS("off", "file_offset", S_HEX), C(NULL, "path_id"),
	END_COLS };
static const struct col t_stack[] = {
	C("stack", "stack_id"), C("frames", "nframes"), CS(NULL, "frames", S_FRAMES), END_COLS };
static const struct col t_window[] = { C2("dur", "start_ns", "end_ns", S_DUR), C("dev", "device_id"), END_COLS };
static const struct col t_alloc_fail[] = {
	C("tid", "tid"), CN(NULL, "domain", api_domain_name), C("cbid", "cbid"), C("corr", "correlation_id"),
	C("status", "status"), C("bytes", "bytes"), CS("dev", "device_id", S_ID), C("total", "total_bytes"),
	C("free", "free_bytes"), END_COLS };
static const struct col t_mem_live[] = {
	C("tid", "tid"), C("corr", "correlation_id"), CN(NULL, "kind", mem_live_kind_name), CS("dev", "device_id", S_ID),
	C("bytes", "bytes"), C("allocs", "allocs"), C("stack", "stack_id"), CN(NULL, "domain", call_domain_name),
	C("cbid", "cbid"), C("size", "size"), END_COLS };

static const struct layout text_layout[GP_REC_TYPE_MAX] = {
	[GP_REC_SOURCE] = { j_source, j_pid_hide }, [GP_REC_PROCESS] = { t_process, j_process_hide },
	[GP_REC_THREAD] = { j_thread, j_pid_hide }, [GP_REC_DEVICE] = { t_device, t_device_hide },
	[GP_REC_API] = { t_api, t_api_hide }, [GP_REC_KERNEL] = { t_kernel, t_kernel_hide },
	[GP_REC_MEMCPY] = { t_memcpy, t_memcpy_hide }, [GP_REC_MEMSET] = { t_memset, t_memset_hide },
	[GP_REC_NVTX_RANGE] = { t_nvtx_range, t_nvtx_range_hide }, [GP_REC_NVTX_MARK] = { t_nvtx_mark, t_nvtx_mark_hide },
	[GP_REC_SYNC] = { t_sync, t_sync_hide }, [GP_REC_MEMORY] = { t_memory, t_memory_hide },
	[GP_REC_DROPPED] = { t_dropped, t_ts_hide }, [GP_REC_CLOCK] = { t_clock, NULL },
	[GP_REC_COUNTER] = { t_counter, t_counter_hide }, [GP_REC_MODULE] = { t_module, t_ts_hide },
	[GP_REC_STACK] = { t_stack, NULL }, [GP_REC_WINDOW] = { t_window, NULL },
	[GP_REC_ALLOC_FAIL] = { t_alloc_fail, t_ts_hide }, [GP_REC_MEM_LIVE] = { t_mem_live, t_ts_hide },
};

/* A layout resolved against the table once: the columns' fields, and the
 * fields printed after them by default (rest). */
struct rcol { const struct col *c; const struct gp_field *f, *f2; };
struct view { struct rcol *cols; unsigned n; const struct gp_field **rest; unsigned nrest; };

static void view_build(struct view *v, uint32_t type, const struct layout *l)
{
	memset(v, 0, sizeof(*v));
	unsigned nf, nn = 0;
	gp_rec_fields(type, &nf);
	v->rest = xcalloc(nf + 1, sizeof(*v->rest));
	if (!l->cols) {
		/* a type without a layout (one added to GP_REC_TYPES later): all
		 * its fields by default */
		v->nrest = gp_rec_fields_other(type, NULL, 0, v->rest);
		return;
	}
	while (l->cols[v->n].field) v->n++;
	v->cols = xcalloc(v->n + 1, sizeof(*v->cols));
	const char **names = xcalloc(2 * v->n + nf + 1, sizeof(*names));
	for (unsigned i = 0; i < v->n; i++) {
		const struct col *c = &l->cols[i];
		v->cols[i].c = c;
		v->cols[i].f = tool_field(type, c->field);
		v->cols[i].f2 = c->field2 ? tool_field(type, c->field2) : NULL;
		names[nn++] = c->field;
		names[nn++] = c->field2;
	}
	for (const char *const *h = l->hide; h && *h; h++) names[nn++] = tool_field(type, *h)->name;
	v->nrest = gp_rec_fields_other(type, names, nn, v->rest);
	free(names);
}

static void view_free(struct view *v) { free(v->cols); free(v->rest); }

struct dumper {
	gp_reader *r;
	uint64_t base;   /* times print relative to it: the trace start, or 0 (--abs-time) */
	struct kernel_names kn;
	struct view json[GP_REC_TYPE_MAX], text[GP_REC_TYPE_MAX];
};

static uint64_t get(const gp_record *rec, const struct gp_field *f) { return gp_field_get(rec, f, 0); }
/* A time of the trace clock in the output's time base (signed: a merged
 * trace may hold records from before the first input's start). */
static int64_t rel(const struct dumper *d, uint64_t t) { return (int64_t)(t - d->base); }

/* JSON: items after the first one, each ",\"key\":value". */
static void jkey(const char *k) { printf(",\"%s\":", k); }
static void jstr(const char *k, const char *v) { jkey(k); json_str(stdout, v); }
static void ju64(const char *k, uint64_t v) { printf(",\"%s\":%" PRIu64, k, v); }
static void ji64(const char *k, int64_t v) { printf(",\"%s\":%" PRId64, k, v); }

/* Text output is one line per record: control characters in names are
 * shown as \xNN so a hostile or odd string cannot break the line.  Every
 * item starts with a space: " label=value", or " value" without a label. */
static const char *clean(gp_reader *r, uint32_t id) { return tool_text(tool_str(r, id)); }

static void tlabel(const char *label) { if (label) printf(" %s=", label); else putchar(' '); }

/* A field in its kind's default form, JSON (json) or text, the same value
 * in both: a string field's text, else a number (an array's elements
 * "a,b,c", bytes as hex digits). */
static void put_field(struct dumper *d, const gp_record *rec, const char *key, const struct gp_field *f, int json)
{
	if (f->kind == GP_FK_TEXT || f->kind == GP_FK_FRAMES) return;   /* pointers: no default form */
	if (json) jkey(key);
	else tlabel(key);
	uint64_t v = get(rec, f);
	if (f->kind == GP_FK_STRING && f->count == 1) {
		const char *s = tool_str(d->r, (uint32_t)v);
		if (json) json_str(stdout, s);
		else fputs(tool_text(s), stdout);
		return;
	}
	char buf[1024];
	size_t l = 0, n = sizeof(buf);
	if (f->count > 1)
		for (unsigned i = 0; i < f->count && l < n; i++)
			l += (size_t)snprintf(buf + l, n - l, f->kind == GP_FK_BYTES ? "%s%02" PRIx64 : "%s%" PRIu64,
					      i && f->kind != GP_FK_BYTES ? "," : "", gp_field_get(rec, f, i));
	else if (f->kind == GP_FK_INT) snprintf(buf, n, "%" PRId64, (int64_t)v);
	else if (f->kind == GP_FK_TIME || f->kind == GP_FK_END) snprintf(buf, n, "%" PRId64, rel(d, v));
	else if (f->kind == GP_FK_TID) snprintf(buf, n, "%u", gp_reader_tid(d->r, rec, f));
	else snprintf(buf, n, "%" PRIu64, v);
	if (json && f->count > 1) printf(f->kind == GP_FK_BYTES ? "\"%s\"" : "[%s]", buf);
	else fputs(buf, stdout);
}

/* ------------------------------------------------------------ JSON */
static void json_frames(struct dumper *d, const gp_rec_stack *s)
{
	printf(",\"frames\":[");
	for (uint32_t i = 0; i < s->nframes && s->frames; i++)
		printf("%s%" PRIu64, i ? "," : "", s->frames[i]);
	/* bit 63: a symbolic frame (Python, ctx marker) naming a string */
	printf("],\"frame_strings\":[");
	for (uint32_t i = 0; i < s->nframes && s->frames; i++) {
		if (i) putchar(',');
		if (s->frames[i] >> 63) json_str(stdout, tool_str(d->r, (uint32_t)s->frames[i]));
		else fputs("null", stdout);
	}
	putchar(']');
}

static void dump_json(struct dumper *d, const gp_record *rec)
{
	printf("{\"type\":\"%s\"", gp_rec_type_name(rec->type));
	ju64("pid", tool_pid(d->r, rec));
	const struct view *v = &d->json[rec->type];
	for (unsigned i = 0; i < v->n; i++) {
		const struct col *c = v->cols[i].c;
		const struct gp_field *f = v->cols[i].f, *f2 = v->cols[i].f2;
		uint64_t x = get(rec, f);
		switch (c->style) {
		case S_SPAN: {
			uint64_t e = get(rec, f2);
			ji64("start", rel(d, x)); ji64("end", rel(d, e)); ju64("dur", e > x ? e - x : 0);
			break;
		}
		case S_NAME: jstr(c->key, c->name((uint32_t)x)); break;
		case S_FLAG: printf(",\"%s\":%s", c->key, (x & c->mask) ? "true" : "false"); break;
		case S_NONZERO: if (x) put_field(d, rec, c->key, f, 1); break;
		case S_ID:
			if (x == TOOL_NO_ID) printf(",\"%s\":null", c->key);
			else put_field(d, rec, c->key, f, 1);
			break;
		case S_ENDTID: ju64(c->key, x ? x : gp_reader_tid(d->r, rec, f2)); break;
		case S_CC: {
			char cc[32];
			snprintf(cc, sizeof(cc), "%u.%u", (unsigned)x, (unsigned)get(rec, f2));
			jstr(c->key, cc);
			break;
		}
		case S_DEMANGLED: jstr(c->key, kernel_name_demangled(&d->kn, (uint32_t)x)); break;
		case S_COUNTER:
			if (x == GP_COUNTER_DOUBLE) printf(",\"%s\":%.17g", c->key, rec->u.counter.value.d);
			else ji64(c->key, rec->u.counter.value.i);
			break;
		case S_FRAMES: json_frames(d, &rec->u.stack); break;
		default: put_field(d, rec, c->key, f, 1); break;
		}
	}
	for (unsigned i = 0; i < v->nrest; i++) put_field(d, rec, v->rest[i]->name, v->rest[i], 1);
	printf("}\n");
}

/* ------------------------------------------------------------ text */
static void text_frames(struct dumper *d, const gp_rec_stack *s)
{
	for (uint32_t i = 0; i < s->nframes && s->frames; i++) {
		uint64_t f = s->frames[i];
		if (!(f >> 63)) {
			printf(" 0x%" PRIx64, f);
			continue;
		}
		/* symbolic frame: its string, fields shown space-separated */
		char *str = xstrdup(tool_str(d->r, (uint32_t)f));
		for (char *c = str; *c; c++) if (*c == '\t') *c = ' ';
		printf(" [%s]", tool_text(str));
		free(str);
	}
}

static void dump_text(struct dumper *d, const gp_record *rec)
{
	uint64_t t = gp_record_time(rec);
	/* metadata (no time) shows 0 */
	printf("%" PRId64 " %-10s pid=%u", t ? rel(d, t) : 0, gp_rec_type_name(rec->type), tool_pid(d->r, rec));
	const struct view *v = &d->text[rec->type];
	for (unsigned i = 0; i < v->n; i++) {
		const struct col *c = v->cols[i].c;
		const struct gp_field *f = v->cols[i].f, *f2 = v->cols[i].f2;
		uint64_t x = get(rec, f);
		switch (c->style) {
		case S_DUR: tlabel(c->key); printf("%" PRIu64, get(rec, f2) - x); break;
		case S_NAME: tlabel(c->key); fputs(c->name((uint32_t)x), stdout); break;
		case S_FLAG: if (x & c->mask) printf(" %s", c->key); break;
		case S_HEX: tlabel(c->key); printf("0x%" PRIx64, x); break;
		case S_ID:
			tlabel(c->key);
			if (x == TOOL_NO_ID) fputs("-", stdout);
			else printf("%" PRIu64, x);
			break;
		case S_CC: tlabel(c->key); printf("%u.%u", (unsigned)x, (unsigned)get(rec, f2)); break;
		case S_SMEM: tlabel(c->key); printf("%u+%u", (unsigned)x, (unsigned)get(rec, f2)); break;
		case S_SRCDST:
			tlabel(c->key);
			printf("%s->%s", mem_kind_name((uint32_t)x), mem_kind_name((uint32_t)get(rec, f2)));
			break;
		case S_DOMMSG: {
			const char *dom = clean(d->r, (uint32_t)x);
			tlabel(c->key);
			printf("%s%s%s", dom, *dom ? ":" : "", clean(d->r, (uint32_t)get(rec, f2)));
			break;
		}
		case S_DEMANGLED: tlabel(c->key); fputs(tool_text(kernel_name_demangled(&d->kn, (uint32_t)x)), stdout); break;
		case S_COUNTER: {
			const gp_rec_counter *cn = &rec->u.counter;
			printf(" %s=", clean(d->r, (uint32_t)x));
			if (cn->kind == GP_COUNTER_DOUBLE) printf("%.17g", cn->value.d);
			else printf("%" PRId64, cn->value.i);
			break;
		}
		case S_FRAMES: text_frames(d, &rec->u.stack); break;
		default: put_field(d, rec, c->key, f, 0); break;
		}
	}
	for (unsigned i = 0; i < v->nrest; i++) put_field(d, rec, v->rest[i]->name, v->rest[i], 0);
	putchar('\n');
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "type", required_argument, NULL, 't' },
		{ "strict", no_argument, NULL, 's' },
		SELOPT_LONG_OPTIONS,
		{ 0 },
	};
	int json = 0, strict = 0, c, filter = 0;
	uint8_t want[GP_REC_TYPE_MAX] = { 0 };
	struct sel_opts so;
	sel_opts_init(&so);
	while ((c = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		int taken = sel_opts_parse(&so, c, optarg);
		if (taken < 0) return EXIT_USAGE;
		if (taken) continue;
		switch (c) {
		case 'j': json = 1; break;
		case 's': strict = 1; break;
		case 't': {
			char *list = xstrdup(optarg), *save = NULL;
			for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int t = gp_rec_type_from_name(tok);
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
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	if (sel_opts_check(&so)) return EXIT_USAGE;
	const char *path;
	gp_reader *r;
	int opened = tool_open_operand(argc, argv, &path, &r);
	if (opened != EXIT_OK)
		return opened;
	struct selection sel;
	int sw = 0, resolved;
	if ((resolved = stats_selection_resolve(&sel, r, path, &so, NULL)) != EXIT_OK ||
	    (sw = selection_window(&sel, r)) < 0) { /* the selection's chunks only */
		if (sw < 0) {
			tool_err("cannot read %s: %s", path, gp_strerror(sw));
			selection_free(&sel);
		}
		gp_reader_close(r);
		return sw < 0 ? EXIT_BADINPUT : resolved;
	}
	struct dumper *d = xcalloc(1, sizeof(*d));
	d->r = d->kn.r = r;
	d->base = so.abs_time ? 0 : gp_reader_header(r)->start_trace_ns;
	for (uint32_t t = 1; t < GP_REC_TYPE_MAX; t++) {
		view_build(&d->json[t], t, &json_layout[t]);
		view_build(&d->text[t], t, &text_layout[t]);
	}
	const gp_record *rec;
	int rc;
	uint64_t n = 0;
	while ((rc = gp_reader_next_ordered(r, &rec)) > 0) {
		progress_tick(++n);
		if (rec->type == GP_REC_STRING || rec->type >= GP_REC_TYPE_MAX)
			continue;
		if (filter && !want[rec->type])
			continue;
		if (!selection_keeps(&sel, rec))
			continue;
		if (json) dump_json(d, rec);
		else dump_text(d, rec);
	}
	fflush(stdout);
	int code = tool_finish(r, path, rc, strict);
	kernel_names_free(&d->kn);
	for (uint32_t t = 1; t < GP_REC_TYPE_MAX; t++) {
		view_free(&d->json[t]);
		view_free(&d->text[t]);
	}
	free(d);
	selection_free(&sel);
	gp_reader_close(r);
	return code;
}
