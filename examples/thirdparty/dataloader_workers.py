#!/usr/bin/env python3
"""dataloader_workers.py — a DataLoader with 2 worker processes (forked from a
process that already uses CUDA, persistent_workers=False: forked again every
epoch) and pin_memory=True (PyTorch's pin-memory thread) feeding a small MLP
on the GPU; 1024 samples of batch 64, so 40 steps are 3 epochs.  Each sample
is made from its index (the same data whichever worker makes it).  Steps
[steps/3, 2*steps/3) run between cudaProfilerStart/Stop.  Prints one line:
RESULT steps=N loss=L (the last step's loss).

  python3 examples/thirdparty/dataloader_workers.py [--steps 40]
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Indexed(Dataset):
    def __len__(self):
        return 1024

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(64, generator=g), i % 10


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    dl = DataLoader(Indexed(), batch_size=64, shuffle=False, num_workers=2, persistent_workers=False,
                    pin_memory=True)
    lo, hi = a.steps // 3, 2 * a.steps // 3
    step, loss = 0, None
    while step < a.steps:
        for x, y in dl:
            if step == lo:
                torch.cuda.profiler.start()
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step == hi - 1:
                torch.cuda.profiler.stop()
            step += 1
            if step == a.steps:
                break
    print("RESULT steps=%d loss=%.6f" % (step, float(loss)))


if __name__ == "__main__":
    main()
