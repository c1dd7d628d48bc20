"""A Python job for test_stacks_layers.py: launches through the fake
libcudart with ctypes from `forward` methods of a small class hierarchy, as
torch.nn.Module layers do, each line marked LAYER-*.  The shim must record
the class of `self` (not the class the method is defined in) for forward
and _call_impl frames only.  argv[1]: the fake libcudart."""
import sys

import fakecudart

lib = fakecudart.load(sys.argv[1])
K = fakecudart.kernel(lib, b"k_layer")
dim3 = fakecudart.dim3


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


class TorchModule:
    """torch.nn.Module's call path: __call__ is _wrapped_call_impl, which
    calls _call_impl(self), which calls self.forward."""

    def _wrapped_call_impl(self, *a):
        return self._call_impl(*a)  # LAYER-WRAPPED

    def _call_impl(self, *a):
        return self.forward(*a)  # LAYER-CALLIMPL

    __call__ = _wrapped_call_impl


class Conv(TorchModule):
    def forward(self):
        launch()  # LAYER-CONV


class Compiled(TorchModule):
    """torch.compile's OptimizedModule: forward is an instance attribute
    (dynamo's _fn), so the module has no forward frame of its own."""

    def __init__(self, inner):
        def _fn(*a):
            launch()  # LAYER-FN
            return inner()  # LAYER-FN-INNER

        self.forward = _fn


Block()()  # LAYER-MODULE
NotSelf().forward()  # LAYER-NOTSELF
NotSelf.helper()
forward()
Compiled(Conv())()  # LAYER-COMPILED
print("layers done")
