/* gen_cuts.c — a trace whose NVTX ranges cross the cuts of `gpuprof stats
 * --threads N`'s time slices every way (test_stats_threads.py: the
 * pre-pass in slices must make what one thread makes):
 *
 *   gen_cuts [--seed S] [--steps N] [--late-ops] OUT
 *
 * One process (pid 4000): a main thread (source 1), a worker thread
 * (source 2), the GPU (source 3).  Written as the recorder writes them:
 * API calls when they return, push/pop ranges when popped (inner before
 * outer), start/end ranges when ended, on the thread that ended them.
 *
 *   main:   "epoch <e>" (depth 0) over 25 steps each, "step <k>" (1) >
 *           "forward" (2) > "layer <i>" (3, 1..4 of them, random lengths)
 *           and "backward" (2); a launch call per kernel.  The last epoch
 *           is never popped: written at the end, unterminated.
 *   worker: push/pop "load <k>" of random length (0.2..3 steps), which
 *           overlap the step boundaries; start/end ranges "prefetch <k>"
 *           begun on main and ended on the worker 0..5 steps later (a
 *           range whose end is another thread's), and "io" ranges begun
 *           and ended on the worker, overlapping each other; one start/end
 *           range is never ended (unterminated, written at the end).
 *   GPU:    the kernels of each step (the same sequence: the trace method
 *           finds the steps), in launch order.
 *
 * The seed moves every length, so that the slices' cuts fall inside
 * ranges at every depth.
 *
 * --late-ops: a second GPU stream (source 4) whose records are out of
 * time order by up to 40 steps: per step a short kernel written first,
 * timed a random while (up to 200 us, or up to 40 ms) after one longer than
 * any before it, written next.  So the longest GPU operation read before
 * each cut (the steps' prefix: analysis/steps/steps_slice.h) is one written
 * after a record timed past the cut, which the pre-pass in slices must
 * place by its key (reports/stats_prepass_prefix.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"
#include "splitmix.h"

enum { P = 4000, TMAIN = 4000, TWORK = 4001, STEP_NS = 1000000 };
enum { S_CMD = 1, S_HOST, S_MAIN, S_WORK, S_LAUNCH, S_K0, S_K1, S_K2, S_FWD, S_BWD, S_IO, S_NAMES };

static uint64_t T0 = 1000000000ull;
static uint32_t next_str = S_NAMES;

/* A string record for a numbered name; its id. */
static uint32_t name_id(const char *fmt, long k)
{
	char buf[64];
	snprintf(buf, sizeof(buf), fmt, k);
	str_id(next_str, buf);
	return next_str++;
}

static void range_rec(uint32_t src, uint32_t tid, uint32_t end_tid, uint32_t kind, uint32_t msg, uint32_t depth,
		      uint64_t s, uint64_t e, uint64_t id, int unterminated)
{
	gp_record r;
	rec_range(&r, tid, end_tid, kind, 0, msg, depth, s, e, id);
	if (unterminated) r.u.nvtx_range.flags = GP_NVTX_UNTERMINATED;
	put(src, &r);
}

int main(int argc, char **argv)
{
	gen_prog = "gen_cuts";
	uint64_t seed = 1;
	long nsteps = 100;
	int i, late_ops = 0;
	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc - 1) seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc - 1) nsteps = atol(argv[++i]);
		else if (!strcmp(argv[i], "--late-ops")) late_ops = 1;
		else break;
	}
	if (i != argc - 1 || nsteps < 2) {
		fprintf(stderr, "usage: gen_cuts [--seed S] [--steps N>=2] [--late-ops] OUT\n");
		return 1;
	}
	uint64_t rng = seed;
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, P, T0, GEN_REALTIME0, "testhost", -1);
	const char *strs[S_NAMES] = {
		[S_CMD] = "python train.py", [S_HOST] = "testhost", [S_MAIN] = "main", [S_WORK] = "worker",
		[S_LAUNCH] = "cudaLaunchKernel", [S_K0] = "embed_kernel", [S_K1] = "gemm_kernel",
		[S_K2] = "relu_kernel", [S_FWD] = "forward", [S_BWD] = "backward", [S_IO] = "io",
	};
	for (uint32_t s = 1; s < S_NAMES; s++) str_id(s, strs[s]);
	const uint32_t kinds[5] = { GP_SOURCE_META, GP_SOURCE_THREAD, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY,
				    GP_SOURCE_ACTIVITY };
	const uint32_t tids[5] = { 0, TMAIN, TWORK, 0, 0 }, names[5] = { 0, S_MAIN, S_WORK, 0, 0 };
	sources(P, late_ops ? 4 : 3, kinds, tids, names);
	process(P, S_CMD, S_HOST, -1, T0);

	gp_record r;
	uint64_t corr = 1, gpu_free = 0, epoch_s = 0, t_end = T0 + (uint64_t)nsteps * STEP_NS + STEP_NS / 2;
	uint64_t load_e = 0, io_e = 0, sid = 1;
	long epoch = 0;
	/* start/end ranges begun on main, waiting for the worker to end them */
	struct pend { uint64_t s, e, id; uint32_t msg; } pend[64];
	int npend = 0;
	for (long k = 0; k < nsteps; k++) {
		uint64_t s0 = T0 + (uint64_t)k * STEP_NS + sm_next(&rng) % 5000;
		if (k % 25 == 0) epoch_s = s0 - 100;
		uint64_t t = s0 + 1000;
		/* forward: layers, a kernel each */
		uint32_t nl = 1 + (uint32_t)(sm_next(&rng) % 4);
		uint64_t fs = t;
		for (uint32_t l = 0; l < nl; l++) {
			uint64_t ls = t, len = 20000 + sm_next(&rng) % 150000;
			rec_api(&r, TMAIN, 0, S_LAUNCH, 211, corr, ls + 100, ls + 2100);
			put(1, &r);
			uint64_t ks = (ls + 4000 > gpu_free ? ls + 4000 : gpu_free), ke = ks + 10000 + l * 1000;
			rec_kernel(&r, l == 0 ? S_K0 : S_K1, 7, corr++, ks, ke, 64);
			put(3, &r);
			gpu_free = ke;
			range_rec(1, TMAIN, TMAIN, GP_NVTX_PUSHPOP, name_id("layer %ld", l), 3, ls, ls + len, 0, 0);
			t = ls + len + 500;
		}
		range_rec(1, TMAIN, TMAIN, GP_NVTX_PUSHPOP, S_FWD, 2, fs, t, 0, 0);
		/* a start/end range begun here, ended by the worker later */
		if (npend < 64 && sm_next(&rng) % 2) {
			uint64_t len = (sm_next(&rng) % 6) * STEP_NS + sm_next(&rng) % STEP_NS;
			pend[npend++] = (struct pend){ t, t + len, sid++, name_id("prefetch %ld", k) };
		}
		uint64_t bs = t + 1000;
		rec_api(&r, TMAIN, 0, S_LAUNCH, 211, corr, bs + 100, bs + 2100);
		put(1, &r);
		uint64_t ks = (bs + 4000 > gpu_free ? bs + 4000 : gpu_free), ke = ks + 30000;
		rec_kernel(&r, S_K2, 7, corr++, ks, ke, 128);
		put(3, &r);
		gpu_free = ke;
		uint64_t be = bs + 50000 + sm_next(&rng) % 100000;
		range_rec(1, TMAIN, TMAIN, GP_NVTX_PUSHPOP, S_BWD, 2, bs, be, 0, 0);
		range_rec(1, TMAIN, TMAIN, GP_NVTX_PUSHPOP, name_id("step %ld", k), 1, s0, be + 1000, 0, 0);
		if (k % 25 == 24 && k + 1 < nsteps)
			range_rec(1, TMAIN, TMAIN, GP_NVTX_PUSHPOP, name_id("epoch %ld", epoch++), 0, epoch_s, be + 2000, 0,
				  0);
		/* the worker: its load range when it ends, the start/end ranges
		 * it ends by now, and its io ranges */
		if (!load_e) load_e = s0 + 200000 + sm_next(&rng) % (3 * STEP_NS);
		for (int p = 0; p < npend;) {
			if (pend[p].e > s0 + STEP_NS) { p++; continue; }
			range_rec(2, TMAIN, TWORK, GP_NVTX_STARTEND, pend[p].msg, 0, pend[p].s, pend[p].e, pend[p].id, 0);
			pend[p] = pend[--npend];
		}
		if (load_e <= s0 + STEP_NS) {
			uint64_t ls = load_e > 3 * STEP_NS ? load_e - 200000 - sm_next(&rng) % (3 * STEP_NS) : T0;
			range_rec(2, TWORK, TWORK, GP_NVTX_PUSHPOP, name_id("load %ld", k), 0, ls < T0 ? T0 : ls, load_e, 0, 0);
			load_e = 0;
		}
		uint64_t is = s0 + sm_next(&rng) % STEP_NS, ie = is + sm_next(&rng) % (2 * STEP_NS);
		if (ie < io_e) ie = io_e + 1; /* written in end order */
		range_rec(2, TWORK, TWORK, GP_NVTX_STARTEND, S_IO, 0, is, ie, sid++, 0);
		io_e = ie;
		if (late_ops) {
			uint64_t ls = s0 + 100000, w = sm_next(&rng) % 2 ? sm_next(&rng) % 200000 : sm_next(&rng) % (40 * STEP_NS);
			rec_kernel(&r, S_K1, 8, 0, ls + w, ls + w + 1000, 64);
			put(4, &r);
			rec_kernel(&r, S_K2, 8, 0, ls, ls + 40000 + (uint64_t)k * 7, 64);
			put(4, &r);
		}
	}
	/* at the end: what was never ended (the last epoch, a start/end range
	 * begun on main, the start/end ranges still waiting) */
	for (int p = 0; p < npend; p++)
		range_rec(2, TMAIN, TWORK, GP_NVTX_STARTEND, pend[p].msg, 0, pend[p].s, pend[p].e, pend[p].id, 0);
	range_rec(1, TMAIN, TMAIN, GP_NVTX_STARTEND, name_id("never ended %ld", 0), 0, T0 + STEP_NS / 3, t_end, sid++, 1);
	range_rec(1, TMAIN, TMAIN, GP_NVTX_PUSHPOP, name_id("epoch %ld", epoch), 0, epoch_s, t_end, 0, 1);
	return gen_close();
}
