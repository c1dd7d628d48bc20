/* gen_memory.c — traces for the memory view (stats --report memory_steps,
 * advise's out-of-memory rule; tests/tools/test_memory.py works every
 * figure out from the timeline below).  Records are written in the order
 * the recorder writes them: an API call when it returns, a push/pop range
 * when it is popped, a GPU record when it ends (the activity source).
 *
 *   gen_memory steady OUT   10 steps, every allocation of a step freed in it
 *   gen_memory leak OUT     the same, and each step allocates LEAK_BYTES at
 *                           train.py:31 train_step (a stack) never freed
 *   gen_memory oom OUT      steps whose activations grow with the step:
 *                           (k+1) x 8 MiB at model.py:88 forward, then
 *                           (k+1) x 16 MiB at model.py:95 attention (stack
 *                           3) at 30-32 us, freed at 860-862 us; in the last
 *                           step the attention's cudaMalloc fails (status 2,
 *                           the driver's cuMemAlloc_v2 inside it fails too)
 *                           and the job ends there (nothing freed after)
 *   --live                  (oom) the shim's live table at the failure, as an
 *                           armed run writes it: the failed call's alloc_fail
 *                           record (2^30 B asked, 80 GiB total, 1 GiB free)
 *                           and mem_live records that differ from the memory
 *                           records on purpose (they must win): device 0:
 *                           forward (stack 2) 64 MiB in 2, the weights (no
 *                           stack) 20 MiB in 1, rest 5 MiB in 7, untabled
 *                           3 MiB in 2; device 1: 1 GiB in 1 at forward (not
 *                           the failed call's device); the failed request
 *                           (its stack 3 even with --no-stacks)
 *   --no-stacks             no stack on any call
 *   --noise                 (leak) each odd step k also allocates 3 MiB at
 *                           60-62 us (no stack) freed at step k+1's 500 us:
 *                           held at the ends alternates around the leak
 *
 * Process 6000, thread 6000; device 0 with 80 GiB.  Step k lies at
 * [k ms, k ms + 900 us] ("step k"); in it (us after its start):
 *   1-3   cudaLaunchKernel, its kernel on the GPU at 10-800 (a GPU-bound step)
 *   20-22 cudaMalloc 4 MiB (the step's activation; oom: (k+1) x 8 MiB) at
 *         model.py:88 forward (stack 2)
 *   40-42 leak: cudaMalloc LEAK_BYTES at train.py:31 train_step (stack 1)
 *   850-852 cudaFree of the activation (its memory record without a size)
 * Before step 0 (at 100 us): cudaMalloc 20 MiB (the weights: a multiple of
 * 2 MiB, no stack: "caching allocator (by size)"), never freed.
 * Memory records (mem_kind device, the activity source) at the call's
 * middle, with the runtime call's correlation id. */
#include "gen_common.h"

#define PID 6000u
#define T0 1000000000ull
#define NSTEPS 10u
#define STEP_NS 1000000ull
#define LEAK_BYTES 1000000ull
#define ACT_BYTES (4ull << 20)
#define WEIGHT_BYTES (20ull << 20)
#define SYM (1ull << 63)

enum { S_CMD = 1, S_HOST, S_MAIN, S_GPU, S_LAUNCH, S_MALLOC, S_MEMALLOC, S_FREE, S_KERNEL, S_PY_LEAK, S_PY_FWD,
       S_PY_ATTN, S_STEP0 };
enum { CB_LAUNCH = 211, CB_MALLOC = 20, CB_FREE = 22, CB_MEMALLOC = 243 };
enum { STACK_LEAK = 1, STACK_FWD = 2, STACK_ATTN = 3 };

struct item { uint64_t emit, seq; uint32_t src; gp_record r; };
static struct item *items;
static size_t nitems, citems;
static int stacks = 1, noise = 0, live = 0;
static uint64_t corr = 1;

static void add(uint64_t emit, uint32_t src, const gp_record *r)
{
	if (nitems == citems) {
		citems = citems ? 2 * citems : 1024;
		items = realloc(items, citems * sizeof(*items));
		if (!items) { perror("gen_memory"); exit(1); }
	}
	items[nitems] = (struct item){ emit, nitems, src, *r };
	nitems++;
}

static int by_emit(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->emit != y->emit) return x->emit < y->emit ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void call(uint32_t name, uint32_t cbid, int driver, uint64_t c, uint64_t s, uint64_t e, uint32_t stack,
		 int32_t status)
{
	gp_record r;
	rec_api(&r, PID, driver, name, cbid, c, T0 + s, T0 + e);
	r.u.api.stack_id = stacks ? stack : 0;
	r.u.api.status = status;
	add(T0 + e, 1, &r);
}

static void memrec(uint64_t c, uint64_t t, uint64_t addr, uint64_t bytes, uint32_t op)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEMORY;
	r.u.memory.ts_ns = T0 + t; r.u.memory.correlation_id = c; r.u.memory.address = addr;
	r.u.memory.bytes = bytes; r.u.memory.op = op; r.u.memory.mem_kind = GP_MEM_DEVICE;
	r.u.memory.context_id = 1;
	add(T0 + t, 2, &r);
}

/* cudaMalloc of bytes at [s, s+2us) at address addr (its memory record). */
static void malloc_at(uint64_t s, uint64_t addr, uint64_t bytes, uint32_t stack)
{
	uint64_t c = corr++;
	call(S_MALLOC, CB_MALLOC, 0, c, s, s + 2000, stack, 0);
	memrec(c, s + 1000, addr, bytes, 1);
}

static void free_at(uint64_t s, uint64_t addr)
{
	uint64_t c = corr++;
	call(S_FREE, CB_FREE, 0, c, s, s + 2000, 0, 0);
	memrec(c, s + 1000, addr, 0, 2);
}

static void kernel_at(uint64_t s)
{
	uint64_t c = corr++;
	call(S_LAUNCH, CB_LAUNCH, 0, c, s + 1000, s + 3000, 0, 0);
	gp_record r;
	rec_kernel(&r, S_KERNEL, 7, c, T0 + s + 10000, T0 + s + 800000, 264);
	add(T0 + s + 800000, 2, &r);
}

static void mem_live(uint64_t c, uint64_t ts, uint64_t emit, uint32_t kind, uint32_t dev, uint64_t bytes,
		     uint64_t allocs, uint32_t stack, uint64_t size)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MEM_LIVE;
	r.u.mem_live = (gp_rec_mem_live){ .ts_ns = ts, .correlation_id = c, .bytes = bytes, .allocs = allocs,
					  .size = size, .stack_id = stack, .device_id = dev,
					  .domain = kind == GP_MEM_LIVE_SITE || kind == GP_MEM_LIVE_FAILED ? GP_API_RUNTIME : 0,
					  .cbid = kind == GP_MEM_LIVE_SITE || kind == GP_MEM_LIVE_FAILED ? CB_MALLOC : 0,
					  .kind = kind };
	add(emit, 1, &r);
}

/* --live: the failed call c's alloc_fail record and the live table */
static void live_table(uint64_t c, uint64_t ts, uint64_t emit)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_ALLOC_FAIL;
	r.u.alloc_fail = (gp_rec_alloc_fail){ .ts_ns = ts, .correlation_id = c, .bytes = 1ull << 30,
					      .total_bytes = 80ull << 30, .free_bytes = 1ull << 30, .device_id = 0,
					      .domain = GP_API_RUNTIME, .cbid = CB_MALLOC, .status = 2 };
	add(emit, 1, &r);
	mem_live(c, ts, emit, GP_MEM_LIVE_SITE, 0, 64ull << 20, 2, STACK_FWD, 0);
	mem_live(c, ts, emit, GP_MEM_LIVE_SITE, 0, WEIGHT_BYTES, 1, 0, WEIGHT_BYTES);
	mem_live(c, ts, emit, GP_MEM_LIVE_SITE, 1, 1ull << 30, 1, STACK_FWD, 0);
	mem_live(c, ts, emit, GP_MEM_LIVE_REST, 0, 5ull << 20, 7, 0, 0);
	mem_live(c, ts, emit, GP_MEM_LIVE_UNTABLED, 0, 3ull << 20, 2, 0, 0);
	mem_live(c, ts, emit, GP_MEM_LIVE_FAILED, 0, 1ull << 30, 1, STACK_ATTN, 0);
}

int main(int argc, char **argv)
{
	gen_prog = "gen_memory";
	int i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--no-stacks")) stacks = 0;
		else if (!strcmp(argv[i], "--noise")) noise = 1;
		else if (!strcmp(argv[i], "--live")) live = 1;
		else break;
	}
	if (argc - i != 2 || (strcmp(argv[i], "steady") && strcmp(argv[i], "leak") && strcmp(argv[i], "oom"))) {
		fprintf(stderr, "usage: gen_memory [--no-stacks] [--noise] [--live] steady|leak|oom OUT\n");
		return 1;
	}
	int leak = !strcmp(argv[i], "leak"), oom = !strcmp(argv[i], "oom");
	gp_header h;
	gen_open_trace(argv[i + 1], &h, PID, T0, GEN_REALTIME0, "testhost", -1);
	static const char *const s[S_STEP0] = {
		[S_CMD] = "python train.py", [S_HOST] = "testhost", [S_MAIN] = "python3", [S_GPU] = "NVIDIA H100",
		[S_LAUNCH] = "cudaLaunchKernel", [S_MALLOC] = "cudaMalloc", [S_MEMALLOC] = "cuMemAlloc_v2",
		[S_FREE] = "cudaFree", [S_KERNEL] = "_Z6kernelv",
		[S_PY_LEAK] = "py\t/home/u/proj/train.py\t31\ttrain_step",
		[S_PY_FWD] = "py\t/home/u/proj/model.py\t88\tforward",
		[S_PY_ATTN] = "py\t/home/u/proj/model.py\t95\tattention",
	};
	for (uint32_t k = 1; k < S_STEP0; k++) str_id(k, s[k]);
	char buf[32];
	for (uint32_t k = 0; k < NSTEPS; k++) {
		snprintf(buf, sizeof(buf), "step %u", k);
		str_id(S_STEP0 + k, buf);
	}
	const uint32_t kinds[3] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY };
	const uint32_t tids[3] = { 0, PID, 0 }, nm[3] = { 0, S_MAIN, 0 };
	sources(PID, 2, kinds, tids, nm);
	process(PID, S_CMD, S_HOST, -1, T0);
	gp_record r;
	rec_device_sm90(&r, S_GPU);
	r.u.device.global_mem_bytes = 80ull << 30;
	put(0, &r);
	static const uint64_t st_leak[] = { SYM | S_PY_LEAK }, st_fwd[] = { SYM | S_PY_FWD },
			      st_attn[] = { SYM | S_PY_ATTN, SYM | S_PY_FWD };
	gen_stack(STACK_LEAK, st_leak, 1);
	gen_stack(STACK_FWD, st_fwd, 1);
	gen_stack(STACK_ATTN, st_attn, 2);

	malloc_at(100000, 0x7f0000000000ull, WEIGHT_BYTES, 0);
	for (uint32_t k = 0; k < NSTEPS; k++) {
		uint64_t t = STEP_NS * (k + 1), e = t + 900000;
		uint64_t act = 0x7f1000000000ull + (uint64_t)k * (1ull << 30), attn = act + (1ull << 29);
		kernel_at(t);
		malloc_at(t + 20000, act, oom ? (uint64_t)(k + 1) * (8ull << 20) : ACT_BYTES, STACK_FWD);
		if (oom && k == NSTEPS - 1) {
			/* the attention scores do not fit: runtime and driver call fail */
			uint64_t c = corr++;
			call(S_MEMALLOC, CB_MEMALLOC, 1, corr++, t + 30500, t + 31500, 0, 2);
			call(S_MALLOC, CB_MALLOC, 0, c, t + 30000, t + 32000, STACK_ATTN, 2);
			if (live) live_table(c, T0 + t + 30000, T0 + t + 32000);
			rec_range(&r, PID, PID, GP_NVTX_PUSHPOP, 0, S_STEP0 + k, 0, T0 + t, T0 + e, 0);
			add(T0 + e, 1, &r);
			break;
		}
		if (oom) malloc_at(t + 30000, attn, (uint64_t)(k + 1) * (16ull << 20), STACK_ATTN);
		if (leak) malloc_at(t + 40000, 0x7f2000000000ull + (uint64_t)k * (1ull << 24), LEAK_BYTES, STACK_LEAK);
		uint64_t cache = 0x7f3000000000ull + (uint64_t)k * (1ull << 24);
		if (noise && k % 2 == 1) malloc_at(t + 60000, cache, 3ull << 20, 0);
		if (noise && k % 2 == 0 && k > 0) free_at(t + 500000, cache - (1ull << 24));
		free_at(t + 850000, act);
		if (oom) free_at(t + 860000, attn);
		rec_range(&r, PID, PID, GP_NVTX_PUSHPOP, 0, S_STEP0 + k, 0, T0 + t, T0 + e, 0);
		add(T0 + e, 1, &r);
	}
	qsort(items, nitems, sizeof(*items), by_emit);
	for (size_t k = 0; k < nitems; k++) put(items[k].src, &items[k].r);
	free(items);
	return gen_close();
}
