#!/usr/bin/env python3
"""scripts/util_table.py (per-NVTX-range utilisation) against hand computations.

1. A hand-written `gpuprof dump --json` stream (device 0 with 100 SMs):
   range A [1000,2000): kernels [1000,1500) 50 blocks and [1400,1600) 200
   blocks -> busy = |[1000,1600)| / 1000 = 60 %, Est SM = (500 x 0.5 + 200 x 1)
   / 1000 = 45 %; NVML samples 100 @1100, 50 @1900 -> 75; pm.sm_active 10
   @1000, 30 @1500 -> 20; pm.sm_occupancy 5 @1200 -> 5.  A nested range and a
   device-1 kernel inside A do not count.  Range B [3000,5000): kernels [2900,
   3500) 10 blocks (clipped to 500 ns) and [4000,5500) 100 blocks (clipped to
   1000) -> busy 75 %, Est SM (50 + 1000) / 2000 = 52.5 %; NVML 80 @3000, 60
   @4999 -> 70 (99 @5000 lies outside: ranges are [start, end)); no PM -> '-'.
   --merge-numbered: "step 1" [10000,11000) with [10000,10500) 100 blocks,
   "step 2" [12000,13000) with [12000,12250) 25 blocks -> one row "step #",
   2 ranges, busy 750 / 2000 = 37.5 %, Est SM (500 + 62.5) / 2000 = 28.125 %.
2. gen_trace's default trace (its header has the timeline): train_step
   [0,100000) busy = |[30000,60000) + [70000,76000)| = 36 %, no NVML sample
   inside (50 @100000 is at its end); train_step [200000,260000) busy 8000 /
   60000, NVML 75.
3. A trace the real shim records from the fake-CUDA workload with the fake
   CUPTI's PM sampling and the fake NVML on, with one range added around
   all its kernels: the row's kernels = the workload's launch count, PM DRAM
   exactly 42 (the fake's constant), PM occupancy in [56, 60], NVML present.
4. Bad input: no arguments, a missing trace, a non-JSON dump: exit 2 and a
   message, never a traceback.
"""
import json, os, subprocess, sys, tempfile

import tt

B = sys.argv[1] if len(sys.argv) > 1 else "build"
B = os.path.abspath(B)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "util_table.py")
G = os.path.join(B, "bin", "gpuprof")
GEN = os.path.join(B, "tests", "tools", "gen_trace")
# the shared helpers of the tool tests (tests/tools/tt.py): a failed check is
# printed and counted, tt.finish() exits non-zero if any failed
check = tt.expect


def near(a, b, tol=1e-9):
    return a is not None and abs(a - b) <= tol


def table(*args, stdin=None):
    p = subprocess.run([sys.executable, SCRIPT, "--gpuprof", G, "--json"] + list(args), input=stdin,
                       capture_output=True, text=True)
    if p.returncode != 0:
        check(False, "util_table %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
        return []
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def rng(name, s, e, depth=0):
    return {"type": "nvtx_range", "pid": 7, "tid": 7, "start": s, "end": e, "dur": e - s, "domain": "",
            "message": name, "kind": "pushpop", "depth": depth}


def kern(s, e, blocks, dev=0):
    return {"type": "kernel", "pid": 7, "start": s, "end": e, "dur": e - s, "device": dev,
            "name": "k", "grid": [blocks, 1, 1], "block": [32, 1, 1]}


def ctr(name, ts, v):
    return {"type": "counter", "pid": 7, "ts": ts, "name": name, "device": 0, "value": v}


# 1. hand-written dump
recs = [{"type": "device", "pid": 7, "device": 0, "sm_count": 100},
        rng("A", 1000, 2000), rng("inner", 1100, 1200, depth=1), rng("B", 3000, 5000),
        kern(1000, 1500, 50), kern(1400, 1600, 200), kern(1100, 1900, 100, dev=1),
        kern(2900, 3500, 10), kern(4000, 5500, 100),
        ctr("nvml.gpu_util", 1100, 100), ctr("nvml.gpu_util", 1900, 50), ctr("nvml.gpu_util", 2500, 20),
        ctr("nvml.gpu_util", 3000, 80), ctr("nvml.gpu_util", 4999, 60), ctr("nvml.gpu_util", 5000, 99),
        ctr("pm.sm_active_pct", 1000, 10.0), ctr("pm.sm_active_pct", 1500, 30.0),
        ctr("pm.sm_occupancy_pct", 1200, 5.0),
        rng("step 1", 10000, 11000), rng("step 2", 12000, 13000),
        kern(10000, 10500, 100), kern(12000, 12250, 25)]
dump = "\n".join(json.dumps(r) for r in recs) + "\n"
rows = table("--from-dump", "-", stdin=dump)
by = {r["range"]: r for r in rows}
check([r["range"] for r in rows] == ["A", "B", "step 1", "step 2"], "top-level ranges in order: %s" % [r["range"] for r in rows])
a, b = by.get("A", {}), by.get("B", {})
check(a.get("kernels") == 2 and near(a.get("busy_pct"), 60.0) and near(a.get("est_sm_pct"), 45.0),
      "A: 2 kernels, busy 60, est 45: %s" % a)
check(near(a.get("nvml_gpu_util_pct"), 75.0) and near(a.get("pm_sm_active_pct"), 20.0)
      and near(a.get("pm_sm_occupancy_pct"), 5.0) and a.get("pm_dram_throughput_pct") is None,
      "A: NVML 75, PM act 20, occ 5, DRAM none")
check(near(a.get("length_s"), 1000 / 1e9), "A: length 1000 ns")
check(b.get("kernels") == 2 and near(b.get("busy_pct"), 75.0) and near(b.get("est_sm_pct"), 52.5),
      "B: 2 clipped kernels, busy 75, est 52.5: %s" % b)
check(near(b.get("nvml_gpu_util_pct"), 70.0) and b.get("pm_sm_active_pct") is None,
      "B: NVML 70 (end exclusive), no PM")
rows = table("--from-dump", "-", "--merge-numbered", stdin=dump)
st = [r for r in rows if r["range"] == "step #"]
check(len(st) == 1 and st[0]["ranges"] == 2 and st[0]["kernels"] == 2 and near(st[0]["busy_pct"], 37.5)
      and near(st[0]["est_sm_pct"], 28.125), "merged step #: %s" % st)
check(len(table("--from-dump", "-", "--device", "1", stdin=dump)) == 4, "--device 1: same ranges")
d1 = {r["range"]: r for r in table("--from-dump", "-", "--device", "1", stdin=dump)}
check(d1.get("A", {}).get("kernels") == 1 and d1["A"]["est_sm_pct"] is None,
      "--device 1: its one kernel in A, Est SM '-' (no device record)")
p = subprocess.run([sys.executable, SCRIPT, "--from-dump", "-"], input=dump, capture_output=True, text=True)
lines = p.stdout.splitlines()
check(p.returncode == 0 and lines[0].startswith("| Range |") and
      "| A | 1 | 0.000 | 2 | 75.0 | 60.0 | 45.0 | 20.0 | 5.0 | - | - |" in lines,
      "markdown table: %s" % lines[:4])

with tempfile.TemporaryDirectory(prefix="gpuprof-test-") as d:
    # 2. gen_trace's default trace
    t = os.path.join(d, "a.gpuprof")
    subprocess.run([GEN, t], check=True)
    rows = table(t)
    ts = [r for r in rows if r["range"] == "train_step"]
    check(len(ts) == 2, "gen_trace: two train_step rows (%d)" % len(ts))
    if len(ts) == 2:
        check(near(ts[0]["busy_pct"], 36.0) and ts[0]["nvml_gpu_util_pct"] is None and ts[0]["kernels"] == 3,
              "gen_trace train_step 1: busy 36, 3 kernels, no NVML inside: %s" % ts[0])
        check(near(ts[1]["busy_pct"], 800 / 60) and near(ts[1]["nvml_gpu_util_pct"], 75.0) and ts[1]["kernels"] == 1,
              "gen_trace train_step 2: busy 13.33, NVML 75: %s" % ts[1])

    # 3. the real shim on the fake CUDA, PM sampling and NVML on
    shim = os.path.join(B, "lib", "libgpuprof.so")
    wl = os.path.join(B, "tests", "fake", "workload")
    cupti = os.path.join(B, "tests", "fake", "libcupti.so.13")
    nvml = os.path.join(B, "tests", "fake", "libnvidia-ml.so.1")
    if all(os.path.exists(f) for f in (shim, wl, cupti, nvml)):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPROF_", "FAKE_"))}
        env.update(LD_PRELOAD=shim, GPUPROF_CUPTI=cupti, GPUPROF_NVML=nvml, GPUPROF_GPU_METRICS="100",
                   GPUPROF_PM_SAMPLING="10ms", FAKE_CUPTI_PM="ok", GPUPROF_OUTPUT=os.path.join(d, "w-%p.gpuprof"))
        p = subprocess.run([wl, "loop", "500"], env=env, capture_output=True, text=True, timeout=60)
        n = int(p.stdout.split()[1]) if p.stdout.startswith("loop ") else -1
        traces = [f for f in os.listdir(d) if f.startswith("w-")]
        check(p.returncode == 0 and n > 0 and len(traces) == 1, "workload traced (%s, %s)" % (p.stdout.strip(), traces))
        if traces:
            # the loop's ranges would last microseconds (CPU side): one range
            # "all" around every kernel is added to the real dump instead
            q = subprocess.run([G, "dump", "--json", "--type", "kernel,device,nvtx_range,counter",
                                os.path.join(d, traces[0])], capture_output=True, text=True)
            recs = [json.loads(l) for l in q.stdout.splitlines() if l.strip()]
            ks = [r for r in recs if r["type"] == "kernel"]
            pid = ks[0]["pid"] if ks else 0
            lo, hi = min(k["start"] for k in ks), max(k["end"] for k in ks) + 1
            extra = dict(rng("all", lo, hi), pid=pid, tid=pid)
            rows = table("--from-dump", "-", stdin=q.stdout + json.dumps(extra) + "\n")
            check(len(rows) == 1 and rows[0]["range"] == "all", "one row 'all': %s" % rows)
            if rows:
                r = rows[0]
                check(r["kernels"] == n == len(ks), "every kernel (%d, loop %d): %s" % (len(ks), n, r))
                check(near(r["pm_dram_throughput_pct"], 42.0), "PM DRAM 42 (the fake's constant)")
                check(r["pm_sm_occupancy_pct"] is not None and 56 <= r["pm_sm_occupancy_pct"] <= 60,
                      "PM occupancy in [56, 60]: %s" % r["pm_sm_occupancy_pct"])
                check(r["nvml_gpu_util_pct"] is not None, "NVML samples inside the range")
                check(r["busy_pct"] > 0 and r["est_sm_pct"] is not None, "busy and Est SM present")
    else:
        check(False, "the shim, fake CUPTI/NVML and workload are built in %s (make test builds them)" % B)

    # 4. bad input
    for args, stdin in (([], None), ([os.path.join(d, "missing.gpuprof")], None), (["--from-dump", "-"], "not json\n"),
                        (["--from-dump", "-", "--device", "-1"], "")):
        p = subprocess.run([sys.executable, SCRIPT, "--gpuprof", G] + args, input=stdin, capture_output=True, text=True)
        check(p.returncode == 2 and p.stderr.startswith("util_table: ") and "Traceback" not in p.stderr,
              "bad input %s: exit 2 with a message (%d: %s)" % (args, p.returncode, p.stderr.strip()[:80]))

tt.finish()
