#!/usr/bin/env python3
"""train_mnist.py — the pytorch/examples MNIST training loop on synthetic data.

Same model, optimizer and schedule as pytorch/examples/mnist/main.py (Net,
Adadelta lr=1.0, StepLR gamma=0.7, batch 64, pinned DataLoader), but the data
set is random 1x28x28 images with random labels from a fixed seed: no
download, same work per step.  One NVTX range "step <i>" per step with nested
"forward"/"backward"/"optimizer" ranges (see steploop.py for timing and the
RESULT line).

  python3 examples/train_mnist.py --steps 100 --warmup 5 --workers 2
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steploop  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Net(nn.Module):
    """pytorch/examples mnist Net, unchanged."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


class SyntheticMNIST(torch.utils.data.Dataset):
    """`length` samples drawn from a fixed pool of random images.

    The pool is generated once in the parent from the seed (DataLoader workers
    are forked and share it), so every run with the same seed sees the same
    batches whatever the number of workers."""

    def __init__(self, length: int, seed: int, pool: int = 4096):
        g = torch.Generator().manual_seed(seed)
        # Normalised like MNIST after transforms.Normalize((0.1307,), (0.3081,)).
        self.images = torch.randn(pool, 1, 28, 28, generator=g)
        self.labels = torch.randint(0, 10, (pool,), generator=g)
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        k = idx % self.images.shape[0]
        return self.images[k], self.labels[k]


def make_loader(args, steps_in_epoch: int, epoch: int):
    ds = SyntheticMNIST(steps_in_epoch * args.batch_size, args.seed + epoch)
    kw = {"batch_size": args.batch_size, "shuffle": False, "drop_last": True,
          "num_workers": args.workers}
    if args.device.startswith("cuda"):
        kw["pin_memory"] = True
    return torch.utils.data.DataLoader(ds, **kw)


def batches(args):
    """Yields batches forever-ish: one DataLoader iterator per epoch, so
    workers are forked again at each epoch like a real training job."""
    total = args.warmup + args.steps
    done, epoch = 0, 0
    while done < total:
        n = min(args.epoch_steps, total - done)
        for b in make_loader(args, n, epoch):
            yield epoch, b
        done += n
        epoch += 1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    steploop.add_common_args(p, steps=100, warmup=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=2, help="DataLoader num_workers")
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--gamma", type=float, default=0.7)
    p.add_argument("--epoch-steps", type=int, default=938,
                   help="steps per epoch (MNIST: 60000/64); StepLR steps and "
                        "DataLoader workers are re-forked at each epoch")
    args = p.parse_args(argv)
    steploop.setup(args)
    dev = torch.device(args.device)

    model = Net().to(dev)
    opt = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=args.gamma)
    model.train()
    it = batches(args)
    state = {"epoch": 0}

    def step(i, ann):
        epoch, (data, target) = next(it)
        if epoch != state["epoch"]:
            sched.step()
            state["epoch"] = epoch
        data, target = data.to(dev), target.to(dev)
        with ann.range("forward"):
            opt.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
        with ann.range("backward"):
            loss.backward()
        with ann.range("optimizer"):
            opt.step()
        return loss

    steploop.run_steps(args, step)
    it.close()  # shuts the last DataLoader's workers down before exit
    return 0


if __name__ == "__main__":
    sys.exit(main())
