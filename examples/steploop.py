"""steploop.py — the timed training loop shared by the example workloads.

Every example (train_mnist, resnet_step, transformer_step, train_ddp) runs
its steps through run_steps() so they all:
  * mark each step with an NVTX range "step <i>" (i counts from 0 across
    warm-up and timed steps, so a trace and a torch.profiler run of the same
    command line have the same step numbers);
  * under --profile torch, mark the same ranges with record_function, so the
    fidelity cross-check can cut the Kineto trace into the same steps;
  * time the timed steps two ways without a host sync per step (a per-step
    sync would change the very overlap we want to measure):
      - step_ms_mean:   wall time of the whole timed loop, one sync at the end,
                        divided by the number of steps;
      - step_ms_median: median of per-step times taken from CUDA events
                        recorded on the current stream at each step boundary;
  * print exactly one line to stdout at the end:
      RESULT steps=N step_ms_median=X step_ms_mean=Y total_s=Z loss=L
    Everything else goes to stderr.
"""
import argparse
import contextlib
import os
import statistics
import sys
import time


def add_common_args(p: argparse.ArgumentParser, steps: int, warmup: int):
    p.add_argument("--steps", type=int, default=steps, help="timed steps")
    p.add_argument("--warmup", type=int, default=warmup, help="untimed steps first")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-nvtx", dest="nvtx", action="store_false",
                   help="no NVTX ranges at all")
    p.add_argument("--no-nested-nvtx", dest="nested", action="store_false",
                   help="only the per-step range, no forward/backward/optimizer")
    p.add_argument("--deterministic", action="store_true",
                   help="cudnn.deterministic + deterministic algorithms")
    p.add_argument("--profile", choices=["none", "torch"], default="none",
                   help="torch: wrap all steps in torch.profiler (CPU+CUDA)")
    p.add_argument("--profile-out", default="torch_trace.json",
                   help="chrome trace path for --profile torch")
    p.add_argument("--log-interval", type=int, default=0,
                   help="print 'progress step=N' to stderr every N steps (0: never)")
    p.add_argument("--device", default="cuda")
    return p


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def setup(args):
    """Seeds and determinism knobs; returns the torch module."""
    import torch
    torch.manual_seed(args.seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(args.seed)
    if args.deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        # cuBLAS needs this for deterministic GEMMs; harmless otherwise.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
    return torch


class Annotator:
    """Nested NVTX ranges (+ record_function under torch.profiler)."""

    def __init__(self, args, profiling: bool):
        import torch
        self.torch = torch
        self.nvtx = args.nvtx
        self.nested = args.nested
        self.profiling = profiling

    @contextlib.contextmanager
    def range(self, name: str, nested: bool = True):
        """nested=True marks an inner range (forward/backward/optimizer)."""
        if nested and not self.nested:
            yield
            return
        rf = None
        if self.profiling:
            rf = self.torch.profiler.record_function(name)
            rf.__enter__()
        if self.nvtx:
            self.torch.cuda.nvtx.range_push(name)
        try:
            yield
        finally:
            if self.nvtx:
                self.torch.cuda.nvtx.range_pop()
            if rf is not None:
                rf.__exit__(None, None, None)


def _profiler(args):
    import torch
    if args.profile != "torch":
        return contextlib.nullcontext(None)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    return torch.profiler.profile(activities=acts)


def run_steps(args, step_fn, ann: Annotator = None, extra_result: str = "",
              print_result: bool = True):
    """Runs args.warmup + args.steps calls of step_fn(i, ann) -> loss tensor.

    Returns a dict with the measurements; prints the RESULT line when
    print_result (DDP: rank 0 only)."""
    import torch
    dev = torch.device(args.device)
    use_cuda = dev.type == "cuda"
    total = args.warmup + args.steps
    loss = None
    events = []
    prof_cm = _profiler(args)
    with prof_cm as prof:
        if ann is None:
            ann = Annotator(args, prof is not None)
        else:
            ann.profiling = prof is not None
        t_loop = None
        for i in range(total):
            if i == args.warmup:
                if use_cuda:
                    torch.cuda.synchronize()
                t_loop = time.perf_counter()
                log(f"TIMING loop_start_epoch={time.time():.6f}")
            if use_cuda and i >= args.warmup:
                ev = torch.cuda.Event(enable_timing=True)
                ev.record()
                events.append(ev)
            with ann.range(f"step {i}", nested=False):
                loss = step_fn(i, ann)
            if args.log_interval and (i + 1) % args.log_interval == 0:
                log(f"progress step={i + 1}")
        if use_cuda:
            if args.steps > 0:
                ev = torch.cuda.Event(enable_timing=True)
                ev.record()
                events.append(ev)
            torch.cuda.synchronize()
        t_end = time.perf_counter()
        log(f"TIMING loop_end_epoch={time.time():.6f}")
        if t_loop is None:  # no timed steps
            t_loop = t_end
    if prof is not None:
        t0 = time.perf_counter()
        prof.export_chrome_trace(args.profile_out)
        sz = os.path.getsize(args.profile_out)
        log(f"torch.profiler: wrote {args.profile_out} ({sz} bytes, "
            f"export {time.perf_counter() - t0:.2f} s)")
    per_step = [events[k].elapsed_time(events[k + 1]) for k in range(len(events) - 1)]
    total_s = t_end - t_loop
    res = {
        "steps": args.steps,
        "step_ms_median": statistics.median(per_step) if per_step else float("nan"),
        "step_ms_mean": (total_s * 1e3 / args.steps) if args.steps else float("nan"),
        "total_s": total_s,
        "loss": float(loss.item()) if loss is not None else float("nan"),
    }
    if print_result:
        line = (f"RESULT steps={res['steps']} step_ms_median={res['step_ms_median']:.4f} "
                f"step_ms_mean={res['step_ms_mean']:.4f} total_s={res['total_s']:.4f} "
                f"loss={res['loss']:.6f}")
        if extra_result:
            line += " " + extra_result
        print(line, flush=True)
    return res
