"""oom.py — a job that runs out of device memory: a transformer layer whose
sequence length doubles every step (activations grow with it) until an
allocation fails; torch raises torch.OutOfMemoryError and the job exits 1
with PyTorch's message (gpuprof must leave both unchanged).  Each step is an
NVTX range `step N`; MEMPROBE lines on stderr as in leak.py.  For
tests/gpu/memory_check.py: `gpuprof advise` names out-of-memory first, with
the failing call's site and the live memory by site (docs/MEMORY.md)."""
import argparse
import contextlib
import sys

import torch
import torch.nn as nn


def math_attention():
    """The math attention path (its (seq x seq) scores are what grows), by
    whichever switch this torch has; none: the default path."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel(SDPBackend.MATH)
    except ImportError:
        return contextlib.nullcontext()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, default=1024, help="the first step's sequence length")
    ap.add_argument("--max-steps", type=int, default=40)
    a = ap.parse_args()
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True).cuda()
    opt = torch.optim.SGD(layer.parameters(), lr=1e-3)
    seq = a.seq
    for i in range(a.max_steps):
        torch.cuda.nvtx.range_push("step %d" % i)
        x = torch.randn(8, seq, 512, device="cuda")
        with math_attention():
            loss = layer(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        print("MEMPROBE step=%d reserved=%d max_reserved=%d seq=%d" % (i, torch.cuda.memory_reserved(),
                                                                        torch.cuda.max_memory_reserved(), seq),
              file=sys.stderr)
        torch.cuda.nvtx.range_pop()
        seq *= 2
    print("RESULT no out-of-memory within %d steps" % a.max_steps)


if __name__ == "__main__":
    main()
