/* gp_reader.h — reading a trace: header, records in file or time order,
 * string and source tables, integrity report.  Input is untrusted: a
 * damaged file gives an error or skipped chunks (counted), never a crash. */
#ifndef GP_READER_H
#define GP_READER_H

#include <stddef.h>
#include <stdint.h>
#include "common/gp_api.h"
#include "common/gp_fields.h"
#include "common/gp_record.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_reader gp_reader;

/* ---------------------------------------------------------------- open */
GP_API int gp_reader_open(const char *path, gp_reader **out);

/* Options of gp_reader_open_opts; zero-initialise, set sz = sizeof. */
struct gp_reader_opts {
	size_t sz;
	/* Threads that decode, the caller's included (0 or 1: the caller's
	 * only).  With N > 1, N - 1 threads decompress and decode the chunks
	 * ahead of the caller, at most 2(N - 1) + 2 chunks ahead (each: its
	 * bytes and its records, about 1.5 MB for a full chunk); the records,
	 * their order, the tables and the integrity report are the same as
	 * with one thread. */
	int threads;
	/* Nonzero: the chunk table (the open's scan of every chunk header,
	 * ~40 bytes a chunk) is shared with the other readers of the same file
	 * (device, inode, size and modification time) open with share at the
	 * time, instead of each scanning and keeping its own: a reader then
	 * costs ~1 byte a chunk, and its records, tables and integrity report
	 * are those of a reader that scanned.  For readers of one unchanging
	 * file at once (`gpuprof`'s time slices: one reader each). */
	int share;
};
#define GP_READER_MAX_THREADS 256
GP_API int gp_reader_open_opts(const char *path, const struct gp_reader_opts *opts, gp_reader **out);
/* The online processors (1 .. GP_READER_MAX_THREADS): a default for threads. */
GP_API int gp_reader_threads_default(void);
/* The threads decoding for r (1 when the caller's alone). */
GP_API int gp_reader_threads(const gp_reader *r);
GP_API void gp_reader_close(gp_reader *r); /* NULL ok */
GP_API const gp_header *gp_reader_header(const gp_reader *r);
/* Human-readable cause of the last error ("frame at offset 1234: checksum
 * mismatch").  gp_reader_errmsg(NULL) returns why the calling thread's last
 * gp_reader_open() failed (the reader handle does not exist then). */
GP_API const char *gp_reader_errmsg(const gp_reader *r);

/* ---------------------------------------------------------------- records */
/* Iterates all records in file order (chunk by chunk).  Returns 1 with *rec
 * filled (valid until the next call), 0 at end, <0 on fatal error.  Corrupt
 * frames are skipped (counted in the integrity report), not fatal. */
GP_API int gp_reader_next(gp_reader *r, const gp_record **rec);
/* Same, merged in time order across sources (metadata records first).
 * Memory bounded by the number of sources x one chunk. */
GP_API int gp_reader_next_ordered(gp_reader *r, const gp_record **rec);
GP_API int gp_reader_rewind(gp_reader *r);
/* The chunk (its index in the trace's chunk table, which is in file order)
 * of the record gp_reader_next_ordered returned last, once the merge by
 * time has begun (after the metadata records); -1 before that and in file
 * order.  With the record's place among the records that chunk gave, it
 * says where the record is in its source, the same for every reader of
 * the file: the time-ordered merge takes, of the sources' next records,
 * the one whose source's largest time so far is smallest (ties: the
 * smaller source id), so readers of different time windows can put their
 * records back in the order of a whole read (`gpuprof stats --threads`'s
 * pre-pass in slices). */
GP_API int64_t gp_reader_record_chunk(const gp_reader *r);

/* Restricts both iterations to the chunks that may hold records whose
 * primary time (gp_record_time) is in [from, to): the footer's chunk table
 * gives each chunk's first and last timestamp, so a window late in a long
 * trace costs what its own chunks cost.  Chunks of source 0 (metadata) and
 * chunks without timed records are always read; records are not filtered
 * one by one (the caller does that: chunks hold other records too).  The
 * records of [from, to) come in the same order as in a whole read, in both
 * iterations (a source out of time order may cost a few more chunks).
 * from == to: only the metadata chunks and those without timed records.
 * [0, UINT64_MAX) = the whole trace (the default).  Rewinds. */
GP_API int gp_reader_set_time_window(gp_reader *r, uint64_t from, uint64_t to);
/* The window set: [0, UINT64_MAX) when none. */
GP_API void gp_reader_time_window(const gp_reader *r, uint64_t *from, uint64_t *to);
/* Whether a time window loses no record a tool keeps whatever the time
 * (format 1.4, GP_HDR_FLAG_META_APART: strings, sources, processes,
 * threads, devices, modules, stacks, clocks and graph nodes are in source-0
 * chunks; windows in chunks whose span covers them).  0 for older traces and
 * other writers: a window may miss those, so a tool that shows them must
 * read the whole trace. */
GP_API int gp_reader_meta_apart(const gp_reader *r);
/* Smallest and largest primary timestamp of the trace's readable chunks,
 * from the chunk headers (no decoding): 0, or GP_ERR_EOF when no chunk has
 * a timed record.  Ends of intervals may lie past *last. */
GP_API int gp_reader_time_range(const gp_reader *r, uint64_t *first, uint64_t *last);

/* Strings and sources seen so far (all of them once iteration has ended, or
 * after gp_reader_load_meta which scans the file for them). */
GP_API int gp_reader_load_meta(gp_reader *r);
GP_API const char *gp_reader_string(const gp_reader *r, uint32_t id); /* NULL if unknown */
GP_API const gp_rec_source *gp_reader_source(const gp_reader *r, uint32_t source_id);
/* A tid field f of rec; one flagged GP_FIELD_SRC_TID that is 0 means the
 * thread of the record's source: that tid (0 when the source is unknown). */
GP_API uint32_t gp_reader_tid(const gp_reader *r, const gp_record *rec, const struct gp_field *f);

/* ---------------------------------------------------------------- integrity */
struct gp_integrity {
	uint64_t frames_ok;
	uint64_t frames_corrupt; /* skipped */
	uint64_t bytes_skipped;
	int truncated; /* file ends inside a frame or without footer */
	int has_footer;
	uint64_t truncated_at; /* offset where decoding stopped */
};
GP_API void gp_reader_integrity(const gp_reader *r, struct gp_integrity *out);
/* Whether the records an iteration gave are worth using, from its last
 * status rc (what gp_reader_next or gp_reader_next_ordered returned last):
 * 1 after its end (>= 0, GP_ERR_EOF) and after damage it stopped at or
 * stepped over (GP_ERR_TRUNCATED, GP_ERR_CORRUPT: the records before it are
 * intact; the integrity report says how much is missing), 0 after a fatal
 * error (I/O, memory, invalid argument: the read is incomplete for no reason
 * in the file).  The one rule by which a reader of a damaged trace goes on
 * with what it read. */
GP_API int gp_reader_recoverable(int rc);

struct gp_footer_info {
	int present; /* a valid footer was found */
	uint64_t index_offset, chunk_count, record_count;
};
/* Footer as found at open (cheap: no scan). GP_ERR_EOF if none. */
GP_API int gp_reader_footer(const gp_reader *r, struct gp_footer_info *out);
/* One-line integrity summary, e.g. "ok: 12 chunks, footer present" or
 * "truncated at offset 4096 (file ends inside a chunk); 3 chunks ok".  Scans
 * the file first if that has not happened.  Returns snprintf's length. */
GP_API int gp_reader_describe_integrity(gp_reader *r, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* GP_READER_H */
