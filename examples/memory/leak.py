"""leak.py — a training loop that leaks device memory: every step appends a
GPU tensor of --leak-mib MiB to a list it never clears (the classic
`losses.append(loss)` mistake, made large enough to measure).  Each step is
an NVTX range `step N`.  Prints at each step's end, on stderr,
MEMPROBE step=N reserved=B max_reserved=B (torch.cuda.memory_reserved());
RESULT on stdout.  The truth for tests/gpu/memory_check.py: the memory
view's growth per step = --leak-mib MiB (docs/MEMORY.md), the leaking site
this file's `kept.append` line (with stacks at allocation calls)."""
import argparse
import sys

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--leak-mib", type=int, default=16, help="MiB kept per step (a multiple of 2: one segment each)")
    a = ap.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, 1024, device="cuda")
    kept = []
    n = a.leak_mib * (1 << 20) // 4
    for i in range(a.steps):
        torch.cuda.nvtx.range_push("step %d" % i)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        kept.append(torch.full((n,), float(i), device="cuda"))  # the leak: held by the list for ever
        torch.cuda.synchronize()
        print("MEMPROBE step=%d reserved=%d max_reserved=%d" % (i, torch.cuda.memory_reserved(),
                                                                 torch.cuda.max_memory_reserved()), file=sys.stderr)
        torch.cuda.nvtx.range_pop()
    print("RESULT steps=%d kept=%d" % (a.steps, len(kept)))


if __name__ == "__main__":
    main()
