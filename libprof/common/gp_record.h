/* gp_record.h — the decoded trace records (what readers hand out and what
 * the recorder and writer take) and the file header.  No CUDA in here:
 * every CUDA-ish value is a plain integer.
 *
 * All timestamps are nanoseconds on the trace clock named in the file header
 * (see docs/FORMAT.md).  The on-disk encoding is private to libprof (codec/).
 * The fields of every record type, with their kinds, are listed once more
 * in gp_fields.h: that table is what dump, the SQLite export and merge
 * iterate, and a test checks it against these structs and the codec. */
#ifndef GP_RECORD_H
#define GP_RECORD_H

#include <stdint.h>
#include "gp_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_FORMAT_MAJOR 2
#define GP_FORMAT_MINOR 1
#define GP_FORMAT_V1_MINOR 4 /* the last 1.x: what a writer asked for major 1 writes */
#define GP_PRODUCER_VERSION "0.1.0"

#define GP_MAX_STRING_LEN (1u << 20) /* longer strings are truncated by the recorder */
#define GP_STACK_MAX_FRAMES 128
#define GP_SOURCE_INDEX 0xFFFFFFFFu /* source id of the index chunk */

/* ---------------------------------------------------------------- types
 * X(NAME, name, value): GP_REC_NAME = value, the gp_record union member
 * `name` of type gp_rec_name, and the name tools print.  Values are on
 * disk: append only. */
/* a table, one entry a line: */
/* clang-format off */
#define GP_REC_TYPES(X) \
	X(STRING, string, 1)          /* interned string: id -> bytes            */ \
	X(SOURCE, source, 2)          /* a source (thread ring) -> pid/tid/kind   */ \
	X(PROCESS, process, 3) \
	X(THREAD, thread, 4)          /* thread name                              */ \
	X(DEVICE, device, 5) \
	X(API, api, 6)                /* CUDA runtime/driver API call             */ \
	X(KERNEL, kernel, 7) \
	X(MEMCPY, memcpy, 8) \
	X(MEMSET, memset, 9) \
	X(NVTX_RANGE, nvtx_range, 10) \
	X(NVTX_MARK, nvtx_mark, 11) \
	X(SYNC, sync, 12)             /* CUPTI synchronization activity           */ \
	X(MEMORY, memory, 13)         /* device memory alloc/free activity        */ \
	X(DROPPED, dropped, 14)       /* records lost, and where                  */ \
	X(CLOCK, clock, 15)           /* clock pair: trace clock <-> other clocks */ \
	X(COUNTER, counter, 16)       /* sampled metric value                     */ \
	X(MODULE, module, 17)         /* loaded object mapping (for stacks)       */ \
	X(STACK, stack, 18)           /* interned call stack: id -> frames        */ \
	X(WINDOW, window, 19)         /* span in which GPU activity was recorded  */ \
	X(GRAPH_NODE, graph_node, 20) /* a CUDA graph node made or cloned (1.3)   */ \
	X(ALLOC_FAIL, alloc_fail, 21) /* an allocation call that failed (2.1)     */

enum gp_rec_type {
#define GP_REC_TYPE_ENUM_(NAME, name, value) GP_REC_##NAME = value,
	GP_REC_TYPES(GP_REC_TYPE_ENUM_)
#undef GP_REC_TYPE_ENUM_
	GP_REC_TYPE_MAX = 22
};
/* clang-format on */

/* ---------------------------------------------------------------- values */
enum gp_api_domain {
	GP_API_RUNTIME = 1,
	GP_API_DRIVER = 2
};

enum gp_source_kind {
	GP_SOURCE_META = 0,     /* strings, process/device metadata (source 0) */
	GP_SOURCE_THREAD = 1,   /* an application thread                      */
	GP_SOURCE_ACTIVITY = 2, /* GPU activity delivered by CUPTI            */
	GP_SOURCE_TOOL = 3,     /* sampler threads etc.                        */
};

/* memcpy kinds follow CUpti_ActivityMemcpyKind numerically */
enum gp_copy_kind {
	GP_COPY_UNKNOWN = 0,
	GP_COPY_HTOD = 1,
	GP_COPY_DTOH = 2,
	GP_COPY_HTOA = 3,
	GP_COPY_ATOH = 4,
	GP_COPY_ATOA = 5,
	GP_COPY_ATOD = 6,
	GP_COPY_DTOA = 7,
	GP_COPY_DTOD = 8,
	GP_COPY_HTOH = 9,
	GP_COPY_PTOP = 10,
};
/* memory kinds follow CUpti_ActivityMemoryKind numerically */
enum gp_mem_kind {
	GP_MEM_UNKNOWN = 0,
	GP_MEM_PAGEABLE = 1,
	GP_MEM_PINNED = 2,
	GP_MEM_DEVICE = 3,
	GP_MEM_ARRAY = 4,
	GP_MEM_MANAGED = 5,
	GP_MEM_DEVICE_STATIC = 6,
	GP_MEM_MANAGED_STATIC = 7,
};

enum gp_nvtx_kind {
	GP_NVTX_PUSHPOP = 1,
	GP_NVTX_STARTEND = 2
};
enum gp_nvtx_flags {
	GP_NVTX_UNTERMINATED = 1 /* end = time of flush */
};

enum gp_dropped_where {
	GP_DROP_RING = 1,    /* a thread ring was full (writer behind)      */
	GP_DROP_CUPTI = 2,   /* CUPTI reported dropped activity records     */
	GP_DROP_NO_RING = 3, /* memory cap reached: thread got no ring      */
	GP_DROP_WRITE = 4,   /* writer could not write (disk full...)       */
};

enum gp_counter_kind {
	GP_COUNTER_INT = 0,
	GP_COUNTER_DOUBLE = 1
};

/* ---------------------------------------------------------------- records
 * Member order is the order of gp_fields.h (positional initializers in the
 * tree rely on it too): do not reorder, append. */
typedef struct gp_rec_string {
	uint32_t id;
	uint32_t len;
	const char *str;
} gp_rec_string;

typedef struct gp_rec_source {
	uint32_t source_id;
	uint32_t kind; /* gp_source_kind */
	uint32_t pid;
	uint32_t tid;
	uint32_t name_id;
} gp_rec_source;

typedef struct gp_rec_process {
	uint32_t pid, ppid;
	uint32_t name_id; /* command line */
	uint32_t host_id;
	int32_t rank; /* -1 if none */
	uint64_t start_ns;
	uint32_t settings_id; /* since 1.2: the tracer's settings ("activity=... api=..."), 0 = unknown */
} gp_rec_process;

typedef struct gp_rec_thread {
	uint32_t pid, tid, name_id;
} gp_rec_thread;

typedef struct gp_rec_device {
	uint32_t device_id, name_id;
	uint32_t cc_major, cc_minor;
	uint32_t sm_count;
	uint32_t max_threads_per_sm, max_blocks_per_sm, max_regs_per_sm;
	uint32_t max_smem_per_sm, max_smem_per_block, max_threads_per_block;
	uint32_t warp_size, clock_khz, mem_clock_khz, mem_bus_width;
	uint64_t global_mem_bytes;
	uint8_t uuid[16];
	uint32_t pci_bus_id;
} gp_rec_device;

typedef struct gp_rec_api {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint32_t domain;   /* gp_api_domain */
	uint32_t cbid;     /* CUPTI callback id within the domain */
	uint32_t name_id;  /* interned API name (0: unknown) */
	uint32_t tid;      /* filled by the reader from the source */
	uint32_t stack_id; /* 0: none */
	int32_t status;    /* return code, 0 when unknown/success */
} gp_rec_api;

typedef struct gp_rec_kernel {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint32_t device_id, context_id, stream_id;
	uint32_t grid[3], block[3];
	uint32_t registers, static_smem, dynamic_smem, local_mem;
	uint32_t name_id;                 /* mangled name as CUPTI gives it */
	uint32_t launch_type;             /* 0 regular, 1 cooperative single, 2 multi, 3 cluster */
	uint64_t graph_id, graph_node_id; /* 0: not from a graph */
} gp_rec_kernel;

typedef struct gp_rec_memcpy {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint64_t bytes;
	uint32_t device_id, context_id, stream_id;
	uint32_t copy_kind, src_kind, dst_kind; /* gp_copy_kind / gp_mem_kind */
	uint32_t flags;                         /* 1: async */
	uint32_t src_device, dst_device;        /* peer copies; else = device_id */
	uint64_t graph_node_id;
} gp_rec_memcpy;

typedef struct gp_rec_memset {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint64_t bytes;
	uint32_t device_id, context_id, stream_id;
	uint32_t value, mem_kind, flags;
	uint64_t graph_node_id;
} gp_rec_memset;

typedef struct gp_rec_nvtx_range {
	uint64_t start_ns, end_ns;
	uint64_t range_id;   /* start/end ranges: the id NVTX returned */
	uint32_t kind;       /* gp_nvtx_kind */
	uint32_t flags;      /* gp_nvtx_flags */
	uint32_t domain_id;  /* string id of the domain name; 0 default */
	uint32_t message_id; /* string id */
	uint32_t category;
	uint32_t color;   /* ARGB, 0 none */
	uint32_t depth;   /* push/pop nesting depth, 0 = outermost */
	uint32_t tid;     /* thread that began it (reader fills for push/pop) */
	uint32_t end_tid; /* thread that ended it */
	int64_t payload;  /* int payload if given, else 0 */
} gp_rec_nvtx_range;

typedef struct gp_rec_nvtx_mark {
	uint64_t ts_ns;
	uint32_t domain_id, message_id, category, color, tid;
} gp_rec_nvtx_mark;

typedef struct gp_rec_sync {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint32_t type; /* CUpti_ActivitySynchronizationType */
	uint32_t context_id, stream_id, event_id;
} gp_rec_sync;

typedef struct gp_rec_memory {
	uint64_t ts_ns;
	uint64_t correlation_id;
	uint64_t address, bytes;
	uint32_t device_id, context_id, stream_id;
	uint32_t op; /* 1 alloc, 2 free */
	uint32_t mem_kind;
} gp_rec_memory;

typedef struct gp_rec_dropped {
	uint64_t ts_ns;
	uint64_t count;
	uint32_t where;     /* gp_dropped_where */
	uint32_t source_id; /* ring that lost them, or device id for CUPTI */
} gp_rec_dropped;

typedef struct gp_rec_clock {
	uint64_t trace_ns;    /* trace clock */
	uint64_t realtime_ns; /* CLOCK_REALTIME */
	uint64_t gpu_ns;      /* CUPTI timestamp (0 if not sampled) */
} gp_rec_clock;

typedef union gp_counter_value {
	int64_t i;
	double d;
} gp_counter_value;

typedef struct gp_rec_counter {
	uint64_t ts_ns;
	uint32_t name_id; /* e.g. "nvml.gpu_util" */
	uint32_t device_id;
	uint32_t kind;          /* gp_counter_kind */
	gp_counter_value value; /* .i or .d by kind */
} gp_rec_counter;

typedef struct gp_rec_module {
	uint64_t ts_ns;
	uint64_t base, size, file_offset;
	uint32_t path_id;
} gp_rec_module;

typedef struct gp_rec_stack {
	uint32_t stack_id;
	uint32_t nframes;
	const uint64_t *frames; /* innermost first; instruction addresses */
} gp_rec_stack;

typedef struct gp_rec_window {
	uint64_t start_ns, end_ns;
	uint32_t device_id;
} gp_rec_window;

/* since 1.3: a CUDA graph node was made (stream capture, cudaGraphAdd*Node)
 * or cloned (cudaGraphInstantiate, cudaGraphClone), on thread tid at ts.
 * A node made during stream capture is made inside the captured launch call,
 * whose API record on the same thread encloses ts; the kernel records of a
 * graph launch carry the id of the executable graph's node, a clone. */
typedef struct gp_rec_graph_node {
	uint64_t ts_ns;
	uint64_t graph_id;       /* CUPTI's id of the node's graph (0: unknown) */
	uint64_t node_id;        /* CUPTI's id of the node, unique in the process */
	uint64_t origin_node_id; /* a clone: the node it was cloned from; 0: made */
	uint32_t node_type;      /* CUgraphNodeType (0 kernel) */
	uint32_t tid;            /* filled by the reader from the source */
} gp_rec_graph_node;

/* since 2.1: an allocation call (libprof's gp_alloc.h) returned an error,
 * on thread tid.  Its API record (same correlation id) has the call's name,
 * status and stack; this one what the API record cannot hold: the size
 * asked for, and the device's memory as NVML saw it when the call returned
 * (docs/MEMORY.md "The failed request"). */
typedef struct gp_rec_alloc_fail {
	uint64_t ts_ns;          /* the call's start (its API record's start_ns) */
	uint64_t correlation_id; /* its API record's */
	uint64_t bytes;          /* the size requested; 0: not known for this call */
	uint64_t total_bytes;    /* the device's memory (NVML total); 0: unknown */
	uint64_t free_bytes;     /* free on the device at the call's return (NVML); with total 0: unknown */
	uint32_t device_id;      /* CUDA's device id of the call's context; GP_DEVICE_UNKNOWN: unknown */
	uint32_t domain;         /* gp_api_domain */
	uint32_t cbid;           /* CUPTI callback id within the domain */
	int32_t status;          /* the call's return code (2: out of memory) */
	uint32_t tid;            /* filled by the reader from the source */
} gp_rec_alloc_fail;
#define GP_DEVICE_UNKNOWN 0xFFFFFFFFu

/* One member per record type, named as in GP_REC_TYPES. */
union gp_rec_body {
#define GP_REC_MEMBER_(NAME, name, value) gp_rec_##name name;
	GP_REC_TYPES(GP_REC_MEMBER_)
#undef GP_REC_MEMBER_
};

typedef struct gp_record {
	uint32_t type;      /* gp_rec_type */
	uint32_t source_id; /* reader: source the record came from */
	union gp_rec_body u;
} gp_record;

/* The record's primary timestamp (start or ts), 0 for metadata records. */
GP_API uint64_t gp_record_time(const gp_record *r);
/* "kernel", "nvtx_range", ... (the GP_REC_TYPES names); "unknown" otherwise. */
GP_API const char *gp_rec_type_name(uint32_t type);
/* The records that give meaning to others (strings, sources, processes,
 * threads, devices, modules, stacks, clocks, graph nodes): the tools keep
 * them whatever the time selected, and the recorder writes them to source 0
 * (GP_HDR_FLAG_META_APART). */
GP_API int gp_rec_is_meta(uint32_t type);
/* The type named so, or GP_ERR_INVALID. */
GP_API int gp_rec_type_from_name(const char *name);

/* ---------------------------------------------------------------- file header */
enum gp_clock_id {
	GP_CLOCK_MONOTONIC = 1,
	GP_CLOCK_REALTIME = 2,
	GP_CLOCK_CUPTI = 3
};

typedef struct gp_header {
	uint16_t major, minor; /* as read; a writer given major 1 writes 1.4 (no templates), else the current format */
	uint32_t pid;
	uint32_t clock_id;          /* gp_clock_id: what trace timestamps are */
	uint64_t start_trace_ns;    /* trace clock at start */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at the same instant */
	char producer[64];          /* e.g. "gpuprof 0.1.0" */
	char host[256];
	int32_t rank;   /* -1 none */
	uint32_t flags; /* GP_HDR_FLAG_*: as read (the writers set their own) */
} gp_header;

/* Header flag (since 1.4): every record whose selection does not follow
 * from its own time (strings, sources, processes, threads, devices,
 * modules, stacks, clocks, graph nodes) is in a source-0 chunk, and a
 * chunk's last_ts covers its windows' ends; so a reader that reads the
 * source-0 chunks and the data chunks of a time span has every record a
 * tool shows for that span (gp_reader_meta_apart).  The recorder always
 * sets it; the offline writer when what was appended allows it. */
#define GP_HDR_FLAG_META_APART 2u

#ifdef __cplusplus
}
#endif
#endif /* GP_RECORD_H */
