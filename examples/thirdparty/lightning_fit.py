#!/usr/bin/env python3
"""lightning_fit.py — a PyTorch Lightning Trainer.fit of a small MLP on a
TensorDataset, as a new user writes it (issue #18's crash job).  Lightning
imports mpi4py, whose import starts OpenMPI (and its `orted` child) in the
process.  `--stall-step K [--stall-s S]` sleeps S seconds (2) in the Dataset
when batch K is fetched (stall.py); `--nvtx` marks each step as an NVTX range
`step N` (on_train_batch_start/end hooks: the hinted variant); `--torch-profiler
DIR` fits with `profiler="pytorch"` (Lightning's PyTorchProfiler, the job's own
profiler beside gpuprof, issue #42) and DIR as the root directory, where it
writes its Chrome trace(s) (*.pt.trace.json).  Prints one line: RESULT steps=N loss=L (deterministic: fixed seed).

  python3 examples/thirdparty/lightning_fit.py [--steps 40] [--stall-step K] [--nvtx] [--torch-profiler DIR]
"""
import argparse
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("PL_DISABLE_FORK", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import lightning as L  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # stall.py, also when run through runpy
from stall import Stall  # noqa: E402


class MLP(L.LightningModule):
    def __init__(self, nvtx=False):
        super().__init__()
        self.nvtx = nvtx
        self.net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        self.last = None

    def training_step(self, batch, i):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.last = loss.detach()
        return loss

    def on_train_batch_start(self, batch, i):
        if self.nvtx:
            torch.cuda.nvtx.range_push("step %d" % self.global_step)

    def on_train_batch_end(self, outputs, batch, i):
        if self.nvtx:
            torch.cuda.nvtx.range_pop()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--stall-step", type=int, default=-1)
    ap.add_argument("--stall-s", type=float, default=2.0)
    ap.add_argument("--nvtx", action="store_true")
    ap.add_argument("--torch-profiler", default="", metavar="DIR")
    a = ap.parse_args()
    L.seed_everything(0, verbose=False)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4096, 64, generator=g)
    y = torch.randint(0, 10, (4096,), generator=g)
    dl = DataLoader(Stall(TensorDataset(x, y), a.stall_step, 64, a.stall_s), batch_size=64, shuffle=False)
    m = MLP(a.nvtx)
    tr = L.Trainer(max_steps=a.steps, accelerator="gpu", devices=1, logger=False, enable_checkpointing=False,
                   enable_progress_bar=False, enable_model_summary=False, deterministic=True,
                   **(dict(profiler="pytorch", default_root_dir=a.torch_profiler) if a.torch_profiler else {}))
    tr.fit(m, dl)
    print("RESULT steps=%d loss=%.6f" % (tr.global_step, float(m.last)))


if __name__ == "__main__":
    main()
