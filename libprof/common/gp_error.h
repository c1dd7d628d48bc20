/* gp_error.h — libprof's one error enum.
 *
 * Every libprof function that can fail returns 0 (or a non-negative count
 * or id) on success and a negative gp_err on failure; gp_strerror() names
 * it.  Internal functions follow the same rule: there are no other error
 * codes inside libprof.  The values are ABI: new errors are appended. */
#ifndef GP_ERROR_H
#define GP_ERROR_H

#include "gp_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a table, one entry a line: */
/* clang-format off */
/* X(name, value, message) */
#define GP_ERRORS(X) \
	X(GP_OK, 0, "success") \
	X(GP_ERR_IO, -1, "I/O error")                    /* read/write/open failed; errno kept */ \
	X(GP_ERR_NOMEM, -2, "out of memory") \
	X(GP_ERR_NOT_GPUPROF, -3, "not a gpuprof trace") /* bad magic */ \
	X(GP_ERR_VERSION, -4, "trace format version too new") /* major newer than this reader */ \
	X(GP_ERR_TRUNCATED, -5, "truncated")             /* file ends inside a header or frame */ \
	X(GP_ERR_CORRUPT, -6, "corrupt data")            /* checksum / decompression / bounds */ \
	X(GP_ERR_INVALID, -7, "invalid argument") \
	X(GP_ERR_FULL, -8, "ring full (record dropped)") /* dropped and counted */ \
	X(GP_ERR_CLOSED, -9, "recorder closed")          /* recorder stopped / disabled */ \
	X(GP_ERR_EOF, -10, "end of data")                /* no more records */ \
	X(GP_ERR_TIMEOUT, -11, "timed out")              /* bounded wait expired */

enum gp_err {
#define GP_ERR_ENUM_(name, value, msg) name = value,
	GP_ERRORS(GP_ERR_ENUM_)
#undef GP_ERR_ENUM_
};
/* clang-format on */

/* The message of a gp_err ("unknown error" for other values). */
GP_API const char *gp_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* GP_ERROR_H */
