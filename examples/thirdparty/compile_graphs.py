#!/usr/bin/env python3
"""compile_graphs.py — `torch.compile(model, mode="reduce-overhead")`: Inductor's
Triton kernels replayed as CUDA graphs (CUDA graph trees: one warm-up call,
one recording, then graph launches).  Inference of a small MLP, each step's
input computed in eager mode from the last output.  Steps [steps/3,
2*steps/3) run between cudaProfilerStart/Stop.  Prints one line:
RESULT steps=N sum=S (S = sum over steps of the output's sum, float64).

Pointwise autotuning is off: with it, the first run benchmarks candidate
configs, launching a timing-dependent number of kernels (later runs read the
winner from Inductor's cache), and the kernel count of a run is what the
compatibility matrix compares.  One compile thread: no pool of compile worker
processes to start (they never touch CUDA).

  python3 examples/thirdparty/compile_graphs.py [--steps 60]
"""
import argparse
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--mem-probe", action="store_true",
                    help="NVTX 'step N' ranges and torch.cuda.memory_reserved() at each step's end (stderr)")
    a = ap.parse_args()
    try:
        import torch._inductor.config as icfg
        icfg.triton.autotune_pointwise = False
    except (ImportError, AttributeError):
        pass
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(),
                          nn.Linear(1024, 256)).cuda().eval()
    cm = torch.compile(model, mode="reduce-overhead")
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(64, 256, device="cuda", generator=g)
    lo, hi = a.steps // 3, 2 * a.steps // 3
    s = 0.0
    with torch.no_grad():
        for i in range(a.steps):
            if i == lo:
                torch.cuda.profiler.start()
            if a.mem_probe:
                torch.cuda.nvtx.range_push("step %d" % i)
            torch.compiler.cudagraph_mark_step_begin()
            y = cm(x)
            s += float(y.double().sum())
            x = torch.tanh(y)  # a new tensor: the next replay overwrites y
            if a.mem_probe:
                print("MEMPROBE step=%d reserved=%d max_reserved=%d" % (i, torch.cuda.memory_reserved(),
                                                                         torch.cuda.max_memory_reserved()),
                      file=sys.stderr)
                torch.cuda.nvtx.range_pop()
            if i == hi - 1:
                torch.cuda.profiler.stop()
    print("RESULT steps=%d sum=%.6f" % (a.steps, s))


if __name__ == "__main__":
    main()
