#!/usr/bin/env python3
"""large_pageable.py — a large copy from pageable memory that the trace
cannot measure a pinned bandwidth on (issue #38): every step copies a --mb
MiB host tensor that was never pinned to the GPU with non_blocking=True (from
pageable memory the call still blocks while CUDA stages the data), then runs
--matmuls float32 products of 4096 x 4096 matrices on it.  No copy in the job
is pinned, so advise takes the pinned bandwidth from the device's host link
(docs/ADVISE.md "pageable-copy").

Fixed (--fixed): the host tensor is pinned once (pin_memory()); the same
non_blocking=True copy then runs at the link's speed without blocking.

advise: pageable-copy, before fp32-matmul (the issue's H100 run: 21.2 ms saved
by pinning, 1.3 ms by TF32).

  python3 examples/pathologies/large_pageable.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
p.add_argument("--mb", type=int, default=256, help="MiB copied from pageable memory per step")
p.add_argument("--matmuls", type=int, default=4)
args = p.parse_args()
torch = patho.steploop.setup(args)
torch.set_float32_matmul_precision("highest")

dev = torch.device(args.device)
host = torch.randn(max(args.mb, 64) * 2**20 // 4)
if args.fixed:
    host = host.pin_memory()
w = torch.randn(4096, 4096, device=dev) / 64


def step(i, ann):
    with ann.range("copy"):
        d = host.to(dev, non_blocking=True)
    with ann.range("forward"):
        a = d[:4096 * 4096].view(4096, 4096)
        for _ in range(args.matmuls):
            a = torch.relu(a @ w)
        loss = a.mean()
    return loss


patho.run(args, "large_pageable", step)
