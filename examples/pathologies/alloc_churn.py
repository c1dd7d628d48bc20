#!/usr/bin/env python3
"""alloc_churn.py — allocation churn: torch.cuda.empty_cache() at the end of
every step hands PyTorch's cached blocks back to CUDA (cudaFree, which waits
for the whole device), so the next step allocates them again (cudaMalloc).
A bf16 MLP (--depth layers of --width features, batch --batch) on data
already on the GPU.

Fixed (--fixed): no empty_cache(): the caching allocator reuses its blocks.

advise: alloc-churn.

  python3 examples/pathologies/alloc_churn.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
patho.mlp_args(p, batch=2048, width=2048, depth=4)
args = p.parse_args()
torch = patho.steploop.setup(args)

dev, model, opt, x, y = patho.mlp_job(torch, args, dtype=torch.bfloat16)


def step(i, ann):
    loss = patho.train_step(torch, model, opt, x, y, ann)
    if not args.fixed:
        torch.cuda.empty_cache()
    return loss


patho.run(args, "alloc_churn", step)
