#!/usr/bin/env python3
"""Occupancy, SM coverage and the weighted utilisation figures of `gpuprof
stats`, against hand computations on `gen_trace --occ` (H200-like device:
132 SMs, 2048 threads = 64 warps, 32 blocks, 65536 registers, 233472 B shared
memory per SM, warp 32, cc 9.0), then sanity on the committed real H200
traces (values present and inside [0, 100] %).

Rules (tools/analysis/gpu/occupancy.h): registers per warp rounded up to 256, warps by
registers rounded down to a multiple of 4; shared memory per block + 1 KiB
reserved (cc >= 8.0) rounded up to 128 B.  Grid occupancy on an occupied SM:
min(blocks per SM by the limits, ceil(blocks / 132)) x warps/block / 64.
"""
import json, os, subprocess, sys, tempfile

import tt

B = sys.argv[1] if len(sys.argv) > 1 else "build"
G = os.path.join(B, "bin", "gpuprof")
GEN = os.path.join(B, "tests", "tools", "gen_trace")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the shared helpers of the tool tests (tests/tools/tt.py): a failed check is
# printed and counted, tt.finish() exits non-zero if any failed
check = tt.expect


def near(a, b, tol=0.0006):
    return a is not None and abs(a - b) <= tol


# name: (theoretical %, limiter, coverage %, est occupancy %, duration ns)
HAND = {
    # 1 block of 1 thread: 1 warp/block; warps allow 64 blocks, the block
    # limit 32 -> 32 x 1 / 64 = 50 %.  Coverage 1/132.  On the one occupied
    # SM: min(32, ceil(1/132) = 1) = 1 block = 1 warp of 64 -> 1/64;
    # est occ = 1/132 x 1/64.
    "mb_1x1": (50.0, "blocks", 100 / 132, 100 / 132 / 64, 1000),
    # 131072 x 1: same limits (50 %), coverage 1, ceil(131072/132) = 993 > 32
    # -> 32 blocks x 1 warp / 64 = 50 %.
    "mb_131072x1": (50.0, "blocks", 100.0, 50.0, 2000),
    # 1024 x 1024, 32 regs: 32 warps/block; warps allow 2 blocks; registers
    # 32 x 32 = 1024/warp -> 64 warps -> 2 blocks -> 64/64 = 100 %;
    # ceil(1024/132) = 8 > 2 -> 100 %.
    "mb_1024x1024": (100.0, "warps", 100.0, 100.0, 4000),
    "mb_131072x1024": (100.0, "warps", 100.0, 100.0, 8000),
    # 256 threads, 32 regs: 8 warps; warps allow 8 blocks, registers 64
    # warps -> 8 blocks -> 100 %.  264 blocks: ceil(264/132) = 2 blocks per
    # SM -> 16/64 = 25 %.
    "k_256t_32r": (100.0, "warps", 100.0, 25.0, 1000),
    # 1024 threads, 64 regs: 2048 regs/warp -> 32 warps -> 1 block -> 50 %;
    # 132 blocks -> 1 per SM -> 50 %.
    "k_1024t_64r": (50.0, "registers", 100.0, 50.0, 2000),
    # 128 threads (4 warps), 100000 B smem: 101024 B -> 101120 B (128 B
    # granules); 233472 / 101120 = 2 blocks -> 8/64 = 12.5 %.  66 blocks:
    # coverage 50 %, 1 block per occupied SM -> 4/64 = 6.25 %; 0.5 x 6.25.
    "k_128t_smem100000": (12.5, "shared mem", 50.0, 3.125, 1000),
    # 96 threads (3 warps), 37 regs: 1184 -> 1280 regs/warp; 65536/1280 = 51
    # warps -> 48 (multiple of 4) -> 16 blocks (warps would allow 21) ->
    # 48/64 = 75 % (79.7 % without the warp granularity).  1000 blocks:
    # ceil(1000/132) = 8 -> 24/64 = 37.5 %.
    "k_96t_37r": (75.0, "registers", 100.0, 37.5, 1000),
}

with tempfile.TemporaryDirectory() as d:
    t = os.path.join(d, "occ.gpuprof")
    subprocess.run([GEN, "--occ", t], check=True)
    p = subprocess.run([G, "stats", "--format", "json", t], capture_output=True, text=True)
    check(p.returncode == 0 and p.stderr == "", "stats --format json runs cleanly")
    js = json.loads(p.stdout)
    check("occupancy" in js and "counters" in js, "default set has occupancy, and counters (trace has them)")
    rows = {r["name"]: r for r in js["occupancy"]}
    check(set(rows) == set(HAND), "one occupancy row per kernel shape")
    for name, (th, lim, cov, eocc, dur) in HAND.items():
        r = rows.get(name, {})
        check(near(r.get("theoretical_occupancy_pct"), th), f"{name}: theoretical occupancy {th} % (got {r.get('theoretical_occupancy_pct')})")
        check(r.get("limiter") == lim, f"{name}: limiter {lim} (got {r.get('limiter')})")
        check(near(r.get("sm_coverage_min_pct"), cov) and near(r.get("sm_coverage_max_pct"), cov),
              f"{name}: SM coverage {cov:.3f} %")
        check(near(r.get("est_sm_activity_pct"), cov), f"{name}: est SM activity = coverage (one instance)")
        check(near(r.get("est_occupancy_pct"), eocc), f"{name}: est occupancy {eocc:.4f} % (got {r.get('est_occupancy_pct')})")
    # util: span 20000 ns, kernels back to back -> busy 100 %.
    span = sum(h[4] for h in HAND.values())
    smw = sum(h[4] * h[2] / 100 for h in HAND.values()) / span * 100     # 92.538 %
    occw = sum(h[4] * h[3] / 100 for h in HAND.values()) / span * 100    # 73.282 %
    u = [r for r in js["util"] if r["stream"] == "all"]
    check(len(u) == 1, "one util row for the device")
    u = u[0]
    check(u["busy_pct"] == 100.0, "busy 100 % (some kernel always running)")
    check(near(u["sm_weighted_pct"], smw, 1e-9), f"SM-weighted {smw:.3f} % (got {u['sm_weighted_pct']})")
    check(near(u["occ_weighted_pct"], occw, 1e-9), f"occupancy-weighted {occw:.3f} % (got {u['occ_weighted_pct']})")
    check(u["nvml_util_pct"] == 100.0, "NVML mean 100 % beside them")
    c = {r["counter"]: r for r in js["counters"]}
    pw = c.get("nvml.power_mw", {})
    # 300000 held 4000 ns, 500000 held 16000 ns -> 460000; plain mean 400000
    check(pw.get("samples") == 3 and pw.get("min") == 300000 and pw.get("max") == 500000
          and pw.get("mean") == 400000 and pw.get("time_weighted_mean") == 460000 and pw.get("unit") == "mW",
          f"nvml.power_mw: 3 samples, min/mean/tw-mean/max 300000/400000/460000/500000 mW (got {pw})")
    check(c.get("nvml.gpu_util", {}).get("unit") == "%", "nvml.gpu_util unit %")
    # the plain gen_trace device has no per-SM limits: '-' (null), not a guess
    t2 = os.path.join(d, "t.gpuprof")
    subprocess.run([GEN, t2], check=True)
    js2 = json.loads(subprocess.run([G, "stats", "--format", "json", "--report", "occupancy,util", t2],
                                    capture_output=True, text=True).stdout)
    check(all(r["theoretical_occupancy_pct"] is None and r["est_occupancy_pct"] is None for r in js2["occupancy"]),
          "device without per-SM limits: occupancy '-'")
    check(all(r["sm_coverage_max_pct"] is not None for r in js2["occupancy"]), "SM count known: coverage shown")
    check(js2["util"][0]["occ_weighted_pct"] is None and js2["util"][0]["sm_weighted_pct"] is not None,
          "util: occupancy-weighted '-', SM-weighted shown")
    # no counters in a trace -> counters not in the default set
    noc = json.loads(subprocess.run([G, "stats", "--format", "json", "--until", "50us", t2],
                                    capture_output=True, text=True).stdout)
    check("counters" not in noc, "no counters in range: counters report not in the default set")

for name in ("mnist-h200.gpuprof", "vector_add-h200.gpuprof"):
    t = os.path.join(ROOT, "examples", name)
    if not os.path.exists(t):
        print(f"skip part: {name} not there")
        continue
    p = subprocess.run([G, "stats", "--format", "json", "--report", "occupancy,util", t], capture_output=True, text=True)
    js = json.loads(p.stdout)
    occ = js["occupancy"]
    vals = [r[k] for r in occ for k in ("theoretical_occupancy_pct", "sm_coverage_min_pct", "sm_coverage_max_pct",
                                        "est_sm_activity_pct", "est_occupancy_pct")]
    check(occ and all(v is not None and 0 <= v <= 100 for v in vals), f"{name}: every occupancy figure present, in [0,100] %")
    check(all(r["est_occupancy_pct"] <= r["est_sm_activity_pct"] + 1e-9 for r in occ), f"{name}: est occ <= est SM act")
    for u in js["util"]:
        if u["stream"] != "all":
            continue
        ok = all(u[k] is not None and 0 <= u[k] <= 100 for k in ("busy_pct", "sm_weighted_pct", "occ_weighted_pct"))
        check(ok and u["occ_weighted_pct"] <= u["sm_weighted_pct"], f"{name}: util busy/SM-weighted/occ-weighted in [0,100], occ <= SM")

tt.finish()
