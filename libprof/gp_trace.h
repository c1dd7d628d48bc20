/* gp_trace.h — libprof's public API, one include for its users (the shim,
 * the tools, tests).  libprof writes and reads gpuprof trace files; no CUDA
 * in here.  Each object is declared in one header (module map: README.md):
 *
 *   common/gp_error.h     gp_err, gp_strerror
 *   common/gp_record.h    the records (gp_record, gp_rec_*), the file header
 *   common/gp_fields.h    the per-type field table every consumer iterates
 *   write/gp_recorder.h   in-process recording (per-thread rings, writer thread)
 *   write/gp_writer.h     offline single-threaded writing (merge, tests)
 *   write/gp_spool.h      the flight recorder's in-memory history, captures
 *   read/gp_reader.h      reading, in file or time order, integrity
 *
 * Conventions (libbpf/zstd style):
 *  - every exported symbol starts with gp_ / GP_;
 *  - handles are opaque, created by gp_X_open/create and released by
 *    gp_X_close/free, which accept NULL;
 *  - functions return 0 / a non-negative value on success and a negative
 *    gp_err code on failure; gp_strerror() names it;
 *  - option structs carry their size in the first field (sz) so the library
 *    can grow them without breaking callers: set sz = sizeof(struct).
 * Include root: -Ilibprof (headers include each other as "common/...",
 * "write/...", "read/..."). */
#ifndef GP_TRACE_H
#define GP_TRACE_H

#include "common/gp_error.h"
#include "common/gp_record.h"
#include "common/gp_fields.h"
#include "write/gp_recorder.h"
#include "write/gp_writer.h"
#include "write/gp_spool.h"
#include "read/gp_reader.h"

#endif /* GP_TRACE_H */
