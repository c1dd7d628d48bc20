"""Selection (--since/--until, --steps A:B, --range NAME) and the time base
(--abs-time) on stats, dump and export, against the timeline of gen_trace.c
(times in ns after T0 = the trace start, 1 s on the trace clock):

  steps: NVTX 'train_step' [0,100000) and [200000,260000), unnumbered, so
  numbered by index: step 0, step 1.
  --steps 1 = [200000,260000): API calls corr 7 (cudaLaunchKernel 4000 ns)
    and 8 (cudaMemcpyAsync 3000 ns); kernel vecAdd [210000,218000); memcpy
    DtoH [244000,256000); ranges train_step (60000) and forward (29000), not
    epoch (it starts at 500).
  --range forward = [1000,40000) + [201000,230000): calls corr 1, 2, 3, 7;
    kernels starting there: vecAdd [30000,40000) and [210000,218000)
    (my_plain_kernel starts at 40000, at the end: out).
  --range epoch (the message of 'mydomain:epoch') = [500,300000): all 9 calls.
  --steps A:B is one window per process, from step A's start to step B's end.
Also gen_steps --steady --no-nvtx (steps found in the trace, 100000 apart
starting at 1000): --steps 2:3 = [201000,401000)."""
import json
import os
import sqlite3
import subprocess

import tt

T0 = 1_000_000_000
GEN_STEPS = os.path.join(os.path.dirname(tt.GEN), "gen_steps")


def jlines(*args):
    return [json.loads(line) for line in tt.gp(*args).stdout.splitlines() if line.startswith("{")]


def stats(*args):
    return json.loads(tt.gp("stats", "--format", "json", *args).stdout)


with tt.tmpdir() as d:
    t = tt.gen(os.path.join(d, "t.gpuprof"))

    # ---- time base: dump is relative to the trace start, --abs-time on the trace clock
    rel = jlines("dump", "--json", "--type", "api", t)
    ab = jlines("dump", "--json", "--type", "api", "--abs-time", t)
    tt.eq([r["start"] for r in rel][:2], [2000, 10000], "dump --json: ns since the trace start")
    tt.eq([r["start"] - T0 for r in ab], [r["start"] for r in rel], "dump --json --abs-time: the trace clock")
    first = tt.gp("dump", "--type", "api", t).stdout.split()[0]
    tt.eq(first, "2000", "dump text: the time column relative too")

    # ---- --steps 1
    s1 = stats("--report", "api,kernels,memops,nvtx", "--steps", "1", t)
    tt.eq(sorted((r["name"], r["total_ns"]) for r in s1["api"]),
          [("cudaLaunchKernel", 4000), ("cudaMemcpyAsync", 3000)], "stats --steps 1: api")
    tt.eq([(r["instances"], r["total_ns"]) for r in s1["kernels"]], [(1, 8000)], "stats --steps 1: kernels (vecAdd)")
    tt.eq([(r["operation"], r["total_ns"]) for r in s1["memops"]], [("[CUDA memcpy Device-to-Host]", 12000)],
          "stats --steps 1: memops")
    tt.eq(sorted((r["range"], r["total_ns"]) for r in s1["nvtx"]), [("forward", 29000), ("train_step", 60000)],
          "stats --steps 1: nvtx")
    dk = jlines("dump", "--json", "--steps", "1", "--type", "kernel,nvtx_range", t)
    tt.eq(sorted((r["type"], r["start"]) for r in dk), [("kernel", 210000), ("nvtx_range", 200000), ("nvtx_range", 201000)],
          "dump --steps 1")
    # A:B is one window, from step A's start to step B's end (the time between included)
    tt.eq(len(jlines("dump", "--json", "--steps", "0:1", "--type", "kernel", t)), 5, "dump --steps 0:1: every kernel")
    tt.eq(len(jlines("dump", "--json", "--steps", ":0", "--type", "kernel", t)), 3, "dump --steps :0")

    # ---- --range
    sr = stats("--report", "api,kernels", "--range", "forward", t)
    tt.eq(sum(r["num_calls"] for r in sr["api"]), 4, "stats --range forward: 4 calls")
    tt.eq(sum(r["instances"] for r in sr["kernels"]), 2, "stats --range forward: 2 kernels")
    tt.eq(len(jlines("dump", "--json", "--range", "epoch", "--type", "api", t)), 9,
          "dump --range epoch (the message of mydomain:epoch): the 9 calls in [500,300000)")
    tt.eq(len(jlines("dump", "--json", "--range", "mydomain:epoch", "--type", "api", t)), 9, "--range domain:message")
    # intersected with --since/--until
    tt.eq(len(jlines("dump", "--json", "--range", "forward", "--since", "100us", "--type", "api", t)), 1,
          "--range forward --since 100us: corr 7 only")

    # ---- export perfetto and sqlite
    pj = os.path.join(d, "p.json")
    tt.gp("export", "--format", "perfetto", "--steps", "1", t, "-o", pj)
    with open(pj) as f:
        doc = json.load(f)
    ts = [e["ts"] for e in doc["traceEvents"] if e.get("ph") == "X"]
    tt.expect(ts and min(ts) >= 200.0 and max(ts) < 260.0, f"perfetto --steps 1: X events inside [200,260) us: {ts}")
    tt.eq(doc["otherData"].get("selection"), "steps 1 (1)", "perfetto: the selection named")
    pa = os.path.join(d, "pa.json")
    tt.gp("export", "--format", "perfetto", "--abs-time", "--range", "forward", t, "-o", pa)
    with open(pa) as f:
        doc = json.load(f)
    ts = sorted(e["ts"] for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cuda_api")
    tt.eq(ts[0], (T0 + 2000) / 1000, "perfetto --abs-time: us on the trace clock")
    db = os.path.join(d, "t.db")
    tt.gp("export", "--format", "sqlite", "--range", "forward", t, "-o", db)
    con = sqlite3.connect(db)
    tt.eq([r[0] for r in con.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start")], [30000, 210000],
          "sqlite --range forward: kernels, ns since the trace start")
    tt.eq(con.execute("SELECT value FROM META_DATA WHERE name='time_base'").fetchone()[0], "ns since start_trace_ns",
          "sqlite: time base named")
    con.close()

    # ---- errors: usage (1), also a selection that names nothing in the trace
    # (issue #40: it exited 2, the code of damaged input)
    for args, code, what in ((("--since", "2s", "--until", "1s"), 1, "must be before --until"),
                             (("--since", "1s", "--until", "1s"), 1, "must be before --until"),
                             (("--steps", "1:0"), 1, "bad --steps"),
                             (("--steps", "x"), 1, "bad --steps"),
                             (("--steps", "5"), 1, "no step numbered so (the steps are numbered 0 to 1)"),
                             (("--range", "nosuch"), 1, "no NVTX range named 'nosuch'")):
        for cmd in (["stats"], ["dump"], ["export", "--format", "perfetto", "-o", os.path.join(d, "x.json")]):
            p = tt.gp(*cmd, *args, t, check=False)
            tt.eq(p.returncode, code, f"{cmd[0]} {' '.join(args)}: exit")
            tt.expect(what in p.stderr, f"{cmd[0]} {' '.join(args)}: message {p.stderr!r}")
    p = tt.gp("export", "--format", "folded", "--steps", "1", t, "-o", "-", check=False)
    tt.eq(p.returncode, 1, "export folded with a selection: usage error")

    # ---- steps found in the trace (no NVTX): a second pass finds them
    bare = os.path.join(d, "bare.gpuprof")
    subprocess.run([GEN_STEPS, "--steady", "--no-nvtx", bare], check=True)
    rows = stats("--report", "step_rows", "--steps", "2:3", bare)["step_rows"]
    tt.eq([(r["step"], r["start_ns"]) for r in rows], [(2, 201000), (3, 301000)], "stats --steps 2:3 (trace steps)")
    ker = jlines("dump", "--json", "--steps", "2:3", "--type", "kernel", bare)
    tt.expect(ker and min(r["start"] for r in ker) >= 201000 and max(r["start"] for r in ker) < 401000,
              f"dump --steps 2:3 (trace steps): kernels inside [201000,401000): {[r['start'] for r in ker]}")

tt.finish()
