/* gp_fields.h — the record field table: for every record type, every field
 * of its struct (gp_record.h) in member order, with its C type, element
 * count and kind.  It is the one list the consumers of the schema iterate
 * instead of spelling it again:
 *  - type names (gp_rec_type_name) and struct sizes come from GP_REC_TYPES;
 *  - `gpuprof dump` (text and --json), the SQLite export and `gpuprof merge`
 *    walk gp_rec_fields(); merge renumbers and translates by kind;
 *  - the hand-written codec (codec/gp_codec.c, kept for speed) is checked
 *    against it by tests/libprof/test_fields.c: every field round-trips;
 *  - gp_fields.c fails to compile when a list misses a member, has one too
 *    many, or names a member with another type or size.
 * Adding a field: the struct member, its line here, the codec (both
 * directions, appended at the end of the record: see docs/FORMAT.md), and
 * docs/FORMAT.md + docs/CLI.md.  The consumers above pick it up.
 *
 * F(type, member, ctype, count, KIND, flags):
 *   ctype, count  the member is `ctype member` (count 1) or `ctype member[count]`
 *   KIND          GP_FK_KIND, what the value means (below)
 *   flags         0, or GP_FIELD_DEF: the record defines this id (the string
 *                 record's id...) rather than referring to one; or
 *                 GP_FIELD_SRC_TID: 0 means the thread of the record's
 *                 source (the codec stores it so, readers fill it in) */
#ifndef GP_FIELDS_H
#define GP_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include "gp_record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a table, one entry a line: */
/* clang-format off */
/* X(KIND, what it means) */
#define GP_FIELD_KINDS(X) \
	X(UINT, "unsigned number: size, count, dimension, CUDA handle") \
	X(INT, "signed number") \
	X(TIME, "ns on the trace clock; merge translates it") \
	X(END, "end ns on the trace clock, the field before it is the start; merge translates it") \
	X(CLOCK, "ns on another clock (CLOCK_REALTIME, GPU); merge keeps it") \
	X(CORR, "CUDA correlation id: joins an API call to its GPU work") \
	X(PID, "process id") \
	X(TID, "thread id") \
	X(DEVICE, "CUDA device ordinal") \
	X(STRING, "string id, 0 = none; merge renumbers it") \
	X(STACK, "stack id, 0 = none; merge renumbers it") \
	X(SOURCE, "source id (0 = the metadata source); merge renumbers it") \
	X(ENUM, "one value of an enum (gp_record.h or CUPTI's)") \
	X(FLAGS, "bit set") \
	X(ADDRESS, "virtual address") \
	X(BYTES, "raw bytes") \
	X(TEXT, "the string record's bytes: len bytes at str, not NUL-terminated") \
	X(FRAMES, "the stack record's frames: nframes addresses at frames") \
	X(VALUE, "counter value: .i or .d by the record's kind field")

enum gp_field_kind {
#define GP_FK_ENUM_(KIND, what) GP_FK_##KIND,
	GP_FIELD_KINDS(GP_FK_ENUM_)
#undef GP_FK_ENUM_
	GP_FK_COUNT
};
/* clang-format on */

enum gp_field_flags {
	GP_FIELD_DEF = 1,     /* the record defines this id */
	GP_FIELD_SIGNED = 2,  /* set by gp_fields.c from the C type */
	GP_FIELD_SRC_TID = 4, /* 0 = the source's thread */
};

/* a table, one entry a line: */
/* clang-format off */
#define GP_FIELDS_STRING(F) \
	F(string, id, uint32_t, 1, STRING, GP_FIELD_DEF) \
	F(string, len, uint32_t, 1, UINT, 0) \
	F(string, str, const char *, 1, TEXT, 0)

#define GP_FIELDS_SOURCE(F) \
	F(source, source_id, uint32_t, 1, SOURCE, GP_FIELD_DEF) \
	F(source, kind, uint32_t, 1, ENUM, 0) \
	F(source, pid, uint32_t, 1, PID, 0) \
	F(source, tid, uint32_t, 1, TID, 0) \
	F(source, name_id, uint32_t, 1, STRING, 0)

#define GP_FIELDS_PROCESS(F) \
	F(process, pid, uint32_t, 1, PID, 0) \
	F(process, ppid, uint32_t, 1, PID, 0) \
	F(process, name_id, uint32_t, 1, STRING, 0) \
	F(process, host_id, uint32_t, 1, STRING, 0) \
	F(process, rank, int32_t, 1, INT, 0) \
	F(process, start_ns, uint64_t, 1, TIME, 0) \
	F(process, settings_id, uint32_t, 1, STRING, 0)

#define GP_FIELDS_THREAD(F) \
	F(thread, pid, uint32_t, 1, PID, 0) \
	F(thread, tid, uint32_t, 1, TID, 0) \
	F(thread, name_id, uint32_t, 1, STRING, 0)

#define GP_FIELDS_DEVICE(F) \
	F(device, device_id, uint32_t, 1, DEVICE, 0) \
	F(device, name_id, uint32_t, 1, STRING, 0) \
	F(device, cc_major, uint32_t, 1, UINT, 0) \
	F(device, cc_minor, uint32_t, 1, UINT, 0) \
	F(device, sm_count, uint32_t, 1, UINT, 0) \
	F(device, max_threads_per_sm, uint32_t, 1, UINT, 0) \
	F(device, max_blocks_per_sm, uint32_t, 1, UINT, 0) \
	F(device, max_regs_per_sm, uint32_t, 1, UINT, 0) \
	F(device, max_smem_per_sm, uint32_t, 1, UINT, 0) \
	F(device, max_smem_per_block, uint32_t, 1, UINT, 0) \
	F(device, max_threads_per_block, uint32_t, 1, UINT, 0) \
	F(device, warp_size, uint32_t, 1, UINT, 0) \
	F(device, clock_khz, uint32_t, 1, UINT, 0) \
	F(device, mem_clock_khz, uint32_t, 1, UINT, 0) \
	F(device, mem_bus_width, uint32_t, 1, UINT, 0) \
	F(device, global_mem_bytes, uint64_t, 1, UINT, 0) \
	F(device, uuid, uint8_t, 16, BYTES, 0) \
	F(device, pci_bus_id, uint32_t, 1, UINT, 0)

#define GP_FIELDS_API(F) \
	F(api, start_ns, uint64_t, 1, TIME, 0) \
	F(api, end_ns, uint64_t, 1, END, 0) \
	F(api, correlation_id, uint64_t, 1, CORR, 0) \
	F(api, domain, uint32_t, 1, ENUM, 0) \
	F(api, cbid, uint32_t, 1, UINT, 0) \
	F(api, name_id, uint32_t, 1, STRING, 0) \
	F(api, tid, uint32_t, 1, TID, GP_FIELD_SRC_TID) \
	F(api, stack_id, uint32_t, 1, STACK, 0) \
	F(api, status, int32_t, 1, INT, 0)

#define GP_FIELDS_KERNEL(F) \
	F(kernel, start_ns, uint64_t, 1, TIME, 0) \
	F(kernel, end_ns, uint64_t, 1, END, 0) \
	F(kernel, correlation_id, uint64_t, 1, CORR, 0) \
	F(kernel, device_id, uint32_t, 1, DEVICE, 0) \
	F(kernel, context_id, uint32_t, 1, UINT, 0) \
	F(kernel, stream_id, uint32_t, 1, UINT, 0) \
	F(kernel, grid, uint32_t, 3, UINT, 0) \
	F(kernel, block, uint32_t, 3, UINT, 0) \
	F(kernel, registers, uint32_t, 1, UINT, 0) \
	F(kernel, static_smem, uint32_t, 1, UINT, 0) \
	F(kernel, dynamic_smem, uint32_t, 1, UINT, 0) \
	F(kernel, local_mem, uint32_t, 1, UINT, 0) \
	F(kernel, name_id, uint32_t, 1, STRING, 0) \
	F(kernel, launch_type, uint32_t, 1, ENUM, 0) \
	F(kernel, graph_id, uint64_t, 1, UINT, 0) \
	F(kernel, graph_node_id, uint64_t, 1, UINT, 0)

#define GP_FIELDS_MEMCPY(F) \
	F(memcpy, start_ns, uint64_t, 1, TIME, 0) \
	F(memcpy, end_ns, uint64_t, 1, END, 0) \
	F(memcpy, correlation_id, uint64_t, 1, CORR, 0) \
	F(memcpy, bytes, uint64_t, 1, UINT, 0) \
	F(memcpy, device_id, uint32_t, 1, DEVICE, 0) \
	F(memcpy, context_id, uint32_t, 1, UINT, 0) \
	F(memcpy, stream_id, uint32_t, 1, UINT, 0) \
	F(memcpy, copy_kind, uint32_t, 1, ENUM, 0) \
	F(memcpy, src_kind, uint32_t, 1, ENUM, 0) \
	F(memcpy, dst_kind, uint32_t, 1, ENUM, 0) \
	F(memcpy, flags, uint32_t, 1, FLAGS, 0) \
	F(memcpy, src_device, uint32_t, 1, DEVICE, 0) \
	F(memcpy, dst_device, uint32_t, 1, DEVICE, 0) \
	F(memcpy, graph_node_id, uint64_t, 1, UINT, 0)

#define GP_FIELDS_MEMSET(F) \
	F(memset, start_ns, uint64_t, 1, TIME, 0) \
	F(memset, end_ns, uint64_t, 1, END, 0) \
	F(memset, correlation_id, uint64_t, 1, CORR, 0) \
	F(memset, bytes, uint64_t, 1, UINT, 0) \
	F(memset, device_id, uint32_t, 1, DEVICE, 0) \
	F(memset, context_id, uint32_t, 1, UINT, 0) \
	F(memset, stream_id, uint32_t, 1, UINT, 0) \
	F(memset, value, uint32_t, 1, UINT, 0) \
	F(memset, mem_kind, uint32_t, 1, ENUM, 0) \
	F(memset, flags, uint32_t, 1, FLAGS, 0) \
	F(memset, graph_node_id, uint64_t, 1, UINT, 0)

#define GP_FIELDS_NVTX_RANGE(F) \
	F(nvtx_range, start_ns, uint64_t, 1, TIME, 0) \
	F(nvtx_range, end_ns, uint64_t, 1, END, 0) \
	F(nvtx_range, range_id, uint64_t, 1, UINT, 0) \
	F(nvtx_range, kind, uint32_t, 1, ENUM, 0) \
	F(nvtx_range, flags, uint32_t, 1, FLAGS, 0) \
	F(nvtx_range, domain_id, uint32_t, 1, STRING, 0) \
	F(nvtx_range, message_id, uint32_t, 1, STRING, 0) \
	F(nvtx_range, category, uint32_t, 1, UINT, 0) \
	F(nvtx_range, color, uint32_t, 1, UINT, 0) \
	F(nvtx_range, depth, uint32_t, 1, UINT, 0) \
	F(nvtx_range, tid, uint32_t, 1, TID, GP_FIELD_SRC_TID) \
	F(nvtx_range, end_tid, uint32_t, 1, TID, 0) \
	F(nvtx_range, payload, int64_t, 1, INT, 0)

#define GP_FIELDS_NVTX_MARK(F) \
	F(nvtx_mark, ts_ns, uint64_t, 1, TIME, 0) \
	F(nvtx_mark, domain_id, uint32_t, 1, STRING, 0) \
	F(nvtx_mark, message_id, uint32_t, 1, STRING, 0) \
	F(nvtx_mark, category, uint32_t, 1, UINT, 0) \
	F(nvtx_mark, color, uint32_t, 1, UINT, 0) \
	F(nvtx_mark, tid, uint32_t, 1, TID, GP_FIELD_SRC_TID)

#define GP_FIELDS_SYNC(F) \
	F(sync, start_ns, uint64_t, 1, TIME, 0) \
	F(sync, end_ns, uint64_t, 1, END, 0) \
	F(sync, correlation_id, uint64_t, 1, CORR, 0) \
	F(sync, type, uint32_t, 1, ENUM, 0) \
	F(sync, context_id, uint32_t, 1, UINT, 0) \
	F(sync, stream_id, uint32_t, 1, UINT, 0) \
	F(sync, event_id, uint32_t, 1, UINT, 0)

#define GP_FIELDS_MEMORY(F) \
	F(memory, ts_ns, uint64_t, 1, TIME, 0) \
	F(memory, correlation_id, uint64_t, 1, CORR, 0) \
	F(memory, address, uint64_t, 1, ADDRESS, 0) \
	F(memory, bytes, uint64_t, 1, UINT, 0) \
	F(memory, device_id, uint32_t, 1, DEVICE, 0) \
	F(memory, context_id, uint32_t, 1, UINT, 0) \
	F(memory, stream_id, uint32_t, 1, UINT, 0) \
	F(memory, op, uint32_t, 1, ENUM, 0) \
	F(memory, mem_kind, uint32_t, 1, ENUM, 0)

/* source_id: a device id when where == GP_DROP_CUPTI (merge keeps it then) */
#define GP_FIELDS_DROPPED(F) \
	F(dropped, ts_ns, uint64_t, 1, TIME, 0) \
	F(dropped, count, uint64_t, 1, UINT, 0) \
	F(dropped, where, uint32_t, 1, ENUM, 0) \
	F(dropped, source_id, uint32_t, 1, SOURCE, 0)

#define GP_FIELDS_CLOCK(F) \
	F(clock, trace_ns, uint64_t, 1, TIME, 0) \
	F(clock, realtime_ns, uint64_t, 1, CLOCK, 0) \
	F(clock, gpu_ns, uint64_t, 1, CLOCK, 0)

#define GP_FIELDS_COUNTER(F) \
	F(counter, ts_ns, uint64_t, 1, TIME, 0) \
	F(counter, name_id, uint32_t, 1, STRING, 0) \
	F(counter, device_id, uint32_t, 1, DEVICE, 0) \
	F(counter, kind, uint32_t, 1, ENUM, 0) \
	F(counter, value, gp_counter_value, 1, VALUE, 0)

#define GP_FIELDS_MODULE(F) \
	F(module, ts_ns, uint64_t, 1, TIME, 0) \
	F(module, base, uint64_t, 1, ADDRESS, 0) \
	F(module, size, uint64_t, 1, UINT, 0) \
	F(module, file_offset, uint64_t, 1, UINT, 0) \
	F(module, path_id, uint32_t, 1, STRING, 0)

#define GP_FIELDS_STACK(F) \
	F(stack, stack_id, uint32_t, 1, STACK, GP_FIELD_DEF) \
	F(stack, nframes, uint32_t, 1, UINT, 0) \
	F(stack, frames, const uint64_t *, 1, FRAMES, 0)

#define GP_FIELDS_WINDOW(F) \
	F(window, start_ns, uint64_t, 1, TIME, 0) \
	F(window, end_ns, uint64_t, 1, END, 0) \
	F(window, device_id, uint32_t, 1, DEVICE, 0)

#define GP_FIELDS_GRAPH_NODE(F) \
	F(graph_node, ts_ns, uint64_t, 1, TIME, 0) \
	F(graph_node, graph_id, uint64_t, 1, UINT, 0) \
	F(graph_node, node_id, uint64_t, 1, UINT, 0) \
	F(graph_node, origin_node_id, uint64_t, 1, UINT, 0) \
	F(graph_node, node_type, uint32_t, 1, ENUM, 0) \
	F(graph_node, tid, uint32_t, 1, TID, GP_FIELD_SRC_TID)

#define GP_FIELDS_ALLOC_FAIL(F) \
	F(alloc_fail, ts_ns, uint64_t, 1, TIME, 0) \
	F(alloc_fail, correlation_id, uint64_t, 1, CORR, 0) \
	F(alloc_fail, bytes, uint64_t, 1, UINT, 0) \
	F(alloc_fail, total_bytes, uint64_t, 1, UINT, 0) \
	F(alloc_fail, free_bytes, uint64_t, 1, UINT, 0) \
	F(alloc_fail, device_id, uint32_t, 1, DEVICE, 0) \
	F(alloc_fail, domain, uint32_t, 1, ENUM, 0) \
	F(alloc_fail, cbid, uint32_t, 1, UINT, 0) \
	F(alloc_fail, status, int32_t, 1, INT, 0) \
	F(alloc_fail, tid, uint32_t, 1, TID, GP_FIELD_SRC_TID)
/* clang-format on */

/* ---------------------------------------------------------------- run-time view */
struct gp_field {
	const char *name; /* the member's name: "correlation_id" */
	uint16_t offset;  /* in gp_record.u */
	uint8_t size;     /* of one element (1, 4, 8) */
	uint8_t count;    /* elements: 1, or the array length */
	uint8_t kind;     /* enum gp_field_kind */
	uint8_t flags;    /* enum gp_field_flags */
};

/* The fields of a record type in member order (*n of them); NULL and 0 for
 * an unknown type. */
GP_API const struct gp_field *gp_rec_fields(uint32_t type, unsigned *n);
/* The field of a type named so, or NULL. */
GP_API const struct gp_field *gp_rec_field(uint32_t type, const char *name);
/* The fields of a type whose names are not among names[0..nnames) (a
 * consumer's layout: the fields it shows and those it hides on purpose),
 * in table order, into out[] (room for every field of the type); returns
 * how many.  Consumers append these with a default format, so a field added
 * to the table shows up without touching them. */
GP_API unsigned gp_rec_fields_other(uint32_t type, const char *const *names, unsigned nnames,
				    const struct gp_field **out);
/* "UINT", "TIME", ... for a gp_field_kind. */
GP_API const char *gp_field_kind_name(uint32_t kind);

/* Element i of a number field (any kind but TEXT, FRAMES: those are
 * pointers; VALUE gives the raw 8 bytes), widened to 64 bits: signed ones
 * sign-extended, so (int64_t) of the result is the value. */
static inline uint64_t gp_field_get(const gp_record *r, const struct gp_field *f, unsigned i)
{
	const uint8_t *p = (const uint8_t *)&r->u + f->offset + (size_t)i * f->size;
	switch (f->size) {
	case 1: return *p;
	case 2: {
		uint16_t v;
		__builtin_memcpy(&v, p, 2);
		return (f->flags & GP_FIELD_SIGNED) ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;
		__builtin_memcpy(&v, p, 4);
		return (f->flags & GP_FIELD_SIGNED) ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	default: {
		uint64_t v;
		__builtin_memcpy(&v, p, 8);
		return v;
	}
	}
}

/* Stores v (truncated to the field's size) as element i. */
static inline void gp_field_set(gp_record *r, const struct gp_field *f, unsigned i, uint64_t v)
{
	uint8_t *p = (uint8_t *)&r->u + f->offset + (size_t)i * f->size;
	switch (f->size) {
	case 1: *p = (uint8_t)v; break;
	case 2: {
		uint16_t x = (uint16_t)v;
		__builtin_memcpy(p, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		__builtin_memcpy(p, &x, 4);
		break;
	}
	default: __builtin_memcpy(p, &v, 8); break;
	}
}

#ifdef __cplusplus
}
#endif
#endif /* GP_FIELDS_H */
