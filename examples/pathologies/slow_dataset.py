#!/usr/bin/env python3
"""slow_dataset.py — input-bound: a Dataset whose __getitem__ spends
--sample-us of CPU time per sample (decoding, augmentation), read by a
DataLoader without workers, so the main thread loads every batch while the
GPU waits (a small MLP takes well under a millisecond of GPU time per batch).

Fixed (--fixed): --workers DataLoader worker processes, persistent, each
prefetching 4 batches: the loading overlaps the GPU work.  Both variants pin
the batches (pin_memory=True) and copy them with non_blocking=True.

advise: input-bound (the GPU idles before each step's first launch).

  python3 examples/pathologies/slow_dataset.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--sample-us", type=float, default=150.0, help="CPU time per sample")
p.add_argument("--workers", type=int, default=8, help="DataLoader workers of the fixed variant")
args = p.parse_args()
torch = patho.steploop.setup(args)
from torch.utils.data import DataLoader, Dataset  # noqa: E402


class SlowDataset(Dataset):
    """Fixed random samples; each read costs `us` microseconds of CPU."""

    def __init__(self, n, us, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 1024, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)
        self.us = us

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        patho.busy_us(self.us)
        return self.x[i], self.y[i]


dev = torch.device(args.device)
ds = SlowDataset((args.warmup + args.steps) * args.batch, args.sample_us, args.seed)
kw = {"batch_size": args.batch, "shuffle": False, "drop_last": True, "pin_memory": True}
if args.fixed:
    kw.update(num_workers=args.workers, persistent_workers=True, prefetch_factor=4)
loader = iter(DataLoader(ds, **kw))
model = patho.mlp(torch, 4096, 2, inp=1024, device=dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)


def step(i, ann):
    x, y = next(loader)
    x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    return patho.train_step(torch, model, opt, x, y, ann, amp=torch.bfloat16)


patho.run(args, "slow_dataset", step)
del loader  # shuts the workers down before exit
