"""A Python job for test_stacks_python.py: launches through the fake
libcudart with ctypes (ctypes releases the GIL around the call, as PyTorch's
op bindings do) from known lines.  The lines that launch carry a LAUNCH-*
marker the test looks up; argv[1] is the fake libcudart, argv[2] a copy of
it under another name, loaded only after the other launches (its code must
get module records then: the shim sees the dlopen)."""
import ctypes
import sys
import threading

import fakecudart

lib = fakecudart.load(sys.argv[1])
lib.fakeLaunchFromNativeThread.argtypes = [ctypes.c_void_p, ctypes.c_int]
dim3 = fakecudart.dim3
K_MODEL, K_THREAD, K_NATIVE = (fakecudart.kernel(lib, n) for n in (b"k_model", b"k_thread", b"k_native"))


def launch(k):
    lib.cudaLaunchKernel(k, dim3(1, 1, 1), dim3(32, 1, 1), None, 0, None)  # LAUNCH-CALL


class Model:
    def forward(self):
        launch(K_MODEL)  # LAUNCH-FORWARD


def train_step(m):
    m.forward()  # LAUNCH-STEP


def thread_body():
    launch(K_THREAD)  # LAUNCH-THREAD


train_step(Model())  # LAUNCH-MODULE
t = threading.Thread(target=thread_body, name="py-launcher")
t.start()
t.join()
train_step(Model())  # LAUNCH-BEFORE-NATIVE
lib.fakeLaunchFromNativeThread(K_NATIVE, 1)
late = ctypes.CDLL(sys.argv[2])
late.cudaLaunchKernel.argtypes = lib.cudaLaunchKernel.argtypes
late.cudaLaunchKernel(K_MODEL, dim3(1, 1, 1), dim3(32, 1, 1), None, 0, None)  # LAUNCH-LATE
print("job done")
