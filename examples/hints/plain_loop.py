"""plain_loop.py — a plain PyTorch training loop as most jobs write it: no
NVTX, no profiler hooks (issue #43: steps found online by the shim,
docs/STEPS.md "Steps found online (shim)").

Each step: a batch made on the host (synthetic, fixed shapes), copied to the
GPU (pinned, non_blocking), a small CNN forward/backward, an SGD step, and
every --log-every steps loss.item().  No network, no dataset download.

  --stall-at I --stall-s S   a host stall of S seconds inside step I (after its work)
  --nvtx                     mark each step with an NVTX range "step <i>" (the
                             comparison run: the same steps, numbered as the loop)
  --step-times FILE          "I T" per step at the end, T = time.perf_counter() at
                             step I's start (CLOCK_MONOTONIC seconds: the trace clock)
Prints one line: RESULT steps=N step_ms_median=X total_s=Y loss=L"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, x):
        return self.body(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--stall-at", type=int, default=-1)
    p.add_argument("--stall-s", type=float, default=2.0)
    p.add_argument("--nvtx", action="store_true")
    p.add_argument("--step-times", default=None)
    a = p.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(1)
    model = Net().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    # a pool of host batches (fixed shapes: a step copies the same bytes)
    pool = [(torch.randn(a.batch_size, 3, 32, 32).pin_memory(),
             torch.randint(0, 10, (a.batch_size,)).pin_memory()) for _ in range(8)]
    starts, last = [], 0.0
    t0 = time.perf_counter()
    for i in range(a.steps):
        starts.append(time.perf_counter())
        if a.nvtx:
            torch.cuda.nvtx.range_push("step %d" % i)
        x, y = pool[i % len(pool)]
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        if i % a.log_every == 0:
            last = loss.item()
        if i == a.stall_at:
            time.sleep(a.stall_s)
        if a.nvtx:
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    total = time.perf_counter() - t0
    per = [(b - s) * 1e3 for s, b in zip(starts, starts[1:])]
    if a.step_times:
        with open(a.step_times, "w") as f:
            for i, s in enumerate(starts):
                f.write("%d %.9f\n" % (i, s))
    print("RESULT steps=%d step_ms_median=%.3f total_s=%.3f loss=%.4f" %
          (a.steps, statistics.median(per) if per else 0.0, total, last))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
