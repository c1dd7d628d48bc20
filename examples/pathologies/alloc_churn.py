#!/usr/bin/env python3
"""alloc_churn.py — allocation churn: torch.cuda.empty_cache() at the end of
every step hands PyTorch's cached blocks back to CUDA (cudaFree, which waits
for the whole device), so the next step allocates them again (cudaMalloc).
A bf16 MLP (--depth layers of --width features, batch --batch) on data
already on the GPU, sized so that the GPU is busy most of the step and
every saved activation is a large block: 16 x (65536 x 1024) bf16 = 16
blocks of 128 MiB re-allocated each step.  The host issues a step in well
under the GPU's time, so without the churn it runs ahead and the step is
the GPU's time; with it the first cudaFree waits for the GPU to drain, the
GPU then idles while the blocks are freed and the next step's first work is
issued, and the re-allocations delay launches the host no longer has a lead
to hide.  (The earlier 4 x 2048 MLP at batch 2048 had a 2 ms host-bound
step in which the churn was 0.45 ms: below the run-to-run noise of the
host's speed.)

Fixed (--fixed): no empty_cache(): the caching allocator reuses its blocks.

advise: alloc-churn.

  python3 examples/pathologies/alloc_churn.py [--fixed] [--steps 100]
"""
import patho

p = patho.parser(__doc__, steps=100)
patho.mlp_args(p, batch=65536, width=1024, depth=16)
args = p.parse_args()
torch = patho.steploop.setup(args)

dev, model, opt, x, y = patho.mlp_job(torch, args, dtype=torch.bfloat16)


def step(i, ann):
    loss = patho.train_step(torch, model, opt, x, y, ann)
    if not args.fixed:
        torch.cuda.empty_cache()
    return loss


patho.run(args, "alloc_churn", step)
