#!/usr/bin/env python3
"""layers_nodes_check.py — the Python side of `gpuprof run --layers` on real
torch, no tracer: which module each autograd node is claimed by
(shim/python/sitecustomize.py), against where PyTorch says the node was made.

  python3 tests/gpu/layers_nodes_check.py JOB [--steps N]        (JOB: gpt2 or resnet18)

Run twice: once plain (the reference), once with the module active
(PYTHONPATH=build/lib/gpuprof-python GPUPROF_LAYERS=1); each prints
LOSSES (every step's loss, for the two runs to be compared: the hooks only
mark, so they must be equal) and STEP_MS (the median step time: the hooks'
cost on the CPU side, without the tracer).  With the module active it then
runs one more step under torch.autograd.set_detect_anomaly(True), which
stores in each node's metadata the Python stack that made it (traceback_),
and checks every node of that step's graph: the truth is the chain of
classes of the `forward` frames in that stack, outermost first (a frame's
function is mapped to the classes of the model's modules whose forward it
is; a function that several classes share is left out), as the shim's
stacks give a forward launch its layer path; the claim is the path the
module wrote into the node's metadata (none: made outside every module, as
the loss outside the model).  NODES total=... agree=... differ=...
unclaimed=... (with examples); the backward of that step must push one
range per claimed node that ran (RANGES pushed=... pops=...).  A check of
the module alone: the tracer's side (the ranges recorded, the join) is
layers_check.py's.  Run by `scripts/gpu-session.sh layers-bwd`.
"""
import argparse
import inspect
import os
import re
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

KEY = "gpuprof_layer"


def build(job):
    torch.manual_seed(0)
    if job == "gpt2":
        for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
            fn = getattr(torch.backends.cuda, name, None)
            if fn:
                fn(False)
        from transformers import GPT2Config, GPT2LMHeadModel
        cfg = GPT2Config(vocab_size=1000, n_positions=64, n_embd=128, n_layer=4, n_head=4, resid_pdrop=0.0,
                         embd_pdrop=0.0, attn_pdrop=0.0)
        model = GPT2LMHeadModel(cfg).cuda().train()
        ids = torch.randint(0, 1000, (16, 64), generator=torch.Generator().manual_seed(0)).cuda()

        def loss_fn():
            return model(input_ids=ids, labels=ids).loss
    else:
        import timm
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        model = timm.create_model("resnet18", pretrained=False, num_classes=10).cuda().train()
        g = torch.Generator().manual_seed(0)
        x = torch.randn(32, 3, 64, 64, generator=g).cuda()
        y = torch.randint(0, 10, (32,), generator=g).cuda()

        def loss_fn():
            return F.cross_entropy(model(x), y)
    return model, loss_fn


def forward_classes(model):
    """(file, first line, last line) of each forward function -> the class
    names of the model's modules that run it (None: several)."""
    by_fn = {}
    for m in model.modules():
        fn = getattr(type(m), "forward", None)
        # transformers 5 wraps forwards in decorators: the frame is the
        # wrapped function's (inspect.getsourcelines unwraps too)
        fn = inspect.unwrap(fn) if fn is not None else None
        code = getattr(fn, "__code__", None)
        if code is None:
            continue
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            continue
        k = (os.path.realpath(code.co_filename), start, start + len(lines) - 1)
        by_fn.setdefault(k, set()).add(type(m).__name__)
    return {k: (next(iter(v)) if len(v) == 1 else None) for k, v in by_fn.items()}


FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\w+)')


def truth(tb, fwd):
    """The forward frames' classes of a node's traceback, outermost first;
    None when a forward frame's class is ambiguous."""
    path = []
    for entry in tb if isinstance(tb, (list, tuple)) else [tb]:
        for f, line, func in FRAME.findall(str(entry)):
            if func != "forward":
                continue
            f, line = os.path.realpath(f), int(line)
            hit = [c for (ff, lo, hi), c in fwd.items() if ff == f and lo <= line <= hi]
            if not hit:
                continue
            if hit[0] is None:
                return None
            path.append(hit[0])
    return " > ".join(path)


def graph_nodes(root):
    seen, todo, out = set(), [root], []
    while todo:
        n = todo.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        todo.extend(f for f, _ in n.next_functions)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("job", choices=("gpt2", "resnet18"))
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    model, loss_fn = build(a.job)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    marker = None
    from torch.nn.modules import module as M
    for h in list(M._global_forward_hooks.values()):
        if type(getattr(h, "__self__", None)).__name__ == "_Marker":
            marker = h.__self__
    log = []
    if marker is not None:  # count the ranges (before the first forward makes its prehooks)
        push, pop = marker.push, marker.pop
        marker.push = lambda msg: (log.append(msg), push(msg))
        marker.pop = lambda: (log.append(None), pop())
    losses, times = [], []
    for i in range(a.steps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        loss = loss_fn()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
        losses.append(float(loss))
    print("MARKER", marker is not None and marker.on)
    print("LOSSES", " ".join("%.9g" % v for v in losses))
    print("STEP_MS %.3f" % (1e3 * statistics.median(times[len(times) // 2:])))
    if marker is None:
        return 0
    fwd = forward_classes(model)
    with torch.autograd.set_detect_anomaly(True):
        loss = loss_fn()
        nodes = graph_nodes(loss.grad_fn)
        total = agree = differ = unclaimed = amb = 0
        ex_d, ex_u = [], []
        claimed = 0
        for n in nodes:
            if type(n).__name__ == "AccumulateGrad":
                continue
            md = n.metadata
            want = truth(md.get("traceback_", ""), fwd)
            got = md.get(KEY)
            claimed += got is not None
            if want is None:
                amb += 1
                continue
            total += 1
            if (got or "") == want:
                agree += 1  # the same layer, or (both none) a node made outside every module
            elif got is None:
                unclaimed += 1
                if len(ex_u) < 6:
                    ex_u.append("%s want=%r" % (n.name(), want))
            else:
                differ += 1
                if len(ex_d) < 8:
                    ex_d.append("%s got=%r want=%r" % (n.name(), got, want))
        log.clear()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.cuda.synchronize()
    pushes = sum(1 for e in log if e is not None)
    print("NODES total=%d agree=%d differ=%d unclaimed=%d ambiguous=%d" % (total, agree, differ, unclaimed, amb))
    for e in ex_d:
        print("  differ: " + e)
    for e in ex_u:
        print("  unclaimed: " + e)
    print("RANGES claimed=%d pushed=%d pops=%d" % (claimed, pushes, len(log) - pushes))
    print("MARKER_AFTER", marker.on)
    return 0


if __name__ == "__main__":
    sys.exit(main())
