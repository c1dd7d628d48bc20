"""`gpuprof steps` on the traces of gen_steps.c; every figure below is worked
out by hand from the timelines in gen_steps.c (times in ns after T0, which
is the trace start), then the layout is pinned by golden files
(GPUPROF_UPDATE_GOLDEN=1 rewrites them; review the diff).

Idle-category trace, step 0 [0,100000):
  compute  K1 [10000,30000) K2 [30000,45000) K3 [50000,60000) K4 [62000,70000)
           K5 [90000,95000)                                      = 58000
  memory   M1 [95000,97000)                                       =  2000
  host     [0,10000): K1's call (2000) came after the drain (0: no earlier
           work); [99000,100000): the next call (K6, 101000) comes after
           the drain at 97000, and the sync call ended at 99000  = 11000
  sync     [97000,99000) of that gap: cudaStreamSynchronize      =  2000
  launch   [45000,50000): K3's call [40000,48000) still running at the
           drain; [60000,62000): K4 queued (call ended 57000), gap
           2000 <= 10 us                                          =  7000
  other    [70000,90000): K5 queued at 64000, gap 20 us > 10 us   = 20000
  launched: K1..K5 + M1 (any thread; K4, K5 from the autograd thread);
  CPU durations 3000 3000 8000 2000 1000 3000 -> median 3000; delays 5000
  21000 2000 5000 26000 1000 -> median 5000, max 26000; queue: K2 launched
  (6000) before K1 started (10000) -> 2; short: M1 (2000 on the GPU < 3000
  on the CPU); host pause: [9000,40000) = 31000.
step 1 [100000,200000):
  compute  K6 [105000,125000) + graph G1, G2 [160000,180000)      = 40000
  comm     N1 [110000,140000) minus K6                           = 15000
  memory   M2 [115000,145000) minus K6 and N1                    =  5000
  host     [100000,105000) + [145000,160000) less sync + [180000,200000)
                                                     5000+12000+20000 = 37000
  sync     [145000,148000): cudaDeviceSynchronize                =  3000
  launched: K6, N1, G1, G2 (the graph launch at 150000: both its kernels),
  M2; kernel time 70000; delays 2000 4000 7000 8000 18000 -> 7000; queue 2
  (the graph's two kernels); pause [152000,200000) = 48000.
step 2 [200000,300000):
  compute  K7 20000 + K8 30000 + K9 2000                          = 52000
  host     [200000,210000) + [230000,250000) + [284000,300000)   = 46000
  other    [280000,282000): K9 has no launch call                 =  2000
  launched: K7, K8 (K9 has no call); delays 4000 9000 -> 6500; 1 cudaMalloc.
Summary: 3 steps of 100000, none warm-up (step 0's 5 kernels are within 2
of the steady median 3), busy (150000+15000+7000)/300000 = 57.3 %.
Phases: forward (K1, K2) 35000; backward (K3, K4, K5) 23000 any-thread, K3
only (10000) same-thread, which also drops K4, K5 from step 0.

Steady trace (NVTX "iteration <k>"): normal step 60000 = compute 45000 +
host 5000 + [s+50000,s+60000): sync 2000 + host 8000.  Step 0 (95000): its
cudaMalloc makes it warm-up (the steady median makes none); compute 50000,
launch 5000 (autotune's call [50000,51000) at the drain), host 40000.  Step
5 (95000): host 48000, the pause [552000,595000) = 43000 (median 19000).
Counted steps 1..7: median 60000, p90 60000 + 0.4 x 35000 = 74000, spread
23.3 %, busy 315000 / 455000 = 69.2 %; outlier: step 5 (MAD 0, threshold
20 % of 60000).
A host that runs ahead (gen_advise fp32-ahead): steps of 100000 that launch
4 kernels of 2000000 each, run back to back: the GPU work per step, 8000000,
is the step time shown (over 1.2 x the host's step), GPU busy not given.
Without NVTX, the trace method: gemm starts each step (relu follows it
back to back; the GPU idles before gemm), steps [s_k+1000, s_k+1+1000):
100000 each, step 5 150000 (outlier), the last step partial.
"""
import json
import os
import subprocess

import tt

GEN_STEPS = os.path.join(os.path.dirname(tt.GEN), "gen_steps")
ALL = "steps,step_buckets,step_launch,step_outliers,step_phases,step_rows"
BUCKETS = ("compute_ns", "comm_ns", "memory_ns", "host_wait_ns", "sync_ns", "launch_ns", "other_ns")


def gen(path, *opts):
    subprocess.run([GEN_STEPS, *opts, path], check=True)
    return path


def steps_json(path, *extra):
    p = tt.gp("steps", "--format", "json", "--report", ALL, *extra, path)
    tt.eq(p.stderr, "", f"stderr of steps {' '.join(extra)}")
    return json.loads(p.stdout)


def row_vals(r, keys):
    return tuple(r[k] for k in keys)


with tt.tmpdir() as d:
    cat = gen(os.path.join(d, "cat.gpuprof"))
    st = steps_json(cat)
    rows = st["step_rows"]
    tt.eq(len(rows), 3, "category trace: steps")
    for r in rows:
        tt.eq(sum(r[k] for k in BUCKETS), r["time_ns"], f"step {r['step']}: buckets add up")
    tt.eq([row_vals(r, BUCKETS) for r in rows], [
        (58000, 0, 2000, 11000, 2000, 7000, 20000),
        (40000, 15000, 5000, 37000, 3000, 0, 0),
        (52000, 0, 0, 46000, 0, 0, 2000),
    ], "buckets per step")
    LAUNCHED = ("kernels", "kernel_time_ns", "memops", "other_thread_ops", "cpu_duration_med_ns",
                "launch_delay_med_ns", "launch_delay_max_ns", "queue_length_max", "sync_calls", "alloc_calls",
                "host_pause_ns", "start_ns", "time_ns", "range", "flags")
    tt.eq([row_vals(r, LAUNCHED) for r in rows], [
        (5, 58000, 1, 2, 3000, 5000, 26000, 2, 1, 0, 31000, 0, 100000, "step 0", ""),
        (4, 70000, 1, 0, 2000, 7000, 18000, 2, 1, 0, 48000, 100000, 100000, "step 1", ""),
        (2, 50000, 0, 0, 1000, 6500, 9000, 1, 0, 1, 59000, 200000, 100000, "step 2", ""),
    ], "launched work, launch statistics, host figures per step")
    s = st["steps"][0]
    tt.eq(row_vals(s, ("pid", "method", "steps", "warmup", "counted", "median_ns", "outliers")),
          (4000, "nvtx", 3, 0, 3, 100000, 0), "category summary")
    tt.approx(s["gpu_busy_pct"], 57.3, "busy %")
    tt.eq({b["bucket"]: b["total_ns"] for b in st["step_buckets"]},
          {"compute": 150000, "comm": 15000, "memory": 7000, "host_wait": 94000, "sync": 5000, "launch": 7000,
           "other": 22000, "step": 300000}, "bucket totals")
    tt.approx(sum(b["step_time_pct"] for b in st["step_buckets"] if b["bucket"] != "step"), 100.0,
              "bucket shares add up", tol=0.35)
    ln = st["step_launch"][0]
    tt.eq(row_vals(ln, ("launched_ops", "short_ops", "runtime_outliers", "launch_delay_outliers",
                        "launch_delay_max_ns", "queue_length_max")), (13, 1, 0, 0, 26000, 2), "launch summary")
    tt.eq([row_vals(p, ("phase", "steps", "kernels", "kernel_ns", "memops")) for p in st["step_phases"]],
          [("forward", 1, 2, 35000, 0), ("backward", 1, 3, 23000, 0)], "phases, any thread")

    # the order records arrive in does not matter (ranges first: as written at push)
    first = gen(os.path.join(d, "first.gpuprof"), "--ranges-first")
    tt.eq(steps_json(first), st, "ranges written at push time: same result")

    # step 0's GPU operations written last (a late CUPTI buffer): still the same
    late = gen(os.path.join(d, "late.gpuprof"), "--late-activity")
    tt.eq(steps_json(late), st, "GPU records of step 0 arriving after everything else: same result")

    # a windowed trace (--gpu-window): only step 1 lies inside the window; it
    # keeps its figures, steps 0 and 2 are listed, not counted, not waited for
    win = gen(os.path.join(d, "win.gpuprof"), "--windows")
    ws = steps_json(win)
    tt.eq([r["flags"] for r in ws["step_rows"]], ["no GPU record", "", "no GPU record"], "windowed: flags")
    tt.eq(row_vals(ws["step_rows"][1], BUCKETS + ("kernels", "kernel_time_ns")),
          row_vals(rows[1], BUCKETS + ("kernels", "kernel_time_ns")), "windowed: step 1 as without windows")
    tt.eq(row_vals(ws["steps"][0], ("steps", "counted", "median_ns")), (3, 1, 100000), "windowed summary")
    tt.eq(ws["steps"][0]["warmup"], 0, "windowed: steps with no GPU record are not warm-up")
    p = tt.gp("steps", "--verbose", "--report", "steps", win)
    tt.expect("0 launch calls without an operation" in p.stderr, f"windowed --verbose: {p.stderr!r}")

    # memory: what is held at once does not grow with the number of steps
    for n in (8, 400):
        p = tt.gp("steps", "--verbose", "--report", "steps", gen(os.path.join(d, f"long{n}.gpuprof"), "--steady",
                                                                  "--steps", str(n)))
        held = [int(line.split("held at most ")[1].split()[0]) for line in p.stderr.splitlines() if "held at most" in line]
        tt.eq(len(held), 1, f"--verbose memory line ({n} steps)")
        tt.expect(held and held[0] <= 16, f"{n} steps: held at most {held} records (one step is 9)")
        tt.expect(f"pid 5000: {n} steps" in p.stderr, f"--verbose: {n} steps")

    # the same-thread projection: the autograd thread's K4, K5 leave step 0 and backward
    same = steps_json(cat, "--attribution", "same-thread")
    r0 = same["step_rows"][0]
    tt.eq(row_vals(r0, ("kernels", "kernel_time_ns", "other_thread_ops")), (3, 45000, 0), "same-thread step 0")
    tt.eq(row_vals(r0, BUCKETS), row_vals(rows[0], BUCKETS), "same-thread: the time buckets do not move")
    tt.eq([row_vals(p, ("phase", "kernels", "kernel_ns")) for p in same["step_phases"]],
          [("forward", 2, 35000), ("backward", 1, 10000)], "same-thread phases")

    # --kernel-wait 1ns: K4's 2000 ns gap is no longer launch latency
    kw = steps_json(cat, "--kernel-wait", "1ns")
    tt.eq(row_vals(kw["step_rows"][0], ("launch_ns", "other_ns")), (5000, 22000), "--kernel-wait 1ns")

    # steady trace: warm-up, outlier, what differs
    steady = gen(os.path.join(d, "steady.gpuprof"), "--steady")
    sd = steps_json(steady)
    s = sd["steps"][0]
    tt.eq(row_vals(s, ("method", "steps", "warmup", "counted", "median_ns", "p90_ns", "max_ns", "min_ns",
                       "outliers")), ("nvtx", 8, 1, 7, 60000, 74000, 95000, 60000, 1), "steady summary")
    tt.approx(s["spread_pct"], 23.3, "spread")
    tt.approx(s["gpu_busy_pct"], 69.2, "steady busy")
    tt.eq([r["flags"] for r in sd["step_rows"]], ["warm-up", "", "", "", "", "outlier", "", ""], "flags")
    tt.eq(row_vals(sd["step_rows"][0], BUCKETS), (50000, 0, 0, 40000, 0, 5000, 0), "warm-up step buckets")
    tt.eq(row_vals(sd["step_rows"][1], BUCKETS), (45000, 0, 0, 13000, 2000, 0, 0), "normal step buckets")
    tt.eq([row_vals(o, ("step", "time_ns", "what_differs")) for o in sd["step_outliers"]],
          [(5, 95000, "host_wait +35.000 us; host pause 43.000 us with no API call (median 19.000 us)")],
          "outlier and what differs")
    tt.eq([row_vals(p, ("phase", "steps", "kernels", "kernel_ns")) for p in sd["step_phases"]],
          [("train_step", 7, 14, 315000)], "phases: the ranges directly inside (train_step), counted steps")
    kept = steps_json(steady, "--keep-warmup")
    tt.eq(row_vals(kept["steps"][0], ("warmup", "counted", "median_ns", "outliers")), (1, 8, 60000, 2),
          "--keep-warmup counts step 0 (and it becomes an outlier)")
    named = steps_json(steady, "--step-range", "train_step")
    tt.eq(row_vals(named["steps"][0], ("steps", "method")), (8, "nvtx"), "--step-range train_step")
    tt.eq(named["step_rows"][1]["time_ns"], 59700, "--step-range: the inner ranges are the steps")
    p = tt.gp("steps", "--step-range", "nosuch", steady, check=False)
    tt.eq(p.returncode, 2, "--step-range with no such range: exit 2")
    tt.expect("no NVTX range named 'nosuch'" in p.stderr, f"--step-range message: {p.stderr!r}")

    # stats --report nvtx: "iteration 0" .. "iteration 7" are one row "iteration *"
    # (8 ranges: 95000 twice, 60000 six times: median 60000, p90 at rank 6.3 = 95000)
    nv = json.loads(tt.gp("stats", "--report", "nvtx", "--format", "json", steady).stdout)["nvtx"]
    it = [r for r in nv if r["range"].startswith("iteration")]
    tt.eq([row_vals(r, ("range", "instances", "total_ns", "med_ns", "p90_ns", "max_ns")) for r in it],
          [("iteration *", 8, 550000, 60000, 95000, 95000)], "nvtx: numbered names grouped")
    nvi = json.loads(tt.gp("stats", "--report", "nvtx", "--nvtx-instances", "--format", "json", steady).stdout)["nvtx"]
    tt.eq(sorted(r["range"] for r in nvi if r["range"].startswith("iteration")), [f"iteration {k}" for k in range(8)],
          "nvtx --nvtx-instances: a row each")

    # no NVTX: the trace method finds the same 8 steps
    bare = gen(os.path.join(d, "bare.gpuprof"), "--steady", "--no-nvtx")
    tr = steps_json(bare)
    s = tr["steps"][0]
    tt.eq(row_vals(s, ("method", "steps", "warmup", "counted", "median_ns", "max_ns", "outliers")),
          ("trace", 8, 1, 6, 100000, 150000, 1), "trace summary")
    tt.expect("'sm90_xmma_gemm_f32f32_kernel'" in s["defined_by"], f"marker: {s['defined_by']!r}")
    starts = [0, 100000, 200000, 300000, 400000, 500000, 650000, 750000]
    tt.eq([r["start_ns"] for r in tr["step_rows"]], [x + 1000 for x in starts], "trace steps start at gemm's call")
    tt.eq([r["flags"] for r in tr["step_rows"]], ["warm-up", "", "", "", "", "outlier", "", "partial"],
          "trace flags")
    tt.eq(tr["step_rows"][7]["time_ns"], 49000, "partial step ends with its GPU work")
    tt.eq(row_vals(tr["step_rows"][1], BUCKETS), (45000, 0, 0, 53000, 2000, 0, 0), "trace step 1 buckets")
    # the same trace with NVTX, asked for the trace method: same count, each
    # detected step starts inside the NVTX step of the same index (1000 ns in)
    forced = steps_json(steady, "--method", "trace")
    tt.eq(len(forced["step_rows"]), len(sd["step_rows"]), "trace method: as many steps as NVTX")
    tt.eq([t["start_ns"] - n["start_ns"] for t, n in zip(forced["step_rows"], sd["step_rows"])], [1000] * 8,
          "boundary offsets")

    # a GPU record written 150,000 GPU records after its turn (gen_bigtrace
    # --late: a CUPTI buffer returned late) holds every step launched after
    # its call until it comes; the steps then finalized together give the
    # figures of the same trace written in order, step for step
    gen_big = os.path.join(tt.B, "bench", "gen_bigtrace")
    inorder, late = os.path.join(d, "inorder.gpuprof"), os.path.join(d, "late.gpuprof")
    subprocess.run([gen_big, "200000", inorder], check=True, capture_output=True)
    subprocess.run([gen_big, "--late", "200000", late], check=True, capture_output=True)
    a = tt.gp("steps", "--per-step", "--format", "json", "--threads", "1", inorder).stdout
    b = tt.gp("steps", "--per-step", "--format", "json", "--threads", "1", late).stdout
    tt.expect(len(json.loads(a)["step_rows"]) > 200, "bigtrace: its steps")
    tt.eq(b, a, "steps of a trace with a late GPU record: those of the trace in order")

    # the same job with no hint from us (gen_bigtrace --no-nvtx: no NVTX
    # range): the trace method finds every step the generator wrote, each
    # from its batch's cudaMemcpyAsync call (as `dump` lists them), on 1
    # thread and in 3 slices alike.  Returns the steps' JSON.
    def no_hint_steps(name, flags, what):
        path = os.path.join(d, name)
        g = subprocess.run([gen_big, "--no-nvtx", *flags, "200000", path], check=True, capture_output=True, text=True)
        nsteps = int(g.stderr.split(" steps, ")[0].rsplit(" ", 1)[1])
        calls = [int(ln.split()[0]) for ln in tt.gp("dump", "--type", "api", path).stdout.splitlines()
                 if ln.endswith(" cudaMemcpyAsync")]
        one = tt.gp("steps", "--per-step", "--format", "json", "--threads", "1", path).stdout
        j = json.loads(one)
        tt.eq((j["steps"][0]["method"], j["steps"][0]["steps"], len(calls)), ("trace", nsteps, nsteps),
              f"{what}: the trace method finds the generator's steps")
        tt.eq([r["start_ns"] for r in j["step_rows"]], calls, f"{what}: each step starts at its batch copy's call")
        tt.eq((j["steps"][0]["counted"], [i for i, r in enumerate(j["step_rows"]) if "partial" in r["flags"]]),
              (nsteps - 1, [nsteps - 1]), f"{what}: all counted but the last (partial)")
        three = tt.gp("steps", "--per-step", "--format", "json", "--threads", "3", path).stdout
        tt.eq(three, one, f"{what}: the steps in 3 slices are those of one thread")
        # a --steps window: with threads, the trace method's pass runs in slices (stats_selection.c)
        w = [tt.gp("dump", "--steps", "50:52", "--threads", k, path).stdout for k in ("1", "3")]
        tt.eq(w[1], w[0], f"{what}: dump --steps 50:52 in 3 slices is that of one thread")
        rows = j["step_rows"]
        timed = [int(ln.split()[0]) for ln in w[0].splitlines() if ln.split()[0].isdigit() and int(ln.split()[0])]
        end = rows[52]["start_ns"] + rows[52]["time_ns"]
        tt.expect(len(timed) > 100 and all(rows[50]["start_ns"] <= t < end for t in timed),
                  f"{what}: dump --steps 50:52 holds only steps 50..52's records ({len(timed)})")
        return path, j

    no_hint_steps("nonvtx.gpuprof", [], "no NVTX")
    # ... and its batch of a size drawn per step (--batch-varies, as an input
    # padded to its longest sequence, and a GEMM kernel picked by the
    # batch's size): no step runs alike with the copy's size, nor without
    # it, so the method looks for steps like one another, sizes left out
    varies, j = no_hint_steps("varies.gpuprof", ["--batch-varies"], "batch of varying size")
    tt.expect("alike within max(2, 10 %) operations" in j["steps"][0]["defined_by"],
              f"batch of varying size: alike within 10 %: {j['steps'][0]['defined_by']!r}")
    sizes = {ln.split("bytes=")[1].split()[0] for ln in tt.gp("dump", "--type", "memcpy", varies).stdout.splitlines()
             if "HtoD" in ln}
    tt.expect(len(sizes) > 10, f"--batch-varies: the batch's sizes vary ({len(sizes)})")
    tt.expect("copy of any size" in j["steps"][0]["defined_by"] and "sizes left out" in j["steps"][0]["defined_by"],
              f"batch of varying size: Steps Are says so: {j['steps'][0]['defined_by']!r}")

    # errors
    p = tt.gp("steps", "--method", "bogus", cat, check=False)
    tt.eq(p.returncode, 1, "--method bogus: usage error")
    # every command that finds steps parses and checks its step options
    # alike (cmd/stepopt.h): report and diff ran with --method trace and
    # ignored --step-range
    for cmd in (["steps"], ["advise"], ["report", "-o", os.path.join(d, "r.html")], ["diff", cat]):
        p = tt.gp(*cmd, "--step-range", "x", "--method", "trace", cat, check=False)
        tt.eq(p.returncode, 1, f"{cmd[0]}: --step-range with --method trace: usage error")
        tt.expect("does not go with --method trace" in p.stderr, f"{cmd[0]}: the message: {p.stderr!r}")
        p = tt.gp(*cmd, "--method", "bogus", cat, check=False)
        tt.expect(p.returncode == 1 and "unknown --method 'bogus'" in p.stderr, f"{cmd[0]}: --method bogus")
    junk = os.path.join(d, "junk.gpuprof")
    with open(junk, "wb") as f:
        f.write(b"not a trace at all" * 10)
    p = tt.gp("steps", junk, check=False)
    tt.eq(p.returncode, 2, "not a trace: exit 2")
    tt.expect("cannot read" in p.stderr, f"not a trace: message {p.stderr!r}")

    # layout
    tt.golden("steps_cat_table", "steps", "--per-step", cat)
    tt.golden("steps_cat_csv", "steps", "--per-step", "--format", "csv", cat)
    tt.golden("steps_cat_json", "steps", "--per-step", "--format", "json", cat)
    tt.golden("steps_steady_table", "steps", steady)
    tt.golden("steps_trace_table", "steps", "--per-step", bare)

    # a host that runs ahead (gen_advise fp32-ahead: steps of 100 us that
    # launch 4 kernels of 2 ms each): the step time is the GPU's, 8000000,
    # not the host's 100000 with GPU busy 95 % (issue #38)
    ahead = os.path.join(d, "ahead.gpuprof")
    subprocess.run([os.path.join(os.path.dirname(tt.GEN), "gen_advise"), "fp32-ahead", ahead], check=True)
    row = json.loads(tt.gp("steps", "--format", "json", ahead).stdout)["steps"][0]
    tt.eq((row["median_ns"], row["max_ns"], row["min_ns"], row["gpu_busy_pct"]), (8000000, 8000000, 8000000, None),
          "run-ahead host: the step time is the GPU work launched per step, no GPU busy")
    tt.expect(row["defined_by"].startswith("host runs ahead, times are the GPU's: "),
              f"run-ahead host: said in the table ({row['defined_by']!r})")
    tt.golden("steps_ahead_table", "steps", ahead)
    page = os.path.join(d, "ahead.html")
    tt.gp("report", "-o", page, ahead)
    tt.expect("host runs ahead, times are the GPU" in open(page, encoding="utf-8").read(),
              "run-ahead host: the report's steps table says so")

tt.finish()
