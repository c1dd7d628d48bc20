#!/usr/bin/env python3
"""mpi_then_cuda.py — the smallest job that does what Lightning does to a
process before CUDA: `from mpi4py import MPI` (OpenMPI's singleton start,
which forks and execs `orted`), then a few CUDA kernels.  --mpi-after does
the import after CUDA is up.  RESULT steps=N sum=S.
"""
import argparse

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=50)
ap.add_argument("--mpi-after", action="store_true")
ap.add_argument("--no-mpi", action="store_true")
a = ap.parse_args()
if not a.no_mpi and not a.mpi_after:
    from mpi4py import MPI  # noqa: F401
import torch  # noqa: E402

x = torch.ones(1024, 1024, device="cuda")
if not a.no_mpi and a.mpi_after:
    from mpi4py import MPI  # noqa: F401,E402
s = 0.0
for i in range(a.steps):
    x = (x @ x) / 1024.0
    s += float(x[0, 0])
print("RESULT steps=%d sum=%.3f" % (a.steps, s))
