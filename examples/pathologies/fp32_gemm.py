#!/usr/bin/env python3
"""fp32_gemm.py — FP32 matrix work without tensor cores: an MLP (--depth
layers of --width features) trained in float32 at batch --batch with
PyTorch's default matmul precision ("highest": no TF32), so cuBLAS runs
FP32 (SIMT) GEMM kernels and the tensor cores idle.

Fixed (--fixed): torch.set_float32_matmul_precision("high"): the same
float32 model on TF32 tensor cores.

advise: fp32-matmul.

  python3 examples/pathologies/fp32_gemm.py [--fixed] [--steps 30]
"""
import patho

p = patho.parser(__doc__)
patho.mlp_args(p, batch=4096, width=4096, depth=4)
args = p.parse_args()
torch = patho.steploop.setup(args)
torch.set_float32_matmul_precision("high" if args.fixed else "highest")

dev, model, opt, x, y = patho.mlp_job(torch, args)


def step(i, ann):
    return patho.train_step(torch, model, opt, x, y, ann)


patho.run(args, "fp32_gemm", step)
