"""`gpuprof stats --report comm` on merged rank traces (gen_ranks.c has the
timeline; every figure below is worked out by hand from it, times in ns on
the merged axis).

rank 0 kernels: gemm [10000,20000) [15000,22000) [20000,30000) [70000,80000)
  [112000,118000); NCCL AllReduce [25000,35000) [75000,90000), Broadcast
  [130000,131000).
  Comm = 10000+15000+1000 = 26000; Compute = union [10000,30000) 20000 +
  10000 + 6000 = 36000 (5 kernels); Overlap = [25000,30000) + [75000,80000)
  = 10000, 38.46 % of Comm; Exposed = 16000.
rank 1 kernels: gemm [11000,24000) [40000,45000) [71000,76000); NCCL
  AllReduce [28000,35000) [74000,90000), Broadcast [129000,131000).
  Comm = 7000+16000+2000 = 25000; Compute = 13000+5000+5000 = 23000;
  Overlap = [74000,76000) = 2000, 8 %; Exposed = 23000.
Collectives by order: #1 starts 25000 / 28000 -> wait r0 3000, r1 0;
  #2 75000 / 74000 -> r0 0, r1 1000; #3 130000 / 129000 -> r0 0, r1 1000.
  Wait r0 3000 (11.54 % of Comm, max 3000), r1 2000 (8 %, max 1000).
Steps (kernels by the start of their launch call, any thread of the process:
the one attribution rule, tools/analysis/join/attribution.h; rank 1's kernel
without a launch call belongs to no step):
  r0 step 0 [1000,51000): gemm x3 + AllReduce#1: comm 10000, compute 20000,
     overlap 5000, wait 3000
  r1 step 0 [1500,52000): gemm [11000,24000) + AllReduce#1 (not the gemm
     [40000,45000) without a call): comm 7000, compute 13000, overlap 0,
     wait 0
  r0 step 1 [60000,110000): gemm [70000,80000), [112000,118000) (launched
     at 105000, runs after the step) + AllReduce#2: comm 15000, compute
     16000, overlap 5000, wait 0
  r1 step 1 [60500,100500): gemm [71000,76000) + AllReduce#2: comm 16000,
     compute 5000, overlap 2000, wait 1000
  The Broadcasts were launched outside every step; "forward" is nested
  (depth 1), not a step."""
import json
import os
import subprocess

import tt

GEN_RANKS = os.path.join(os.path.dirname(tt.GEN), "gen_ranks")


def gen(path, *opts):
    subprocess.run([GEN_RANKS, *opts, path], check=True)
    return path


def stats_json(path, *extra):
    p = tt.gp("stats", "--format", "json", *extra, path)
    return json.loads(p.stdout), p.stderr


RANK_KEYS = ("rank", "pid", "nccl_kernels", "comm_ns", "compute_kernels", "compute_ns", "overlap_ns",
             "overlap_pct", "exposed_comm_ns", "wait_ns", "wait_pct", "max_wait_ns")
STEP_KEYS = ("rank", "pid", "occurrence", "start_ns", "step_ns", "kernels", "collectives", "comm_ns",
             "compute_ns", "overlap_ns", "wait_ns", "range")
R0 = (0, 3000, 3, 26000, 5, 36000, 10000, 100 * 10000 / 26000, 16000, 3000, 100 * 3000 / 26000, 3000)
R1 = (1, 3001, 3, 25000, 3, 23000, 2000, 100 * 2000 / 25000, 23000, 2000, 100 * 2000 / 25000, 1000)
STEPS = [
    (0, 3000, 1, 1000, 50000, 4, 1, 10000, 20000, 5000, 3000, "step 0"),
    (1, 3001, 1, 1500, 50500, 2, 1, 7000, 13000, 0, 0, "step 0"),
    (0, 3000, 1, 60000, 50000, 3, 1, 15000, 16000, 5000, 0, "step 1"),
    (1, 3001, 1, 60500, 40000, 2, 1, 16000, 5000, 2000, 1000, "step 1"),
]


def rows(report, keys):
    return [tuple(r[k] for k in keys) for r in report]


def no_wait(t):
    """a row tuple with the wait figures blanked (they are null when unmatched)"""
    return t[:9] + (None, None, None)


with tt.tmpdir() as d:
    r0 = gen(os.path.join(d, "r0.gpuprof"), "--rank", "0")
    r1 = gen(os.path.join(d, "r1.gpuprof"), "--rank", "1")
    m = os.path.join(d, "m.gpuprof")
    tt.gp("merge", r0, r1, "-o", m)

    # --- the merged 2-rank trace: every figure
    st, err = stats_json(m, "--report", "comm")
    tt.eq(sorted(st), ["comm", "comm_steps"], "--report comm prints both tables")
    tt.eq(rows(st["comm"], RANK_KEYS), [R0, R1], "per-rank comm/compute/overlap/wait")
    tt.eq(rows(st["comm_steps"], STEP_KEYS), STEPS, "per-step rows")
    tt.eq(err, "", "no complaint on matched collectives")
    st, _ = stats_json(m, "--report", "comm_steps")
    tt.eq(sorted(st), ["comm_steps"], "--report comm_steps alone")

    # --- nvtx per process (the merged trace holds two): "step <i>" grouped per
    # rank; GPU time of the kernels launched while the range was open (any
    # thread): r0 step 0: gemm 10000+10000+7000 + AllReduce 10000 = 37000,
    # step 1: gemm 10000 + AllReduce 15000 + gemm 6000 (launched at 105000)
    # = 31000; r1 step 0: gemm 13000 + AllReduce 7000 (not the kernel without
    # a call), step 1: gemm 5000 + AllReduce 16000; forward: r0 the three
    # gemms and the AllReduce launched at 4000 = 37000, r1 13000 + 7000
    NV = ("pid", "rank", "range", "instances", "total_ns", "gpu_kernel_ns")
    st, _ = stats_json(m, "--report", "nvtx")
    tt.eq(sorted(rows(st["nvtx"], NV)),
          [(3000, 0, "forward", 1, 7500, 37000), (3000, 0, "step *", 2, 100000, 68000),
           (3001, 1, "forward", 1, 7000, 20000), (3001, 1, "step *", 2, 90500, 41000)],
          "nvtx: per process (rank) when the trace has several")
    st, _ = stats_json(m, "--report", "nvtx", "--by", "none")
    tt.eq(sorted(rows(st["nvtx"], NV[2:])), [("forward", 2, 14500, 57000), ("step *", 4, 190500, 109000)],
          "nvtx --by none: merged")
    st, _ = stats_json(r0, "--report", "nvtx", "--by", "process")
    tt.eq(sorted(rows(st["nvtx"], NV)), [(3000, 0, "forward", 1, 7500, 37000), (3000, 0, "step *", 2, 100000, 68000)],
          "nvtx --by process on one rank's trace: the header's rank")

    # table and csv: same figures, the note says how wait was matched
    tab = tt.gp("stats", "--report", "comm", "--width", "0", m).stdout
    tt.expect("3 collectives matched across 2 ranks" in tab, "table note on matching:\n" + tab)
    tt.expect("    0  3000             3     26,000" in tab, "table row rank 0:\n" + tab)
    csv = tt.gp("stats", "--report", "comm", "--format", "csv", m).stdout.splitlines()
    tt.eq((csv[0], csv[1].split(",")[0]), ("# comm", "Rank"), "csv sections")
    tt.eq(csv[2], "0,3000,3,26000,5,36000,10000,38.46153846153846,16000,3000,11.538461538461538,3000", "csv rank 0")
    tt.expect("# comm_steps" in csv and "1,3001,1,60500,40000,2,1,16000,5000,2000,1000,step 1" in csv,
              "csv step row")

    # --- default report set: comm is in it for NCCL or multi-process traces
    st, _ = stats_json(m)
    tt.expect("comm" in st and "comm_steps" in st, "default set of a merged NCCL trace has comm")
    plain = tt.gen(os.path.join(d, "plain.gpuprof"))
    st, _ = stats_json(plain)
    tt.expect("comm" not in st and "comm_steps" not in st, "default set of a 1-process non-NCCL trace")
    st, _ = stats_json(r0)
    tt.expect("comm" in st, "default set of a single rank with NCCL kernels has comm")

    # --- one rank alone: wait 0, and the note says why
    st, err = stats_json(r0, "--report", "comm")
    tt.eq(rows(st["comm"], RANK_KEYS), [R0[:9] + (0, 0.0, 0)], "single rank: wait 0")
    tt.eq([r["wait_ns"] for r in st["comm_steps"]], [0, 0], "single rank: step waits 0")
    tt.eq(err, "", "single rank: no complaint")
    tab = tt.gp("stats", "--report", "comm", "--width", "0", r0).stdout
    tt.expect("the trace has one rank" in tab, "single-rank note:\n" + tab)

    # --- the launcher's trace (no kernels) merged in: left out, waits unchanged
    la = gen(os.path.join(d, "launcher.gpuprof"), "--launcher")
    m3 = os.path.join(d, "m3.gpuprof")
    tt.gp("merge", la, r0, r1, "-o", m3)
    st, err = stats_json(m3, "--report", "comm")
    tt.eq(rows(st["comm"], RANK_KEYS), [R0, R1], "3 processes, launcher without kernels left out")
    tt.eq(rows(st["comm_steps"], STEP_KEYS), STEPS, "steps on the launcher's time axis")
    tt.expect("processes without kernels (a launcher) are left out" in tt.gp("stats", "--report", "comm", "--width", "0", m3).stdout,
              "note on the left-out launcher")

    # --- a process with kernels but no rank (gen_trace's, pid 1000): shown, not matched
    mp = os.path.join(d, "mp.gpuprof")
    tt.gp("merge", r0, r1, plain, "-o", mp)
    st, err = stats_json(mp, "--report", "comm")
    # gen_trace: kernels [30000,40000) [40000,60000) [70000,76000) [120000,125000) [210000,218000), no NCCL
    tt.eq(rows(st["comm"], RANK_KEYS), [R0, R1, (None, 1000, 0, 0, 5, 49000, 0, None, 0, None, None, None)],
          "unranked process beside the ranks: no wait, ranks still matched")
    tt.eq(err, "", "unranked process: no complaint")
    tt.expect("Processes without a rank (1) take no part" in tt.gp("stats", "--report", "comm", "--width", "0", mp).stdout,
              "note on the unranked process")

    # --- mismatched collective counts: the note, no wait figures, the rest intact
    r1d = gen(os.path.join(d, "r1d.gpuprof"), "--rank", "1", "--drop-last")
    md = os.path.join(d, "md.gpuprof")
    tt.gp("merge", r0, r1d, "-o", md)
    st, err = stats_json(md, "--report", "comm")
    r1_dropped = (1, 3001, 2, 23000, 3, 23000, 2000, 2000 / 23000 * 100, 21000)
    got = rows(st["comm"], RANK_KEYS)
    tt.eq(got[0], no_wait(R0), "count mismatch: rank 0 without waits")
    tt.eq(got[1][:7] + got[1][8:], r1_dropped[:7] + r1_dropped[8:] + (None, None, None),
          "count mismatch: rank 1 without waits")
    tt.approx(got[1][7], 8.7, "count mismatch: rank 1 overlap %")
    tt.eq([r["wait_ns"] for r in st["comm_steps"]], [None] * 4, "count mismatch: no step waits")
    tt.expect("rank 0 ran 3 NCCL kernels, rank 1 ran 2" in err and "no wait figures" in err,
              "count mismatch said on stderr: " + err)
    tab = tt.gp("stats", "--report", "comm", "--width", "0", md).stdout
    tt.expect("Wait: not computed" in tab and "rank 0 ran 3 NCCL kernels, rank 1 ran 2" in tab,
              "count mismatch note:\n" + tab)

    # --- same counts, different names: refused too
    r1n = gen(os.path.join(d, "r1n.gpuprof"), "--rank", "1", "--rename")
    mn = os.path.join(d, "mn.gpuprof")
    tt.gp("merge", r0, r1n, "-o", mn)
    st, err = stats_json(mn, "--report", "comm")
    tt.eq(rows(st["comm"], RANK_KEYS), [no_wait(R0), no_wait(R1)], "name mismatch: no waits")
    tt.expect("NCCL kernel #2 is ncclDevKernel_AllReduce_Sum_f32_RING_LL" in err and
              "but ncclDevKernel_ReduceScatter_Sum_f32_RING_LL" in err and "on rank 1" in err,
              "name mismatch said on stderr: " + err)

    # --- clocks that disagree: rank 1 lands 20 us late; waits capped at the kernel's duration
    r1s = gen(os.path.join(d, "r1s.gpuprof"), "--rank", "1", "--skew", "20000")
    ms = os.path.join(d, "ms.gpuprof")
    tt.gp("merge", r0, r1s, "-o", ms)
    st, err = stats_json(ms, "--report", "comm")
    # rank 1's collectives now start at 48000, 94000, 149000: rank 0 would wait
    # 23000, 19000, 19000 but its kernels ran 10000, 15000, 1000
    tt.eq([(r["rank"], r["wait_ns"], r["max_wait_ns"]) for r in st["comm"]], [(0, 26000, 15000), (1, 0, 0)],
          "skewed clocks: capped waits")
    tt.expect("3 waits longer than the kernel itself" in err, "skew said on stderr: " + err)

    # --- bad input: a trace without kernels -> exit 0, empty tables, a clear line
    p = tt.gp("stats", "--report", "comm", "--format", "json", la, check=False)
    tt.eq(p.returncode, 0, "no kernels: exit 0")
    tt.eq(json.loads(p.stdout), {"comm": [], "comm_steps": []}, "no kernels: empty tables")
    tt.expect("the trace has no kernel records" in p.stderr, "no kernels: said on stderr: " + p.stderr)
    tab = tt.gp("stats", "--report", "comm", "--width", "0", la).stdout
    tt.expect("none, the trace has no kernels" in tab and "(no data)" in tab, "no kernels: table says so:\n" + tab)
    st, err = stats_json(la)
    tt.expect("comm" not in st and err == "", "no kernels: comm not in the default set, no complaint")

    # --- end to end through the real shim: the fake-CUDA workload run as rank 0
    # and rank 1 (RANK in the environment, %r in the output pattern); each run
    # also forks a CUDA-using child that inherits the rank, so 4 processes.
    # No NCCL kernels: no wait figures; per process, Other Kernels and Compute
    # must equal the count and the interval union of its kernels in `dump`.
    root = os.path.dirname(os.path.dirname(tt.HERE))
    b = os.path.join(root, tt.B) if not os.path.isabs(tt.B) else tt.B
    env = dict(os.environ, GPUPROF_OUTPUT=os.path.join(d, "w-%r.gpuprof"), GPUPROF_QUIET="1",
               GPUPROF_CUPTI=os.path.join(b, "tests", "fake", "libcupti.so.13"),
               LD_PRELOAD=os.path.join(b, "lib", "libgpuprof.so"))
    for rank in ("0", "1"):
        env["RANK"] = rank
        subprocess.run([os.path.join(b, "tests", "fake", "workload")], cwd=d, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    traces = sorted(f for f in os.listdir(d) if f.startswith("w-") and f.endswith(".gpuprof"))
    tt.eq(len(traces), 4, "workload traces (2 ranks x parent and child): %s" % traces)
    mw = os.path.join(d, "mw.gpuprof")
    tt.gp("merge", *[os.path.join(d, f) for f in traces], "-o", mw)
    st, err = stats_json(mw, "--report", "comm")
    tt.eq([r["rank"] for r in st["comm"]], [0, 0, 1, 1], "ranks from the shim's process records")
    tt.eq({(r["nccl_kernels"], r["comm_ns"], r["wait_ns"], r["max_wait_ns"]) for r in st["comm"]},
          {(0, 0, None, None)}, "no NCCL kernels: no comm, no wait")
    kern = {}
    for line in tt.gp("dump", "--json", "--type", "kernel", mw).stdout.splitlines():
        k = json.loads(line)
        kern.setdefault(k["pid"], []).append((k["start"], k["start"] + k["dur"]))
    for r in st["comm"]:
        iv = sorted(kern.get(r["pid"], []))
        union, end = 0, None
        for s, e in iv:
            if end is None or s > end:
                union += e - s
                end = e
            elif e > end:
                union += e - end
                end = e
        tt.eq((r["compute_kernels"], r["compute_ns"]), (len(iv), union), "pid %d: kernels and their union" % r["pid"])
    tt.expect("No NCCL kernels" in tt.gp("stats", "--report", "comm", "--width", "0", mw).stdout, "workload: no-NCCL note")
tt.finish()
