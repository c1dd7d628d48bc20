#!/usr/bin/env python3
"""steps_check.py — the H200 validation of the steps analysis (issue 20,
docs/STEPS.md "Validation on the H200").

  python3 tests/gpu/steps_check.py [--out DIR] [--workloads mnist,resnet,transformer]
  python3 tests/gpu/steps_check.py --compare NVTX.json TRACE.json BARE.json KINETO.json \\
          --warmup W --steps N          # offline, from saved outputs (the CPU self-test)

Each workload (examples/train_mnist.py, resnet_step.py, transformer_step.py,
the same seed and step counts) runs three times:
  1. under `gpuprof run` with NVTX step ranges ("step <i>", steploop.py);
  2. under `gpuprof run` with --no-nvtx (no NVTX at all);
  3. with --profile torch --profiler-steps in its own process (CUPTI takes one
     activity client per process), so Kineto writes ProfilerStep#<i>.
From them (`gpuprof stats --report steps,step_buckets,step_rows --format
json`, on run 1 also with --method trace, on run 2 plain):
  nvtx steps       run 1 finds warm-up + steps NVTX steps
  trace = nvtx     --method trace on run 1 finds as many steps, and each
                   detected step starts inside the NVTX step of the same index
                   (which is also the one it overlaps most); the boundary
                   offsets (detected start - NVTX start) are printed
  no-NVTX run      run 2: method trace, warm-up + steps steps found
  ProfilerStep#    the median over the steady steps (index >= --warmup, not
                   flagged warm-up by gpuprof) of run 1's per-step kernel time
                   (kernels launched in the step, any thread: docs/STEPS.md
                   "Attribution") against the median of Kineto's
                   ProfilerStep#<i> kernel time by the same rule (kernels whose
                   cuda_runtime/cuda_driver launch, by correlation id, started
                   inside ProfilerStep#<i>, any thread of the process): within
                   2 % (two processes: run-to-run noise is what the 2 % is for)
It prints PASS/FAIL per check, then the markdown tables for docs/STEPS.md
(steps and boundary offsets; where step time goes; GPU time per step against
torch.profiler), writes them to DIR/steps/report.md, and ends with
'steps_check: N passed, N failed' (exit 1 when a check failed).
"""
import argparse
import bisect
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

WORKLOADS = {  # script, default steps, warm-up
    "mnist": ("examples/train_mnist.py", 50, 5),
    "resnet": ("examples/resnet_step.py", 20, 3),
    "transformer": ("examples/transformer_step.py", 20, 3),
}
TOLERANCE = 0.02
BUCKETS = ("compute", "comm", "memory", "host_wait", "sync", "launch", "other")


class Report:
    def __init__(self, workload):
        self.workload = workload
        self.passed = self.failed = 0
        self.lines = []
        self.tables = {}   # table name -> row (list of cells)

    def check(self, name, ok, detail=""):
        verdict = "INFO" if ok is None else ("PASS" if ok else "FAIL")
        if ok is True:
            self.passed += 1
        elif ok is False:
            self.failed += 1
        line = f"{verdict} {self.workload}: {name}" + (f" — {detail}" if detail else "")
        self.lines.append(line)
        print(line, flush=True)


# ---------------------------------------------------------------- inputs
def main_proc(stats):
    """The row of the process with the most steps (the job, not a helper)."""
    procs = stats.get("steps") or []
    if not procs:
        return None, []
    p = max(procs, key=lambda r: r.get("steps") or 0)
    rows = [r for r in stats.get("step_rows", []) if r["pid"] == p["pid"]]
    return p, rows


def kineto_steps(path):
    """ProfilerStep#<i> -> (kernel ns launched in it from any thread of the
    process, from its own thread only), by correlation id, from a
    torch.profiler chrome trace (µs floats)."""
    with open(path) as f:
        doc = json.load(f)
    evs = doc.get("traceEvents", doc if isinstance(doc, list) else [])
    ns = lambda us: int(round(float(us) * 1000))  # noqa: E731
    steps, calls, kern = {}, [], {}
    for e in evs:
        if e.get("ph") != "X":
            continue
        cat, name, args = e.get("cat", ""), e.get("name", ""), e.get("args") or {}
        if cat == "user_annotation" and name.startswith("ProfilerStep#"):
            try:
                i = int(name.split("#", 1)[1])
            except ValueError:
                continue
            steps[i] = (e.get("pid"), e.get("tid"), ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0)))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            calls.append((ns(e["ts"]), e.get("pid"), e.get("tid"), args["correlation"]))
        elif cat == "kernel" and "correlation" in args:
            kern[args["correlation"]] = kern.get(args["correlation"], 0) + ns(e.get("dur", 0))
    calls.sort()
    starts = [c[0] for c in calls]
    out = {}
    for i, (pid, tid, s, e) in steps.items():
        anyt = same = 0
        seen = set()
        for _, cpid, ctid, corr in calls[bisect.bisect_left(starts, s):bisect.bisect_left(starts, e)]:
            if cpid != pid or corr in seen:
                continue   # the runtime and driver record of one launch count once
            seen.add(corr)
            k = kern.get(corr, 0)
            anyt += k
            if ctid == tid:
                same += k
        out[i] = (anyt, same)
    return out


# ---------------------------------------------------------------- checks
def compare(rep, nv, tr, bare, kin, warmup, steps):
    """nv, tr, bare: `gpuprof stats --format json` of run 1 (nvtx), run 1
    with --method trace, run 2 (--no-nvtx); kin: kineto_steps() of run 3 (or
    None).  Checks, and fills rep.tables with the rows for docs/STEPS.md."""
    want = warmup + steps
    p, rows = main_proc(nv)
    rep.check("nvtx steps", p is not None and p.get("method") == "nvtx" and len(rows) == want,
              f"{len(rows)} steps, want {want}" + (f"; {p.get('defined_by')}" if p else ""))
    if p is None:
        return
    tp, trows = main_proc(tr)
    rep.check("trace method on the NVTX run: same count", tp is not None and len(trows) == len(rows),
              f"{len(trows)} vs {len(rows)}" + (f"; {tp.get('defined_by')}" if tp else ""))
    inside = most = 0
    offs = []
    for k, t in enumerate(trows):
        if k >= len(rows):
            break
        n = rows[k]
        ts, te = t["start_ns"], t["start_ns"] + t["time_ns"]
        inside += n["start_ns"] <= ts < n["start_ns"] + n["time_ns"]
        ov = [max(0, min(te, r["start_ns"] + r["time_ns"]) - max(ts, r["start_ns"])) for r in rows]
        most += max(range(len(rows)), key=lambda j: ov[j]) == k
        offs.append(ts - n["start_ns"])
    n = min(len(trows), len(rows))
    rep.check("each detected step starts inside the NVTX step of the same index", n > 0 and inside == n,
              f"{inside} of {n}")
    rep.check("each detected step overlaps the NVTX step of the same index most", n > 0 and most == n,
              f"{most} of {n}")
    so = sorted(offs)
    off_cell = (f"{so[0] / 1e3:.0f} / {statistics.median(so) / 1e3:.0f} / {so[-1] / 1e3:.0f}" if so else "-")
    rep.check("boundary offsets (detected - NVTX start, us): min / median / max", None, off_cell)
    bp, brows = main_proc(bare)
    rep.check("no-NVTX run: steps found from the trace",
              bp is not None and bp.get("method") == "trace" and len(brows) == want,
              f"{len(brows)} steps, want {want}" + (f"; {bp.get('defined_by')}" if bp else ""))
    rep.tables["detect"] = [rep.workload, str(len(rows)), str(len(trows)), str(len(brows)), off_cell,
                            (tp or {}).get("defined_by", "-")]
    # where step time goes (run 1, counted steps)
    bk = {b["bucket"]: b for b in nv.get("step_buckets", []) if b["pid"] == p["pid"]}
    if bk:
        rep.tables["buckets"] = [rep.workload, str(p.get("counted")), f"{p.get('median_ns', 0) / 1e6:.2f}",
                                 f"{p.get('spread_pct', 0):.1f}", f"{p.get('gpu_busy_pct', 0):.1f}"] + \
            [f"{bk[b]['step_time_pct']:.1f}" if b in bk else "-" for b in BUCKETS]
    # GPU time per step against torch.profiler's ProfilerStep#
    if kin is None:
        rep.check("ProfilerStep# GPU time", False, "no torch.profiler trace with ProfilerStep#<i>")
        return
    steady = [r for r in rows if r["step"] >= warmup and r["flags"] != "warm-up" and r["step"] in kin]
    if not steady:
        rep.check("ProfilerStep# GPU time", False,
                  f"no steady step in both (Kineto steps {sorted(kin)[:5]}..., gpuprof {len(rows)})")
        return
    g = statistics.median(r["kernel_time_ns"] for r in steady)
    k = statistics.median(kin[r["step"]][0] for r in steady)
    ks = statistics.median(kin[r["step"]][1] for r in steady)
    d = (g - k) / k if k else float("inf")
    worst = max(abs(r["kernel_time_ns"] - kin[r["step"]][0]) / kin[r["step"]][0] if kin[r["step"]][0] else 0
                for r in steady)
    rep.check("ProfilerStep# GPU time, median over the steady steps, within 2 %", abs(d) <= TOLERANCE,
              f"gpuprof {g / 1e3:.1f} us, torch.profiler {k / 1e3:.1f} us ({100 * d:+.2f} %; "
              f"{len(steady)} steps; largest per-step difference {100 * worst:.1f} %; "
              f"same-thread only: {ks / 1e3:.1f} us)")
    rep.tables["profstep"] = [rep.workload, str(len(steady)), f"{g / 1e3:.1f}", f"{k / 1e3:.1f}",
                              f"{100 * d:+.2f}", f"{100 * worst:.1f}", f"{ks / 1e3:.1f}"]


def markdown(reps):
    heads = {
        "detect": ("| job | NVTX steps | trace method (same run) | no-NVTX run | detected - NVTX start, us (min / median / max) | marker |",
                   "|---|---:|---:|---:|---|---|"),
        "buckets": ("| job | counted | median step (ms) | spread (%) | GPU busy (%) | "
                    + " | ".join(f"{b} (%)" for b in BUCKETS) + " |",
                    "|---|---:|---:|---:|---:|" + "---:|" * len(BUCKETS)),
        "profstep": ("| job | steady steps | gpuprof GPU time/step (us, median) | ProfilerStep# GPU time (us, median) "
                     "| difference (%) | largest per-step (%) | ProfilerStep# same thread only (us) |",
                     "|---|---:|---:|---:|---:|---:|---:|"),
    }
    out = []
    for t, (h, sep) in heads.items():
        rows = [r.tables[t] for r in reps if t in r.tables]
        if not rows:
            continue
        out += [h, sep] + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows] + [""]
    return "\n".join(out)


# ---------------------------------------------------------------- running
def run(cmd, log_prefix, timeout, **kw):
    with open(log_prefix + ".stdout", "w") as so, open(log_prefix + ".stderr", "w") as se:
        try:
            return subprocess.run(cmd, stdout=so, stderr=se, timeout=timeout, **kw).returncode
        except subprocess.TimeoutExpired:
            return 124


def stats_json(gpuprof, traces, *extra):
    r = subprocess.run([gpuprof, "stats", "--report", "steps,step_buckets,step_rows", "--format", "json", *extra,
                        *traces], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"gpuprof stats {' '.join(extra)}: exit {r.returncode}: {r.stderr.strip()[:300]}")
    return json.loads(r.stdout)


def traces_of(d, prefix):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith(prefix) and f.endswith(".gpuprof"))


def one_trace(gpuprof, d, prefix):
    """A job may leave one trace per process (a DataLoader worker that used
    CUDA): merged into one file when there are several."""
    ts = traces_of(d, prefix)
    if len(ts) <= 1:
        return ts
    out = os.path.join(d, "merged-" + prefix.rstrip("-") + ".gpuprof")
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run([gpuprof, "merge", *ts, "-o", out], check=True, timeout=600)
    return [out]


def run_workload(name, args, gpuprof):
    script, steps, warmup = WORKLOADS[name]
    steps = args.steps or steps
    d = os.path.join(args.outdir, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    rep = Report(name)
    base = [args.python, os.path.join(ROOT, script), "--steps", str(steps), "--warmup", str(warmup), "--seed", "1"]
    print(f"== {name}: {steps} steps + {warmup} warm-up: {' '.join(base[1:])}", flush=True)
    rc = run([gpuprof, "run", "-o", os.path.join(d, "nvtx-%p.gpuprof"), "--"] + base, os.path.join(d, "nvtx"),
             args.timeout)
    rep.check("gpuprof run (NVTX)", rc == 0, f"exit {rc}")
    rc = run([gpuprof, "run", "-o", os.path.join(d, "bare-%p.gpuprof"), "--"] + base + ["--no-nvtx"],
             os.path.join(d, "bare"), args.timeout)
    rep.check("gpuprof run (--no-nvtx)", rc == 0, f"exit {rc}")
    kj = os.path.join(d, "kineto.json")
    rc = run(base + ["--profile", "torch", "--profiler-steps", "--profile-out", kj], os.path.join(d, "torchprof"),
             args.timeout)
    rep.check("torch.profiler run (--profiler-steps)", rc == 0 and os.path.exists(kj), f"exit {rc}")
    try:
        nvt, bt = one_trace(gpuprof, d, "nvtx-"), one_trace(gpuprof, d, "bare-")
        nv = stats_json(gpuprof, nvt)
        tr = stats_json(gpuprof, nvt, "--method", "trace")
        bare = stats_json(gpuprof, bt)
        for tag, st in (("nvtx", nv), ("trace", tr), ("bare", bare)):
            with open(os.path.join(d, f"stats-{tag}.json"), "w") as f:
                json.dump(st, f)
    except (RuntimeError, subprocess.SubprocessError, json.JSONDecodeError, ValueError) as e:
        rep.check("gpuprof stats", False, str(e))
        return rep
    kin = None
    if os.path.exists(kj):
        try:
            kin = kineto_steps(kj) or None
        except (OSError, ValueError) as e:
            rep.check("Kineto trace", False, str(e)[:200])
    compare(rep, nv, tr, bare, kin, warmup, steps)
    if not args.keep:
        for f in traces_of(d, "") + ([kj] if os.path.exists(kj) else []):
            os.unlink(f)
    return rep


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="results go to OUT/steps (default $RESULTS_DIR, $OUT, build/gpu/out)")
    p.add_argument("--workloads", default="mnist,resnet,transformer")
    p.add_argument("--steps", type=int, default=0, help="timed steps of every workload (0: its default)")
    p.add_argument("--warmup", type=int, default=0, help="--compare: the runs' warm-up steps")
    p.add_argument("--python", default=os.environ.get("PYTHON", "python3"))
    p.add_argument("--gpuprof", default=os.environ.get("GPUPROF", os.path.join(ROOT, "build", "bin", "gpuprof")))
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--keep", action="store_true", help="keep the traces")
    p.add_argument("--compare", nargs=4, metavar=("NVTX_JSON", "TRACE_JSON", "BARE_JSON", "KINETO_JSON"),
                   help="offline: saved `gpuprof stats --format json` outputs (run 1, run 1 --method trace, "
                        "run 2) and the Kineto trace of run 3")
    args = p.parse_args(argv)
    reps = []
    if args.compare:
        loaded = []
        for path in args.compare[:3]:
            with open(path) as f:
                loaded.append(json.load(f))
        rep = Report("offline")
        compare(rep, *loaded, kineto_steps(args.compare[3]) or None, args.warmup, args.steps)
        reps.append(rep)
        outdir = None
    else:
        if not os.access(args.gpuprof, os.X_OK):
            print(f"error: no gpuprof at {args.gpuprof} (make, or --gpuprof)")
            return 2
        base = args.out or os.environ.get("RESULTS_DIR") or os.environ.get("OUT") or \
            os.path.join(ROOT, "build", "gpu", "out")
        args.outdir = outdir = os.path.join(base, "steps")
        os.makedirs(outdir, exist_ok=True)
        for w in args.workloads.split(","):
            if w not in WORKLOADS:
                print(f"error: unknown workload {w} (choose from {', '.join(WORKLOADS)})")
                return 2
            reps.append(run_workload(w, args, args.gpuprof))
    md = markdown(reps)
    print("\n" + md)
    if outdir:
        with open(os.path.join(outdir, "report.md"), "w") as f:
            f.write("\n".join(line for r in reps for line in r.lines) + "\n\n" + md)
    npass, nfail = sum(r.passed for r in reps), sum(r.failed for r in reps)
    print(f"steps_check: {npass} passed, {nfail} failed", flush=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
