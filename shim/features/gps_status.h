/* gps_status.h — the live status file (features/gps_status.c,
 * GPUPROF_STATUS).  gps_status_on is set at start when configured
 * (gps_status_init) and cleared for good on a write error; the feeders
 * (activity records, NVTX push/start, NVML samples) are called only while it
 * is set.  tick/next_ns: the gpuprof-flush thread writes the file about once
 * a second; final: the last write ("exited"), from the final flush once the
 * trace is complete. */
#ifndef GPS_STATUS_H
#define GPS_STATUS_H

#include <stdatomic.h>
#include <stdint.h>

/* GP_REC_MEMORY's op (docs/FORMAT.md: 1 alloc, 2 free) */
enum gps_mem_op { GPS_MEM_OP_OTHER = 0, GPS_MEM_OP_ALLOC = 1, GPS_MEM_OP_FREE = 2 };

extern atomic_int gps_status_on;
void gps_status_init(void);
void gps_status_kernel(uint64_t start_ns, uint64_t end_ns);
void gps_status_copy(uint64_t bytes);
/* device_memory: the bytes are device memory (the only kind counted) */
void gps_status_memory(enum gps_mem_op op, int device_memory, uint64_t bytes);
void gps_status_nvml_mem(unsigned dev, uint64_t used);
void gps_status_nvtx(const char *msg);
uint64_t gps_status_next_ns(void);
void gps_status_tick(uint64_t now_mono);
void gps_status_final(uint64_t dropped);
void gps_status_after_fork_child(void);
static inline int gps_status_active(void)
{
	return atomic_load_explicit(&gps_status_on, memory_order_relaxed);
}

#endif
