#!/usr/bin/env python3
"""jax_flax.py — a jitted JAX/Flax (linen) MLP train step with optax Adam on a
fixed random batch.  XLA's GEMM autotuning is off: it would time candidate
kernels while compiling, and the pick could differ from run to run (so could
the result's last bits).  No preallocation of GPU memory.  JAX has no
cudaProfilerStart of its own; steps [steps/3, 2*steps/3) run between the
driver's cuProfilerStart/Stop called through ctypes with JAX's (primary)
context pushed, as users of `nsys -c cudaProfilerApi` do.  Prints one line:
RESULT steps=N loss=L (the last step's loss).

  python3 examples/thirdparty/jax_flax.py [--steps 50]
"""
import argparse
import ctypes
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_autotune_level=0").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import linen as nn  # noqa: E402


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(256)(x))
        x = nn.relu(nn.Dense(256)(x))
        return nn.Dense(10)(x)


def cu_profiler(start):
    """cuProfilerStart/Stop in device 0's primary context (JAX's); errors ignored."""
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    if cu.cuDeviceGet(ctypes.byref(dev), 0) != 0:
        return
    if cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) != 0:
        return
    cu.cuCtxPushCurrent_v2.argtypes = [ctypes.c_void_p]
    if cu.cuCtxPushCurrent_v2(ctx) == 0:
        (cu.cuProfilerStart if start else cu.cuProfilerStop)()
        cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
    cu.cuDevicePrimaryCtxRelease_v2(dev)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    a = ap.parse_args()
    if jax.default_backend() != "gpu":
        raise SystemExit("jax_flax.py: JAX has no GPU backend here (%s)" % jax.default_backend())
    kx, ky, kp = jax.random.split(jax.random.PRNGKey(0), 3)
    x = jax.random.normal(kx, (512, 64))
    y = jax.random.randint(ky, (512,), 0, 10)
    model = MLP()
    params = model.init(kp, x)
    tx = optax.adam(1e-3)
    opt_state = tx.init(params)

    @jax.jit
    def step(params, opt_state, x, y):
        def loss_fn(p):
            return optax.softmax_cross_entropy_with_integer_labels(model.apply(p, x), y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    lo, hi = a.steps // 3, 2 * a.steps // 3
    for i in range(a.steps):
        if i == lo:
            jax.block_until_ready(params)
            cu_profiler(True)
        params, opt_state, loss = step(params, opt_state, x, y)
        if i == hi - 1:
            jax.block_until_ready(loss)
            cu_profiler(False)
    print("RESULT steps=%d loss=%.6f" % (a.steps, float(loss)))


if __name__ == "__main__":
    main()
