/* gp_trace.h — libprof public API: the gpuprof trace records, the in-process
 * recorder (per-thread rings + one writer thread), the offline writer and the
 * reader.  No CUDA in here: every CUDA-ish value is a plain integer.
 *
 * Conventions (libbpf/zstd style):
 *  - every exported symbol starts with gp_ / GP_;
 *  - handles are opaque, created by gp_X_open/create and released by
 *    gp_X_close/free, which accept NULL;
 *  - functions return 0 / a non-negative value on success and a negative
 *    gp_err code on failure; gp_strerror() names it;
 *  - option structs carry their size in the first field (sz) so the library
 *    can grow them without breaking callers: set sz = sizeof(struct).
 *
 * All timestamps are nanoseconds on the trace clock named in the file header
 * (see docs/FORMAT.md).  The on-disk encoding is private to libprof; what the
 * tools see is the decoded gp_record below.
 */
#ifndef GP_TRACE_H
#define GP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GP_API __attribute__((visibility("default")))

#define GP_FORMAT_MAJOR 1
#define GP_FORMAT_MINOR 2
#define GP_PRODUCER_VERSION "0.1.0"

/* ---------------------------------------------------------------- errors */
enum gp_err {
	GP_OK = 0,
	GP_ERR_IO = -1,          /* read/write/open failed; errno kept */
	GP_ERR_NOMEM = -2,
	GP_ERR_NOT_GPUPROF = -3, /* bad magic: not a gpuprof trace */
	GP_ERR_VERSION = -4,     /* major version newer than this reader */
	GP_ERR_TRUNCATED = -5,   /* file ends inside a header or frame */
	GP_ERR_CORRUPT = -6,     /* checksum / decompression / bounds failure */
	GP_ERR_INVALID = -7,     /* bad argument */
	GP_ERR_FULL = -8,        /* ring full: record dropped (counted) */
	GP_ERR_CLOSED = -9,      /* recorder stopped / disabled */
	GP_ERR_EOF = -10,        /* no more records */
};
GP_API const char *gp_strerror(int err);

/* ---------------------------------------------------------------- records */
enum gp_rec_type {
	GP_REC_STRING = 1,     /* interned string: id -> bytes            */
	GP_REC_SOURCE = 2,     /* a source (thread ring) -> pid/tid/kind   */
	GP_REC_PROCESS = 3,
	GP_REC_THREAD = 4,     /* thread name                              */
	GP_REC_DEVICE = 5,
	GP_REC_API = 6,        /* CUDA runtime/driver API call             */
	GP_REC_KERNEL = 7,
	GP_REC_MEMCPY = 8,
	GP_REC_MEMSET = 9,
	GP_REC_NVTX_RANGE = 10,
	GP_REC_NVTX_MARK = 11,
	GP_REC_SYNC = 12,      /* CUPTI synchronization activity           */
	GP_REC_MEMORY = 13,    /* device memory alloc/free activity        */
	GP_REC_DROPPED = 14,   /* records lost, and where                  */
	GP_REC_CLOCK = 15,     /* clock pair: trace clock <-> other clocks */
	GP_REC_COUNTER = 16,   /* sampled metric value                     */
	GP_REC_MODULE = 17,    /* loaded object mapping (for stacks)       */
	GP_REC_STACK = 18,     /* interned call stack: id -> frames        */
	GP_REC_WINDOW = 19,    /* span in which GPU activity was recorded  */
	GP_REC_TYPE_MAX = 20
};

enum gp_api_domain { GP_API_RUNTIME = 1, GP_API_DRIVER = 2 };

enum gp_source_kind {
	GP_SOURCE_META = 0,     /* strings, process/device metadata (source 0) */
	GP_SOURCE_THREAD = 1,   /* an application thread                      */
	GP_SOURCE_ACTIVITY = 2, /* GPU activity delivered by CUPTI            */
	GP_SOURCE_TOOL = 3,     /* sampler threads etc.                        */
};

/* memcpy kinds follow CUpti_ActivityMemcpyKind numerically */
enum gp_copy_kind {
	GP_COPY_UNKNOWN = 0, GP_COPY_HTOD = 1, GP_COPY_DTOH = 2, GP_COPY_HTOA = 3,
	GP_COPY_ATOH = 4, GP_COPY_ATOA = 5, GP_COPY_ATOD = 6, GP_COPY_DTOA = 7,
	GP_COPY_DTOD = 8, GP_COPY_HTOH = 9, GP_COPY_PTOP = 10,
};
/* memory kinds follow CUpti_ActivityMemoryKind numerically */
enum gp_mem_kind {
	GP_MEM_UNKNOWN = 0, GP_MEM_PAGEABLE = 1, GP_MEM_PINNED = 2, GP_MEM_DEVICE = 3,
	GP_MEM_ARRAY = 4, GP_MEM_MANAGED = 5, GP_MEM_DEVICE_STATIC = 6,
	GP_MEM_MANAGED_STATIC = 7,
};

enum gp_nvtx_kind { GP_NVTX_PUSHPOP = 1, GP_NVTX_STARTEND = 2 };
enum gp_nvtx_flags { GP_NVTX_UNTERMINATED = 1 }; /* end = time of flush */

enum gp_dropped_where {
	GP_DROP_RING = 1,     /* a thread ring was full (writer behind)      */
	GP_DROP_CUPTI = 2,    /* CUPTI reported dropped activity records     */
	GP_DROP_NO_RING = 3,  /* memory cap reached: thread got no ring      */
	GP_DROP_WRITE = 4,    /* writer could not write (disk full...)       */
};

enum gp_counter_kind { GP_COUNTER_INT = 0, GP_COUNTER_DOUBLE = 1 };

typedef struct gp_rec_string { uint32_t id; uint32_t len; const char *str; } gp_rec_string;

typedef struct gp_rec_source {
	uint32_t source_id; uint32_t kind; /* gp_source_kind */
	uint32_t pid; uint32_t tid; uint32_t name_id;
} gp_rec_source;

typedef struct gp_rec_process {
	uint32_t pid, ppid;
	uint32_t name_id;     /* command line */
	uint32_t host_id;
	int32_t rank;         /* -1 if none */
	uint64_t start_ns;
	uint32_t settings_id; /* since 1.2: the tracer's settings ("activity=... api=..."), 0 = unknown */
} gp_rec_process;

typedef struct gp_rec_thread { uint32_t pid, tid, name_id; } gp_rec_thread;

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
	uint32_t domain;       /* gp_api_domain */
	uint32_t cbid;         /* CUPTI callback id within the domain */
	uint32_t name_id;      /* interned API name (0: unknown) */
	uint32_t tid;          /* filled by the reader from the source */
	uint32_t stack_id;     /* 0: none */
	int32_t status;        /* return code, 0 when unknown/success */
} gp_rec_api;

typedef struct gp_rec_kernel {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint32_t device_id, context_id, stream_id;
	uint32_t grid[3], block[3];
	uint32_t registers, static_smem, dynamic_smem, local_mem;
	uint32_t name_id;       /* mangled name as CUPTI gives it */
	uint32_t launch_type;   /* 0 regular, 1 cooperative single, 2 multi, 3 cluster */
	uint64_t graph_id, graph_node_id; /* 0: not from a graph */
} gp_rec_kernel;

typedef struct gp_rec_memcpy {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint64_t bytes;
	uint32_t device_id, context_id, stream_id;
	uint32_t copy_kind, src_kind, dst_kind;  /* gp_copy_kind / gp_mem_kind */
	uint32_t flags;         /* 1: async */
	uint32_t src_device, dst_device; /* peer copies; else = device_id */
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
	uint64_t range_id;      /* start/end ranges: the id NVTX returned */
	uint32_t kind;          /* gp_nvtx_kind */
	uint32_t flags;         /* gp_nvtx_flags */
	uint32_t domain_id;     /* string id of the domain name; 0 default */
	uint32_t message_id;    /* string id */
	uint32_t category;
	uint32_t color;         /* ARGB, 0 none */
	uint32_t depth;         /* push/pop nesting depth, 0 = outermost */
	uint32_t tid;           /* thread that began it (reader fills for push/pop) */
	uint32_t end_tid;       /* thread that ended it */
	int64_t payload;        /* int payload if given, else 0 */
} gp_rec_nvtx_range;

typedef struct gp_rec_nvtx_mark {
	uint64_t ts_ns;
	uint32_t domain_id, message_id, category, color, tid;
} gp_rec_nvtx_mark;

typedef struct gp_rec_sync {
	uint64_t start_ns, end_ns;
	uint64_t correlation_id;
	uint32_t type;          /* CUpti_ActivitySynchronizationType */
	uint32_t context_id, stream_id, event_id;
} gp_rec_sync;

typedef struct gp_rec_memory {
	uint64_t ts_ns;
	uint64_t correlation_id;
	uint64_t address, bytes;
	uint32_t device_id, context_id, stream_id;
	uint32_t op;            /* 1 alloc, 2 free */
	uint32_t mem_kind;
} gp_rec_memory;

typedef struct gp_rec_dropped {
	uint64_t ts_ns;
	uint64_t count;
	uint32_t where;         /* gp_dropped_where */
	uint32_t source_id;     /* ring that lost them, or device id for CUPTI */
} gp_rec_dropped;

typedef struct gp_rec_clock {
	uint64_t trace_ns;      /* trace clock */
	uint64_t realtime_ns;   /* CLOCK_REALTIME */
	uint64_t gpu_ns;        /* CUPTI timestamp (0 if not sampled) */
} gp_rec_clock;

typedef struct gp_rec_counter {
	uint64_t ts_ns;
	uint32_t name_id;       /* e.g. "nvml.gpu_util" */
	uint32_t device_id;
	uint32_t kind;          /* gp_counter_kind */
	union { int64_t i; double d; } value;
} gp_rec_counter;

typedef struct gp_rec_module {
	uint64_t ts_ns;
	uint64_t base, size, file_offset;
	uint32_t path_id;
} gp_rec_module;

#define GP_STACK_MAX_FRAMES 128
typedef struct gp_rec_stack {
	uint32_t stack_id;
	uint32_t nframes;
	const uint64_t *frames; /* innermost first; instruction addresses */
} gp_rec_stack;

typedef struct gp_rec_window { uint64_t start_ns, end_ns; uint32_t device_id; } gp_rec_window;

typedef struct gp_record {
	uint32_t type;       /* gp_rec_type */
	uint32_t source_id;  /* reader: source the record came from */
	union {
		gp_rec_string string;
		gp_rec_source source;
		gp_rec_process process;
		gp_rec_thread thread;
		gp_rec_device device;
		gp_rec_api api;
		gp_rec_kernel kernel;
		gp_rec_memcpy memcpy;
		gp_rec_memset memset;
		gp_rec_nvtx_range nvtx_range;
		gp_rec_nvtx_mark nvtx_mark;
		gp_rec_sync sync;
		gp_rec_memory memory;
		gp_rec_dropped dropped;
		gp_rec_clock clock;
		gp_rec_counter counter;
		gp_rec_module module;
		gp_rec_stack stack;
		gp_rec_window window;
	} u;
} gp_record;

/* The record's primary timestamp (start or ts), 0 for metadata records. */
GP_API uint64_t gp_record_time(const gp_record *r);
GP_API const char *gp_rec_type_name(uint32_t type);

/* ---------------------------------------------------------------- header */
enum gp_clock_id { GP_CLOCK_MONOTONIC = 1, GP_CLOCK_REALTIME = 2, GP_CLOCK_CUPTI = 3 };

typedef struct gp_header {
	uint16_t major, minor;
	uint32_t pid;
	uint32_t clock_id;        /* gp_clock_id: what trace timestamps are */
	uint64_t start_trace_ns;  /* trace clock at start */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at the same instant */
	char producer[64];        /* e.g. "gpuprof 0.1.0" */
	char host[256];
	int32_t rank;             /* -1 none */
} gp_header;

/* ---------------------------------------------------------------- recorder
 * In-process recording (used by the shim).  One writer thread drains
 * per-thread single-producer rings, encodes, compresses and appends frames.
 * The hot path (gp_emit) takes no lock and never blocks: when a ring is full
 * the record is dropped and counted.  Async-signal-safe: none, except
 * gp_recorder_flush_signal().
 */
typedef struct gp_recorder gp_recorder;

struct gp_recorder_opts {
	size_t sz;                  /* sizeof(struct gp_recorder_opts) */
	const char *path;           /* output file (already expanded) */
	size_t ring_bytes;          /* per-thread ring, default 4 MiB for the first
				       threads, smaller ones (>= 128 KiB) near the cap */
	size_t max_memory_bytes;    /* cap on all rings + writer buffers, default 64 MiB */
	uint32_t flush_interval_ms; /* periodic flush, default 500 */
	int zstd_level;             /* default 3 */
	uint32_t clock_id;          /* gp_clock_id of the timestamps given */
	uint64_t start_trace_ns, start_realtime_ns;
	int32_t rank;               /* -1 none */
	uint32_t file_mode;         /* default 0640 (0600 when dir is sticky/world-writable) */
};

/* Creates the file (O_CREAT|O_EXCL|O_NOFOLLOW) and starts the writer thread. */
GP_API int gp_recorder_create(const struct gp_recorder_opts *opts, gp_recorder **out);
/* Drains everything, writes the index and footer, closes.  NULL ok. */
GP_API void gp_recorder_close(gp_recorder *rec);
/* Writes everything recorded so far (blocking, from any non-signal context). */
GP_API int gp_recorder_flush(gp_recorder *rec);
/* Child after fork(): drop the inherited state without touching the parent's
 * file (no writer thread exists in the child).  Frees what it can. */
GP_API void gp_recorder_forget_after_fork(gp_recorder *rec);

/* Interns a string; returns its id (>0), the same id for the same bytes.
 * Takes a lock only when the string is new to the calling thread's cache. */
GP_API uint32_t gp_intern(gp_recorder *rec, const char *s);
GP_API uint32_t gp_intern_n(gp_recorder *rec, const char *s, size_t len);

/* Appends one record from the calling thread (its ring is created on first
 * use).  source_id/tid fields are filled by the recorder.  Returns 0, or
 * GP_ERR_FULL (dropped+counted), or GP_ERR_CLOSED. */
GP_API int gp_emit(gp_recorder *rec, const gp_record *r);
/* Counters for the run summary */
struct gp_recorder_stats {
	size_t sz;
	uint64_t records;        /* accepted */
	uint64_t dropped;        /* all reasons */
	uint64_t bytes_written;  /* file size so far */
	uint64_t frames;
	uint32_t threads;        /* rings created */
};
GP_API void gp_recorder_get_stats(gp_recorder *rec, struct gp_recorder_stats *st);
/* Name the current thread's source (shown by the tools). */
GP_API void gp_recorder_set_thread_kind(gp_recorder *rec, uint32_t source_kind);

/* ---------------------------------------------------------------- writer
 * Offline, single-threaded writer (used by `gpuprof merge` and tests):
 * records are written in the order given, to the source given. */
typedef struct gp_writer gp_writer;
GP_API int gp_writer_open(const char *path, const gp_header *hdr, int zstd_level, gp_writer **out);
/* Strings: the writer keeps ids as given; write GP_REC_STRING records first. */
GP_API int gp_writer_append(gp_writer *w, uint32_t source_id, const gp_record *r);
GP_API int gp_writer_close(gp_writer *w); /* writes index + footer; NULL ok */

/* ---------------------------------------------------------------- reader */
typedef struct gp_reader gp_reader;

struct gp_integrity {
	uint64_t frames_ok;
	uint64_t frames_corrupt;   /* skipped */
	uint64_t bytes_skipped;
	int truncated;             /* file ends inside a frame or without footer */
	int has_footer;
	uint64_t truncated_at;     /* offset where decoding stopped */
};

GP_API int gp_reader_open(const char *path, gp_reader **out);
GP_API void gp_reader_close(gp_reader *r); /* NULL ok */
GP_API const gp_header *gp_reader_header(const gp_reader *r);
/* Human-readable cause of the last error ("frame at offset 1234: checksum mismatch"). */
GP_API const char *gp_reader_errmsg(const gp_reader *r);

/* Iterates all records in file order (chunk by chunk).  Returns 1 with *rec
 * filled (valid until the next call), 0 at end, <0 on fatal error.  Corrupt
 * frames are skipped (counted in the integrity report), not fatal. */
GP_API int gp_reader_next(gp_reader *r, const gp_record **rec);
/* Same, merged in time order across sources (metadata records first).
 * Memory bounded by the number of sources x one chunk. */
GP_API int gp_reader_next_ordered(gp_reader *r, const gp_record **rec);
GP_API int gp_reader_rewind(gp_reader *r);
GP_API void gp_reader_integrity(const gp_reader *r, struct gp_integrity *out);

/* Strings and sources seen so far (all of them once iteration has ended, or
 * after gp_reader_load_meta which scans the file for them). */
GP_API int gp_reader_load_meta(gp_reader *r);
GP_API const char *gp_reader_string(const gp_reader *r, uint32_t id); /* NULL if unknown */
GP_API const gp_rec_source *gp_reader_source(const gp_reader *r, uint32_t source_id);


/* ---------------------------------------------------------------- additions
 * Appended after the first contract (append-only; see docs/FORMAT.md). */
#define GP_ERR_TIMEOUT (-11)          /* bounded wait expired (gp_strerror knows it) */
#define GP_SOURCE_INDEX 0xFFFFFFFFu   /* source id of the index chunk */
#define GP_MAX_STRING_LEN (1u << 20)  /* longer strings are truncated by the recorder */

/* Signal-handler flush, in two steps, both async-signal-safe (atomics,
 * write(2) to an eventfd, clock_gettime, nanosleep):
 * request_flush_async() asks the writer thread to drain everything emitted
 * so far and returns a ticket (>0, or <0 gp_err); wait_flush_async() polls
 * until the writer has written that ticket's data or timeout_ms passed
 * (GP_ERR_TIMEOUT).  Never call them from the writer thread itself (it would
 * only time out).  gp_recorder_flush_signal() = request + wait. */
GP_API int64_t gp_recorder_request_flush_async(gp_recorder *rec);
GP_API int gp_recorder_wait_flush_async(gp_recorder *rec, int64_t ticket, uint32_t timeout_ms);
GP_API int gp_recorder_flush_signal(gp_recorder *rec, uint32_t timeout_ms);

/* Tests/benchmarks: while paused, the writer thread does not drain (periodic
 * or ring-half-full wakeups); gp_recorder_flush/close still do. */
GP_API void gp_recorder_pause_writer(gp_recorder *rec, int paused);
/* Current time on the recorder's trace clock (clock_id of the opts:
 * REALTIME -> CLOCK_REALTIME, else CLOCK_MONOTONIC). */
GP_API uint64_t gp_recorder_now(const gp_recorder *rec);
/* Extra counters (write errors etc.); sz-versioned like the others. */
struct gp_recorder_stats2 {
	size_t sz;
	uint64_t dropped_ring, dropped_no_ring, dropped_write, dropped_meta;
	uint64_t write_errors;   /* failed write(2) calls */
	int last_write_errno;
};
GP_API void gp_recorder_get_stats2(gp_recorder *rec, struct gp_recorder_stats2 *st);
/* Fork: libprof registers pthread_atfork handlers itself (once, at the first
 * gp_recorder_create): prepare takes every live recorder's intern/ring locks,
 * parent and child release them, so the child may call
 * gp_recorder_forget_after_fork() and gp_recorder_create() safely.
 * gp_recorder_close() on a pointer that is not a live recorder (e.g. closed
 * already) is a no-op; no gp_emit may run concurrently with close. */

/* gp_reader_errmsg(NULL) returns why the calling thread's last
 * gp_reader_open() failed (the reader handle does not exist then). */

struct gp_footer_info {
	int present;             /* a valid footer was found */
	uint64_t index_offset, chunk_count, record_count;
};
/* Footer as found at open (cheap: no scan). GP_ERR_EOF if none. */
GP_API int gp_reader_footer(const gp_reader *r, struct gp_footer_info *out);
/* One-line integrity summary, e.g. "ok: 12 chunks, footer present" or
 * "truncated at offset 4096 (file ends inside a chunk); 3 chunks ok".  Scans
 * the file first if that has not happened.  Returns snprintf's length. */
GP_API int gp_reader_describe_integrity(gp_reader *r, char *buf, size_t n);

/* Ring sizes with default options: gp_recorder_set_thread_kind(rec,
 * GP_SOURCE_ACTIVITY) gives the calling thread a full-size ring (CUPTI hands
 * over whole activity buffers at once); if the thread already had a smaller
 * ring, its later records go to a new source of that kind. */

#ifdef __cplusplus
}
#endif
#endif /* GP_TRACE_H */
