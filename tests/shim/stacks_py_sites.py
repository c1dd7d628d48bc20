"""A Python job for test_stacks_python.py's rate-limit case: one kernel
launched N times from each of two Python lines, alternately.  With
GPUPROF_STACKS=1 every launch must still carry the stack of its own line (the
call-site key includes the innermost Python frames).  argv: libcudart N."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2])


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


lib.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_void_p]
lib.fakeRegisterKernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_k = (ctypes.c_char * 8)()
K = ctypes.addressof(_k)
lib.fakeRegisterKernel(K, b"k_same")


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
