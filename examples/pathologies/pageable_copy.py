#!/usr/bin/env python3
"""pageable_copy.py — async copies from pageable memory: every step copies a
--mb MiB host batch that was never pinned to the GPU.  A copy from pageable
memory runs synchronously (the host waits while CUDA stages the data through
a pinned buffer) and cannot overlap GPU work.  Each step also copies a
pinned --pinned-mb MiB batch (both variants), then runs --matmuls bf16
products of 4096 x 4096 matrices on the copied data.

Fixed (--fixed): the host batch is pinned once (pin_memory()) and copied
with non_blocking=True.

advise: pageable-copy (its estimate uses the pinned copies' bandwidth).

  python3 examples/pathologies/pageable_copy.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
p.add_argument("--mb", type=int, default=64, help="MiB copied from pageable memory per step (>= 64)")
p.add_argument("--pinned-mb", type=int, default=16, help="MiB copied from pinned memory per step")
p.add_argument("--matmuls", type=int, default=8)
args = p.parse_args()
torch = patho.steploop.setup(args)

dev = torch.device(args.device)
n = max(args.mb, 64) * 2**20 // 4
host = torch.randn(n)
if args.fixed:
    host = host.pin_memory()
side = torch.randn(args.pinned_mb * 2**20 // 4).pin_memory()
w = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) / 64


def step(i, ann):
    with ann.range("copy"):
        d = host.to(dev, non_blocking=args.fixed)
        s = side.to(dev, non_blocking=True)
    with ann.range("forward"):
        a = d[:4096 * 4096].view(4096, 4096).to(torch.bfloat16)
        for _ in range(args.matmuls):
            a = torch.relu(a @ w)
        loss = a.float().mean() + s[:1].sum() * 0
    return loss


patho.run(args, "pageable_copy", step)
