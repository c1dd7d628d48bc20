"""A Python job for test_stacks_graphs.py: layers (forward methods of a
small class hierarchy, as torch.nn.Module's) launch through the fake
libcudart with ctypes while a stream is being captured into a CUDA graph;
the graph is instantiated and launched from outside any forward, as
torch.compile's reduce-overhead replays.  Then one eager launch from a
layer.  argv[1]: the fake libcudart, argv[2]: how many replays."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
REPLAYS = int(sys.argv[2])


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


lib.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_void_p]
lib.fakeRegisterKernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.cudaStreamBeginCapture.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.cudaStreamEndCapture.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
lib.cudaGraphInstantiate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_ulonglong]
lib.cudaGraphLaunch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_k = (ctypes.c_char * 16)()
K_ATTN, K_MLP = ctypes.addressof(_k), ctypes.addressof(_k) + 8
lib.fakeRegisterKernel(K_ATTN, b"k_attn")
lib.fakeRegisterKernel(K_MLP, b"k_mlp")
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
