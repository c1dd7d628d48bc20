#!/usr/bin/env python3
"""serial_copies.py — copies that a second stream would overlap with compute:
each step copies the next batch (--mb MiB, pinned, non_blocking=True) to the
GPU on the compute stream, so the copy and the step's bf16 matrix products
(--matmuls of 4096 x 4096) run one after the other.

Fixed (--fixed): the next batch is copied on a second stream while this
step's products run (double buffering with an event; the compute stream waits
for the copy only when it uses the batch), so the copies hide behind compute.

advise: `exposed-copies` (docs/ADVISE.md); the GPU check records the first
finding and the measured saving.

  python3 examples/pathologies/serial_copies.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
p.add_argument("--mb", type=int, default=256, help="MiB copied to the GPU per step (pinned)")
p.add_argument("--matmuls", type=int, default=24)
args = p.parse_args()
torch = patho.steploop.setup(args)

dev = torch.device(args.device)
n = args.mb * 2**20 // 2
hosts = [torch.randn(n, dtype=torch.bfloat16).pin_memory() for _ in range(2)]
bufs = [torch.empty(n, dtype=torch.bfloat16, device=dev) for _ in range(2)]
w = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) / 64
side = torch.cuda.Stream(device=dev)
ready = [torch.cuda.Event() for _ in range(2)]  # buffer k copied
done = [None, None]                              # buffer k's last reader queued


def copy_in(k, stream):
    with torch.cuda.stream(stream):
        if done[k] is not None:
            stream.wait_event(done[k])  # not over a batch still being read
        bufs[k].copy_(hosts[k], non_blocking=True)
        ready[k].record(stream)


if args.fixed:
    copy_in(0, side)


def step(i, ann):
    k = i % 2
    with ann.range("copy"):
        if args.fixed:
            torch.cuda.current_stream().wait_event(ready[k])
            copy_in(1 - k, side)  # the next step's batch, behind this step's compute
        else:
            copy_in(k, torch.cuda.current_stream())
    with ann.range("forward"):
        a = bufs[k][:4096 * 4096].view(4096, 4096)
        for _ in range(args.matmuls):
            a = torch.relu(a @ w)
        loss = a.float().mean()
    done[k] = torch.cuda.Event()
    done[k].record(torch.cuda.current_stream())
    return loss


patho.run(args, "serial_copies", step)
