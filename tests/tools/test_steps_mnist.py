"""`gpuprof steps` on the committed H200 MNIST trace, checked against figures
computed here independently from `gpuprof dump --json` (docs/STEPS.md has
the definitions):

 - backward's GPU time = the kernels whose launch call (joined by
   correlation id) started while a 'backward' range was open, from any
   thread of the process (PyTorch's autograd thread launches most of them);
   the same-thread projection keeps only the main thread's;
 - per step: the buckets (recomputed here from the kernel, memcpy, memset
   and API records) and their sum, which is the step's wall time (within
   1 %; it is exact by construction), and the GPU work launched in it;
 - `stats --report nvtx` gives every range the same GPU time (backward's =
   the independent figure; --attribution same-thread the main thread's);
 - `stats --report comm_steps` and `nvtx` launched the same kernels in every
   step as the steps report (one rule: tools/analysis/join/attribution.h);
 - `stats --report util` measures over the steps' span by default (steps 2..54,
   warm-up left out): its busy time is the union of the kernel intervals
   inside [step 2's start, step 54's end), recomputed here, and its busy %
   is close to the steps' compute share (the span adds the gaps between
   steps);
 - without NVTX (--method trace) as many steps are found, and each one
   starts inside the NVTX step of the same index.
"""
import json
import os
import statistics

import tt

TRACE = os.path.join(tt.HERE, "..", "..", "examples", "mnist-h200.gpuprof")
BUCKETS = ("compute_ns", "comm_ns", "memory_ns", "host_wait_ns", "sync_ns", "launch_ns", "other_ns")
KERNEL_WAIT = 10000


def steps_json(*extra):
    p = tt.gp("steps", "--format", "json", "--report", "steps,step_buckets,step_phases,step_rows", *extra, TRACE)
    return json.loads(p.stdout)


def length(u):
    return sum(e - s for s, e in u)


def overlap(a, b):
    i = j = t = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        t += max(0, e - s)
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return t


def cover(u, a, b):
    return sum(max(0, min(e, b) - max(s, a)) for s, e in u)


def is_sync(name):
    return "Synchronize" in name or (("emcpy" in name or "emset" in name) and "Async" not in name)


if not os.path.exists(TRACE):
    print("skip: examples/mnist-h200.gpuprof is not there")
    tt.finish()

dump = tt.gp("dump", "--json", TRACE).stdout.splitlines()
recs = [json.loads(line) for line in dump if line.startswith("{")]
calls = {}
apis = []
for r in recs:
    if r["type"] != "api":
        continue
    apis.append(r)
    if not r.get("corr"):
        continue
    k = (r["pid"], r["corr"])
    c = calls.get(k)
    if c is None:
        calls[k] = {"s": r["start"], "e": r["end"], "tid": r["tid"]}
    else:
        if r["start"] < c["s"]:
            c["s"] = r["start"]
        c["e"] = max(c["e"], r["end"])
ops = []
for r in recs:
    if r["type"] not in ("kernel", "memcpy", "memset"):
        continue
    c = calls.get((r["pid"], r["corr"]))
    cls = "memory" if r["type"] != "kernel" else ("comm" if "nccl" in r["name"].lower() else "compute")
    ops.append({"s": r["start"], "e": max(r["end"], r["start"]), "cls": cls, "kernel": r["type"] == "kernel",
                "call": c, "dur": r["end"] - r["start"]})
ranges = [r for r in recs if r["type"] == "nvtx_range"]
steps = sorted((r for r in ranges if r["message"].startswith("step ") and r["depth"] == 0), key=lambda r: r["start"])
tt.eq(len(steps), 55, "NVTX steps in the trace")


def launched_in(rs, same_thread=False):
    """kernel time and count of the kernels launched while one of rs was open"""
    t = n = 0
    for o in ops:
        c = o["call"]
        if not o["kernel"] or c is None:
            continue
        if any(r["start"] <= c["s"] < r["end"] and (not same_thread or r["tid"] == c["tid"]) for r in rs):
            t += o["dur"]
            n += 1
    return t, n


# --- backward's GPU time, any thread and same thread
bwd = [r for r in ranges if r["message"] == "backward"]
any_ns, any_n = launched_in(bwd)
same_ns, same_n = launched_in(bwd, same_thread=True)
tt.expect(any_ns > 100 * same_ns, f"backward: any-thread {any_ns} ns vs same-thread {same_ns} ns")
st = steps_json("--keep-warmup")
ph = {p["phase"]: p for p in st["step_phases"]}
tt.eq((ph["backward"]["kernel_ns"], ph["backward"]["kernels"]), (any_ns, any_n),
      "backward: kernels launched from any thread while it was open")
same = steps_json("--keep-warmup", "--attribution", "same-thread")
phs = {p["phase"]: p for p in same["step_phases"]}
tt.eq((phs["backward"]["kernel_ns"], phs["backward"]["kernels"]), (same_ns, same_n), "backward, same thread")
for name in ("forward", "optimizer"):
    tt.eq(ph[name]["kernel_ns"], launched_in([r for r in ranges if r["message"] == name])[0], f"{name} kernel time")


def nvtx_rows(*extra):
    out = json.loads(tt.gp("stats", "--report", "nvtx", "--format", "json", *extra, TRACE).stdout)["nvtx"]
    return {r["range"]: r for r in out}


nv = nvtx_rows("--nvtx-instances")
tt.eq(nv["backward"]["gpu_kernel_ns"], any_ns, "nvtx: backward's GPU time = its kernels launched from any thread")
# numbered names: one row 'step *' (count, median, p90 of the 55 steps, their GPU time)
grouped = nvtx_rows()
tt.expect("step 0" not in grouped and "step *" in grouped, f"nvtx rows: {sorted(grouped)}")
durs = sorted(r["end"] - r["start"] for r in steps)
g = grouped.get("step *", {})
tt.eq((g.get("instances"), g.get("med_ns"), g.get("total_ns")), (55, statistics.median(durs), sum(durs)),
      "nvtx 'step *': count, median, total of the step ranges")
k = 0.9 * (len(durs) - 1)
tt.approx(g.get("p90_ns", 0), durs[int(k)] + (k - int(k)) * (durs[int(k) + 1] - durs[int(k)]), "nvtx 'step *' p90",
          tol=0.06)
tt.eq(g.get("gpu_kernel_ns"), sum(nv[f"step {i}"]["gpu_kernel_ns"] for i in range(55)),
      "nvtx 'step *': the steps' GPU time")
tt.eq(nvtx_rows("--attribution", "same-thread")["backward"]["gpu_kernel_ns"], same_ns,
      "nvtx --attribution same-thread: the main thread's")

# --- per step: buckets, computed here
ops.sort(key=lambda o: (o["s"], o["call"] is None, o["call"]["s"] if o["call"] else 0))
sync_u = tt.union([(a["start"], a["end"]) for a in apis if is_sync(a["name"])])
rows = st["step_rows"]
tt.eq(len(rows), 55, "steps found")
for r, n in zip(rows, steps):
    s, e = n["start"], n["end"]
    tt.eq(r["time_ns"], e - s, f"step {r['step']} wall time")
    total = sum(r[k] for k in BUCKETS)
    tt.expect(abs(total - r["time_ns"]) <= 0.01 * r["time_ns"], f"step {r['step']}: buckets {total} vs {r['time_ns']}")
    clip = [(o["cls"], max(o["s"], s), min(o["e"], e)) for o in ops if o["e"] > s and o["s"] < e]
    uc = tt.union([(a, b) for c, a, b in clip if c == "compute"])
    un = tt.union([(a, b) for c, a, b in clip if c == "comm"])
    um = tt.union([(a, b) for c, a, b in clip if c == "memory"])
    ucn = tt.union(uc + un)
    want = {"compute_ns": length(uc), "comm_ns": length(un) - overlap(un, uc), "memory_ns": length(um) - overlap(um, ucn),
            "host_wait_ns": 0, "sync_ns": 0, "launch_ns": 0, "other_ns": 0}
    # idle gaps of the whole timeline, classified by the operation that ends them
    cur = 0
    gaps = []
    for o in ops:
        if o["s"] > cur:
            gaps.append((cur, o["s"], o))
        cur = max(cur, o["e"])
    gaps.append((cur, float("inf"), None))
    for g0, g1, o in gaps:
        a, b = max(g0, s), min(g1, e)
        if a >= b:
            continue
        c = o["call"] if o else None
        if o is not None and c is None:
            want["other_ns"] += b - a
        elif o is None or c["s"] > g0:
            hs = b if o is None or c["s"] >= b else max(c["s"], a)
            sy = cover(sync_u, a, hs)
            want["sync_ns"] += sy
            want["host_wait_ns"] += b - a - sy
        elif c["e"] > g0 or g1 - g0 <= KERNEL_WAIT:
            want["launch_ns"] += b - a
        else:
            want["other_ns"] += b - a
    tt.eq(tuple(r[k] for k in BUCKETS), tuple(want[k] for k in BUCKETS), f"step {r['step']} buckets")
    kt, kn = launched_in([n])
    tt.eq((r["kernel_time_ns"], r["kernels"]), (kt, kn), f"step {r['step']} kernels launched (any thread)")

# stats --report comm_steps attributes by the launch call too (any thread):
# the same kernels and kernel time in every step (one stream: union = sum)
cs = json.loads(tt.gp("stats", "--report", "comm_steps", "--format", "json", TRACE).stdout)["comm_steps"]
by_range = {c["range"]: c for c in cs}
tt.eq([(r["range"], r["kernels"], r["kernel_time_ns"]) for r in rows],
      [(r["range"], by_range[r["range"]]["kernels"], by_range[r["range"]]["compute_ns"]) for r in rows],
      "steps and comm_steps agree on every step")
tt.eq([(r["range"], r["kernel_time_ns"]) for r in rows], [(r["range"], nv[r["range"]]["gpu_kernel_ns"]) for r in rows],
      "steps and nvtx agree on every step")

# the summary counts what it says it counts
norm = steps_json()
s = norm["steps"][0]
tt.eq((s["steps"], s["counted"]), (55, len([r for r in norm["step_rows"] if r["flags"] != "warm-up"])),
      "counted = steps - warm-up")
tt.eq(s["median_ns"], statistics.median([r["time_ns"] for r in norm["step_rows"] if r["flags"] != "warm-up"]),
      "median of the counted steps")

# --- util over the steps' span
u = [r for r in json.loads(tt.gp("stats", "--report", "util", "--format", "json", TRACE).stdout)["util"]
     if r["stream"] == "all"][0]
counted = [(r, n) for r, n in zip(norm["step_rows"], steps) if r["flags"] != "warm-up"]
a, b = counted[0][1]["start"], counted[-1][1]["end"]
tt.eq(u["span_of"], f"steps {counted[0][0]['step']}..{counted[-1][0]['step']} (warm-up left out)", "util: Span Of")
kin = tt.union([(max(o["s"], a), min(o["e"], b)) for o in ops if o["kernel"] and o["e"] > a and o["s"] < b])
tt.eq((u["busy_ns"], u["span_ns"]), (length(kin), b - a), "util over the steps' span: busy and span")
sb = {x["bucket"]: x for x in norm["step_buckets"]}
share = 100.0 * sb["compute"]["total_ns"] / sb["step"]["total_ns"]
tt.expect(abs(u["busy_pct"] - share) <= 0.5, f"util busy {u['busy_pct']} % vs the steps' compute share {share:.2f} %")
print(f"util over the steps: {u['busy_pct']} % busy (whole trace: 0.3 %); steps' compute share {share:.1f} %")

# --- without NVTX
tr = steps_json("--method", "trace")
tt.eq(tr["steps"][0]["method"], "trace", "trace method")
trows = tr["step_rows"]
tt.eq(len(trows), len(rows), "the trace method finds as many steps as there are NVTX steps")
inside = [n["start_ns"] <= t["start_ns"] < n["start_ns"] + n["time_ns"] for t, n in zip(trows, rows)]
tt.eq(inside.count(True), len(rows), "each detected step starts inside the NVTX step of the same index")
offs = sorted(t["start_ns"] - n["start_ns"] for t, n in zip(trows, rows))
print(f"trace vs NVTX boundary offsets: min {offs[0]} ns, median {statistics.median(offs):.0f} ns, "
      f"max {offs[-1]} ns (step 0: its first batch came late)")

tt.finish()
