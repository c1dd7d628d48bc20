"""The fake libcudart (tests/fake) through ctypes, for the Python jobs of
the stacks tests (stacks_py_*.py): the library with its argument types set,
dim3, and kernel "functions" (distinct addresses are all the fake needs).
ctypes releases the GIL around each call, as PyTorch's op bindings do."""
import ctypes


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def load(path):
    lib = ctypes.CDLL(path)
    lib.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                     ctypes.c_void_p]
    lib.fakeRegisterKernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    # stream capture into a CUDA graph, instantiation and launch
    lib.cudaStreamBeginCapture.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.cudaStreamEndCapture.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.cudaGraphInstantiate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_ulonglong]
    lib.cudaGraphLaunch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


_keep = []


def kernel(lib, name):
    """A registered kernel "function" named name: its address."""
    k = (ctypes.c_char * 8)()
    _keep.append(k)
    lib.fakeRegisterKernel(ctypes.addressof(k), name)
    return ctypes.addressof(k)
