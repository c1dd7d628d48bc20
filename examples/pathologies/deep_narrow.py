#!/usr/bin/env python3
"""deep_narrow.py — launch-bound: a deep, narrow MLP (--depth layers of
--width features) trained at batch --batch.  Each step launches hundreds of
tiny kernels, each shorter than its launch call, so the GPU waits for Python
and the launch calls most of the step.  TF32 is allowed, as a job tuned for
speed would.

Fixed (--fixed): the whole training step (forward, backward, SGD step) is
captured once in a CUDA graph (torch.cuda.graph, static input tensors) and
replayed each step.

advise: launch-bound.

  python3 examples/pathologies/deep_narrow.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
patho.mlp_args(p, batch=8, width=256, depth=48)
args = p.parse_args()
torch = patho.steploop.setup(args)
F = torch.nn.functional
torch.backends.cuda.matmul.allow_tf32 = True

dev = torch.device(args.device)
model = patho.mlp(torch, args.width, args.depth, device=dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
POOL = 16
xs = torch.randn(POOL, args.batch, args.width, device=dev)
ys = torch.randint(0, 10, (POOL, args.batch), device=dev)

if args.fixed:
    # PyTorch's whole-network capture (docs: "CUDA Graphs"): warm up on a
    # side stream, then capture one step; grads set to None before the
    # capture are allocated from the graph's pool and overwritten by replays
    static_x, static_y = xs[0].clone(), ys[0].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = F.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        opt.step()


def step(i, ann):
    x, y = xs[i % POOL], ys[i % POOL]
    if args.fixed:
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        return static_loss
    return patho.train_step(torch, model, opt, x, y, ann)


patho.run(args, "deep_narrow", step)
