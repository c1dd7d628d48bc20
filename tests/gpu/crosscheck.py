#!/usr/bin/env python3
"""crosscheck.py — fidelity: gpuprof's trace against torch.profiler (Kineto).

  python3 tests/gpu/crosscheck.py [--out DIR] [--workloads mnist,resnet,transformer]
  python3 tests/gpu/crosscheck.py --compare GPUPROF_JSONL KINETO_JSON   # offline

Each workload runs twice with the same seed and step counts: once under
`gpuprof run` (read back with `gpuprof dump --json`), once with
`--profile torch` in a separate process (CUPTI takes one activity client per
process, so the two cannot share a run).  Both runs mark each step: NVTX
"step <i>" for gpuprof, record_function "step <i>" for Kineto (steploop.py
does both), and GPU work is given to a step when the API call that launched
it (same correlation id) started inside the step, on any thread.

Per step, then over the steady-state steps (index >= --skip):
  kernels          multiset of kernel names (gpuprof "demangled" vs Kineto's
                   name, whitespace-normalised): identical
  kernel time      total GPU kernel time: within 3 %
  kernel medians   per kernel name, median duration: within max(5 %, 2 µs)
  copies           memcpy and memset count and bytes: identical
  annotations      NVTX ranges (gpuprof) vs record_function (Kineto) per name:
                   identical counts
and, from the gpuprof run: kernel-busy % (union of kernel intervals over the
span of the timed steps) beside nvidia-smi's mean utilization.gpu sampled
every 100 ms during the timed loop.

Two different processes are compared, so GPU timings differ by run-to-run
noise; that is what the tolerances are for.  Differences that can be real
and legitimate (Kineto losing kernels at session edges, warm-up steps
choosing other kernels) are reported with the steps and names involved.
Writes DIR/crosscheck/<workload>/ (traces removed unless --keep),
report.md and report.json; prints PASS/FAIL per check and ends with
'crosscheck: N passed, N failed'.  Exit 1 when a check failed.
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gptrace  # noqa: E402

WORKLOADS = {
    "mnist": ("examples/train_mnist.py", "mnist_steps"),
    "resnet": ("examples/resnet_step.py", "heavy_steps"),
    "transformer": ("examples/transformer_step.py", "heavy_steps"),
}
NESTED = ("forward", "backward", "optimizer")


class StepData:
    """Per-step GPU work of one run, in one unit (ns), from either source."""

    def __init__(self, source):
        self.source = source
        self.kernels = {}   # step -> [(name, dur_ns, start_ns, end_ns)]
        self.copies = {}    # step -> [(type, kind, bytes)]
        self.annotations = collections.Counter()
        self.step_spans = {}  # step -> (start_ns, end_ns) CPU range
        self.notes = []


# ---------------------------------------------------------------- gpuprof side
def from_gpuprof(trace):
    sd = StepData("gpuprof")
    pids = collections.Counter(r.get("pid") for r in trace.ranges(pattern=gptrace.STEP_RX.pattern))
    if not pids:
        sd.notes.append("no 'step <i>' NVTX ranges in the gpuprof trace")
        return sd
    pid = pids.most_common(1)[0][0]
    steps, dups = gptrace.step_ranges(trace, pid)
    if dups:
        sd.notes.append(f"duplicate step ranges: {dups[:5]}")
    idx = sorted(steps)
    work = trace.attribute([steps[i] for i in idx])
    for i, items in zip(idx, work):
        sd.step_spans[i] = (steps[i]["start"], steps[i]["end"])
        sd.kernels[i] = [(gptrace.norm_kernel(gptrace.kname(x)), x["end"] - x["start"],
                          x["start"], x["end"]) for x in items if x["type"] == "kernel"]
        sd.copies[i] = [(x["type"], x.get("kind", "") if x["type"] == "memcpy" else "",
                         int(x.get("bytes", 0))) for x in items if x["type"] != "kernel"]
    for r in trace.by_type["nvtx_range"]:
        if r.get("pid") != pid:
            continue
        m = r.get("message") or ""
        key = "step" if gptrace.STEP_RX.match(m) else m
        sd.annotations[key] += 1
    return sd


# ---------------------------------------------------------------- Kineto side
_COPY_KIND = re.compile(r"Memcpy (\w+)")


def from_kineto(path):
    """Reads a torch.profiler chrome trace (µs floats) into StepData (ns)."""
    sd = StepData("torch.profiler")
    with open(path) as f:
        doc = json.load(f)
    evs = doc.get("traceEvents", doc if isinstance(doc, list) else [])
    ns = lambda us: int(round(float(us) * 1000))  # noqa: E731
    steps, api, gpu = {}, [], collections.defaultdict(list)
    for e in evs:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        name = e.get("name", "")
        args = e.get("args") or {}
        if cat == "user_annotation":
            m = gptrace.STEP_RX.match(name)
            if m:
                i = int(m.group(1))
                if i in steps:
                    sd.notes.append(f"duplicate Kineto step annotation {i}")
                steps[i] = (e.get("pid"), ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0)))
                sd.annotations["step"] += 1
            else:
                sd.annotations[name] += 1
        elif cat in ("cuda_runtime", "cuda_driver"):
            if "correlation" in args:
                api.append((ns(e["ts"]), e.get("pid"), args["correlation"]))
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            c = args.get("correlation")
            if c is not None:
                gpu[c].append(e)
    api.sort(key=lambda t: t[0])
    starts = [t[0] for t in api]
    import bisect
    for i in sorted(steps):
        pid, s, e = steps[i]
        sd.step_spans[i] = (s, e)
        ks, cs, seen = [], [], set()
        for _, apid, corr in api[bisect.bisect_left(starts, s):bisect.bisect_left(starts, e)]:
            if apid != pid or corr in seen:
                continue
            seen.add(corr)
            for g in gpu.get(corr, ()):
                a = g.get("args") or {}
                st = ns(g["ts"])
                en = st + ns(g.get("dur", 0))
                if g["cat"] == "kernel":
                    ks.append((gptrace.norm_kernel(g.get("name")), en - st, st, en))
                elif g["cat"] == "gpu_memcpy":
                    m = _COPY_KIND.match(g.get("name", ""))
                    cs.append(("memcpy", m.group(1) if m else "?", int(a.get("bytes", 0))))
                else:
                    cs.append(("memset", "", int(a.get("bytes", 0))))
        sd.kernels[i] = ks
        sd.copies[i] = cs
    return sd


# ---------------------------------------------------------------- comparison
class Report:
    def __init__(self, workload):
        self.workload = workload
        self.rows = []    # (check, gpuprof, kineto, detail, verdict)
        self.passed = self.failed = 0

    def check(self, name, ok, g, k, detail=""):
        verdict = "INFO" if ok is None else ("PASS" if ok else "FAIL")
        if ok is True:
            self.passed += 1
        elif ok is False:
            self.failed += 1
        self.rows.append((name, str(g), str(k), detail, verdict))
        print(f"{verdict} {self.workload}: {name}: gpuprof={g} torch.profiler={k}"
              + (f" — {detail}" if detail else ""), flush=True)

    def markdown(self):
        out = [f"### {self.workload}", "", "| check | gpuprof | torch.profiler | detail | verdict |",
               "|---|---|---|---|---|"]
        for r in self.rows:
            out.append("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
        return "\n".join(out) + "\n"


def base_names(counter):
    c = collections.Counter()
    for n, v in counter.items():
        c[gptrace.kernel_base(n)] += v
    return c


def compare(g, k, rep, skip, warmup):
    for sd in (g, k):
        for n in sd.notes:
            rep.check(f"note ({sd.source})", None, "", "", n)
    common = sorted(set(g.kernels) & set(k.kernels))
    rep.check("steps", len(g.kernels) == len(k.kernels) and len(common) == len(g.kernels),
              len(g.kernels), len(k.kernels), f"{len(common)} step indices in both")
    steady = [i for i in common if i >= skip]
    if not steady:
        rep.check("steady steps", False, 0, 0, f"no common step index >= {skip}")
        return

    # Kernel multisets, step by step.
    differ = []
    for i in common:
        cg = collections.Counter(n for n, *_ in g.kernels[i])
        ck = collections.Counter(n for n, *_ in k.kernels[i])
        if cg != ck:
            differ.append((i, cg, ck))
    steady_differ = [d for d in differ if d[0] >= skip]
    detail = f"{len(steady) - len(steady_differ)}/{len(steady)} steady steps identical"
    early = [d[0] for d in differ if d[0] < skip]
    if early:
        detail += f"; warm-up steps {early} differ (reported, not judged)"
    for i, cg, ck in (steady_differ or differ)[:2]:
        only_g, only_k = cg - ck, ck - cg
        same_base = base_names(cg) == base_names(ck)
        detail += (f"; step {i}: only gpuprof {dict(list(only_g.items())[:2])}, only Kineto "
                   f"{dict(list(only_k.items())[:2])}"
                   + (" (same kernels by base name: a naming difference)" if same_base else ""))
    ng = sum(len(g.kernels[i]) for i in steady)
    nk = sum(len(k.kernels[i]) for i in steady)
    rep.check("kernel names/counts per step", not steady_differ, f"{ng} kernels", f"{nk} kernels",
              detail)

    # Total kernel time.
    tg = sum(d for i in steady for _, d, *_ in g.kernels[i])
    tk = sum(d for i in steady for _, d, *_ in k.kernels[i])
    rel = abs(tg - tk) / tk if tk else float("inf")
    rep.check("total kernel time (steady steps)", rel <= 0.03, f"{tg / 1e6:.3f} ms",
              f"{tk / 1e6:.3f} ms", f"diff {rel * 100:.2f} % (limit 3 %)")

    # Per-name median durations.
    dg, dk = collections.defaultdict(list), collections.defaultdict(list)
    for i in steady:
        for n, d, *_ in g.kernels[i]:
            dg[n].append(d)
        for n, d, *_ in k.kernels[i]:
            dk[n].append(d)
    names = sorted(set(dg) & set(dk))
    bad = []
    for n in names:
        mg, mk = statistics.median(dg[n]), statistics.median(dk[n])
        lim = max(0.05 * mk, 2000)
        if abs(mg - mk) > lim:
            bad.append((abs(mg - mk) / max(mk, 1), n, mg, mk))
    bad.sort(reverse=True)
    detail = f"{len(names) - len(bad)}/{len(names)} names within max(5 %, 2 µs)"
    for rel, n, mg, mk in bad[:3]:
        detail += f"; {gptrace.kernel_base(n)[:50]}: {mg / 1e3:.2f} vs {mk / 1e3:.2f} µs"
    rep.check("per-kernel median duration", not bad and bool(names), f"{len(dg)} names",
              f"{len(dk)} names", detail)

    # Copies and sets.
    for typ in ("memcpy", "memset"):
        cg = collections.Counter()
        ck = collections.Counter()
        bg = bk = 0
        for i in steady:
            for t, kind, b in g.copies[i]:
                if t == typ:
                    cg[kind] += 1
                    bg += b
            for t, kind, b in k.copies[i]:
                if t == typ:
                    ck[kind] += 1
                    bk += b
        rep.check(f"{typ} count and bytes", cg == ck and bg == bk,
                  f"{sum(cg.values())} ({bg} B)", f"{sum(ck.values())} ({bk} B)",
                  f"by kind gpuprof {dict(cg)} Kineto {dict(ck)}" if cg != ck else "")

    # Annotations: NVTX (gpuprof) vs record_function (Kineto).
    for name in ("step",) + NESTED:
        a, b = g.annotations.get(name, 0), k.annotations.get(name, 0)
        rep.check(f"ranges '{name}'", a == b, a, b)

    # Kernel-busy % over the timed steps, both traces.
    for sd in (g, k):
        timed = [i for i in sd.kernels if i >= warmup]
        if not timed:
            continue
        iv = [(s, e) for i in timed for _, _, s, e in sd.kernels[i]]
        span_s = min(sd.step_spans[i][0] for i in timed)
        span_e = max([sd.step_spans[i][1] for i in timed] + [e for _, e in iv])
        busy = gptrace.union_ns(iv) / (span_e - span_s) * 100 if span_e > span_s else 0
        sd.busy = busy
    fmt = lambda x: "–" if x is None else f"{x:.1f} %"  # noqa: E731
    rep.check("kernel-busy % (timed steps)", None, fmt(getattr(g, "busy", None)),
              fmt(getattr(k, "busy", None)),
              "union of kernel intervals / span of the timed steps")


# ---------------------------------------------------------------- running
class SmiSampler:
    """nvidia-smi utilization.gpu every 100 ms, stamped on arrival."""

    def __init__(self):
        self.samples = []
        self.proc = None
        try:
            self.proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                 "-lms", "100", "-i", os.environ.get("CROSSCHECK_GPU", "0")],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.samples.append((time.time(), float(line.strip())))
            except ValueError:
                pass

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def mean(self, t0=None, t1=None):
        xs = [v for t, v in self.samples if (t0 is None or t >= t0) and (t1 is None or t <= t1)]
        return (sum(xs) / len(xs), len(xs)) if xs else (None, 0)


def run(cmd, log_prefix, timeout, env=None):
    with open(log_prefix + ".stdout", "w") as so, open(log_prefix + ".stderr", "w") as se:
        try:
            p = subprocess.run(cmd, stdout=so, stderr=se, timeout=timeout, env=env)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = 124
    with open(log_prefix + ".stdout") as f:
        result = next((l.strip() for l in f if l.startswith("RESULT")), "")
    with open(log_prefix + ".stderr", errors="replace") as f:
        err = f.read()
    timing = dict(re.findall(r"TIMING (\w+)=([\d.]+)", err))
    return rc, result, err, timing


def run_workload(name, args, gpuprof):
    script, steps_attr = WORKLOADS[name]
    d = os.path.join(args.outdir, name)
    os.makedirs(d, exist_ok=True)
    rep = Report(name)
    steps = getattr(args, steps_attr)
    base = [args.python, os.path.join(ROOT, script), "--steps", str(steps), "--warmup",
            str(args.warmup), "--seed", "1", "--deterministic"]
    print(f"== {name}: {steps} steps + {args.warmup} warm-up, {' '.join(base[1:])}", flush=True)

    # 1. gpuprof, with nvidia-smi sampling.
    for f in os.listdir(d):
        if ".gpuprof" in f or f.endswith(".json"):
            os.unlink(os.path.join(d, f))
    smi = SmiSampler() if not args.no_smi else None
    t0 = time.perf_counter()
    rc, res, err, timing = run([gpuprof, "run", "-o", os.path.join(d, "trace-%p.gpuprof"), "--"] + base,
                               os.path.join(d, "gpuprof"), args.timeout)
    if smi:
        smi.stop()
    rep.check("gpuprof run", rc == 0 and bool(res), f"exit {rc}", "", f"{res} ({time.perf_counter() - t0:.1f} s)")
    # 2. torch.profiler in its own process.
    kj = os.path.join(d, "kineto.json")
    rc2, res2, err2, _ = run(base + ["--profile", "torch", "--profile-out", kj],
                             os.path.join(d, "torchprof"), args.timeout)
    rep.check("torch.profiler run", rc2 == 0 and os.path.exists(kj), "", f"exit {rc2}", res2)
    if rc != 0 or rc2 != 0 or not os.path.exists(kj):
        for e, src in ((err, "gpuprof"), (err2, "torchprof")):
            if e.strip():
                print(f"   {src} stderr tail: " + " | ".join(e.strip().splitlines()[-5:]))
        return rep
    traces = sorted(os.path.join(d, f) for f in os.listdir(d) if ".gpuprof" in f)
    try:
        t = gptrace.load(traces, gpuprof)
    except gptrace.DumpError as e:
        rep.check("gpuprof dump", False, str(e)[:200], "")
        return rep
    drop = t.dropped_total()
    rep.check("no dropped records", drop == 0, drop, "")
    g = from_gpuprof(t)
    k = from_kineto(kj)
    compare(g, k, rep, args.skip, args.warmup)
    smi_all = smi.mean() if smi else (None, 0)
    t0e, t1e = float(timing.get("loop_start_epoch", 0)) or None, float(timing.get("loop_end_epoch", 0)) or None
    smi_win = smi.mean(t0e, t1e) if smi else (None, 0)
    fmt = lambda x: "–" if x is None else f"{x:.1f} %"  # noqa: E731
    rep.check("nvidia-smi utilization.gpu (gpuprof run)", None, fmt(smi_win[0]), "",
              f"mean over the timed loop ({smi_win[1]} samples at 100 ms); "
              f"{fmt(smi_all[0])} over the whole run ({smi_all[1]} samples); compare with "
              f"kernel-busy % above (nvidia-smi: share of time any kernel ran)")
    rep.check("trace size", None, f"{t.file_bytes} B, {t.events()} events",
              f"{os.path.getsize(kj)} B", f"{t.file_bytes / max(t.events(), 1):.1f} B/event (gpuprof)")
    if not args.keep:
        for f in traces + [kj]:
            os.unlink(f)
    return rep


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="results go to OUT/crosscheck (default $RESULTS_DIR, $OUT, build/gpu/out)")
    p.add_argument("--workloads", default="mnist,resnet,transformer")
    p.add_argument("--mnist-steps", type=int, default=30)
    p.add_argument("--heavy-steps", type=int, default=8)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--skip", type=int, default=2, help="steps excluded from the judged comparison")
    p.add_argument("--python", default=os.environ.get("PYTHON", "python3"))
    p.add_argument("--gpuprof")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--no-smi", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the traces")
    p.add_argument("--compare", nargs=2, metavar=("GPUPROF_JSONL", "KINETO_JSON"),
                   help="offline: compare a gpuprof JSON-lines dump with a Kineto trace")
    args = p.parse_args(argv)
    reps = []
    if args.compare:
        rep = Report("offline")
        t = gptrace.load([], json_input=args.compare[0])
        g, k = from_gpuprof(t), from_kineto(args.compare[1])
        compare(g, k, rep, args.skip, args.warmup)
        reps.append(rep)
        print("\n" + rep.markdown())
    else:
        try:
            gpuprof = gptrace.find_gpuprof(args.gpuprof)
        except gptrace.DumpError as e:
            print(f"error: {e}")
            return 2
        base = args.out or os.environ.get("RESULTS_DIR") or os.environ.get("OUT") or \
            os.path.join(ROOT, "build", "gpu", "out")
        args.outdir = os.path.join(base, "crosscheck")
        os.makedirs(args.outdir, exist_ok=True)
        if os.path.isdir("/usr/local/cuda-13.0"):
            os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")
        for w in args.workloads.split(","):
            if w not in WORKLOADS:
                print(f"error: unknown workload {w} (choose from {', '.join(WORKLOADS)})")
                return 2
            reps.append(run_workload(w, args, gpuprof))
        md = "\n".join(r.markdown() for r in reps)
        with open(os.path.join(args.outdir, "report.md"), "w") as f:
            f.write(md)
        with open(os.path.join(args.outdir, "report.json"), "w") as f:
            json.dump({r.workload: r.rows for r in reps}, f, indent=1)
        print("\n" + md)
    npass = sum(r.passed for r in reps)
    nfail = sum(r.failed for r in reps)
    print(f"crosscheck: {npass} passed, {nfail} failed", flush=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
