/* gp_spool.h — the flight recorder's memory (docs/FLIGHT.md): a bounded,
 * in-memory history of a trace, and captures cut from it.
 *
 * The recorder (gp_recorder_create) writes its trace as always, into a spool
 * file the caller created for it (the shim: in the per-user control
 * directory, unlinked once open).  gp_spool_poll reads back every complete
 * chunk the writer has appended since the last poll, keeps a copy in memory
 * and releases the file's space behind it (fallocate PUNCH_HOLE), so the file
 * holds at most what was written since the previous poll.  The chunks kept:
 * every metadata chunk (source 0: strings, sources, the process and device
 * records: what every later chunk refers to), and the data chunks whose last
 * record is not older than the caller's horizon, within a byte cap (oldest
 * data chunks go first).  Chunks are compressed already: keeping one costs
 * its compressed size and a copy, nothing is decoded.
 *
 * A capture is a normal trace file: gp_spool_capture_begin writes the
 * header, every metadata chunk and the data chunks kept from from_ns on, in
 * file order; every chunk polled after that is appended as it comes (so a
 * capture's memory is the history only), and gp_spool_capture_end writes
 * the index and footer.
 *
 * Not thread-safe: one caller at a time (the shim's flush thread, then its
 * final flush). */
#ifndef GP_SPOOL_H
#define GP_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/gp_api.h"

typedef struct gp_spool gp_spool;

struct gp_spool_opts {
	size_t sz;          /* sizeof(struct gp_spool_opts) */
	uint64_t max_bytes; /* cap on the chunks kept (their file size) */
};

/* fd: the spool file, opened read-write (PUNCH_HOLE needs it); the spool
 * owns it from here (closed by gp_spool_close even on failure). */
GP_API int gp_spool_open(int fd, const struct gp_spool_opts *o, gp_spool **out);
GP_API void gp_spool_close(gp_spool *s); /* NULL ok; an open capture is aborted */
/* Fork child: frees the inherited copy without writing or unlinking. */
GP_API void gp_spool_forget_after_fork(gp_spool *s);

/* Reads the chunks written since the last poll (see above), then drops the
 * data chunks whose last record is older than horizon_ns (trace clock), then
 * the oldest data chunks while more than max_bytes are kept.  Returns the
 * number of chunks read; GP_ERR_FULL when the metadata alone is over the
 * cap (nothing is dropped then: the caller gives up); GP_ERR_IO when the
 * file cannot be read; an open capture's write error does not fail the poll
 * (gp_spool_capture_error). */
GP_API int gp_spool_poll(gp_spool *s, uint64_t horizon_ns);

struct gp_spool_stats {
	size_t sz;
	uint64_t kept_bytes, meta_bytes; /* kept now (all / metadata) */
	uint64_t kept_chunks;
	uint64_t oldest_ns;                 /* first record of the oldest data chunk kept, 0: none */
	uint64_t dropped_age, dropped_cap;  /* data chunks dropped by age / by the cap */
	uint64_t read_bytes, skipped_bytes; /* read from the file; unreadable (resynced past) */
	int punch_errno;                    /* space could not be released (0: fine) */
	/* the open or last capture */
	uint64_t capture_records, capture_bytes;
};
GP_API void gp_spool_get_stats(const gp_spool *s, struct gp_spool_stats *st);

/* Creates path (O_CREAT|O_EXCL|O_NOFOLLOW, the recorder's file mode rules)
 * and writes the header, the metadata and the data chunks kept whose last
 * record is at or after from_ns.  0, or GP_ERR_IO (errno kept; the partial
 * file is removed), GP_ERR_INVALID (a capture is open, or no header read
 * yet). */
GP_API int gp_spool_capture_begin(gp_spool *s, const char *path, uint64_t from_ns);
/* The first write error of the open capture (an errno value), 0 if none. */
GP_API int gp_spool_capture_error(const gp_spool *s);
/* Index and footer, close.  0, or GP_ERR_IO (errno kept) when any write of
 * the capture failed: the file is removed then. */
GP_API int gp_spool_capture_end(gp_spool *s);
/* Close and remove the open capture (no-op without one). */
GP_API void gp_spool_capture_abort(gp_spool *s);

#endif
