#!/usr/bin/env python3
"""memory_check.py — issue #39 on the GPU: the memory view (`gpuprof stats
--report memory_steps`, docs/MEMORY.md) and advise's out-of-memory rule
against the framework's own figures.  Run by `scripts/gpu-session.sh memory`
(about 5 minutes).  Every job runs under
`gpuprof run --activity=default,memory --stacks` (sampled launch stacks,
every allocation call's) and
prints MEMPROBE step=N reserved=B max_reserved=B at each step's end (inside
its NVTX range `step N`).

Checks (each prints MEMCHECK PASS|FAIL name: what):
 leak     examples/memory/leak.py (16 MiB a step kept in a list): growth
          per step within 5 % of 16 MiB and 'grows'; a site that leaks; with
          stacks at allocation calls, that site is leak.py's kept.append line
          (leak.py:33), the only leaking site
 oom      examples/memory/oom.py (sequence length doubling): the job's exit
          status and its "CUDA out of memory" message the same as a bare
          run's; memory_oom has rows; advise's first finding is
          out-of-memory, naming a site in oom.py and the request; the trace's
          alloc_fail records (format 2.1): the last one's size > 0, NVML's
          total > 0 and free below the size asked for (it did not fit);
          torch's own message names the same size (its "Tried to allocate")
          when it is the driver's request (printed either way)
 oom-armed  the same job under `gpuprof run --flight-recorder` (no
          --trigger: armed mode's default oom rule): exit status and message
          as bare, one capture file, its mark "rule oom: ...", its alloc_fail
          record; advise on the capture names out-of-memory first
 hf, compile  examples/thirdparty/hf_trainer.py --nvtx --mem-probe,
          compile_graphs.py --mem-probe: held at each step's end = the
          probe's memory_reserved() (every step; the largest difference
          printed), the run's peak = the last max_memory_reserved()
 overhead MNIST and ResNet-50, --activity=default,memory against the
          default, interleaved (--reps pairs), the median of the
          per-repetition ratios (printed, no bar)
 stacks-overhead  the same jobs, --stacks against none, both with
          --activity=default,memory: --stacks' whole cost (launch stacks
          sampled, every allocation call's), printed, no bar
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
    env = dict(os.environ)  # --stacks as users run it: sampled launches, every allocation call
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
    check("leak site", len(sites) == 1 and "leak.py:33" in sites[0]["site"],
          "the kept.append line named alone (stacks at allocation calls): %s" % [s["site"] for s in sites])
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
    check("oom site", "oom.py:" in f["where"], "the failing call's site: %s" % f["where"])
    check("oom request", "requested " in f["what"] and "requested size" not in f["what"],
          "advise names the request: %s" % f["what"])
    fails = records(gp, t, "alloc_fail")
    last = fails[-1] if fails else {}
    check("oom record", bool(fails) and last.get("bytes", 0) > 0 and last.get("total_bytes", 0) > 0 and
          last.get("free_bytes", 0) < last.get("bytes", 0),
          "%d alloc_fail records; the last: %s" % (len(fails), last))
    m = re.search(r"Tried to allocate ([0-9.]+) (GiB|MiB|KiB)", r.stderr)
    if m and last:
        tried = float(m.group(1)) * {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10}[m.group(2)]
        print("OOM torch tried to allocate %s %s = %.0f B; the driver was asked for %d B (the caching allocator "
              "rounds a request up to its segment)" % (m.group(1), m.group(2), tried, last["bytes"]))


def records(gp, trace, typ):
    r = subprocess.run([gp, "dump", "--json", "--type", typ, trace], capture_output=True, text=True)
    return [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]


def oom_armed(gp, out):
    """armed mode's default oom rule on the OOM job: the capture, the job unharmed"""
    bare = subprocess.run([sys.executable, "examples/memory/oom.py"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    t = os.path.join(out, "oom-armed.gpuprof")
    for old in os.listdir(out):
        if old.startswith("oom-armed"):
            os.remove(os.path.join(out, old))
    r = subprocess.run([gp, "run", "--flight-recorder", "--stacks", "-o", t, "--", sys.executable,
                        "examples/memory/oom.py"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    msg = lambda p: "CUDA out of memory" in p.stderr  # noqa: E731
    check("oom-armed", r.returncode == bare.returncode and msg(r) == msg(bare) and msg(r),
          "exit %d (bare %d), message kept %s" % (r.returncode, bare.returncode, msg(r)))
    caps = sorted(os.path.join(out, n) for n in os.listdir(out) if n.startswith("oom-armed-cap"))
    check("oom-armed", len(caps) == 1, "captures %s; gpuprof lines: %s" %
          (caps, [ln for ln in r.stderr.splitlines() if ln.startswith("gpuprof")]))
    if not caps:
        return
    marks = [m["message"] for m in records(gp, caps[0], "nvtx_mark") if m.get("domain") == "gpuprof"]
    check("oom-armed", marks and "rule oom: " in marks[0], "the capture's mark: %s" % marks)
    check("oom-armed", bool(records(gp, caps[0], "alloc_fail")), "the capture holds the alloc_fail record")
    a = subprocess.run([gp, "advise", "--format", "json", caps[0]], capture_output=True, text=True)
    try:
        f = json.loads(a.stdout)["advise"][0]["findings"][0]
    except (ValueError, KeyError, IndexError):
        return check("oom-armed", False, "advise: %s" % a.stderr.strip())
    check("oom-armed", f["rule"] == "out-of-memory", "advise on the capture: %s: %s | where %s" %
          (f["rule"], f["what"], f["where"]))


def framework(gp, out, name, args):
    t = os.path.join(out, name + ".gpuprof")
    r = traced(gp, t, args, stacks=False)
    check(name, r.returncode == 0, "job exit %d %s" % (r.returncode, r.stderr[-300:] if r.returncode else ""))
    v = view(gp, t)
    if v:
        compare(name, v, probe(r.stderr))


def overhead(gp, out, reps, arm=None, label="memory"):
    """the cost of an option against the same repetition's run without it,
    interleaved: --activity=default,memory against the default (the memory
    view); with arm, --stacks against --activity=default,memory without it
    (the stacks at allocation calls come with the launches' stacks: the
    figure is --stacks' whole cost on a job with the memory records)"""
    jobs = {"mnist": ["examples/train_mnist.py", "--steps", "300"], "resnet50": ["examples/resnet_step.py",
                                                                                  "--steps", "60"]}
    for name, args in jobs.items():
        ratios = []
        for k in range(reps):
            ts = []
            for extra in ([], arm) if arm else (["--activity=default"], ["--activity=default,memory"]):
                if arm:
                    extra = ["--activity=default,memory"] + extra
                t0 = time.monotonic()
                subprocess.run([gp, "run", "-q"] + extra + ["-o", os.path.join(out, "ovh.gpuprof"),
                                "--", sys.executable] + args, capture_output=True, cwd=ROOT, timeout=300)
                ts.append(time.monotonic() - t0)
            ratios.append(ts[1] / ts[0])
            print("OVH %s %s rep=%d without=%.2fs with=%.2fs ratio=%.4f" % (label, name, k, ts[0], ts[1], ratios[-1]))
        print("OVH %s %s median ratio %.4f over %d reps" % (label, name, statistics.median(ratios), reps))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuprof", default=os.path.join(ROOT, "build", "bin", "gpuprof"))
    ap.add_argument("--out", default="/tmp/gpuprof-results/memory")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--parts", default="leak,oom,oom-armed,hf,compile,overhead,stacks-overhead")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    parts = a.parts.split(",")
    if "leak" in parts:
        leak(a.gpuprof, a.out)
    if "oom" in parts:
        oom(a.gpuprof, a.out)
    if "oom-armed" in parts:
        oom_armed(a.gpuprof, a.out)
    if "hf" in parts:
        framework(a.gpuprof, a.out, "hf", ["examples/thirdparty/hf_trainer.py", "--nvtx", "--mem-probe", "--steps",
                                            "30"])
    if "compile" in parts:
        framework(a.gpuprof, a.out, "compile", ["examples/thirdparty/compile_graphs.py", "--mem-probe"])
    if "overhead" in parts:
        overhead(a.gpuprof, a.out, a.reps)
    if "stacks-overhead" in parts:
        overhead(a.gpuprof, a.out, a.reps, arm=["--stacks"], label="stacks")
    print("MEMCHECK %d of %d passed" % (sum(RESULTS), len(RESULTS)))
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
