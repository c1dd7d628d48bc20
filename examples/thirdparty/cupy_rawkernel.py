#!/usr/bin/env python3
"""cupy_rawkernel.py — a CuPy RawKernel (saxpy, compiled by NVRTC at first
use and cached by CuPy) launched N times on 1M floats, memory from CuPy's
pool.  Launches [N/3, 2N/3) run between cudaProfilerStart/Stop.  Prints one
line: RESULT launches=N sum=S (S = sum of y in float64; deterministic: each
element's float32 additions happen in the same order in every run).

  python3 examples/thirdparty/cupy_rawkernel.py [--launches 2000]
"""
import argparse

import cupy as cp

SRC = r"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockDim.x * blockIdx.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
"""


def profiler(start):
    """cudaProfilerStart/Stop: cupy.cuda.profiler, else the runtime module's wrappers."""
    try:
        import cupy.cuda.profiler as prof
        fn = prof.start if start else prof.stop
    except (ImportError, AttributeError):
        fn = getattr(cp.cuda.runtime, "profilerStart" if start else "profilerStop", None)
    if fn is not None:
        fn()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=2000)
    a = ap.parse_args()
    n = 1 << 20
    saxpy = cp.RawKernel(SRC, "saxpy")
    x = cp.arange(n, dtype=cp.float32) / cp.float32(n)
    y = cp.zeros(n, dtype=cp.float32)
    lo, hi = a.launches // 3, 2 * a.launches // 3
    blocks = ((n + 255) // 256,)
    for i in range(a.launches):
        if i == lo:
            profiler(True)
        saxpy(blocks, (256,), (cp.float32(0.5), x, y, cp.int32(n)))
        if i == hi - 1:
            profiler(False)
    cp.cuda.Device().synchronize()
    print("RESULT launches=%d sum=%.6f" % (a.launches, float(y.astype(cp.float64).sum())))


if __name__ == "__main__":
    main()
