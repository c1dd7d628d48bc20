/* gen_layers.c — writes a trace whose Python stacks show model layers
 * (forward frames with the class of `self`, as the shim records them:
 * "py\tFILE\tLINE\tQUALNAME\tCLASS"); tests/tools/test_layers.py works out
 * the layer tree and the sites of every --site rule by hand from this list.
 *
 *   gen_layers [--no-class | --graphs | --emit-nvtx | --trainer | --layer-ranges] OUT
 *
 * --no-class: every frame without the class field (a trace from a shim
 * that did not read classes: the tools fall back to the defining class).
 * --graphs: also a CUDA graph capture and its replay (format 1.3
 * GP_REC_GRAPH_NODE records, each written before its launch call's record,
 * as the shim writes them), after the launches below:
 *  20: 1 main, captured: node 100 made inside it (no kernel);
 *  21: 3 main, captured: node 101 made inside it;
 *  node 104 made on main between two calls (no call around it);
 *  copies (instantiation): 102 <- 100, 103 <- 101, 105 <- 104;
 *  30: 10 main, cudaGraphLaunch: kernels of node 102 500, 103 600,
 *      105 80, 999 (no record) 70.
 * --emit-nvtx: also the NVTX ranges of torch.autograd.profiler.emit_nvtx
 * ("NAME, seq = N, op_id = K", PyTorch's getNvtxStr), at T0 + (ns):
 *  main, forward op ranges around the launches above:
 *   aten::linear seq 7 [990, 1150) around 1 (stack 1), inside it
 *     aten::t seq 7 [1110, 1140) (no launch: linear's path);
 *   aten::add seq 11 [1390, 1550) around 2 (stack 2);
 *   aten::gelu seq 9 [1590, 1750) around 3 (stack 3);
 *   aten::nll_loss seq 13 [2590, 2750) around 8 (stack 8, no layer);
 *   aten::mul seq 11 [2790, 2950) around 9 (stack 9: seq 11 ambiguous);
 *   aten::view seq 12 [3450, 3500) (no launch, no enclosing op: unknown);
 *  pt_autograd_0, backward node ranges around new launches (stack 5):
 *   AddmmBackward0 seq 7 around 40 (500) and 41 (700), with aten::mm
 *     (no seq) inside it around 40;
 *   GeluBackward0 seq 9: 42 (300);  MulBackward0 seq 11: 43 (200);
 *   ViewBackward0 seq 12: 44 (100);  NllLossBackward0 seq 13: 45 (80);
 *   EmbeddingBackward0 seq 99 (no forward): 46 (50);
 *   aten::gelu seq 9 with no launch (checkpoint recomputation: not a
 *   forward op range, the thread is the autograd thread's).
 * --layer-ranges: the ranges `gpuprof run --layers` has the job open
 * around autograd nodes' backward ("gpuprof.backward PATH",
 * analysis/layers/layer_ranges.h), around new launches (stack 5) on pt_autograd_0:
 *   "...GPT2Model > GPT2Block > GPT2Attention > Linear" around 40 (500)
 *     and 41 (700), with "...GPT2Model > GPT2Block > GPT2MLP" (depth 1)
 *     inside it around 41;
 *   "...GPT2Model" around 42 (300);  "backward of x" (not one) around 43
 *   (200);  none around 44 (100);  "gpuprof.backward " (no path) around
 *   45 (80);  46 (50) inside "...GPT2Model" of thread main only.
 * --trainer: stacks 1-4, 9 and 10 have a library frame TRAINER
 * (SP/transformers/trainer.py:2000 Trainer.train) just outside TRAIN, as a
 * Hugging Face Trainer's stacks have: the user's site is still TRAIN.
 * Process 5000; threads: 5000 "main", 5001 "pt_autograd_0", 5002 "worker".
 * SP = .../site-packages.  Frames (innermost first):
 *  LIN   SP/torch/nn/modules/linear.py:125 Linear.forward [Linear]
 *  MYLIN SP/torch/nn/modules/linear.py:125 Linear.forward [MyLinear]
 *  CALL  SP/torch/nn/modules/module.py:1750 Module._call_impl
 *  ATTN  SP/transformers/models/gpt2/modeling_gpt2.py:300 GPT2Attention.forward [GPT2Attention]
 *  ATTN2 the same at line 310
 *  MLP   .../modeling_gpt2.py:350 GPT2MLP.forward [GPT2MLP]
 *  BLOCK .../modeling_gpt2.py:400 GPT2Block.forward [GPT2Block]
 *  MODEL .../modeling_gpt2.py:900 GPT2Model.forward [GPT2Model]
 *  OPT   SP/torch/optim/adamw.py:100 AdamW.step
 *  NET   /home/u/model.py:42 Net.forward (no class: a trace before the field)
 *  TRAIN /home/u/train.py:20 step;  TRAIN22 the same at line 22
 * Stacks:
 *  1 LIN CALL ATTN CALL BLOCK CALL MODEL TRAIN
 *  2 ATTN2 CALL BLOCK CALL MODEL TRAIN
 *  3 LIN CALL MLP CALL BLOCK CALL MODEL TRAIN
 *  4 OPT TRAIN
 *  5 0x1234 | ctx 5000 | TRAIN22            (launched on pt_autograd_0)
 *  6 0x1234 | ctx 5000 | TRAIN22            (launched on worker)
 *  7 0x1234                                 (no Python at all)
 *  8 NET TRAIN
 *  9 MYLIN CALL ATTN CALL BLOCK CALL MODEL TRAIN
 * 10 MODEL TRAIN                            (a graph launch)
 * Launches (corr: stack, thread -> kernel ns):
 *  1: 1 main 1000;  11: 1 main 1500;  2: 2 main 400;  3: 3 main 2000;
 *  4: 4 main 800;  5: 5 autograd 3000;  6: 6 worker 60;  7: 7 main 70;
 *  8: 8 main 90;  9: 9 main 300;  10: 10 main, cudaGraphLaunch 200 + 250;
 *  12: no stack, main 40;  13: 1 main, a memcpy of 700 (not a kernel).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"

#define P 5000u
#define T0 1000000000ull
#define SYM (1ull << 63)
#define SP "/home/u/venv/lib/python3.12/site-packages"
#define GPT2 SP "/transformers/models/gpt2/modeling_gpt2.py"

static uint32_t next_str = 1;
static int no_class, graphs, emit_nvtx, trainer, layer_ranges;
static uint32_t str(const char *s)
{
	uint32_t id = next_str++;
	char b[512];
	snprintf(b, sizeof(b), "%s", s);
	int tabs = 0;
	for (char *p = b; *p; p++)
		if (*p == '\t' && ++tabs == 4 && no_class && !strncmp(b, "py\t", 3)) *p = 0;
	str_id(id, b);
	return id;
}

enum { CBID_cudaMemcpyAsync = 41, CBID_cudaLaunchKernel = 211, CBID_cudaGraphLaunch = 311 };
static uint64_t t_api = 1000, t_gpu = 100000;

/* a runtime call of source src (1-3: the threads) with a stack */
static void api(uint32_t src, uint32_t name, uint32_t cbid, uint64_t corr, uint32_t stack_id)
{
	gp_record r;
	rec_api(&r, 0, 0, name, cbid, corr, T0 + t_api, T0 + t_api + 100);
	r.u.api.stack_id = stack_id;
	put(src, &r);
	t_api += 200;
}

/* a graph node made (origin 0) or copied on main, at the time the next
 * api() call will be in the middle of (inside: 1) or before it (0) */
static void node(uint64_t id, uint64_t origin, int inside)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_GRAPH_NODE;
	r.u.graph_node.ts_ns = T0 + t_api + (inside ? 50 : 0) - (inside ? 0 : 50);
	r.u.graph_node.graph_id = 7;
	r.u.graph_node.node_id = id;
	r.u.graph_node.origin_node_id = origin;
	r.u.graph_node.tid = P;
	put(1, &r);
}

/* a graph launch's kernel of node graph_node */
static void graph_kernel(uint32_t name, uint64_t corr, uint64_t dur, uint64_t graph_node)
{
	gp_record r;
	rec_kernel(&r, name, 7, corr, T0 + t_gpu, T0 + t_gpu + dur, 1);
	r.u.kernel.graph_id = 7;
	r.u.kernel.graph_node_id = graph_node;
	put(4, &r);
	t_gpu += dur + 1000;
}

/* a push/pop NVTX range of source src (thread tid) [T0 + s, T0 + e) */
static void range(uint32_t src, uint32_t tid, const char *name, uint32_t depth, uint64_t s, uint64_t e)
{
	gp_record r;
	rec_range(&r, tid, tid, GP_NVTX_PUSHPOP, 0, str(name), depth, T0 + s, T0 + e, 0);
	put(src, &r);
}

/* a kernel (name != 0) or a memcpy, one after the other on the GPU */
static void gpu(uint32_t name, uint64_t corr, uint64_t dur)
{
	gp_record r;
	if (name)
		rec_kernel(&r, name, 7, corr, T0 + t_gpu, T0 + t_gpu + dur, 1);
	else
		rec_memcpy(&r, GP_COPY_HTOD, 0, 0, 4096, 7, corr, T0 + t_gpu, T0 + t_gpu + dur);
	put(4, &r);
	t_gpu += dur + 1000;
}

static uint64_t bwd_launch(uint32_t launch, uint32_t k, uint64_t corr, uint64_t ns);

int main(int argc, char **argv)
{
	gen_prog = "gen_layers";
	no_class = argc == 3 && !strcmp(argv[1], "--no-class");
	graphs = argc == 3 && !strcmp(argv[1], "--graphs");
	emit_nvtx = argc == 3 && !strcmp(argv[1], "--emit-nvtx");
	trainer = argc == 3 && !strcmp(argv[1], "--trainer");
	layer_ranges = argc == 3 && !strcmp(argv[1], "--layer-ranges");
	if (argc != 2 + no_class + graphs + emit_nvtx + trainer + layer_ranges) {
		fprintf(stderr, "usage: gen_layers [--no-class | --graphs | --emit-nvtx | --trainer | --layer-ranges] OUT\n");
		return 1;
	}
	gp_header h;
	gen_open_trace(argv[argc - 1], &h, P, T0, GEN_REALTIME0, "testhost", -1);
	uint32_t s_main = str("main"), s_ag = str("pt_autograd_0"), s_wk = str("worker");
	const uint32_t kinds[5] = { 0, GP_SOURCE_THREAD, GP_SOURCE_THREAD, GP_SOURCE_THREAD, GP_SOURCE_ACTIVITY };
	const uint32_t tids[5] = { 0, P, P + 1, P + 2, 0 }, names[5] = { 0, s_main, s_ag, s_wk, 0 };
	sources(P, 4, kinds, tids, names);

	uint64_t LIN = SYM | str("py\t" SP "/torch/nn/modules/linear.py\t125\tLinear.forward\tLinear");
	uint64_t MYLIN = SYM | str("py\t" SP "/torch/nn/modules/linear.py\t125\tLinear.forward\tMyLinear");
	uint64_t CALL = SYM | str("py\t" SP "/torch/nn/modules/module.py\t1750\tModule._call_impl");
	uint64_t ATTN = SYM | str("py\t" GPT2 "\t300\tGPT2Attention.forward\tGPT2Attention");
	uint64_t ATTN2 = SYM | str("py\t" GPT2 "\t310\tGPT2Attention.forward\tGPT2Attention");
	uint64_t MLP = SYM | str("py\t" GPT2 "\t350\tGPT2MLP.forward\tGPT2MLP");
	uint64_t BLOCK = SYM | str("py\t" GPT2 "\t400\tGPT2Block.forward\tGPT2Block");
	uint64_t MODEL = SYM | str("py\t" GPT2 "\t900\tGPT2Model.forward\tGPT2Model");
	uint64_t OPT = SYM | str("py\t" SP "/torch/optim/adamw.py\t100\tAdamW.step");
	uint64_t NET = SYM | str("py\t/home/u/model.py\t42\tNet.forward");
	uint64_t TRAIN = SYM | str("py\t/home/u/train.py\t20\tstep");
	uint64_t TRAIN22 = SYM | str("py\t/home/u/train.py\t22\tstep");
	uint64_t CTX = SYM | str("ctx\t5000");
	/* T: TRAIN, or TRAINER then TRAIN (--trainer: the last frame, 0 when not) */
	uint64_t TR = trainer ? SYM | str("py\t" SP "/transformers/trainer.py\t2000\tTrainer.train") : TRAIN;
	uint64_t T2 = trainer ? TRAIN : 0;
	uint32_t x = trainer ? 1 : 0;
	const uint64_t s1[] = { LIN, CALL, ATTN, CALL, BLOCK, CALL, MODEL, TR, T2 };
	const uint64_t s2[] = { ATTN2, CALL, BLOCK, CALL, MODEL, TR, T2 };
	const uint64_t s3[] = { LIN, CALL, MLP, CALL, BLOCK, CALL, MODEL, TR, T2 };
	const uint64_t s4[] = { OPT, TR, T2 };
	const uint64_t s5[] = { 0x1234, CTX, TRAIN22 };
	const uint64_t s7[] = { 0x1234 };
	const uint64_t s8[] = { NET, TRAIN };
	const uint64_t s9[] = { MYLIN, CALL, ATTN, CALL, BLOCK, CALL, MODEL, TR, T2 };
	const uint64_t s10[] = { MODEL, TR, T2 };
	gen_stack(1, s1, 8 + x); gen_stack(2, s2, 6 + x); gen_stack(3, s3, 8 + x); gen_stack(4, s4, 2 + x);
	gen_stack(5, s5, 3); gen_stack(6, s5, 3); gen_stack(7, s7, 1); gen_stack(8, s8, 2); gen_stack(9, s9, 8 + x);
	gen_stack(10, s10, 2 + x);

	uint32_t launch = str("cudaLaunchKernel"), graph = str("cudaGraphLaunch"), cpy = str("cudaMemcpyAsync");
	uint32_t k = str("_Z6kernelv");
	api(1, launch, CBID_cudaLaunchKernel, 1, 1);
	api(1, launch, CBID_cudaLaunchKernel, 11, 1);
	api(1, launch, CBID_cudaLaunchKernel, 2, 2);
	api(1, launch, CBID_cudaLaunchKernel, 3, 3);
	api(1, launch, CBID_cudaLaunchKernel, 4, 4);
	api(2, launch, CBID_cudaLaunchKernel, 5, 5);
	api(3, launch, CBID_cudaLaunchKernel, 6, 6);
	api(1, launch, CBID_cudaLaunchKernel, 7, 7);
	api(1, launch, CBID_cudaLaunchKernel, 8, 8);
	api(1, launch, CBID_cudaLaunchKernel, 9, 9);
	api(1, graph, CBID_cudaGraphLaunch, 10, 10);
	api(1, launch, CBID_cudaLaunchKernel, 12, 0);
	api(1, cpy, CBID_cudaMemcpyAsync, 13, 1);
	gpu(k, 1, 1000);
	gpu(k, 11, 1500);
	gpu(k, 2, 400);
	gpu(k, 3, 2000);
	gpu(k, 4, 800);
	gpu(k, 5, 3000);
	gpu(k, 6, 60);
	gpu(k, 7, 70);
	gpu(k, 8, 90);
	gpu(k, 9, 300);
	gpu(k, 10, 200);
	gpu(k, 10, 250);
	gpu(k, 12, 40);
	gpu(0, 13, 700);
	if (graphs) {
		node(100, 0, 1);
		api(1, launch, CBID_cudaLaunchKernel, 20, 1);
		node(101, 0, 1);
		api(1, launch, CBID_cudaLaunchKernel, 21, 3);
		node(104, 0, 0);
		node(102, 100, 0);
		node(103, 101, 0);
		node(105, 104, 0);
		api(1, graph, CBID_cudaGraphLaunch, 30, 10);
		graph_kernel(k, 30, 500, 102);
		graph_kernel(k, 30, 600, 103);
		graph_kernel(k, 30, 80, 105);
		graph_kernel(k, 30, 70, 999);
	}
	if (emit_nvtx) {
		/* forward op ranges on main (source 1) */
		range(1, P, "aten::linear, seq = 7, op_id = 1", 0, 990, 1150);
		range(1, P, "aten::t, seq = 7, op_id = 2", 1, 1110, 1140);
		range(1, P, "aten::add, seq = 11, op_id = 3", 0, 1390, 1550);
		range(1, P, "aten::gelu, seq = 9, op_id = 4", 0, 1590, 1750);
		range(1, P, "aten::nll_loss, seq = 13, op_id = 5", 0, 2590, 2750);
		range(1, P, "aten::mul, seq = 11, op_id = 6, sizes = [[4, 8], []]", 0, 2790, 2950);
		range(1, P, "aten::view, seq = 12, op_id = 7", 0, 3450, 3500);
		/* backward node ranges on pt_autograd_0 (source 2) */
		static const struct { const char *name; uint64_t corr, ns[2]; } bw[] = {
			{ "AddmmBackward0, seq = 7, op_id = 20", 40, { 500, 700 } },
			{ "GeluBackward0, seq = 9, op_id = 21", 42, { 300, 0 } },
			{ "MulBackward0, seq = 11, op_id = 22", 43, { 200, 0 } },
			{ "ViewBackward0, seq = 12, op_id = 23", 44, { 100, 0 } },
			{ "NllLossBackward0, seq = 13, op_id = 24", 45, { 80, 0 } },
			{ "EmbeddingBackward0, seq = 99, op_id = 25", 46, { 50, 0 } },
		};
		for (size_t i = 0; i < sizeof(bw) / sizeof(bw[0]); i++) {
			uint64_t s = t_api - 10;
			for (int j = 0; j < 2 && bw[i].ns[j]; j++) {
				if (i == 0 && j == 0) range(2, P + 1, "aten::mm, op_id = 30", 1, t_api - 5, t_api + 150);
				api(2, launch, CBID_cudaLaunchKernel, bw[i].corr + (uint64_t)j, 5);
				gpu(k, bw[i].corr + (uint64_t)j, bw[i].ns[j]);
			}
			range(2, P + 1, bw[i].name, 0, s, t_api - 20);
		}
		range(2, P + 1, "aten::gelu, seq = 9, op_id = 26", 0, t_api, t_api + 50);
	}
	if (layer_ranges) {
		const char *attn = "gpuprof.backward GPT2Model > GPT2Block > GPT2Attention > Linear";
		uint64_t s = t_api - 10;
		bwd_launch(launch, k, 40, 500);
		uint64_t c41 = bwd_launch(launch, k, 41, 700);
		range(2, P + 1, "gpuprof.backward GPT2Model > GPT2Block > GPT2MLP", 1, c41 - 5, c41 + 150);
		range(2, P + 1, attn, 0, s, t_api - 20);
		uint64_t c = bwd_launch(launch, k, 42, 300);
		range(2, P + 1, "gpuprof.backward GPT2Model", 0, c - 5, c + 150);
		c = bwd_launch(launch, k, 43, 200);
		range(2, P + 1, "backward of x", 0, c - 5, c + 150);
		bwd_launch(launch, k, 44, 100);
		c = bwd_launch(launch, k, 45, 80);
		range(2, P + 1, "gpuprof.backward ", 0, c - 5, c + 150);
		c = bwd_launch(launch, k, 46, 50);
		range(1, P, "gpuprof.backward GPT2Model", 0, c - 5, c + 150);
	}
	return gen_close();
}

/* a backward launch (stack 5, pt_autograd_0) of a kernel of ns; returns its
 * call's start (after T0) */
static uint64_t bwd_launch(uint32_t launch, uint32_t k, uint64_t corr, uint64_t ns)
{
	uint64_t at = t_api;
	api(2, launch, CBID_cudaLaunchKernel, corr, 5);
	gpu(k, corr, ns);
	return at;
}
