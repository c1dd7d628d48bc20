/* gp_recorder.h — in-process recording (used by the shim).
 *
 * One writer thread ("gpuprof-writer") drains per-thread single-producer
 * rings (write/gp_ring.h), encodes, compresses and appends chunks.  The hot
 * path (gp_emit) takes no lock and never blocks: when a ring is full the
 * record is dropped and counted.  Async-signal-safe: only the two async
 * flush calls and gp_recorder_flush_signal().
 *
 * Fork: libprof registers pthread_atfork handlers itself (once, at the
 * first gp_recorder_create): prepare takes every live recorder's
 * intern/ring locks, parent and child release them, so the child may call
 * gp_recorder_forget_after_fork() and gp_recorder_create() safely. */
#ifndef GP_RECORDER_H
#define GP_RECORDER_H

#include <stddef.h>
#include <stdint.h>
#include "common/gp_api.h"
#include "common/gp_record.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_recorder gp_recorder;

/* ---------------------------------------------------------------- life cycle */
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
	int32_t rank;       /* -1 none */
	uint32_t file_mode; /* default 0640 (0600 when dir is sticky/world-writable) */
};

/* Creates the file (O_CREAT|O_EXCL|O_NOFOLLOW) and starts the writer thread. */
GP_API int gp_recorder_create(const struct gp_recorder_opts *opts, gp_recorder **out);
/* Drains everything, writes the index and footer, closes.  NULL, or a
 * pointer that is not a live recorder (closed already), is a no-op; no
 * gp_emit may run concurrently with close. */
GP_API void gp_recorder_close(gp_recorder *rec);
/* Child after fork(): drop the inherited state without touching the parent's
 * file (no writer thread exists in the child).  Frees what it can. */
GP_API void gp_recorder_forget_after_fork(gp_recorder *rec);

/* ---------------------------------------------------------------- recording */
/* Appends one record from the calling thread (its ring is created on first
 * use).  source_id/tid fields are filled by the recorder.  Returns 0, or
 * GP_ERR_FULL (dropped+counted), or GP_ERR_CLOSED. */
GP_API int gp_emit(gp_recorder *rec, const gp_record *r);

/* Interns a string; returns its id (>0), the same id for the same bytes,
 * 0 when out of memory.  Strings longer than GP_MAX_STRING_LEN are cut.
 * Takes a lock only when the string is new to the calling thread's cache. */
GP_API uint32_t gp_intern(gp_recorder *rec, const char *s);
GP_API uint32_t gp_intern_n(gp_recorder *rec, const char *s, size_t len);

/* Names the current thread's source kind (shown by the tools).  Ring sizes
 * with default options: GP_SOURCE_ACTIVITY gives the calling thread a
 * full-size ring (CUPTI hands over whole activity buffers at once); if the
 * thread already had a smaller ring, its later records go to a new source
 * of that kind. */
GP_API void gp_recorder_set_thread_kind(gp_recorder *rec, uint32_t source_kind);

/* Current time on the recorder's trace clock (clock_id of the opts:
 * REALTIME -> CLOCK_REALTIME, else CLOCK_MONOTONIC). */
GP_API uint64_t gp_recorder_now(const gp_recorder *rec);

/* ---------------------------------------------------------------- flushing */
/* Writes everything recorded so far (blocking, from any non-signal context). */
GP_API int gp_recorder_flush(gp_recorder *rec);

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

/* ---------------------------------------------------------------- counters
 * For the run summary; sz-versioned like the options. */
struct gp_recorder_stats {
	size_t sz;
	uint64_t records;       /* accepted */
	uint64_t dropped;       /* all reasons */
	uint64_t bytes_written; /* file size so far */
	uint64_t frames;
	uint32_t threads; /* rings created */
};
GP_API void gp_recorder_get_stats(gp_recorder *rec, struct gp_recorder_stats *st);

/* Drops by reason and write errors. */
struct gp_recorder_stats2 {
	size_t sz;
	uint64_t dropped_ring, dropped_no_ring, dropped_write, dropped_meta;
	uint64_t write_errors; /* failed write(2) calls */
	int last_write_errno;
};
GP_API void gp_recorder_get_stats2(gp_recorder *rec, struct gp_recorder_stats2 *st);

#ifdef __cplusplus
}
#endif
#endif /* GP_RECORDER_H */
