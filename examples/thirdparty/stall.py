"""stall.py — a host stall injected into a job without touching its framework
(issue #43's hint-less checks): a Dataset wrapper that sleeps once, in the
__getitem__ call that fetches the first sample of batch STEP (sequential
fetching in the main process: DataLoader without workers).  The frameworks'
loaders may fetch one batch ahead, so the stall lands in step STEP or the one
before it; what counts is that one step is seconds long.

    ds = Stall(ds, step=300, batch=16, seconds=2.0)    # step < 0: no stall
"""
import time

import torch


class Stall(torch.utils.data.Dataset):
    def __init__(self, base, step, batch, seconds):
        self.base, self.at, self.seconds, self.calls = base, step * batch, seconds, 0

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        if self.calls == self.at and self.seconds > 0:
            time.sleep(self.seconds)
        self.calls += 1
        return self.base[i]
