"""bench/shim/stacks_py.py — ns per cudaLaunchKernel from a Python stack of
DEPTH frames on the fake CUDA stack (ctypes, GIL released like PyTorch's
bindings).  bench/shim/stacks.py runs it with GPUPROF_STACKS off/1/all.
  python3 stacks_py.py LIBCUDART N DEPTH      -> "ns_per_launch <float>" """
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
n, depth = int(sys.argv[2]), int(sys.argv[3])


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


lib.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_void_p]
buf = (ctypes.c_char * 8)()
K = ctypes.addressof(buf)
lib.fakeRegisterKernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.fakeRegisterKernel(K, b"k_bench")
g, b = dim3(1, 1, 1), dim3(32, 1, 1)
launch = lib.cudaLaunchKernel


def loop(count):
    for _ in range(count):
        launch(K, g, b, None, 0, None)


def nest(d, count):
    if d <= 1:
        loop(count)
        return 0.0
    return nest(d - 1, count)


nest(depth, 2000)  # warm-up
t0 = time.perf_counter_ns()
nest(depth, n)
t1 = time.perf_counter_ns()
print("ns_per_launch %.1f" % ((t1 - t0) / n))
