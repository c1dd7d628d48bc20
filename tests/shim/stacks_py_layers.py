"""A Python job for test_stacks_layers.py: launches through the fake
libcudart with ctypes from `forward` methods of a small class hierarchy, as
torch.nn.Module layers do, each line marked LAYER-*.  The shim must record
the class of `self` (not the class the method is defined in) for forward
frames only.  argv[1]: the fake libcudart."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


lib.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_void_p]
lib.fakeRegisterKernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_k = (ctypes.c_char * 8)()
K = ctypes.addressof(_k)
lib.fakeRegisterKernel(K, b"k_layer")


def launch():
    lib.cudaLaunchKernel(K, dim3(1, 1, 1), dim3(32, 1, 1), None, 0, None)  # LAYER-LAUNCH


class Module:
    def __call__(self, *a):
        return self.forward(*a)  # LAYER-CALL


class Linear(Module):
    def forward(self):
        launch()  # LAYER-LINEAR


class MyLinear(Linear):  # inherits Linear.forward: self is a MyLinear
    pass


class Captured(Module):
    def forward(self):
        f = lambda: self  # noqa: E731 -- self becomes a cell variable
        launch()  # LAYER-CAPTURED
        return f


class Block(Module):
    def __init__(self):
        self.a, self.b, self.c = Linear(), MyLinear(), Captured()

    def forward(self):
        self.a()  # LAYER-BLOCK-A
        self.b()  # LAYER-BLOCK-B
        self.c()  # LAYER-BLOCK-C


class NotSelf:
    def forward(this):  # first argument not named self: no class
        launch()  # LAYER-THIS

    @staticmethod
    def helper():
        launch()  # LAYER-STATIC


def forward():  # a function named forward, no arguments: no class
    launch()  # LAYER-FUNC


Block()()  # LAYER-MODULE
NotSelf().forward()  # LAYER-NOTSELF
NotSelf.helper()
forward()
print("layers done")
