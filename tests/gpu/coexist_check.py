#!/usr/bin/env python3
"""coexist_check.py — the facts tests/gpu/coexist_check.sh asserts on (issue
#42, docs/CONFIG.md "Beside the job's own profiler").

  steps CHROME.json             kernels per ProfilerStep# of a torch.profiler
                                Chrome trace, as JSON {step: n}: a kernel
                                counts for the step whose range holds its
                                launch (same correlation id)
  same BARE.json TRACED.json... every traced profiler's kernels per step
                                equal the bare run's (exit 1 otherwise)
  gap GPUPROF GPUPROF_TRACE [REF_TRACE CHROME.json]
                                gpuprof's trace: its coexist marks and
                                counters, kernels before the gap and after it
                                (both > 0), none starting inside it (after
                                its first 100 ms); with REF_TRACE (the same
                                job traced without its profiler) and the
                                profiler's Chrome trace: gpuprof's kernels +
                                the profiler's = REF's, within 2 %
  capture GPUPROF CAPTURE... the captures' kernels (> 0 each)
"""
import collections
import json
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
    act = sorted((r["ts"], r["value"]) for r in recs if r["type"] == "counter" and r["name"] == "gpuprof.coexist.activity")
    cb = sorted((r["ts"], r["value"]) for r in recs if r["type"] == "counter" and r["name"] == "gpuprof.coexist.callbacks")
    kern = [r for r in recs if r["type"] == "kernel"]
    print("marks:", *marks, sep="\n  ")
    print("counters activity %s callbacks %s" % (act, cb))
    ok = len(act) >= 2 and act[0][1] == 1 and act[1][1] == 0
    if not ok:
        print("FAIL: no activity gap marked")
        return 1
    t0, t1 = act[0][0], act[1][0]
    before = sum(k["start"] < t0 for k in kern)
    # a kernel launched just before the hand-over may start after it
    inside = sum(t0 + 100_000_000 <= k["start"] <= t1 for k in kern)
    after = sum(k["start"] > t1 for k in kern)
    print("gap %.3f s: kernels before %d, starting inside %d, after %d" % ((t1 - t0) / 1e9, before, inside, after))
    rc = 0 if before > 0 and after > 0 and inside == 0 else 1
    if ref and chrome:
        # complete outside the gap: ours + the profiler's own = the same job
        # traced without its profiler (2 %: the gap's edges and the
        # profiler's are a few kernels apart)
        total = sum(r["type"] == "kernel" for r in dump(gpuprof, ref))
        prof = sum(chrome_steps(chrome).values())
        got = before + inside + after + prof
        print("kernels: gpuprof %d + the profiler's %d = %d; without the profiler %d" %
              (before + inside + after, prof, got, total))
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
