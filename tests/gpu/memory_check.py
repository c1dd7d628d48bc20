#!/usr/bin/env python3
"""memory_check.py — issue #39 on the GPU: the memory view (`gpuprof stats
--report memory_steps`, docs/MEMORY.md) and advise's out-of-memory rule
against the framework's own figures.  Run by `scripts/gpu-session.sh memory`
(about 5 minutes).  Every job runs under
`gpuprof run --activity=default,memory --stacks` (GPUPROF_STACKS=all) and
prints MEMPROBE step=N reserved=B max_reserved=B at each step's end (inside
its NVTX range `step N`).

Checks (each prints MEMCHECK PASS|FAIL name: what):
 leak     examples/memory/leak.py (16 MiB a step kept in a list): growth
          per step within 5 % of 16 MiB and 'grows'; a site that leaks; with
          stacks at allocation calls, that site is leak.py's kept.append line
          (FAIL 'site' while the shim takes no stacks at cudaMalloc:
          docs/MEMORY.md "Not recorded yet")
 oom      examples/memory/oom.py (sequence length doubling): the job's exit
          status and its "CUDA out of memory" message the same as a bare
          run's; memory_oom has rows; advise's first finding is
          out-of-memory, naming a site
 hf, compile  examples/thirdparty/hf_trainer.py --nvtx --mem-probe,
          compile_graphs.py --mem-probe: held at each step's end = the
          probe's memory_reserved() (every step; the largest difference
          printed), the run's peak = the last max_memory_reserved()
 overhead MNIST and ResNet-50, --activity=default,memory against the
          default, interleaved (--reps pairs), the median of the
          per-repetition ratios (printed, no bar)
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = []


def check(name, ok, what):
    RESULTS.append(ok)
    print("MEMCHECK %s %s: %s" % ("PASS" if ok else "FAIL", name, what), flush=True)


def traced(gp, out, args, stacks=True, timeout=300):
    env = dict(os.environ, GPUPROF_STACKS="all") if stacks else dict(os.environ)
    cmd = [gp, "run", "-q", "--activity=default,memory"] + (["--stacks"] if stacks else []) + \
        ["-o", out, "--", sys.executable] + args
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)


def probe(stderr):
    v = {}
    for m in re.finditer(r"MEMPROBE step=(\d+) reserved=(\d+) max_reserved=(\d+)", stderr):
        v[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    return v


def view(gp, trace):
    r = subprocess.run([gp, "stats", "--report", "memory_steps", "--format", "json", trace], capture_output=True,
                       text=True)
    if r.returncode:
        print(r.stderr)
        return None
    return json.loads(r.stdout)


def leak(gp, out):
    t = os.path.join(out, "leak.gpuprof")
    r = traced(gp, t, ["examples/memory/leak.py", "--steps", "60", "--leak-mib", "16"])
    check("leak", r.returncode == 0, "job exit %d" % r.returncode)
    v = view(gp, t)
    if not v:
        return check("leak", False, "no view")
    g = v["memory_growth"][0]
    truth = 16 << 20
    err = abs(g["growth_per_step_bytes"] - truth) / truth
    check("leak", err <= 0.05 and g["verdict"] == "grows", "growth %.0f B/step +/- %.0f (truth %d, %.2f %%), %s" %
          (g["growth_per_step_bytes"], g["growth_bound_bytes"], truth, 100 * err, g["verdict"]))
    sites = [s for s in v["memory_sites"] if s["leaks"] == "yes"]
    check("leak", bool(sites), "leaking sites: %s" % [(s["site"], s["growth_per_step_bytes"]) for s in sites])
    check("leak site", any("leak.py" in s["site"] for s in sites),
          "the kept.append line named (needs stacks at allocation calls)")
    compare("leak", v, probe(r.stderr))


def compare(name, v, pr):
    """held at each step's end against the probe's reserved bytes."""
    if not pr:
        return check(name, False, "no MEMPROBE lines")
    held = {row["step"]: row["held_end_bytes"] for row in v["memory_steps"]}
    both = sorted(set(held) & set(pr))
    diffs = [(k, held[k] - pr[k][0]) for k in both]
    worst = max(diffs, key=lambda d: abs(d[1])) if diffs else None
    check(name, bool(both) and all(d == 0 for _, d in diffs),
          "%d steps compared (%d probed, %d in the view); largest difference %s" %
          (len(both), len(pr), len(held), worst))
    peak = v["memory_growth"][0]["peak_bytes"] if v["memory_growth"] else None
    last = pr[max(pr)][1]
    check(name, peak == last, "peak %s vs max_memory_reserved %d" % (peak, last))


def oom(gp, out):
    bare = subprocess.run([sys.executable, "examples/memory/oom.py"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    t = os.path.join(out, "oom.gpuprof")
    r = traced(gp, t, ["examples/memory/oom.py"])
    msg = lambda p: "CUDA out of memory" in p.stderr  # noqa: E731
    check("oom", r.returncode == bare.returncode and msg(r) == msg(bare) and msg(r),
          "exit %d (bare %d), message kept %s" % (r.returncode, bare.returncode, msg(r)))
    v = view(gp, t)
    check("oom", bool(v and v["memory_oom"]), "memory_oom rows: %s" % (v["memory_oom"][:4] if v else None))
    a = subprocess.run([gp, "advise", "--format", "json", t], capture_output=True, text=True)
    try:
        f = json.loads(a.stdout)["advise"][0]["findings"][0]
    except (ValueError, KeyError, IndexError):
        return check("oom", False, "advise: %s" % a.stderr.strip())
    check("oom", f["rule"] == "out-of-memory", "advise's first finding %s: %s | where %s" %
          (f["rule"], f["what"], f["where"]))
    check("oom site", "oom.py" in f["where"] or ".py:" in f["where"], "the failing call's site: %s" % f["where"])


def framework(gp, out, name, args):
    t = os.path.join(out, name + ".gpuprof")
    r = traced(gp, t, args, stacks=False)
    check(name, r.returncode == 0, "job exit %d %s" % (r.returncode, r.stderr[-300:] if r.returncode else ""))
    v = view(gp, t)
    if v:
        compare(name, v, probe(r.stderr))


def overhead(gp, out, reps):
    jobs = {"mnist": ["examples/train_mnist.py", "--steps", "300"], "resnet50": ["examples/resnet_step.py",
                                                                                  "--steps", "60"]}
    for name, args in jobs.items():
        ratios = []
        for k in range(reps):
            ts = []
            for act in ("default", "default,memory"):
                t0 = time.monotonic()
                subprocess.run([gp, "run", "-q", "--activity=" + act, "-o", os.path.join(out, "ovh.gpuprof"),
                                "--", sys.executable] + args, capture_output=True, cwd=ROOT, timeout=300)
                ts.append(time.monotonic() - t0)
            ratios.append(ts[1] / ts[0])
            print("OVH %s rep=%d default=%.2fs memory=%.2fs ratio=%.4f" % (name, k, ts[0], ts[1], ratios[-1]))
        print("OVH %s median ratio %.4f over %d reps" % (name, statistics.median(ratios), reps))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuprof", default=os.path.join(ROOT, "build", "bin", "gpuprof"))
    ap.add_argument("--out", default="/tmp/gpuprof-results/memory")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--parts", default="leak,oom,hf,compile,overhead")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    parts = a.parts.split(",")
    if "leak" in parts:
        leak(a.gpuprof, a.out)
    if "oom" in parts:
        oom(a.gpuprof, a.out)
    if "hf" in parts:
        framework(a.gpuprof, a.out, "hf", ["examples/thirdparty/hf_trainer.py", "--nvtx", "--mem-probe", "--steps",
                                            "30"])
    if "compile" in parts:
        framework(a.gpuprof, a.out, "compile", ["examples/thirdparty/compile_graphs.py", "--mem-probe"])
    if "overhead" in parts:
        overhead(a.gpuprof, a.out, a.reps)
    print("MEMCHECK %d of %d passed" % (sum(RESULTS), len(RESULTS)))
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
