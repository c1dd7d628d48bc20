"""A Python job for test_stacks_python.py's rate-limit case: one kernel
launched N times from each of two Python lines, alternately.  With
GPUPROF_STACKS=1 every launch must still carry the stack of its own line (the
call-site key includes the innermost Python frames).  argv: libcudart N."""
import sys

import fakecudart

lib = fakecudart.load(sys.argv[1])
n = int(sys.argv[2])
K = fakecudart.kernel(lib, b"k_same")
dim3 = fakecudart.dim3


def launch():
    lib.cudaLaunchKernel(K, dim3(1, 1, 1), dim3(32, 1, 1), None, 0, None)


def site_a():
    launch()  # SITE-A


def site_b():
    launch()  # SITE-B


for _ in range(n):
    site_a()
    site_b()
print("sites done")
