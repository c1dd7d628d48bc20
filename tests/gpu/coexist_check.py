#!/usr/bin/env python3
"""coexist_check.py — the facts tests/gpu/coexist_check.sh asserts on (issue
#42, docs/CONFIG.md "Beside the job's own profiler").

  steps CHROME.json             kernels per ProfilerStep# of a torch.profiler
                                Chrome trace, as JSON {step: n}: a kernel
                                counts for the step whose range holds its
                                launch (same correlation id)
  same BARE.json TRACED.json... every traced profiler's kernels per step
                                equal the bare run's (exit 1 otherwise)
  gap GPUPROF GPUPROF_TRACE [REF_TRACE CHROME]
                                gpuprof's trace: its coexist marks and
                                counters, the activity gaps in pairs (1, 0),
                                kernels before the first and after the last
                                (both > 0), none starting inside one (after
                                its first 100 ms); with REF_TRACE (the same
                                job traced without its profiler) and the
                                profiler's Chrome trace(s) (a file or a
                                directory): gpuprof's kernels + the
                                profiler's = REF's, within 2 %
  capture GPUPROF CAPTURE... the captures' kernels (> 0 each)
"""
import collections
import glob
import json
import os
import subprocess
import sys


def chrome_steps(path):
    ev = json.load(open(path))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    steps = sorted((e["ts"], e["ts"] + e.get("dur", 0), e["name"]) for e in ev
                   if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    launch = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch[e["args"]["correlation"]] = e["ts"]
    out = collections.Counter()
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            t = launch.get(e.get("args", {}).get("correlation"))
            for s, end, name in steps:
                if t is not None and s <= t <= end:
                    out[name] += 1
                    break
            else:
                out["outside"] += 1
    return dict(out)


def dump(gpuprof, path):
    out = subprocess.run([gpuprof, "dump", "--json", path], capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def gap(gpuprof, path, ref=None, chrome=None):
    recs = dump(gpuprof, path)
    marks = [(r["ts"], r["message"]) for r in recs if r["type"] == "nvtx_mark" and r.get("domain") == "gpuprof"]
    counters = {n: sorted((r["ts"], r["value"]) for r in recs if r["type"] == "counter" and r["name"] == n)
                for n in ("gpuprof.coexist.activity", "gpuprof.coexist.shared", "gpuprof.coexist.callbacks")}
    act = counters["gpuprof.coexist.activity"]
    kern = [r for r in recs if r["type"] == "kernel"]
    print("marks:", *marks, sep="\n  ")
    for n, v in counters.items():
        print("%s: %s" % (n, v))
    # the gaps: each 1 then 0 (a profiler with a repeating schedule makes several)
    gaps = [(a[0], b[0]) for a, b in zip(act[::2], act[1::2]) if a[1] == 1 and b[1] == 0]
    if not gaps or len(act) != 2 * len(gaps):
        print("FAIL: activity gaps not marked in pairs")
        return 1
    before = sum(k["start"] < gaps[0][0] for k in kern)
    after = sum(k["start"] > gaps[-1][1] for k in kern)
    # a kernel launched just before a hand-over may start after it
    inside = sum(any(t0 + 100_000_000 <= k["start"] <= t1 for t0, t1 in gaps) for k in kern)
    print("%d gap(s), %.3f s in all: kernels before the first %d, starting inside one %d, after the last %d, "
          "in all %d" % (len(gaps), sum(t1 - t0 for t0, t1 in gaps) / 1e9, before, inside, after, len(kern)))
    rc = 0 if before > 0 and after > 0 and inside == 0 else 1
    if ref and chrome:
        # complete outside the gaps: ours + the profiler's own = the same
        # job traced without its profiler (2 %: the gaps' edges and the
        # profiler's windows are a few kernels apart).  chrome: a file, or
        # a directory of them (one per profiled cycle)
        files = sorted(glob.glob(os.path.join(chrome, "**", "*.json"), recursive=True)) \
            if os.path.isdir(chrome) else [chrome]
        total = sum(r["type"] == "kernel" for r in dump(gpuprof, ref))
        prof = sum(sum(chrome_steps(f).values()) for f in files)
        got = len(kern) + prof
        print("kernels: gpuprof %d + the profiler's %d (%d file(s)) = %d; without the profiler %d" %
              (len(kern), prof, len(files), got, total))
        if not total or abs(got - total) > 0.02 * total:
            rc = 1
    print("OK" if rc == 0 else "FAIL")
    return rc


def main():
    cmd = sys.argv[1]
    if cmd == "steps":
        print(json.dumps(chrome_steps(sys.argv[2]), sort_keys=True))
        return 0
    if cmd == "same":
        want = chrome_steps(sys.argv[2])
        rc = 0
        print("bare: %s" % json.dumps(want, sort_keys=True))
        for p in sys.argv[3:]:
            got = chrome_steps(p)
            same = got == want and sum(want.values()) > 0
            print("%s %s: %s" % ("OK  " if same else "FAIL", p, json.dumps(got, sort_keys=True)))
            rc |= not same
        return rc
    if cmd == "gap":
        return gap(sys.argv[2], sys.argv[3], *sys.argv[4:6])
    if cmd == "capture":
        rc = 0
        for p in sys.argv[3:]:
            n = sum(r["type"] == "kernel" for r in dump(sys.argv[2], p))
            print("%s %s: %d kernels" % ("OK  " if n else "FAIL", p, n))
            rc |= not n
        return rc
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
