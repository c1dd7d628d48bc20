#!/usr/bin/env python3
"""item_in_step.py — synchronisation inside the step: the loss is read with
loss.item() every step (a device-to-host copy that waits for all the GPU
work queued), so the host cannot do its own work for the next step
(--host-ms of CPU time per step, standing for augmentation or bookkeeping)
while the GPU computes (a bf16 MLP of --depth layers of --width at batch
--batch, a few milliseconds of GPU time on data already on the GPU).

Fixed (--fixed): the loss stays on the GPU (accumulated with
loss.detach()) and is read once, after the loop.

advise: sync (the blocking copy of .item() and its stream synchronisation).

  python3 examples/pathologies/item_in_step.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
patho.mlp_args(p, batch=8192, width=4096, depth=4)
p.add_argument("--host-ms", type=float, default=2.0, help="the host's own CPU work per step")
args = p.parse_args()
torch = patho.steploop.setup(args)

dev, model, opt, x, y = patho.mlp_job(torch, args, dtype=torch.bfloat16)
seen = []                                  # the bad variant's per-step losses
running = torch.zeros((), device=dev)      # the fixed variant's


def step(i, ann):
    global running
    patho.busy_us(args.host_ms * 1000)
    loss = patho.train_step(torch, model, opt, x, y, ann)
    if args.fixed:
        running = running + loss.detach()
    else:
        seen.append(loss.item())
    return loss


patho.run(args, "item_in_step", step)
patho.steploop.log(f"mean loss {float(running) / max(1, args.warmup + args.steps) if args.fixed else sum(seen) / len(seen):.6f}")
