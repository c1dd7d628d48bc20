#!/usr/bin/env python3
"""mp_spawn.py — `torch.multiprocessing.spawn` of 2 processes, both on GPU 0
(one GPU is enough): each does N steps of x = tanh(x @ w) from its own seed
and sends the sum back; the parent never touches CUDA.  Steps [N/3, 2N/3) of
each run between cudaProfilerStart/Stop.  Prints one line (from the parent):
RESULT procs=2 sums=S0,S1.

  python3 examples/thirdparty/mp_spawn.py [--steps 50]
"""
import argparse

import torch
import torch.multiprocessing as mp


def worker(rank, steps, q):
    torch.manual_seed(rank)
    x = torch.randn(512, 512, device="cuda")
    w = torch.randn(512, 512, device="cuda") / 512 ** 0.5
    lo, hi = steps // 3, 2 * steps // 3
    for i in range(steps):
        if i == lo:
            torch.cuda.profiler.start()
        x = torch.tanh(x @ w)
        if i == hi - 1:
            torch.cuda.profiler.stop()
    q.put((rank, float(x.double().sum())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    a = ap.parse_args()
    q = mp.get_context("spawn").SimpleQueue()
    mp.spawn(worker, args=(a.steps, q), nprocs=2, join=True)
    sums = dict(q.get() for _ in range(2))
    print("RESULT procs=2 sums=%.6f,%.6f" % (sums[0], sums[1]))


if __name__ == "__main__":
    main()
