#!/usr/bin/env python3
"""hints_check.py — issue #43's checks on jobs that carry no hint (no NVTX, no
emit_nvtx), read through the offline tool as a user reads them (`gpuprof
steps --per-step --format csv`, `gpuprof advise`).  Prints "HINTS PASS|FAIL
what" lines; exit 1 when a check failed.

  hints_check.py capture DIR --min-steps 5
      an automatic capture (a `step>Kx` rule after a host stall): at least one
      capture file in DIR; `gpuprof steps` on the first counts >= MIN steps;
      `gpuprof advise` on it answers (its first lines are printed).
  hints_check.py trigger CAPTURE --k 10
      a `gpuprof trigger --steps K` capture: `gpuprof steps` counts K steps.
  hints_check.py sample SAMPLED FULL [--tol 0.02]
      per-step GPU time (the median of the counted steps' kernel time) of a
      `--sample-steps` trace against a full trace of the same job: within tol.
  hints_check.py bounds TRACE [--sampled N]
      the steps of one trace by each method the tool has (`--method nvtx`:
      NVTX step ranges, the shim's own included; `--method trace`: the
      periodic GPU work): count of each, and each trace-method step's start
      against the nearest NVTX step's (offset min/median/max).  --sampled N:
      a `--sample-steps 1/N` trace, whose GPU work (what the trace method
      sees) is that of one step in N: N times fewer trace-method steps.

Definitions: docs/STEPS.md (a step, counted, warm-up, Kernel Time)."""
import argparse
import csv
import glob
import io
import os
import statistics
import subprocess
import sys

GPUPROF = os.environ.get("GPUPROF", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                 "bin", "gpuprof"))
failed = []


def check(ok, what):
    print("HINTS %s %s" % ("PASS" if ok else "FAIL", what), flush=True)
    if not ok:
        failed.append(what)
    return ok


def tables(args):
    """`gpuprof ARGS --format csv` -> {table name: [row dicts]}"""
    p = subprocess.run([GPUPROF] + args + ["--format", "csv"], capture_output=True, text=True)
    out, name, buf = {}, None, []

    def flush():
        if name and buf:
            out[name] = list(csv.DictReader(io.StringIO("".join(buf))))

    for line in p.stdout.splitlines(keepends=True):
        if line.startswith("# "):
            flush()
            name, buf = line[2:].strip(), []
        elif line.strip():
            buf.append(line)
    flush()
    if p.returncode not in (0, 1):
        print("  gpuprof %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[-300:]))
    return out


def steps_of(trace, *extra):
    t = tables(["steps", "--per-step", *extra, trace])
    summ = t.get("steps", [])
    rows = t.get("step_rows", [])
    return summ, rows


def counted(summ):
    return sum(int(r["Counted"] or 0) for r in summ)


def advise_head(trace, n=12):
    p = subprocess.run([GPUPROF, "advise", trace], capture_output=True, text=True)
    lines = (p.stdout + p.stderr).splitlines()
    for l in lines[:n]:
        print("  | " + l[:160])
    return p.returncode, lines


def cmd_capture(a):
    caps = sorted(glob.glob(os.path.join(a.dir, "*-cap*.gpuprof")))
    check(len(caps) >= 1, "capture: a capture file in %s (got %d)" % (a.dir, len(caps)))
    if not caps:
        return 1
    summ, rows = steps_of(caps[0])
    for r in summ:
        print("  steps: method %s, %s steps, %s warm-up, %s counted; %s" %
              (r["Method"], r["Steps"], r["Warm-up"], r["Counted"], r["Steps Are"]))
    check(counted(summ) >= a.min_steps, "capture: `gpuprof steps` counts %d steps in %s (>= %d)" %
          (counted(summ), os.path.basename(caps[0]), a.min_steps))
    rc, lines = advise_head(caps[0])
    check(rc in (0, 1) and not any("no counted steps" in l for l in lines), "capture: `gpuprof advise` analyses it (exit %d)" % rc)
    return 1 if failed else 0


def cmd_trigger(a):
    summ, rows = steps_of(a.capture)
    for r in summ:
        print("  steps: method %s, %s steps, %s warm-up, %s counted" % (r["Method"], r["Steps"], r["Warm-up"],
                                                                          r["Counted"]))
    check(counted(summ) == a.k, "trigger: `gpuprof steps` counts %d steps (want %d)" % (counted(summ), a.k))
    advise_head(a.capture, 8)
    return 1 if failed else 0


def kernel_ms(rows):
    v = [int(r["Kernel Time"]) / 1e6 for r in rows if "warm-up" not in r["Flags"] and "partial" not in r["Flags"]
         and int(r["Kernels"] or 0) > 0]
    return v


def cmd_sample(a):
    _, srows = steps_of(a.sampled)
    _, frows = steps_of(a.full)
    s, f = kernel_ms(srows), kernel_ms(frows)
    check(len(s) >= 3, "sample: steps with kernels in the sampled trace: %d" % len(s))
    check(len(f) >= 3, "sample: counted steps in the full trace: %d" % len(f))
    if len(s) < 1 or len(f) < 1:
        return 1
    ms, mf = statistics.median(s), statistics.median(f)
    print("  per-step GPU time (median kernel time of a step): sampled %.4f ms (%d steps), full %.4f ms (%d steps)" %
          (ms, len(s), mf, len(f)))
    check(abs(ms / mf - 1) <= a.tol, "sample: ratio %.4f within %g" % (ms / mf, a.tol))
    return 1 if failed else 0


def cmd_bounds(a):
    res = {}
    for m in ("nvtx", "trace"):
        summ, rows = steps_of(a.trace, "--method", m)
        res[m] = [int(r["Start (ns)"]) for r in rows]
        desc = "; ".join("%s steps, %s counted: %s" % (r["Steps"], r["Counted"], r["Steps Are"]) for r in summ)
        print("  --method %-5s %s" % (m, desc or "(none)"))
    nv, tr = sorted(res["nvtx"]), sorted(res["trace"])
    if nv and tr:
        import bisect
        offs = []
        for t in tr:
            i = bisect.bisect_right(nv, t) - 1
            if i >= 0:
                offs.append((t - nv[i]) / 1e3)
        if offs:
            print("  trace-method step start - NVTX step start (us): min %.1f median %.1f max %.1f over %d steps" %
                  (min(offs), statistics.median(offs), max(offs), len(offs)))
        n = a.sampled
        check(abs(len(nv) - n * len(tr)) <= n + 1, "bounds: step count by NVTX %d%s and trace method %d, +-1 partial" %
              (len(nv), " (one in %d sampled)" % n if n > 1 else "", len(tr)))
    else:
        check(False, "bounds: steps by both methods (nvtx %d, trace %d)" % (len(nv), len(tr)))
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("capture")
    s.add_argument("dir")
    s.add_argument("--min-steps", type=int, default=5)
    s = sub.add_parser("trigger")
    s.add_argument("capture")
    s.add_argument("--k", type=int, default=10)
    s = sub.add_parser("sample")
    s.add_argument("sampled")
    s.add_argument("full")
    s.add_argument("--tol", type=float, default=0.02)
    s = sub.add_parser("bounds")
    s.add_argument("trace")
    s.add_argument("--sampled", type=int, default=1)
    a = p.parse_args()
    return {"capture": cmd_capture, "trigger": cmd_trigger, "sample": cmd_sample, "bounds": cmd_bounds}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
