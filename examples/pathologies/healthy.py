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
p.add_argument("--batch", type=int, default=8192)
p.add_argument("--width", type=int, default=8192)
p.add_argument("--depth", type=int, default=6)
args = p.parse_args()
torch = patho.steploop.setup(args)

dev = torch.device(args.device)
model = patho.mlp(torch, args.width, args.depth, dtype=torch.bfloat16, device=dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(args.batch, args.width, device=dev, dtype=torch.bfloat16)
y = torch.randint(0, 10, (args.batch,), device=dev)


def step(i, ann):
    return patho.train_step(torch, model, opt, x, y, ann)


patho.run(args, "healthy", step)
