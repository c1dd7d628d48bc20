"""`gpuprof merge`: two traces with different clocks onto one time axis.
Trace a: trace clock starts at 1 s, realtime R.  Trace b: trace clock starts
at 5 s, realtime R + 1 ms.  So b's t maps to t - 5e9 + 1e6 + 1e9 on a's axis:
b's event at T0b + x lands at 1e9 + 1e6 + x."""
import json
import os

import tt

with tt.tmpdir() as d:
    a = tt.gen(os.path.join(d, "a.gpuprof"))
    b = tt.gen(os.path.join(d, "b.gpuprof"), "b")
    m = os.path.join(d, "m.gpuprof")
    tt.gp("merge", a, b, "-o", m)
    recs = [json.loads(l) for l in tt.gp("dump", "--json", m).stdout.splitlines()]
    ra = [json.loads(l) for l in tt.gp("dump", "--json", a).stdout.splitlines()]
    rb = [json.loads(l) for l in tt.gp("dump", "--json", b).stdout.splitlines()]

    def key(r):
        return (r["type"], r.get("corr"), r.get("message"), r.get("name"), r.get("tid"))

    timed = ("api", "kernel", "memcpy", "memset", "nvtx_range", "nvtx_mark", "dropped", "counter")
    by_pid = {1000: [], 2000: []}
    for r in recs:
        if r["type"] in timed:
            by_pid.setdefault(r["pid"], []).append(r)
    tt.eq(sorted(by_pid), [1000, 2000], "pids kept")
    tt.eq(len(by_pid[1000]), len([r for r in ra if r["type"] in timed]), "all records of a")
    tt.eq(len(by_pid[2000]), len([r for r in rb if r["type"] in timed]), "all records of b")
    shift = {1000: 0, 2000: 1_000_000_000 + 1_000_000 - 5_000_000_000}
    for src, pid in ((ra, 1000), (rb, 2000)):
        want = sorted((key(r), r.get("start", r.get("ts")) + shift[pid]) for r in src if r["type"] in timed)
        got = sorted((key(r), r.get("start", r.get("ts"))) for r in by_pid[pid])
        tt.eq(got, want, f"pid {pid}: names and translated times")
    # concrete: b's first kernel (corr 2 at T0b + 30000)
    k = [r for r in by_pid[2000] if r["type"] == "kernel" and r["corr"] == 2][0]
    tt.eq((k["start"], k["dur"]), (1_001_030_000, 10000), "b kernel on a's axis")
    # strings did not collide: b's process name and domain survive
    procs = sorted((r["pid"], r["name"], r["rank"]) for r in recs if r["type"] == "process")
    tt.eq(procs, [(1000, "python train.py", -1), (2000, "python train.py --rank 1", 1)], "processes")
    devs = sorted((r["pid"], r["name"]) for r in recs if r["type"] == "device")
    tt.eq(devs, [(1000, "NVIDIA H200"), (2000, "NVIDIA H200")], "devices keep their pid")
    # one time axis: the merged dump is time ordered across both processes
    ts = [r.get("start", r.get("ts")) for r in recs if r["type"] in timed and r["type"] != "nvtx_range"]
    tt.expect(ts == sorted(ts), "merged records in time order")
    # stats per process still attribute NVTX per thread: train_step twice per
    # pid, one row per process (rank 1's process record has a rank, 1000's not)
    st = json.loads(tt.gp("stats", "--format", "json", "--report", "nvtx,util", m).stdout)
    n = {(r["pid"], r["rank"]): r for r in st["nvtx"] if r["range"] == "train_step"}
    tt.eq({k: (r["instances"], r["gpu_kernel_ns"]) for k, r in n.items()},
          {(2000, 1): (2, 44000), (1000, None): (2, 44000)}, "merged nvtx, per process")
    tt.eq(sorted((r["pid"], r["stream"]) for r in st["util"] if r["stream"] == "all"),
          [(1000, "all"), (2000, "all")], "util per process/device")
    # output exists -> refuse; missing input -> 2
    tt.eq(tt.gp("merge", a, b, "-o", m, check=False).returncode, 1, "existing output refused")
    tt.eq(tt.gp("merge", a, os.path.join(d, "nope"), "-o", os.path.join(d, "x.gpuprof"), check=False).returncode,
          2, "missing input")
    tt.expect(not os.path.exists(os.path.join(d, "x.gpuprof")), "no partial output left behind")
tt.finish()
