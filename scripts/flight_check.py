#!/usr/bin/env python3
"""flight_check.py — the flight recorder's checks on real runs (issue #26,
docs/FLIGHT.md "What was measured"); reads traces with `gpuprof dump --json`.

  flight_check.py steps TRACE [--step-times FILE]
      one row per step: its NVTX range, start-to-start period (from FILE, the
      job's own clock, when given), kernels launched in it, GPU time.
  flight_check.py stall CAPTURE_DIR --stall-at I [--before 5] [--after 5]
      the automatic capture of a stall at step I: exactly one capture file
      and one window in it; step ranges (API/NVTX history) of every step from
      I-before-? .. I-before are in it; kernels of steps I+1 .. I+after are.
  flight_check.py trigger CAPTURE --k K --step-times FILE [--pause-ms 50]
      a triggered capture: exactly K steps have kernels, consecutive, each
      whole (its range inside the window); the job's step periods around the
      capture's start and stop, against their median (a table); the largest
      excess must stay under --pause-ms.
  flight_check.py sample SAMPLED FULL --n N [--tol 0.02]
      per-step GPU time of the steps SAMPLED holds kernels for (one in N)
      against FULL (every step): same step numbers, and all steps past the
      first N; within --tol.

Definitions (docs/FLIGHT.md): a step is an NVTX push/pop range named
"step I" on the thread that opened the first one; a kernel belongs to the
step during whose range its launch API call (same correlation id) started;
a step's GPU time is the sum of the durations of its kernels.  Prints
"FLIGHT PASS|FAIL what" lines; exit 1 when any check failed."""
import argparse
import bisect
import glob
import json
import os
import statistics
import subprocess
import sys

GPUPROF = os.environ.get("GPUPROF", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                 "bin", "gpuprof"))
failed = []


def check(ok, what):
    print("FLIGHT %s %s" % ("PASS" if ok else "FAIL", what), flush=True)
    if not ok:
        failed.append(what)
    return ok


class Trace:
    """Steps, their kernels and the windows of one trace."""

    def __init__(self, path):
        p = subprocess.Popen([GPUPROF, "dump", "--json", "--type", "api,kernel,nvtx_range,window,nvtx_mark", path],
                             stdout=subprocess.PIPE, text=True)
        launch = {}
        kernels = []
        ranges = []
        self.windows, self.marks = [], []
        for line in p.stdout:
            r = json.loads(line)
            t = r["type"]
            if t == "api":
                launch[(r["pid"], r["corr"])] = (r["start"], r["tid"])
            elif t == "kernel":
                kernels.append((r["pid"], r["corr"], r["end"] - r["start"]))
            elif t == "nvtx_range":
                m = r.get("message", "")
                if m.startswith("step ") and m[5:].isdigit():
                    ranges.append((r["start"], r["end"], int(m[5:]), r.get("tid")))
            elif t == "window":
                self.windows.append((r["start"], r["end"]))
            elif t == "nvtx_mark" and r.get("domain") == "gpuprof" and r["message"].startswith("gpuprof capture"):
                self.marks.append(r["message"])  # (not the step finder's "gpuprof steps found ...")
        p.wait()
        if p.returncode not in (0, None):
            raise SystemExit("gpuprof dump %s failed (%d)" % (path, p.returncode))
        ranges.sort()
        tid0 = ranges[0][3] if ranges else None
        self.steps = {s: (a, b) for a, b, s, tid in ranges if tid == tid0}
        starts = sorted((a, b, s) for s, (a, b) in self.steps.items())
        keys = [a for a, _, _ in starts]
        self.gpu_ns, self.nkern = {}, {}
        for pid, corr, dur in kernels:
            ln = launch.get((pid, corr))
            if not ln:
                continue
            i = bisect.bisect_right(keys, ln[0]) - 1
            if i >= 0 and starts[i][0] <= ln[0] <= starts[i][1]:
                s = starts[i][2]
                self.gpu_ns[s] = self.gpu_ns.get(s, 0) + dur
                self.nkern[s] = self.nkern.get(s, 0) + 1
        self.windows.sort()


def read_step_times(path):
    rows = [l.split() for l in open(path) if l.strip()]
    t = {int(a): float(b) for a, b in rows}
    return {s: t[s + 1] - t[s] for s in t if s + 1 in t}  # start-to-start period, s


def cmd_steps(a):
    tr = Trace(a.trace)
    per = read_step_times(a.step_times) if a.step_times else {}
    print("%8s %12s %10s %8s %12s" % ("step", "range_ms", "period_ms", "kernels", "gpu_ms"))
    for s in sorted(tr.steps):
        st, en = tr.steps[s]
        print("%8d %12.3f %10s %8d %12.3f" % (s, (en - st) / 1e6, "%.3f" % (per[s] * 1e3) if s in per else "-",
                                              tr.nkern.get(s, 0), tr.gpu_ns.get(s, 0) / 1e6))
    return 0


def cmd_stall(a):
    caps = sorted(glob.glob(os.path.join(a.dir, "*-cap*.gpuprof")))
    check(len(caps) == 1, "stall: one capture file (got %d: %s)" % (len(caps), [os.path.basename(c) for c in caps]))
    if not caps:
        return 1
    tr = Trace(caps[0])
    i = a.stall_at
    check(len(tr.windows) == 1, "stall: one GPU-activity window in the capture (got %d)" % len(tr.windows))
    check(len(tr.marks) == 1 and "rule step>" in tr.marks[0] and "step %d " % i in tr.marks[0],
          "stall: the capture says why: %s" % tr.marks)
    hist = [s for s in range(i - a.before - 20, i - a.before + 1) if s >= 0]
    missing = [s for s in hist if s not in tr.steps]
    check(not missing, "stall: API/NVTX history covers steps %d..%d (missing %s)" % (hist[0], hist[-1], missing[:5]))
    want = list(range(i + 1, i + a.after + 1))
    have = sorted(tr.nkern)
    check(all(s in tr.nkern for s in want), "stall: kernels of steps %d..%d (kernel steps %s)" %
          (want[0], want[-1], have))
    check(have and have[0] == i + 1, "stall: kernels from step %d on, not before (first %s)" %
          (i + 1, have[0] if have else None))
    return 1 if failed else 0


def cmd_trigger(a):
    tr = Trace(a.capture)
    have = sorted(tr.nkern)
    check(len(have) == a.k and have == list(range(have[0], have[0] + a.k)) if have else False,
          "trigger: exactly %d consecutive steps with kernels (got %s)" % (a.k, have))
    check(len(tr.windows) == 1, "trigger: one window (got %d)" % len(tr.windows))
    if len(tr.windows) == 1 and have:
        ws, we = tr.windows[0]
        whole = [s for s in have if s in tr.steps and ws <= tr.steps[s][0] and tr.steps[s][1] <= we]
        check(whole == have, "trigger: every captured step whole inside the window (whole %s)" % whole)
    if not have:
        return 1
    per = read_step_times(a.step_times)
    first, last = have[0], have[-1]
    base = [per[s] for s in per if s < first - 10 or s > last + 10]
    med = statistics.median(base) if base else 0
    print("step periods around the capture (job's clock; median elsewhere %.3f ms):" % (med * 1e3))
    print("%8s %10s %10s  %s" % ("step", "period_ms", "excess_ms", ""))
    worst = 0.0
    for s in range(first - 5, last + 6):
        if s not in per:
            continue
        ex = (per[s] - med) * 1e3
        # the switch on happens in step `first`'s push (in the period of
        # first-1, which ends at first's start), the switch off in step
        # `last`'s pop (in the period of `last`)
        tag = "switch on (before the next step)" if s == first - 1 else \
            "captured, switch off at its end" if s == last else "captured" if first <= s <= last else ""
        print("%8d %10.3f %10.3f  %s" % (s, per[s] * 1e3, ex, tag))
        if s in (first - 1, first, last, last + 1):
            worst = max(worst, ex)
    check(worst <= a.pause_ms, "trigger: largest step-period excess at capture start/stop %.1f ms (<= %g ms)" %
          (worst, a.pause_ms))
    return 1 if failed else 0


def cmd_sample(a):
    smp, full = Trace(a.sampled), Trace(a.full)
    sampled = sorted(smp.nkern)
    check(sampled and all(s % a.n == 0 for s in sampled),
          "sample: kernels only in steps that are multiples of %d (%d steps, first %s)" %
          (a.n, len(sampled), sampled[:4]))
    stepped = [s for s in smp.steps if s % a.n == 0]
    check(set(sampled) == set(stepped), "sample: every sampled step has kernels (%d of %d)" %
          (len(sampled), len(stepped)))
    same = [s for s in sampled if s in full.gpu_ns and s >= a.n]
    if not same:
        return check(False, "sample: no step in both traces")
    gs = statistics.mean(smp.gpu_ns[s] for s in same)
    gf = statistics.mean(full.gpu_ns[s] for s in same)
    ga = statistics.mean(v for s, v in full.gpu_ns.items() if s >= a.n)
    ks = statistics.mean(smp.nkern[s] for s in same)
    kf = statistics.mean(full.nkern[s] for s in same)
    print("%-34s %12s %10s" % ("per-step GPU time", "mean_ms", "kernels"))
    print("%-34s %12.4f %10.1f" % ("sampled steps, --sample-steps", gs / 1e6, ks))
    print("%-34s %12.4f %10.1f" % ("same steps, full capture", gf / 1e6, kf))
    print("%-34s %12.4f" % ("all steps >= N, full capture", ga / 1e6))
    check(abs(gs / gf - 1) <= a.tol, "sample: per-step GPU time %.4f ms vs full %.4f ms (ratio %.4f, tol %g)" %
          (gs / 1e6, gf / 1e6, gs / gf, a.tol))
    check(abs(ks - kf) < 1e-9, "sample: kernels per sampled step %.1f = full %.1f" % (ks, kf))
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("steps")
    s.add_argument("trace")
    s.add_argument("--step-times")
    s = sub.add_parser("stall")
    s.add_argument("dir")
    s.add_argument("--stall-at", type=int, required=True)
    s.add_argument("--before", type=int, default=5)
    s.add_argument("--after", type=int, default=5)
    s = sub.add_parser("trigger")
    s.add_argument("capture")
    s.add_argument("--k", type=int, required=True)
    s.add_argument("--step-times", required=True)
    s.add_argument("--pause-ms", type=float, default=50.0)
    s = sub.add_parser("sample")
    s.add_argument("sampled")
    s.add_argument("full")
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--tol", type=float, default=0.02)
    a = p.parse_args()
    rc = {"steps": cmd_steps, "stall": cmd_stall, "trigger": cmd_trigger, "sample": cmd_sample}[a.cmd](a)
    return 1 if failed else rc


if __name__ == "__main__":
    sys.exit(main())
