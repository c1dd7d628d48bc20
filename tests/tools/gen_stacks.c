/* gen_stacks.c — writes a trace with call stacks whose reports are computed
 * by hand in tests/tools/test_stacks.py.  The native frames point into this
 * very program (its GP_REC_MODULE records come from dl_iterate_phdr, as the
 * shim makes them), so the tool's ELF reader symbolises real code: stk_leaf,
 * stk_mid, stk_outer, a C++-mangled name and libc's qsort.
 *
 *   gen_stacks [--bad-elf PATH] [--pid N] [--odd-names] OUT
 *
 * prints one JSON object on stdout: facts the test needs that depend on the
 * build (the file offset the "bad" module's frame maps to).
 *
 * Process pid P = 4242 (or N); threads: P "main", P+1 "pt_autograd_0".  Fake
 * modules (files that do not exist here): libgpuprof.so, libcupti.so.13,
 * libcuda.so.1, libcudart.so.13 (libcudart.so.12 with --pid), python3.11; "old.so" replaced by a later
 * "new.so" record for the same range; the "bad" module (PATH, default
 * /nonexistent/dir/libbad.so) maps like this program's code, so a copy of
 * this program as PATH names the frame stk_mid.
 *
 * Stacks (innermost first):
 *  1 gps cupti cuda cudart stk_leaf stk_mid python3.11 stk_outer |
 *    py functional.py conv2d 4 (dist-packages), model.py forward 42,
 *    module.py _call_impl 1500 (site-packages), train.py <module> 10
 *  2 gps cupti cuda cudart thread_main(mangled) qsort | ctx 4242 |
 *    py torch/_tensor.py backward 522 (site-packages), train.py <module> 12
 *  3 gps cudart stk_leaf stk_mid stk_outer 0x1234 (no module)
 *  4 gps bad new.so "weird\tframe" (unknown symbolic kind)
 *  5 no frames
 * Launches (corr: call, stack, thread -> GPU work, ns):
 *  1 cuLaunchKernel (no stack) + cudaLaunchKernel (1), main -> kernel 1000
 *  2 cudaLaunchKernel 1 main -> kernel 3000
 *  3 cudaGraphLaunch 2 autograd -> kernels 5000 + 500
 *  4 cudaMemcpyAsync 1 main -> memcpy 700
 *  5 cudaLaunchKernel 3 main -> kernel 2000
 *  6 cudaLaunchKernel 4 main -> kernel 100
 *  7 cudaLaunchKernel 5 main -> kernel 50
 *  8 cudaLaunchKernel 99 (not defined) main -> kernel 30
 *  9 cudaLaunchKernel 0 main -> kernel 20
 * 10 (no call) -> kernel 10
 * 11 cudaLaunchKernel 1 main -> nothing (no GPU record)
 * 12 cudaMalloc 1 main -> nothing (not a launch)
 */
#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_common.h"

static uint32_t P = 4242;
#define T0 1000000000ull
#define SYM (1ull << 63)

__attribute__((noinline, used)) int stk_leaf(int x) { return x * 3 + 1; }
__attribute__((noinline, used)) int stk_mid(int x) { return stk_leaf(x) + 2; }
__attribute__((noinline, used)) int stk_outer(int x) { return stk_mid(x) * 5; }
/* a C++ name, to see it demangled */
__attribute__((noinline, used)) int thread_main_fn(int x) __asm__("_ZN5torch8autograd6Engine11thread_mainEv");
__attribute__((noinline, used)) int thread_main_fn(int x) { return stk_outer(x) - 1; }

static uint32_t next_str = 1;

/* the next string id, in order of first use */
static uint32_t str(const char *s)
{
	uint32_t id = next_str++;
	str_id(id, s);
	return id;
}

static void module(uint64_t base, uint64_t size, uint64_t off, const char *path)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_MODULE;
	r.u.module.ts_ns = T0 + 1;
	r.u.module.base = base; r.u.module.size = size; r.u.module.file_offset = off;
	r.u.module.path_id = str(path);
	put(0, &r);
}

static uint64_t t_api = 1000;

/* CUPTI callback ids of the calls written here (cupti_runtime_cbid.h,
 * cupti_driver_cbid.h), as the shim records them: the tools tell a launch
 * call by its id (libprof/gp_launch.h), not by its name. */
enum {
	CBID_cudaMalloc = 20, CBID_cudaMemcpyAsync = 41, CBID_cudaLaunchKernel = 211,
	CBID_cudaGraphLaunch = 311, CBID_cuLaunchKernel = 307 /* driver */
};

static void api(uint32_t src, uint32_t name, uint32_t cbid, int driver, uint64_t corr, uint32_t stack_id)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_API;
	r.u.api.start_ns = T0 + t_api; r.u.api.end_ns = T0 + t_api + 100;
	r.u.api.correlation_id = corr;
	r.u.api.domain = driver ? GP_API_DRIVER : GP_API_RUNTIME;
	r.u.api.cbid = cbid;
	r.u.api.name_id = name;
	r.u.api.stack_id = stack_id;
	put(src, &r);
	t_api += 200;
}

static uint64_t t_gpu = 100000;

static void gpu(int type, uint32_t name, uint64_t corr, uint64_t dur)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = (uint32_t)type;
	if (type == GP_REC_KERNEL) {
		r.u.kernel.start_ns = T0 + t_gpu; r.u.kernel.end_ns = T0 + t_gpu + dur;
		r.u.kernel.correlation_id = corr; r.u.kernel.stream_id = 7; r.u.kernel.name_id = name;
		r.u.kernel.grid[0] = r.u.kernel.grid[1] = r.u.kernel.grid[2] = 1;
		r.u.kernel.block[0] = r.u.kernel.block[1] = r.u.kernel.block[2] = 1;
	} else {
		r.u.memcpy.start_ns = T0 + t_gpu; r.u.memcpy.end_ns = T0 + t_gpu + dur;
		r.u.memcpy.correlation_id = corr; r.u.memcpy.stream_id = 7; r.u.memcpy.bytes = 4096;
		r.u.memcpy.copy_kind = GP_COPY_HTOD;
	}
	put(3, &r);
	t_gpu += dur + 1000;
}

/* Module records for every loaded object's executable segments, like the
 * shim; remembers the segment holding stk_leaf for the "bad" module. */
static uint64_t code_base, code_size, code_off;

static int each_object(struct dl_phdr_info *info, size_t sz, void *arg)
{
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	if (!path || !*path) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0) return 0;
		exe[n] = 0;
		path = exe;
	}
	if (path[0] != '/') return 0; /* linux-vdso and the like */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
		uint64_t base = info->dlpi_addr + ph->p_vaddr;
		module(base, ph->p_memsz, ph->p_offset, path);
		uint64_t leaf = (uint64_t)(uintptr_t)&stk_leaf;
		if (leaf >= base && leaf < base + ph->p_memsz) {
			code_base = base; code_size = ph->p_memsz; code_off = ph->p_offset;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	gen_prog = "gen_stacks";
	const char *bad = "/nonexistent/dir/libbad.so", *out = NULL;
	int odd_names = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bad-elf") && i + 1 < argc) bad = argv[++i];
		else if (!strcmp(argv[i], "--odd-names")) odd_names = 1;
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc) P = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!out) out = argv[i];
		else out = NULL, i = argc;
	}
	if (!out) {
		fprintf(stderr, "usage: gen_stacks [--bad-elf PATH] [--pid N] [--odd-names] OUT\n");
		return 1;
	}
	gp_header h;
	gen_open_trace(out, &h, P, T0, GEN_REALTIME0, "testhost", -1);
	uint32_t s_main = str("main"), s_ag = str("pt_autograd_0");
	const uint32_t kinds[4] = { 0, GP_SOURCE_THREAD, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY };
	const uint32_t tids[4] = { 0, P, P + 1, 0 }, names[4] = { 0, s_main, s_ag, 0 };
	sources(P, 3, kinds, tids, names);

	dl_iterate_phdr(each_object, NULL);
	if (!code_base) {
		fprintf(stderr, "gen_stacks: no executable segment holds stk_leaf\n");
		return 1;
	}
	const uint64_t GPS = 0x7e0000000000ull, CUPTI = 0x7e0000100000ull, CUDA = 0x7e0000200000ull,
		       CUDART = 0x7e0000300000ull, PY = 0x7e0000400000ull, BAD = 0x7e0000500000ull,
		       OVER = 0x7e0010000000ull;
	module(GPS, 0x10000, 0x1000, "/opt/gpuprof/lib/libgpuprof.so");
	module(CUPTI, 0x10000, 0x1000, "/usr/local/cuda/lib64/libcupti.so.13");
	module(CUDA, 0x10000, 0x1000, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
	/* another pid, another runtime at the same address: a merged trace must
	 * keep each process's modules apart */
	module(CUDART, 0x10000, 0x1000,
	       P == 4242 ? "/usr/local/cuda/lib64/libcudart.so.13" : "/usr/local/cuda/lib64/libcudart.so.12");
	module(PY, 0x10000, 0x1000, "/usr/bin/python3.11");
	module(BAD, code_size, code_off, bad);
	module(OVER, 0x10000, 0, "/nonexistent/old.so");
	module(OVER, 0x10000, 0, "/nonexistent/new.so");  /* dlclose + dlopen at the same place */

	uint64_t leaf = (uint64_t)(uintptr_t)&stk_leaf, mid = (uint64_t)(uintptr_t)&stk_mid;
	uint64_t outer = (uint64_t)(uintptr_t)&stk_outer, tm = (uint64_t)(uintptr_t)&thread_main_fn;
	/* libc's own qsort (RTLD_DEFAULT could give a sanitizer's interceptor) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t qs = libc ? (uint64_t)(uintptr_t)dlsym(libc, "qsort") : 0;
	/* return addresses point after the call: +1 lands inside after the tool's -1 */
	uint64_t bad_frame = BAD + (mid - code_base) + 1;
	uint32_t py_conv = str("py\t/usr/lib/python3/dist-packages/torch/nn/functional.py\t4\tconv2d");
	uint32_t py_fwd = str("py\t/home/u/proj/model.py\t42\tforward");
	uint32_t py_call = str("py\t/home/u/venv/lib/python3.11/site-packages/torch/nn/modules/module.py\t1500\t_call_impl");
	uint32_t py_main10 = str("py\t/home/u/proj/train.py\t10\t<module>");
	uint32_t py_bwd = str("py\t/home/u/venv/lib/python3.11/site-packages/torch/_tensor.py\t522\tbackward");
	uint32_t py_main12 = str("py\t/home/u/proj/train.py\t12\t<module>");
	uint32_t ctx = str("ctx\t4242"), weird = str("weird\tframe");
	const uint64_t s1[] = { GPS + 0x10, CUPTI + 0x20, CUDA + 0x30, CUDART + 0x40, leaf + 1, mid + 1, PY + 0x50,
				outer + 1, SYM | py_conv, SYM | py_fwd, SYM | py_call, SYM | py_main10 };
	const uint64_t s2[] = { GPS + 0x10, CUPTI + 0x20, CUDA + 0x30, CUDART + 0x40, tm + 1, qs + 1, SYM | ctx,
				SYM | py_bwd, SYM | py_main12 };
	const uint64_t s3[] = { GPS + 0x10, CUDART + 0x40, leaf + 1, mid + 1, outer + 1, 0x1234 };
	const uint64_t s4[] = { GPS + 0x10, bad_frame, OVER + 0x21, SYM | weird };
	gen_stack(1, s1, sizeof(s1) / 8);
	gen_stack(2, s2, sizeof(s2) / 8);
	gen_stack(3, s3, sizeof(s3) / 8);
	gen_stack(4, s4, sizeof(s4) / 8);
	gen_stack(5, NULL, 0);
	/* --odd-names: names that would break a folded line if written as they
	 * are — a Python frame whose function and file hold ';' and a newline,
	 * and a leaf ending in " NUMBER" (flamegraph.pl and inferno would read
	 * "stack 42 WEIGHT" as a differential line) */
	if (odd_names) {
		uint32_t py_odd = str("py\t/home/u/proj/odd;dir/x;y\n.py\t7\ta;b\nc");
		uint32_t leaf42 = str("odd frame 42");
		const uint64_t s6[] = { SYM | py_odd, SYM | leaf42 };
		gen_stack(6, s6, sizeof(s6) / 8);
	}

	uint32_t launch = str("cudaLaunchKernel"), culaunch = str("cuLaunchKernel"), graph = str("cudaGraphLaunch");
	uint32_t memcpy_s = str("cudaMemcpyAsync"), malloc_s = str("cudaMalloc"), kname = str("_Z6kernelv");
	api(1, culaunch, CBID_cuLaunchKernel, 1, 1, 0);
	api(1, launch, CBID_cudaLaunchKernel, 0, 1, 1);
	api(1, launch, CBID_cudaLaunchKernel, 0, 2, 1);
	api(2, graph, CBID_cudaGraphLaunch, 0, 3, 2);
	api(1, memcpy_s, CBID_cudaMemcpyAsync, 0, 4, 1);
	api(1, launch, CBID_cudaLaunchKernel, 0, 5, 3);
	api(1, launch, CBID_cudaLaunchKernel, 0, 6, 4);
	api(1, launch, CBID_cudaLaunchKernel, 0, 7, 5);
	api(1, launch, CBID_cudaLaunchKernel, 0, 8, 99);
	api(1, launch, CBID_cudaLaunchKernel, 0, 9, 0);
	api(1, launch, CBID_cudaLaunchKernel, 0, 11, 1);
	api(1, malloc_s, CBID_cudaMalloc, 0, 12, 1);
	gpu(GP_REC_KERNEL, kname, 1, 1000);
	gpu(GP_REC_KERNEL, kname, 2, 3000);
	gpu(GP_REC_KERNEL, kname, 3, 5000);
	gpu(GP_REC_KERNEL, kname, 3, 500);
	gpu(GP_REC_MEMCPY, 0, 4, 700);
	gpu(GP_REC_KERNEL, kname, 5, 2000);
	gpu(GP_REC_KERNEL, kname, 6, 100);
	gpu(GP_REC_KERNEL, kname, 7, 50);
	gpu(GP_REC_KERNEL, kname, 8, 30);
	gpu(GP_REC_KERNEL, kname, 9, 20);
	gpu(GP_REC_KERNEL, kname, 10, 10);
	if (odd_names) {
		api(1, launch, CBID_cudaLaunchKernel, 0, 13, 6);
		gpu(GP_REC_KERNEL, kname, 13, 900);
	}
	if (gen_close())
		return 1;
	printf("{\"bad_frame_off\": %" PRIu64 ", \"exe_code_off\": %" PRIu64 ", \"qsort_found\": %d, \"check\": %d}\n",
	       bad_frame - 1 - BAD + code_off, code_off, qs != 0, thread_main_fn(1));
	return 0;
}
