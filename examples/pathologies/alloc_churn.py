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
p.add_argument("--batch", type=int, default=2048)
p.add_argument("--width", type=int, default=2048)
p.add_argument("--depth", type=int, default=4)
args = p.parse_args()
torch = patho.steploop.setup(args)

dev = torch.device(args.device)
model = patho.mlp(torch, args.width, args.depth, dtype=torch.bfloat16, device=dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(args.batch, args.width, device=dev, dtype=torch.bfloat16)
y = torch.randint(0, 10, (args.batch,), device=dev)


def step(i, ann):
    loss = patho.train_step(torch, model, opt, x, y, ann)
    if not args.fixed:
        torch.cuda.empty_cache()
    return loss


patho.run(args, "alloc_churn", step)
