#!/usr/bin/env python3
"""sync_gpu_bound.py — synchronisation in a step the GPU dominates (issue
#38): an MLP of --depth float32 layers of 4096 features at batch --batch,
matmul precision "highest" (FP32 SIMT kernels), with a .item() after every
layer.  Each .item() blocks the host until the GPU has run all the work
queued, so the sync calls' cost is most of the step, yet the GPU idles only
for the host's few launches after each: removing them saves little, while
TF32 saves much of the GPU time.

Fixed (--fixed): torch.set_float32_matmul_precision("high") (TF32), the
.item()s kept.  --no-item drops the .item()s instead (the sync's own fix, to
measure that its estimate is small too).

advise: fp32-matmul first; sync below it, with a small saving.

  python3 examples/pathologies/sync_gpu_bound.py [--fixed | --no-item] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
patho.mlp_args(p, batch=4096, width=4096, depth=4)
p.add_argument("--no-item", action="store_true", help="no .item() after each layer (the sync's fix)")
args = p.parse_args()
torch = patho.steploop.setup(args)
torch.set_float32_matmul_precision("high" if args.fixed else "highest")
dev, model, opt, x, y = patho.mlp_job(torch, args)
F = torch.nn.functional
seen = []


def step(i, ann):
    with ann.range("forward"):
        h = x
        for layer in model:
            h = layer(h)
            if not args.no_item and isinstance(layer, torch.nn.Linear):
                seen.append(h[0, 0].item())
        loss = F.cross_entropy(h, y)
    with ann.range("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with ann.range("optimizer"):
        opt.step()
    return loss


patho.run(args, "sync_gpu_bound", step)
