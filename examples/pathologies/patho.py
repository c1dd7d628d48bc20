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


def mlp_args(p, batch, width, depth):
    """--batch, --width, --depth of an MLP job."""
    p.add_argument("--batch", type=int, default=batch)
    p.add_argument("--width", type=int, default=width)
    p.add_argument("--depth", type=int, default=depth)


def mlp_job(torch, args, dtype=None, lr=1e-3):
    """An MLP job's device, model (mlp_args' sizes), SGD optimizer and one
    batch (x, y) made on the GPU: (dev, model, opt, x, y)."""
    dev = torch.device(args.device)
    model = mlp(torch, args.width, args.depth, dtype=dtype, device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    x = torch.randn(args.batch, args.width, device=dev, dtype=dtype)
    y = torch.randint(0, 10, (args.batch,), device=dev)
    return dev, model, opt, x, y


def train_step(torch, model, opt, x, y, ann, amp=None):
    """One SGD step with the forward/backward/optimizer ranges; the forward
    under autocast to `amp` (a dtype) when given.  Returns the loss."""
    F = torch.nn.functional
    with ann.range("forward"):
        if amp is not None:
            with torch.autocast("cuda", dtype=amp):
                out = model(x)
        else:
            out = model(x)
        loss = F.cross_entropy(out.float(), y)
    with ann.range("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with ann.range("optimizer"):
        opt.step()
    return loss
