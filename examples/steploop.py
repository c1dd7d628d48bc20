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

--stall-at I --stall-s S: a host stall of S seconds (time.sleep) inside step
I's range, after its work (the flight recorder's anomaly rule, docs/FLIGHT.md).
--step-times FILE: at the end, one line "I T" per step, T = time.perf_counter()
(CLOCK_MONOTONIC seconds: the trace clock) at step I's start, so a tracer's
pause shows as a long start-to-start period the tracer itself did not measure.

--toggle-pairs N --toggle-steps K: the in-process A/B measurement of a
tracer's cost (bench/overhead, TOGGLE_PAIRS).  Separate processes of the same
job differ by up to ±15 % while one process is stable within itself, so after
warm-up the job runs 2N blocks of K steps in ABBA order (toggle_schedule:
on, off, off, on, on, off, ...) and tells the tracer to capture or not with
torch.cuda.profiler.start()/stop() (cudaProfilerStart/Stop: honoured by
`gpuprof run --capture-range=cudaProfilerApi` and `nsys -c cudaProfilerApi`,
no-ops otherwise).  Each block: torch.cuda.synchronize(), profiler call if
the state changes, timer start, K steps, synchronize, timer stop.  steps=2NK;
step_ms_mean is over all blocks, step_ms_median the median of per-block
ms/step, and RESULT adds
      ab_pairs=N ab_on_ms=X ab_off_ms=Y ab_ratio=R ab_delta_ms=D
(pair_stats: X/Y median ms/step of the on/off blocks, R/D median over pairs
(2i, 2i+1) of on/off and on−off).
"""
import argparse
import contextlib
import os
import statistics
import sys
import time


def add_common_args(p: argparse.ArgumentParser, steps: int, warmup: int):
    p.add_argument("--steps", type=int, default=steps,
                   help="timed steps (ignored with --toggle-pairs: steps = 2*N*K)")
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
    p.add_argument("--toggle-pairs", type=int, default=0, metavar="N",
                   help="in-process A/B: 2N blocks of --toggle-steps steps in ABBA order, "
                        "tracer capture on/off by cudaProfilerStart/Stop (0: plain timed loop)")
    p.add_argument("--toggle-steps", type=int, default=0, metavar="K",
                   help="steps per A/B block (needed with --toggle-pairs)")
    p.add_argument("--stall-at", type=int, default=-1, metavar="I",
                   help="inject a host stall (time.sleep) inside step I (-1: none)")
    p.add_argument("--stall-s", type=float, default=2.0, metavar="S", help="length of that stall, seconds")
    p.add_argument("--step-times", default="", metavar="FILE",
                   help="write 'I T' per step, T = perf_counter() at the step's start (CLOCK_MONOTONIC s)")
    return p


class StepClock:
    """--stall-at / --step-times (module docstring): what happens at each
    step's start and end besides the job's work."""

    def __init__(self, args):
        self.stall_at = getattr(args, "stall_at", -1)
        self.stall_s = getattr(args, "stall_s", 0.0)
        self.path = getattr(args, "step_times", "")
        self.starts = []

    def begin(self, i):
        if self.path:
            self.starts.append((i, time.perf_counter()))

    def end(self, i):
        if i == self.stall_at:
            log(f"STALL step={i} seconds={self.stall_s}")
            time.sleep(self.stall_s)

    def write(self):
        if self.path:
            with open(self.path, "w") as f:
                for i, t in self.starts:
                    f.write(f"{i} {t:.9f}\n")


def toggle_schedule(n_pairs: int):
    """Capture state of each of the 2*n_pairs blocks, in ABBA order:
    block b is on when b % 4 is 0 or 3.  Pair i = blocks (2i, 2i+1) holds one
    on and one off block, and the order alternates between pairs so a drift
    within the process favours neither side."""
    return [b % 4 in (0, 3) for b in range(2 * n_pairs)]


def pair_stats(on_times, off_times):
    """on_times[i], off_times[i]: the on and off block of pair i (any unit,
    per step or per launch).  Returns the medians: on, off, on/off ratio and
    on−off delta over pairs."""
    if not on_times or len(on_times) != len(off_times):
        raise ValueError("pair_stats: need as many on as off blocks, at least one")
    ratios = [a / b for a, b in zip(on_times, off_times) if b > 0]
    return {
        "on": statistics.median(on_times),
        "off": statistics.median(off_times),
        "ratio": statistics.median(ratios) if ratios else float("nan"),
        "delta": statistics.median([a - b for a, b in zip(on_times, off_times)]),
    }


def apply_toggle_args(args):
    """Checks the toggle options and makes args.steps = 2*N*K under them,
    so the workloads that size their data by args.steps see the real count."""
    n, k = getattr(args, "toggle_pairs", 0), getattr(args, "toggle_steps", 0)
    if n < 0 or k < 0:
        raise SystemExit("steploop: --toggle-pairs and --toggle-steps must be >= 0")
    if n > 0:
        if k <= 0:
            raise SystemExit("steploop: --toggle-pairs needs --toggle-steps K > 0")
        args.steps = 2 * n * k
    args.toggle_pairs, args.toggle_steps = n, k
    return args


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def setup(args):
    """Seeds and determinism knobs, toggle options; returns the torch module."""
    apply_toggle_args(args)
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


def _run_warmup(args, step_fn, ann, clock=None):
    loss = None
    for i in range(args.warmup):
        with ann.range(f"step {i}", nested=False):
            if clock:
                clock.begin(i)
            loss = step_fn(i, ann)
            if clock:
                clock.end(i)
        if args.log_interval and (i + 1) % args.log_interval == 0:
            log(f"progress step={i + 1}")
    return loss


def _run_toggled(args, step_fn, ann, torch):
    """Warm-up, then the 2N ABBA blocks of K steps (module docstring).
    Returns (loss, seconds of each block, schedule)."""
    sched = toggle_schedule(args.toggle_pairs)
    k = args.toggle_steps
    loss = _run_warmup(args, step_fn, ann)
    secs = []
    capturing = False
    log(f"TIMING loop_start_epoch={time.time():.6f}")
    i = args.warmup
    for on in sched:
        torch.cuda.synchronize()
        if on != capturing:
            (torch.cuda.profiler.start if on else torch.cuda.profiler.stop)()
            capturing = on
        t0 = time.perf_counter()
        for _ in range(k):
            with ann.range(f"step {i}", nested=False):
                loss = step_fn(i, ann)
            i += 1
            if args.log_interval and i % args.log_interval == 0:
                log(f"progress step={i}")
        torch.cuda.synchronize()
        secs.append(time.perf_counter() - t0)
    if capturing:
        torch.cuda.profiler.stop()
    log(f"TIMING loop_end_epoch={time.time():.6f}")
    return loss, secs, sched


def run_steps(args, step_fn, ann: Annotator = None, extra_result: str = "",
              print_result: bool = True):
    """Runs args.warmup + args.steps calls of step_fn(i, ann) -> loss tensor
    (under --toggle-pairs: warm-up + 2N blocks of K steps, see the module
    docstring).

    Returns a dict with the measurements; prints the RESULT line when
    print_result (DDP: rank 0 only)."""
    import torch
    apply_toggle_args(args)  # idempotent; for callers that skipped setup()
    dev = torch.device(args.device)
    use_cuda = dev.type == "cuda"
    if args.toggle_pairs > 0 and not use_cuda:
        raise SystemExit("steploop: --toggle-pairs needs a CUDA device")
    total = args.warmup + args.steps
    loss = None
    events = []
    ab = None
    prof_cm = _profiler(args)
    with prof_cm as prof:
        if ann is None:
            ann = Annotator(args, prof is not None)
        else:
            ann.profiling = prof is not None
        if args.toggle_pairs > 0:
            loss, block_s, sched = _run_toggled(args, step_fn, ann, torch)
            k = args.toggle_steps
            per_block_ms = [t * 1e3 / k for t in block_s]
            on = [m for m, c in zip(per_block_ms, sched) if c]
            off = [m for m, c in zip(per_block_ms, sched) if not c]
            ab = pair_stats(on, off)  # on[i], off[i]: the two blocks of pair i
            total_s = sum(block_s)
            per_step = per_block_ms
        else:
            t_loop = None
            clock = StepClock(args)
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
                    clock.begin(i)
                    loss = step_fn(i, ann)
                    clock.end(i)
                if args.log_interval and (i + 1) % args.log_interval == 0:
                    log(f"progress step={i + 1}")
            clock.write()
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
            per_step = [events[k].elapsed_time(events[k + 1]) for k in range(len(events) - 1)]
            total_s = t_end - t_loop
    if prof is not None:
        t0 = time.perf_counter()
        prof.export_chrome_trace(args.profile_out)
        sz = os.path.getsize(args.profile_out)
        log(f"torch.profiler: wrote {args.profile_out} ({sz} bytes, "
            f"export {time.perf_counter() - t0:.2f} s)")
    res = {
        "steps": args.steps,
        "step_ms_median": statistics.median(per_step) if per_step else float("nan"),
        "step_ms_mean": (total_s * 1e3 / args.steps) if args.steps else float("nan"),
        "total_s": total_s,
        "loss": float(loss.item()) if loss is not None else float("nan"),
    }
    if ab is not None:
        res.update({"ab_pairs": args.toggle_pairs, "ab_on_ms": ab["on"], "ab_off_ms": ab["off"],
                    "ab_ratio": ab["ratio"], "ab_delta_ms": ab["delta"]})
    if print_result:
        line = (f"RESULT steps={res['steps']} step_ms_median={res['step_ms_median']:.4f} "
                f"step_ms_mean={res['step_ms_mean']:.4f} total_s={res['total_s']:.4f} "
                f"loss={res['loss']:.6f}")
        if ab is not None:
            line += (f" ab_pairs={res['ab_pairs']} ab_on_ms={res['ab_on_ms']:.4f} "
                     f"ab_off_ms={res['ab_off_ms']:.4f} ab_ratio={res['ab_ratio']:.4f} "
                     f"ab_delta_ms={res['ab_delta_ms']:.4f}")
        if extra_result:
            line += " " + extra_result
        print(line, flush=True)
    return res
