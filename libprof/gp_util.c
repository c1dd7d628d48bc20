/* gp_util.c — small shared helpers: CRC-32, error and type names, record
 * timestamps. */
#include <pthread.h>
#include "gp_internal.h"

static uint32_t crc_table[8][256];
static int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

/* CRC-32 (IEEE 802.3, same as zlib's crc32), slice-by-8. */
uint32_t gp_crc32(const void *buf, size_t n)
{
	/* Table init is idempotent and deterministic, so a benign double init
	 * from two threads only writes the same values. */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE)) pthread_once(&once, crc_init);
	const uint8_t *p = buf;
	uint32_t c = 0xFFFFFFFFu;
	while (n >= 8) {
		uint32_t a = gp_get32(p) ^ c, b = gp_get32(p + 4);
		c = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^
		    crc_table[5][(a >> 16) & 0xff] ^ crc_table[4][a >> 24] ^
		    crc_table[3][b & 0xff] ^ crc_table[2][(b >> 8) & 0xff] ^
		    crc_table[1][(b >> 16) & 0xff] ^ crc_table[0][b >> 24];
		p += 8; n -= 8;
	}
	while (n--) c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

GP_API const char *gp_strerror(int err)
{
	switch (err) {
	case GP_OK: return "success";
	case GP_ERR_IO: return "I/O error";
	case GP_ERR_NOMEM: return "out of memory";
	case GP_ERR_NOT_GPUPROF: return "not a gpuprof trace";
	case GP_ERR_VERSION: return "trace format version too new";
	case GP_ERR_TRUNCATED: return "truncated";
	case GP_ERR_CORRUPT: return "corrupt data";
	case GP_ERR_INVALID: return "invalid argument";
	case GP_ERR_FULL: return "ring full (record dropped)";
	case GP_ERR_CLOSED: return "recorder closed";
	case GP_ERR_EOF: return "end of data";
	case GP_ERR_TIMEOUT: return "timed out";
	default: return "unknown error";
	}
}

static const char *const type_names[GP_REC_TYPE_MAX] = {
	[GP_REC_STRING] = "string", [GP_REC_SOURCE] = "source", [GP_REC_PROCESS] = "process",
	[GP_REC_THREAD] = "thread", [GP_REC_DEVICE] = "device", [GP_REC_API] = "api",
	[GP_REC_KERNEL] = "kernel", [GP_REC_MEMCPY] = "memcpy", [GP_REC_MEMSET] = "memset",
	[GP_REC_NVTX_RANGE] = "nvtx_range", [GP_REC_NVTX_MARK] = "nvtx_mark",
	[GP_REC_SYNC] = "sync", [GP_REC_MEMORY] = "memory", [GP_REC_DROPPED] = "dropped",
	[GP_REC_CLOCK] = "clock", [GP_REC_COUNTER] = "counter", [GP_REC_MODULE] = "module",
	[GP_REC_STACK] = "stack", [GP_REC_WINDOW] = "window",
};

GP_API const char *gp_rec_type_name(uint32_t type)
{
	if (type < GP_REC_TYPE_MAX && type_names[type]) return type_names[type];
	return "unknown";
}

const uint16_t gp_rec_struct_size[GP_REC_TYPE_MAX] = {
	[GP_REC_STRING] = sizeof(gp_rec_string), [GP_REC_SOURCE] = sizeof(gp_rec_source),
	[GP_REC_PROCESS] = sizeof(gp_rec_process), [GP_REC_THREAD] = sizeof(gp_rec_thread),
	[GP_REC_DEVICE] = sizeof(gp_rec_device), [GP_REC_API] = sizeof(gp_rec_api),
	[GP_REC_KERNEL] = sizeof(gp_rec_kernel), [GP_REC_MEMCPY] = sizeof(gp_rec_memcpy),
	[GP_REC_MEMSET] = sizeof(gp_rec_memset), [GP_REC_NVTX_RANGE] = sizeof(gp_rec_nvtx_range),
	[GP_REC_NVTX_MARK] = sizeof(gp_rec_nvtx_mark), [GP_REC_SYNC] = sizeof(gp_rec_sync),
	[GP_REC_MEMORY] = sizeof(gp_rec_memory), [GP_REC_DROPPED] = sizeof(gp_rec_dropped),
	[GP_REC_CLOCK] = sizeof(gp_rec_clock), [GP_REC_COUNTER] = sizeof(gp_rec_counter),
	[GP_REC_MODULE] = sizeof(gp_rec_module), [GP_REC_STACK] = sizeof(gp_rec_stack),
	[GP_REC_WINDOW] = sizeof(gp_rec_window),
};

GP_API uint64_t gp_record_time(const gp_record *r)
{
	switch (r->type) {
	case GP_REC_API: return r->u.api.start_ns;
	case GP_REC_KERNEL: return r->u.kernel.start_ns;
	case GP_REC_MEMCPY: return r->u.memcpy.start_ns;
	case GP_REC_MEMSET: return r->u.memset.start_ns;
	case GP_REC_NVTX_RANGE: return r->u.nvtx_range.start_ns;
	case GP_REC_NVTX_MARK: return r->u.nvtx_mark.ts_ns;
	case GP_REC_SYNC: return r->u.sync.start_ns;
	case GP_REC_MEMORY: return r->u.memory.ts_ns;
	case GP_REC_DROPPED: return r->u.dropped.ts_ns;
	case GP_REC_CLOCK: return r->u.clock.trace_ns;
	case GP_REC_COUNTER: return r->u.counter.ts_ns;
	case GP_REC_MODULE: return r->u.module.ts_ns;
	case GP_REC_WINDOW: return r->u.window.start_ns;
	default: return 0;
	}
}
