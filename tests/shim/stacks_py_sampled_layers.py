"""A Python job for test_stacks_layers.py: GPT-2's shape of LayerNorm calls
(two in each block, one final one in the model) launching through the fake
libcudart, STEPS times.  Every LayerNorm's innermost Python frames are the
same (layer_norm, LayerNorm.forward, Module._call_impl, Module.__call__):
under sampled stacks the final one must still be told apart from the blocks'
(its site is the whole Python stack, not the innermost frames).  Before
them, one launch from a function with a long name (no layer).
argv[1]: the fake libcudart, argv[2]: steps, argv[3]: threads (default 1),
each training its own model."""
import sys

import fakecudart

lib = fakecudart.load(sys.argv[1])
K = fakecudart.kernel(lib, b"k_layer_norm")
dim3 = fakecudart.dim3


def layer_norm():
    lib.cudaLaunchKernel(K, dim3(1, 1, 1), dim3(32, 1, 1), None, 0, None)


class Module:
    def __call__(self, *a):
        return self._call_impl(*a)

    def _call_impl(self, *a):
        return self.forward(*a)


class LayerNorm(Module):
    def forward(self):
        layer_norm()


class Block(Module):
    def __init__(self):
        self.ln_1, self.ln_2 = LayerNorm(), LayerNorm()

    def forward(self):
        self.ln_1()
        self.ln_2()


class Model(Module):
    def __init__(self):
        self.h = [Block(), Block()]
        self.ln_f = LayerNorm()

    def forward(self):
        for b in self.h:
            b()
        self.ln_f()


def launch_before_any_layer_from_a_long_name():
    # the first launch: its frames are read with checked reads, and a
    # function name longer than 16 bytes once turned layer classes off
    layer_norm()


def train(steps):
    m = Model()
    for _ in range(steps):
        m()


launch_before_any_layer_from_a_long_name()
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
if threads == 1:
    train(int(sys.argv[2]))
else:  # each thread its own model: stacks are walked on several threads at once
    import threading
    ts = [threading.Thread(target=train, args=(int(sys.argv[2]),)) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
print("sampled layers done")
