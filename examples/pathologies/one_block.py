#!/usr/bin/env python3
"""one_block.py — under-parallelised kernels: a Triton kernel computing
y = 2 x + 1 over a --n element vector runs as ONE block looping over the
whole vector (grid (1,)), --repeat times per step: one SM works, the others
idle, yet the GPU counts as busy (what nvidia-smi calls utilisation).

Fixed (--fixed): the same kernel over a grid of n / BLOCK blocks.

advise: under-parallel.  Needs Triton (it comes with PyTorch's CUDA wheels);
without it the job prints one line on stderr and exits 77 (skipped).

  python3 examples/pathologies/one_block.py [--fixed] [--steps 30]
"""
import sys

import patho

p = patho.parser(__doc__)
p.add_argument("--n", type=int, default=8 * 2**20)
p.add_argument("--repeat", type=int, default=4)
args = p.parse_args()
torch = patho.steploop.setup(args)
try:
    import triton
    import triton.language as tl
except ImportError as e:
    print(f"one_block: skipped: {e}", file=sys.stderr)
    sys.exit(patho.EXIT_SKIP)

BLOCK = 1024


@triton.jit
def axpb(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # program p handles blocks p, p + P, p + 2P, ... (P programs in the grid)
    pid = tl.program_id(0)
    stride = tl.num_programs(0) * BLOCK
    for start in range(pid * BLOCK, n, stride):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        v = tl.load(x_ptr + offs, mask=m)
        tl.store(y_ptr + offs, v * 2.0 + 1.0, mask=m)


dev = torch.device(args.device)
x = torch.randn(args.n, device=dev)
y = torch.empty_like(x)
grid = (triton.cdiv(args.n, BLOCK),) if args.fixed else (1,)


def step(i, ann):
    with ann.range("forward"):
        for _ in range(args.repeat):
            axpb[grid](x, y, args.n, BLOCK=BLOCK)
        return y[:1024].sum()


patho.run(args, "one_block", step)
