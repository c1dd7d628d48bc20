"""A windowed trace (`gpuprof run --gpu-window`, GP_REC_WINDOW): `stats
--report windows`, the util report restricted to the windows, `info` and the
Perfetto track, against hand-computed values for gen_trace --windows (its
header comment has the timeline; windows [0,130000] and [200000,250000] ns
after T0).  A trace without windows keeps its default stats unchanged."""
import json
import os

import tt

with tt.tmpdir() as d:
    plain = tt.gen(os.path.join(d, "plain.gpuprof"))
    trace = tt.gen(os.path.join(d, "w.gpuprof"), windows=True)

    # ---------------- windows report
    # kernels by start: 30000, 40000, 70000, 120000 in the first window,
    # 210000 in the second
    out = json.loads(tt.gp("stats", "--report", "windows", "--format", "json", trace).stdout)
    tt.eq([(r["pid"], r["start_ns"], r["end_ns"], r["duration_ns"], r["kernels"]) for r in out["windows"]],
          [(1000, 0, 130000, 130000, 4), (1000, 200000, 250000, 50000, 1)], "windows rows")
    table = tt.gp("stats", "--report", "windows", trace).stdout
    # 130000 + 50000 ns recorded; the trace ends with the epoch range at 300000
    tt.expect("GPU activity was recorded only inside these windows (180.000 us of 300.000 us)" in table,
              "windows header line: " + table.splitlines()[0])

    # ---------------- default set: windows only when the trace has them
    allw = json.loads(tt.gp("stats", "--format", "json", "--whole-trace", trace).stdout)
    tt.expect("windows" in allw, "default stats of a windowed trace include windows")
    allp = json.loads(tt.gp("stats", "--format", "json", "--whole-trace", plain).stdout)
    tt.expect("windows" not in allp, "default stats of a plain trace have no windows report")
    none = tt.gp("stats", "--report", "windows", plain).stdout
    tt.expect("recorded for the whole run" in none and "(no data)" in none, "plain trace: " + none)
    tt.eq(json.loads(tt.gp("stats", "--report", "windows", "--format", "json", plain).stdout)["windows"], [],
          "plain trace: no window rows")
    # the other reports do not depend on the windows
    for k in ("api", "kernels", "memops", "memsize", "nvtx"):
        tt.eq(allw[k], allp[k], f"report {k} unchanged by windows")

    # ---------------- util inside the windows
    # device 0 kernels [30000,60000) (two kernels), [70000,76000),
    #   [120000,125000), [210000,218000): busy 30000+6000+5000+8000 = 49000
    # span = recorded time = 130000 + 50000 = 180000 -> 27.2 %
    # gaps inside a window: 60000..70000, 76000..120000 -> 2, largest 44000
    #   (125000..210000 spans the unrecorded time between the windows: no gap)
    # copies: HtoD [6000,26000) 20000, memset [72000,74000) 2000, DtoH
    #   [244000,256000) clipped to 250000: 6000 -> 28000; overlap with kernels:
    #   the memset, inside [70000,76000): 2000 -> 7.1 %
    u = allw["util"]
    dev = [r for r in u if r["stream"] == "all"][0]
    tt.eq((dev["kernels"], dev["busy_ns"], dev["span_ns"], dev["idle_gaps"], dev["largest_gap_ns"],
           dev["copy_ns"]), (5, 49000, 180000, 2, 44000, 28000), "util device row in windows")
    tt.approx(dev["busy_pct"], 100 * 49000 / 180000, "util busy % of recorded time")
    tt.approx(dev["overlap_pct"], 100 * 2000 / 28000, "util overlap %")
    # stream 7: [30000,60000) + [210000,218000) = 38000, no gap inside a window;
    # stream 8: [70000,76000) + [120000,125000) = 11000, one gap of 44000
    s7 = [r for r in u if r["stream"] == "7"][0]
    s8 = [r for r in u if r["stream"] == "8"][0]
    tt.eq((s7["busy_ns"], s7["idle_gaps"], s7["largest_gap_ns"], s7["copy_ns"], s7["span_ns"]),
          (38000, 0, 0, 28000, 180000), "util stream 7 in windows")
    tt.eq((s8["busy_ns"], s8["idle_gaps"], s8["largest_gap_ns"]), (11000, 1, 44000), "util stream 8 in windows")
    ut = tt.gp("stats", "--report", "util", trace).stdout
    tt.expect("inside the 2 GPU-activity windows only" in ut, "util says it is restricted: " + ut.splitlines()[0])
    # without windows: span is the device's GPU activity, 6000..256000
    pd = [r for r in allp["util"] if r["stream"] == "all"][0]
    tt.eq((pd["span_ns"], pd["busy_ns"]), (250000, 49000), "util of the plain trace unchanged")

    # --since/--until clip the windows too: [100000, 220000) keeps
    # [100000,130000] and [200000,220000)
    cl = json.loads(tt.gp("stats", "--report", "windows", "--since", "100us", "--until", "220us",
                          "--format", "json", trace).stdout)
    tt.eq([(r["start_ns"], r["end_ns"], r["kernels"]) for r in cl["windows"]],
          [(100000, 130000, 1), (200000, 220000, 1)], "windows clipped by --since/--until")

    # ---------------- info
    info = tt.gp("info", trace).stdout
    tt.expect("windows:    2, GPU activity recorded in 180.000 us of 300.000 us (60.0 %)" in info,
              "info windows line: " + info)
    tt.expect("windows:" not in tt.gp("info", plain).stdout, "info of a plain trace: no windows line")
    ij = json.loads(tt.gp("info", "--json", trace).stdout)
    tt.eq((ij.get("windows"), ij.get("window_ns")), (2, 180000), "info --json windows")
    tt.expect("windows" not in json.loads(tt.gp("info", "--json", plain).stdout), "info --json plain")

    # ---------------- Perfetto: a track of "GPU activity recorded" slices
    pj = os.path.join(d, "w.json")
    tt.gp("export", "--format", "perfetto", trace, "-o", pj)
    with open(pj) as f:
        ev = json.load(f)["traceEvents"]
    sl = [e for e in ev if e["ph"] == "X" and e["name"] == "GPU activity recorded"]
    tt.eq([(e["pid"], e["ts"], e["dur"]) for e in sl], [(1000, 0.0, 130.0), (1000, 200.0, 50.0)],
          "perfetto window slices (us)")
    tids = {e["tid"] for e in sl}
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"
             and e["pid"] == 1000 and e["tid"] in tids}
    tt.eq(names, {"GPU activity windows"}, "perfetto window track name")

tt.finish()
