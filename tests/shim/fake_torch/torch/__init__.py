"""A fake torch for tests/shim/test_layers_py.py: only what gpuprof's
sitecustomize (shim/python/sitecustomize.py) touches."""
GRAD = [True]


def is_grad_enabled():
    return GRAD[0]


class Tensor:
    def __init__(self, grad_fn=None):
        self.grad_fn = grad_fn


from . import _C, compiler, nn  # noqa: E402,F401
