"""patho.py — what the pathology jobs (examples/pathologies/README.md) share.

Each job has one known cause of lost step time and a fixed variant
(--fixed); both run their steps through ../steploop.py (NVTX "step <i>"
ranges with forward/backward/optimizer inside, the timing, the RESULT line),
and add `job=NAME variant=bad|fixed` to the RESULT line:

    RESULT steps=N step_ms_median=X step_ms_mean=Y total_s=Z loss=L job=NAME variant=bad
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import steploop  # noqa: E402

# exit status of a job that cannot run here (a module it needs is missing)
EXIT_SKIP = 77


def parser(doc, steps=30, warmup=5):
    p = argparse.ArgumentParser(description=doc.strip().split("\n")[0])
    steploop.add_common_args(p, steps=steps, warmup=warmup)
    p.add_argument("--fixed", action="store_true", help="run the fixed variant")
    return p


def busy_us(us):
    """`us` microseconds of CPU work on this thread (a spin: it stands for
    decoding, augmentation or any host computation)."""
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


def run(args, name, step_fn):
    """steploop.run_steps with the job's name and variant on the RESULT line."""
    variant = "fixed" if args.fixed else "bad"
    return steploop.run_steps(args, step_fn, extra_result=f"job={name} variant={variant}")


def mlp(torch, width, depth, out=10, inp=None, dtype=None, device="cuda"):
    """depth x (Linear + ReLU) of `width` features (the first from `inp`
    features, default width), then Linear(width, out)."""
    nn = torch.nn
    layers = []
    for k in range(depth):
        layers += [nn.Linear(inp if k == 0 and inp else width, width), nn.ReLU()]
    layers.append(nn.Linear(width, out))
    m = nn.Sequential(*layers).to(device)
    return m.to(dtype) if dtype is not None else m


def train_step(torch, model, opt, x, y, ann):
    """One SGD step with the forward/backward/optimizer ranges; returns the loss."""
    F = torch.nn.functional
    with ann.range("forward"):
        loss = F.cross_entropy(model(x).float(), y)
    with ann.range("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with ann.range("optimizer"):
        opt.step()
    return loss
