/* cupti_floor.c — the cost floor of any CUPTI activity tracer.
 *
 * LD_PRELOAD=libcupti_floor.so JOB enables ONLY the activity kinds every
 * GPU tracer needs (CONCURRENT_KERNEL, MEMCPY, MEMSET), hands CUPTI buffers
 * from a free list, and on completion just walks the records to count them
 * before recycling the buffer.  No API callbacks, no NVTX, no decoding, no
 * file.  The overhead bench reports gpuprof relative to this: what is above
 * the floor is ours; the floor itself is CUPTI's (kernel serialisation under
 * CONCURRENT_KERNEL, record generation) and no tracer can avoid it.
 *
 * Env: CUPTI_FLOOR_LIB     libcupti to dlopen (default: an already loaded
 *                          libcupti.so.13, else the CUDA 13.0 toolkit's)
 *      CUPTI_FLOOR_BUFFER_KB  activity buffer size (default 4096)
 *      CUPTI_FLOOR_QUIET   set: no summary line at exit
 * At exit (main process only) it flushes and prints one line to stderr:
 *   cupti_floor: records=N buffers=N dropped=N
 */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CUPTI "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13"
#define ALIGN 8

static struct {
	CUptiResult (*register_cb)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
} fn;

static pid_t owner_pid;
static size_t buf_size = 4u << 20;
static atomic_ullong n_records, n_buffers, n_dropped;

/* Free list of buffers: CUPTI asks for one whenever it fills one, from its
 * own threads; a mutex is cheap at that rate (once per buffer). */
struct freebuf { struct freebuf *next; };
static struct freebuf *free_list;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	pthread_mutex_lock(&free_lock);
	struct freebuf *b = free_list;
	if (b)
		free_list = b->next;
	pthread_mutex_unlock(&free_lock);
	if (!b)
		b = aligned_alloc(ALIGN, buf_size);
	*buffer = (uint8_t *)b;
	*size = b ? buf_size : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
	(void)size;
	unsigned long long n = 0;
	CUpti_Activity *rec = NULL;
	while (fn.next_record(buffer, valid, &rec) == CUPTI_SUCCESS)
		n++;
	size_t dropped = 0;
	if (fn.dropped && fn.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
		atomic_fetch_add(&n_dropped, dropped);
	atomic_fetch_add(&n_records, n);
	atomic_fetch_add(&n_buffers, 1);
	if (!buffer)
		return;
	struct freebuf *b = (struct freebuf *)buffer;
	pthread_mutex_lock(&free_lock);
	b->next = free_list;
	free_list = b;
	pthread_mutex_unlock(&free_lock);
}

static void at_exit(void)
{
	if (getpid() != owner_pid) /* a forked child that never used CUDA */
		return;
	fn.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (!getenv("CUPTI_FLOOR_QUIET"))
		fprintf(stderr, "cupti_floor: records=%llu buffers=%llu dropped=%llu\n",
		        (unsigned long long)n_records, (unsigned long long)n_buffers,
		        (unsigned long long)n_dropped);
}

static void *open_cupti(void)
{
	const char *p = getenv("CUPTI_FLOOR_LIB");
	if (p && *p)
		return dlopen(p, RTLD_NOW | RTLD_GLOBAL);
	/* Share the copy the job already uses (torch loads its own): two
	 * CUPTIs in one process would fight over the driver's tool hooks. */
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
	return h ? h : dlopen(DEFAULT_CUPTI, RTLD_NOW | RTLD_GLOBAL);
}

__attribute__((constructor)) static void cupti_floor_init(void)
{
	owner_pid = getpid();
	const char *kb = getenv("CUPTI_FLOOR_BUFFER_KB");
	if (kb && atol(kb) >= 64)
		buf_size = (size_t)atol(kb) << 10;
	void *h = open_cupti();
	if (!h) {
		fprintf(stderr, "cupti_floor: cannot load libcupti: %s\n", dlerror());
		return;
	}
	fn.register_cb = (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))
		dlsym(h, "cuptiActivityRegisterCallbacks");
	fn.enable = (CUptiResult(*)(CUpti_ActivityKind))dlsym(h, "cuptiActivityEnable");
	fn.flush_all = (CUptiResult(*)(uint32_t))dlsym(h, "cuptiActivityFlushAll");
	fn.next_record = (CUptiResult(*)(uint8_t *, size_t, CUpti_Activity **))
		dlsym(h, "cuptiActivityGetNextRecord");
	fn.dropped = (CUptiResult(*)(CUcontext, uint32_t, size_t *))
		dlsym(h, "cuptiActivityGetNumDroppedRecords");
	if (!fn.register_cb || !fn.enable || !fn.flush_all || !fn.next_record) {
		fprintf(stderr, "cupti_floor: libcupti lacks the activity API\n");
		return;
	}
	CUptiResult r = fn.register_cb(buffer_requested, buffer_completed);
	static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	                                          CUPTI_ACTIVITY_KIND_MEMCPY,
	                                          CUPTI_ACTIVITY_KIND_MEMSET};
	for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++)
		r = fn.enable(kinds[i]);
	if (r != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_floor: CUPTI activity setup failed (CUptiResult %d)\n", (int)r);
		return;
	}
	atexit(at_exit);
}
