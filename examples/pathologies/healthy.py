#!/usr/bin/env python3
"""healthy.py — a GPU-bound job that keeps its GPU fed: large bf16 matrix
products (an MLP of --depth layers of --width features at batch --batch) on
data already on the GPU, no synchronisation, allocation or copy in the
loop.  The host runs ahead; the GPU computes all the time.

--fixed is accepted and changes nothing (the job has nothing to fix).

advise: nothing above info.

  python3 examples/pathologies/healthy.py [--steps 30]
"""
import patho

p = patho.parser(__doc__)
patho.mlp_args(p, batch=8192, width=8192, depth=6)
args = p.parse_args()
torch = patho.steploop.setup(args)

dev, model, opt, x, y = patho.mlp_job(torch, args, dtype=torch.bfloat16, lr=1e-4)


def step(i, ann):
    return patho.train_step(torch, model, opt, x, y, ann)


patho.run(args, "healthy", step)
