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
