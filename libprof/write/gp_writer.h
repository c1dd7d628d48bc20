/* gp_writer.h — the offline, single-threaded writer (used by `gpuprof
 * merge` and tests): records are written in the order given, to the source
 * given, with the recorder's encoding. */
#ifndef GP_WRITER_H
#define GP_WRITER_H

#include <stdint.h>
#include "common/gp_api.h"
#include "common/gp_record.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_writer gp_writer;
GP_API int gp_writer_open(const char *path, const gp_header *hdr, int zstd_level, gp_writer **out);
/* Strings: the writer keeps ids as given; write GP_REC_STRING records first. */
GP_API int gp_writer_append(gp_writer *w, uint32_t source_id, const gp_record *r);
GP_API int gp_writer_close(gp_writer *w); /* writes index + footer; NULL ok */

#ifdef __cplusplus
}
#endif
#endif /* GP_WRITER_H */
