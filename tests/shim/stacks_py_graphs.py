"""A Python job for test_stacks_graphs.py: layers (forward methods of a
small class hierarchy, as torch.nn.Module's) launch through the fake
libcudart with ctypes while a stream is being captured into a CUDA graph;
the graph is instantiated and launched from outside any forward, as
torch.compile's reduce-overhead replays.  Then one eager launch from a
layer.  argv[1]: the fake libcudart, argv[2]: how many replays."""
import ctypes
import sys

import fakecudart

lib = fakecudart.load(sys.argv[1])
REPLAYS = int(sys.argv[2])
dim3 = fakecudart.dim3
K_ATTN, K_MLP = fakecudart.kernel(lib, b"k_attn"), fakecudart.kernel(lib, b"k_mlp")
STREAM = ctypes.c_void_p(0x5151)


def launch(k, grid):
    rc = lib.cudaLaunchKernel(k, dim3(grid, 1, 1), dim3(32, 1, 1), None, 0, STREAM)  # GRAPH-LAUNCH
    assert rc == 0


class Module:
    def __call__(self, *a):
        return self.forward(*a)


class Attn(Module):
    def forward(self):
        launch(K_ATTN, 100)  # GRAPH-ATTN


class Mlp(Module):
    def forward(self):
        launch(K_MLP, 200)  # GRAPH-MLP
        launch(K_MLP, 300)


class Block(Module):
    def __init__(self):
        self.attn, self.mlp = Attn(), Mlp()

    def forward(self):
        self.attn()
        self.mlp()


class Model(Module):
    def __init__(self):
        self.block = Block()

    def forward(self):
        self.block()


model = Model()
assert lib.cudaStreamBeginCapture(STREAM, 0) == 0
model()  # GRAPH-CAPTURE
graph, exe = ctypes.c_void_p(), ctypes.c_void_p()
assert lib.cudaStreamEndCapture(STREAM, ctypes.byref(graph)) == 0
assert lib.cudaGraphInstantiate(ctypes.byref(exe), graph, 0) == 0


def replay():
    for _ in range(REPLAYS):
        assert lib.cudaGraphLaunch(exe, STREAM) == 0  # GRAPH-REPLAY


replay()
model.block.attn()  # GRAPH-EAGER
print("graphs done")
