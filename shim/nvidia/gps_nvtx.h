/* gps_nvtx.h — NVTX v3 injection (nvidia/gps_nvtx.c): NVTX (header-only, in
 * the job) loads us via NVTX_INJECTION64_PATH at its first call and calls
 * InitializeInjectionNvtx2 (gps_lifecycle.c), which hands its export table
 * to gps_nvtx_inject to fill NVTX's function tables with ours. */
#ifndef GPS_NVTX_H
#define GPS_NVTX_H

#include <stdint.h>

#include "gp_trace.h"

/* NVTX's NvtxGetExportTableFunc_t (nvtx3/nvtxDetail/nvtxTypes.h; NVTX_API is
 * empty on Linux), without NVTX's headers: gps_nvtx.c checks they agree. */
typedef const void *(*gps_nvtx_get_export_table)(uint32_t export_table_id);
/* 1 when our functions are in NVTX's tables (0: NVTX makes every call a
 * no-op). */
int gps_nvtx_inject(gps_nvtx_get_export_table get_export_table);
/* Final flush, threads quiet: the ranges still open, as unterminated. */
void gps_nvtx_flush_unterminated(gp_recorder *rec);
void gps_nvtx_after_fork_child(void);

#endif
