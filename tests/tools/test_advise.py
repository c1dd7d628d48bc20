"""`gpuprof advise` on the traces of gen_advise.c: for each rule a trace that
fires it (it is the first finding, with its cost and estimated saving worked
out below from the timelines in gen_advise.c) and one that must not; a
healthy GPU-bound trace gets nothing above info.  Then stacks, PM counters,
several files, bad input, and the layout (golden files;
GPUPROF_UPDATE_GOLDEN=1 rewrites them: review the diff).

Times in ns after the step start s; "per step" = over the counted steps
(steps 1-9 when step 0 is warm-up, else 0-9); tolerance: 1 ns (the per-step
figures are integer sums divided by the number of steps).

input (L 7e6): the GPU idles from the previous step's last kernel end
  (s-180000) to 6020000; before the first launch call (6000000) that is
  input: 6000000 per step (85.7 %: high), saving the same; host idle after
  it 20000 + the tail 180000 = 200000, kernels 200 us > their 5 us calls ->
  host-gaps, 2.9 % -> info.
input-copy (L 7e6): as input, the batch's 1 MiB copy called at 6000000
  first (gpu [6010000, 6030000)), then 3 kernels [6040000, 6640000).  With
  NVTX steps: input 6000000 as for input.  With --no-nvtx the trace method
  starts each step at its copy call (6000000 + k L): the idle from the
  step's last kernel end (640000 after the copy call) to the next step's
  copy call, 7000000 - 640000 = 6360000 per step (90.9 %: high) in steps
  0-8 (9 is the last, partial), is input: loading the next batch; the host
  spends 7000000 - 35000 after its last launch call (it ends 35000 after
  the copy call).  Host idle is left only where the copy and kernels wait
  on their calls.
sync (L 6.03e6, w0): the DtoH copy to pageable memory blocks [2050000,
  6025000) = 3975000 and the stream sync 2000: cost 3977000, 2 calls per
  step.  Idle from the copy's end (6022000) to the next step's first
  kernel (2020000): 8000 + 2020000 = 2028000, all taken by the copy (it
  started before and blocked longer; its window runs until the next work
  issued after it starts).  Steps 1-8 save 2028000 each, step 9 only its
  tail 8000 (no next step); step 1's head belongs to step 0's copy
  (warm-up).  Saving = (8 x 2028000 + 8000) / 9 = 1803555.6 (29.9 %: high).
pageable (L 7.2e6, w0): the pageable copy's call [100000, 5100000) = 5e6
  (cost).  Idle in its window: [395544, 1100000) (the GPU waits while it
  stages: 704456) and [4600000, 5130000) (530000); the copy itself on
  pinned memory: 64 MiB / 50 B/ns (the trace's pinned 16 MiB copies:
  16777216 B in 335544 ns) = 1342176 ns of its 3500000 -> 2157824 saved.
  Saving = 704456 + 530000 + 2157824 = 3392280 (47.1 %: high).
  Without the pinned copy (--no-pinned) the bandwidth is the device's host
  link's (docs/ADVISE.md table: "NVIDIA H200", PCIe Gen5 x16, 50 GB/s):
  64 MiB / 50 = 1342177 ns -> 2157823 saved; the idle in the window is
  now [100000, 1100000) (no pinned copy runs before it: 1000000) and
  530000: 3687823.  On a device not in the table ("NVIDIA X") the copy
  time is assumed unchanged: 1530000; on a GH200 (NVLink-C2C, no figure)
  the same.
synccopy (L 1.8e6, w0): cudaMemcpy [10000, 700000) = 690000 blocked; it
  takes the idle [10000, 20000) before its copy and [470000, 720000) after
  it until the kernel: 260000 (14.4 %: medium).  64 KiB (synccopy-no):
  nsys leaves host-to-device copies up to 64 KB out.
launch (L 2.01e6): 200 kernels of 2 us, each 2 us after its 5 us call;
  the GPU idles 8000 before each (host wait), 7000 before the first after
  the step's first call and 10000 at the step's end: 199 x 8000 + 7000 +
  10000 = 1609000 per step; all 200 kernels shorter than their call ->
  launch-bound; no launch-latency gap in the trace, so 1000 ns per kernel
  assumed for a graph: saving 1609000 - 200 x 1000 = 1409000 (70.1 %),
  below the span of the launch calls (1995000).
fp32 (L 8.06e6): 4 sgemm kernels of 2 ms back to back, the host waiting in
  cudaStreamSynchronize when the GPU drains (GPU-bound): saving per kernel
  floor(2e6 x (1 - 1/3.7)) = 1459459, 5837836 per step (72.4 %).  The same
  kernels with the host late (fp32-host): saving 0, info.  With the host
  running ahead (fp32-ahead, L 100 us): 5837836 per step again, committed
  when the final cudaDeviceSynchronize waits for the last kernel.
underpar: the fp32 timeline with 1-block kernels: floor(2e6 x (1 - 1/132))
  = 1984848, 7939392 per step; with PM samples of 0.8 % SM active (above
  1/132 = 0.76 %): floor(2e6 x 0.992) = 1984000, 7936000.
alloc (L 2e6): cudaMalloc [100000, 400000) and cudaFree [1500000, 1800000)
  each take 300000 of idle (the free the previous step's tail, the malloc
  its own head): cost and saving 600000 (30 %: high), 2 calls per step.
alloc-lead (L 2.8e6, GPU-bound but for the churn): the GPU drains at
  2630000 while cudaFree [700000, 2700000) waits; idle [2630000, next step's
  20000) = 190000, then [220000, 630000) = 410000 while the host, with no
  lead left, does 400 us of work (cudaMalloc [300000, 500000) among it)
  before the next launch.  The free's window runs until the host next waits
  for the GPU (the next step's free), so it takes both: 600000 (its budget
  is 2e6) for steps 0-8, the tail [2630000, 2800000) = 170000 for step 9;
  step 0's gap has no earlier free: its malloc takes 200000, the rest
  (80000 + 130000, and 10000 after its first launch call) is host idle,
  [0, 10000) input.  Saving (9 x 600000 + 170000 + 200000) / 10 = 577000
  (20.6 %: high) of cost 2200000; host-gaps 220000 / 10 = 22000.  The step
  without the free is the GPU's 2.2 ms: 600000 saved a step once the host
  runs ahead.  (With the window closing at the first work issued again,
  the 210000 of host work would be host-gaps: 388000.)
copies (L 3e6): the 64 MiB copy [20000, 1362178) runs with no kernel beside
it: exposed 1342178 per step; compute 2 x 790000 = 1580000; saving
min(1342178, 1580000) x 1.0 = 1342178, 44.7 %: high.  copies-no: the copy
[100000, 1442178) lies inside the kernels [20000, 1600000): none exposed.
comm (L 2.1e6): NCCL [1050000, 2050000) after the compute kernel: exposed
  1e6 per step; saving half of min(1e6, compute 1e6) = 500000 (23.8 %).
outlier: step 5 takes 2e6, the others 1e6: (2e6 - 1e6) / 10 = 100000 per
  step (9.1 % of the mean 1.1e6: medium).
"""
import json
import os
import re
import subprocess

import tt

GEN = os.path.join(os.path.dirname(tt.GEN), "gen_advise")
ORDER = ["info", "low", "medium", "high"]


def gen(d, scen, *opts):
    name = re.sub(r"[^\w.-]", "_", scen + "".join(o.replace("--", "-") for o in opts)) + ".gpuprof"
    subprocess.run([GEN, scen, *opts, os.path.join(d, name)], check=True)
    return name


def advise(d, name, *extra):
    p = tt.gp("advise", "--format", "json", *extra, name, cwd=d)
    tt.eq(p.stderr, "", f"stderr of advise {name}")
    out = json.loads(p.stdout)["advise"]
    tt.eq(len(out), 1, f"{name}: one file")
    return out[0]


def rules(res):
    return [f["rule"] for f in res["findings"]]


def fires(d, scen, rule, sev, cost, saving, count=None, *opts):
    res = advise(d, gen(d, scen, *opts))
    f = res["findings"][0] if res["findings"] else {}
    tt.eq(f.get("rule"), rule, f"{scen}: first finding")
    tt.eq(f.get("severity"), sev, f"{scen}: severity")
    tt.approx(f.get("cost_ns_per_step"), cost, f"{scen}: cost per step", tol=1)
    tt.approx(f.get("saving_ns_per_step"), saving, f"{scen}: saving per step", tol=1)
    if count is not None:
        tt.approx(f.get("count_per_step"), count, f"{scen}: count per step", tol=0.001)
    for k in ("what", "where", "change", "saving_how"):
        tt.expect(f.get(k), f"{scen}: '{k}' is said")
    r = f.get("records", {})
    tt.expect(r.get("until_ns", 0) > r.get("since_ns", 0), f"{scen}: records range {r}")
    # the dump pointer runs as written and shows only records of that range
    cmd = r.get("dump", "").split()
    tt.eq(cmd[:2] + cmd[2:6:2], ["gpuprof", "dump", "--since", "--until"], f"{scen}: dump pointer {cmd}")
    if len(cmd) == 7:
        p = tt.gp("dump", "--json", *cmd[2:], cwd=d)
        base = r["since_ns"]
        ts = [json.loads(ln) for ln in p.stdout.splitlines() if ln.strip()]
        timed = [x for x in ts if x.get("type") in ("api", "kernel", "memcpy", "memset")]
        tt.expect(p.returncode == 0 and timed, f"{scen}: the dump pointer prints records (exit {p.returncode})")
        key = next((k for k in ("start_ns", "start") if timed and k in timed[0]), None)
        if key:
            tt.expect(all(base <= x[key] < r["until_ns"] for x in timed),
                      f"{scen}: dumped records start in [{base}, {r['until_ns']})")
    return res, f


def quiet(d, scen, rule, *opts):
    res = advise(d, gen(d, scen, *opts))
    tt.expect(rule not in rules(res), f"{scen}: no {rule} finding ({rules(res)})")
    return res


with tt.tmpdir() as d:
    # a healthy GPU-bound job: nothing above info
    h = advise(d, gen(d, "healthy"))
    tt.expect(all(f["severity"] == "info" for f in h["findings"]),
              f"healthy: nothing above info ({[(f['rule'], f['severity']) for f in h['findings']]})")
    p = h["processes"][0]
    tt.eq((p["counted"], p["warmup"], p["step_mean_ns"]), (10, 0, 1000000), "healthy: steps")

    res, f = fires(d, "input", "input-bound", "high", 6000000, 6000000, 1)
    tt.approx(f["cost_pct"], 100 * 6 / 7, "input: % of the step", tol=0.01)
    tt.eq(f["evidence"]["pre_launch_ns_per_step"], 6000000, "input: host time before the first launch")
    quiet(d, "input-no", "input-bound")
    fires(d, "input-copy", "input-bound", "high", 6000000, 6000000, 1)
    # the same job with no hint: its input wait lies at the end of each step
    res, f = fires(d, "input-copy", "input-bound", "high", 6360000, 6360000, 1, "--no-nvtx")
    p = res["processes"][0]
    tt.eq((p["method"], p["counted"]), ("trace", 9), "input-copy, no NVTX: the trace method's steps")
    tt.expect("between steps" in f["title"], f"input-copy, no NVTX: the title says where: {f['title']!r}")
    tt.eq(f["evidence"]["post_launch_ns_per_step"], 7000000 - 35000,
          "input-copy, no NVTX: host time after the last launch call")
    tt.eq([s["label"] for s in f["sites"]], ["cudaMemcpyAsync"], "input-copy, no NVTX: the next step's copy")
    tt.expect("host-gaps" not in [g["rule"] for g in res["findings"] if g["cost_ns_per_step"] > 100000],
              f"input-copy, no NVTX: the loading is not host-gaps ({rules(res)})")

    res, f = fires(d, "sync", "sync", "high", 3977000, 16232000 / 9, 2)
    tt.eq(sorted(s["label"] for s in f["sites"]), ["cudaMemcpyAsync DtoH pageable", "cudaStreamSynchronize"],
          "sync: the two calls")
    tt.eq(res["processes"][0]["warmup"], 1, "sync: step 0 (cudaMalloc) is warm-up")
    quiet(d, "sync-no", "sync")

    res, f = fires(d, "pageable", "pageable-copy", "high", 5000000, 3392280, 1)
    tt.approx(f["evidence"]["pinned_htod_gb_per_s"], 50.0, "pageable: measured pinned bandwidth", tol=0.001)
    tt.approx(f["evidence"]["bytes_per_step"], 67108864, "pageable: bytes per step", tol=1)
    quiet(d, "pageable-no", "pageable-copy")
    # no pinned copy in the trace: the host link's bandwidth (issue #38: 0.30
    # ms estimated where pinning saved 21.2 ms)
    res, f = fires(d, "pageable", "pageable-copy", "high", 5000000, 3687823, 1, "--no-pinned")
    tt.eq(f["evidence"]["pinned_htod_gb_per_s"], 50, "pageable, no pinned copy: the H200's host link")
    tt.eq(f["evidence"].get("pinned_htod_from_device_table"), 1, "pageable, no pinned copy: from the table")
    tt.expect("PCIe Gen5 x16 of the NVIDIA H200" in f["saving_how"], f"pageable: the link named ({f['saving_how']})")
    # the table by name (docs/ADVISE.md): the model is one word of the name
    for gpu, bw in (("NVIDIA H100 80GB HBM3", 50), ("NVIDIA H100 PCIe", 50), ("NVIDIA A100-SXM4-80GB", 25),
                    ("NVIDIA GeForce RTX 4090", 25), ("NVIDIA L4", 25), ("NVIDIA L40S", 25),
                    ("Tesla V100-SXM2-16GB", 12.5), ("Tesla T4", 12.5)):
        f = advise(d, gen(d, "pageable", "--no-pinned", "--gpu", gpu))["findings"][0]
        tt.eq(f["evidence"].get("pinned_htod_gb_per_s"), bw, f"pageable on {gpu}: the host link's bandwidth")
    for gpu in ("NVIDIA X", "NVIDIA GH200 480GB", "NVIDIA A1000"):
        res, f = fires(d, "pageable", "pageable-copy", "high", 5000000, 1530000, 1, "--no-pinned", "--gpu", gpu)
        tt.expect("pinned_htod_gb_per_s" not in f["evidence"] and "assumed unchanged" in f["saving_how"],
                  f"pageable on {gpu}: no bandwidth assumed ({f['saving_how']})")

    fires(d, "synccopy", "sync-copy", "medium", 690000, 260000, 1)
    quiet(d, "synccopy-no", "sync-copy")

    res, f = fires(d, "launch", "launch-bound", "high", 1609000, 1409000)
    tt.eq((f["evidence"]["short_kernels"], f["evidence"]["kernels_with_call"]), (2000, 2000),
          "launch: every kernel shorter than its call")
    tt.eq(f["evidence"]["graph_floor_ns"], 1000, "launch: assumed graph latency")
    tt.expect("launch-bound" not in rules(h), "healthy: not launch-bound")

    fires(d, "fp32", "fp32-matmul", "high", 8000000, 4 * 1459459, 4)
    quiet(d, "fp32-no", "fp32-matmul")
    res = advise(d, gen(d, "fp32-host"), "--all")
    fp = [f for f in res["findings"] if f["rule"] == "fp32-matmul"]
    tt.eq([(f["severity"], f["saving_ns_per_step"], f["cost_ns_per_step"]) for f in fp], [("info", 0, 500000)],
          "fp32 with the host late: no saving")

    # the host runs ahead of the GPU: the kernels' savings still count (the
    # final synchronisation waits for them); the shares are of the GPU work
    # launched per step (8 ms), not of the host's 100 us step; said
    res, f = fires(d, "fp32-ahead", "fp32-matmul", "high", 8000000, 4 * 1459459, 4)
    tt.approx(f["saving_pct"], 100 * 4 * 1459459 / 8e6, "fp32-ahead: share of the GPU work per step", tol=1e-3)
    tt.eq((res["processes"][0]["host_runs_ahead"], res["processes"][0]["gpu_work_ns_per_step"]), (True, 8000000),
          "fp32-ahead: the host runs ahead")
    p = tt.gp("advise", "fp32-ahead.gpuprof", cwd=d)
    tt.expect("the host runs ahead of the GPU" in p.stdout, "fp32-ahead: said in the table output")
    tt.expect(not advise(d, "fp32.gpuprof")["processes"][0]["host_runs_ahead"], "fp32: the host waits")

    res, f = fires(d, "underpar", "under-parallel", "high", 8000000, 4 * 1984848, 4)
    tt.eq((f["sites"][0]["blocks_min"], f["sites"][0]["blocks_max"], f["sites"][0]["threads_per_block"]), (1, 1, 128),
          "underpar: the grid")
    res, f = fires(d, "underpar", "under-parallel", "high", 8000000, 4 * 1984000, 4, "--pm")
    tt.approx(f["evidence"].get("pm_sm_active_pct"), 0.8, "underpar: PM SM activity", tol=1e-6)
    quiet(d, "underpar-no", "under-parallel")

    fires(d, "alloc", "alloc-churn", "high", 600000, 600000, 2)
    quiet(d, "alloc-no", "alloc-churn")
    res, f = fires(d, "alloc-lead", "alloc-churn", "high", 2200000, 577000, 2)
    hg = [x for x in res["findings"] if x["rule"] == "host-gaps"]
    tt.eq([x["cost_ns_per_step"] for x in hg], [22000], "alloc-lead: the host work after the drain is the free's")

    fires(d, "comm", "exposed-comm", "high", 1000000, 500000)
    quiet(d, "comm-no", "exposed-comm")
    # exposed copies: saving = min(exposed copy time, compute) = min(1342178, 1580000)
    fires(d, "copies", "exposed-copies", "high", 1342178, 1342178)
    quiet(d, "copies-no", "exposed-copies")
    # a pageable copy is judged first; the exposed copies get no estimate
    # until it is pinned (it cannot overlap before)
    res = advise(d, gen(d, "pageable"))
    ec = [f for f in res["findings"] if f["rule"] == "exposed-copies"]
    tt.eq([(f["severity"], f.get("saving_ns_per_step")) for f in ec], [("info", None)],
          "pageable: exposed-copies without an estimate")
    tt.eq(res["findings"][0]["rule"], "pageable-copy", "pageable: pageable-copy first")

    res, f = fires(d, "outlier", "outlier-steps", "medium", 100000, 100000)
    tt.eq(f["records"]["step"], 5, "outlier: the step to look at")
    quiet(d, "healthy", "outlier-steps")

    # stacks: the finding names the file:line (the sync call without a stack
    # of its own: the launch before it on the thread)
    res, f = fires(d, "sync", "sync", "high", 3977000, 16232000 / 9, 2, "--stacks")
    tt.eq(f["sites"][0]["label"], "train.py:57 train_step", "stacks: the copy's site")
    tt.expect(f["sites"][0]["frames"] == ["train_step (train.py:57)"],
              f"stacks: frames {f['sites'][0]['frames']}")
    tt.expect("after train.py:57 train_step" in f["where"], f"stacks: sync after the copy: {f['where']!r}")
    res, f = fires(d, "launch", "launch-bound", "high", 1609000, 1409000, None, "--stacks")
    tt.eq((f["sites"][0]["label"], f["sites"][0]["name"]), ("train.py:42 forward", "vectorized_elementwise_kernel"),
          "stacks: where the short kernels are launched from")
    res, f = fires(d, "input", "input-bound", "high", 6000000, 6000000, 1, "--stacks")
    tt.eq((f["sites"][0]["label"], f["sites"][0]["dataloader"]), ("train.py:48 train_step", True),
          "stacks: the first launch, under the DataLoader")
    res, f = fires(d, "input-copy", "input-bound", "high", 6360000, 6360000, 1, "--no-nvtx", "--stacks")
    tt.eq((f["sites"][0]["label"], f["sites"][0]["dataloader"]), ("train.py:48 train_step", True),
          "stacks, no NVTX: the next step's copy, under the DataLoader")
    tt.expect("The stack of the next step's input copy holds DataLoader frames." in f["saving_how"],
              f"stacks, no NVTX: the saving names the copy's stack: {f['saving_how']!r}")

    # several files: each judged on its own, in order
    p = tt.gp("advise", "--format", "json", "sync.gpuprof", "launch.gpuprof", cwd=d)
    both = json.loads(p.stdout)["advise"]
    tt.eq([(x["file"], x["findings"][0]["rule"]) for x in both],
          [("sync.gpuprof", "sync"), ("launch.gpuprof", "launch-bound")], "two files")
    p = tt.gp("advise", "--format", "csv", "sync.gpuprof", "launch.gpuprof", cwd=d)
    lines = p.stdout.splitlines()
    tt.expect(lines[0].startswith("File,#,PID"), f"csv header {lines[0]!r}")
    tt.eq(sum(1 for x in lines if x.startswith("launch.gpuprof,1,")), 1, "csv: a row per finding, per file")

    # bad input
    p = tt.gp("advise", check=False)
    tt.eq(p.returncode, 1, "no file: usage error")
    p = tt.gp("advise", "--format", "xml", "sync.gpuprof", check=False, cwd=d)
    tt.eq(p.returncode, 1, "--format xml: usage error")
    junk = os.path.join(d, "junk.gpuprof")
    with open(junk, "wb") as fh:
        fh.write(b"not a trace at all" * 10)
    p = tt.gp("advise", junk, check=False)
    tt.eq(p.returncode, 2, "not a trace: exit 2")
    tt.expect("cannot read" in p.stderr, f"not a trace: {p.stderr!r}")
    p = tt.gp("advise", "sync.gpuprof", "nosuch.gpuprof", check=False, cwd=d)
    tt.eq(p.returncode, 2, "one good, one missing: exit 2")
    tt.expect("gpuprof advise: sync.gpuprof" in p.stdout, "the good one is still judged")
    p = tt.gp("advise", "--step-range", "nosuch", "sync.gpuprof", check=False, cwd=d)
    tt.eq(p.returncode, 2, "--step-range with no such range: exit 2")
    # damaged traces: a cut one (a killed job) is judged with a warning, 2
    # under --strict; a corrupt one exits 2; byte flips and cuts at many
    # offsets never crash or hang, and the JSON stays JSON
    data = open(os.path.join(d, "sync.gpuprof"), "rb").read()

    def write(name, content):
        with open(os.path.join(d, name), "wb") as fh:
            fh.write(content)
        return name

    cut = write("cut.gpuprof", data[:len(data) * 2 // 3])
    p = tt.gp("advise", cut, check=False, cwd=d)
    tt.eq(p.returncode, 0, "cut trace: exit 0")
    tt.expect("truncated" in p.stderr, f"cut trace: warns {p.stderr!r}")
    tt.eq(tt.gp("advise", "--strict", cut, check=False, cwd=d).returncode, 2, "cut trace --strict: exit 2")
    for name, content in (("empty.gpuprof", b""), ("header.gpuprof", data[:20])):
        p = tt.gp("advise", write(name, content), check=False, cwd=d)
        tt.eq(p.returncode, 2, f"{name}: exit 2")
        tt.expect(f"gpuprof advise: cannot read {name}: " in p.stderr, f"{name}: message {p.stderr!r}")
    for off in range(0, len(data), max(1, len(data) // 40)):
        c = bytearray(data)
        c[off] ^= 0xFF
        for name in (write("flip.gpuprof", bytes(c)), write("cutn.gpuprof", data[:off])):
            r = subprocess.run([tt.GPUPROF, "advise", "--format", "json", name], capture_output=True, text=True,
                               errors="replace", timeout=60, cwd=d)
            tt.expect(r.returncode in (0, 2), f"offset {off}: advise {name} exit {r.returncode}: {r.stderr[-200:]}")
            if r.returncode == 0:
                try:
                    json.loads(r.stdout)
                except ValueError:
                    tt.fail(f"offset {off}: advise {name}: output not JSON")

    # a trace without steps: said, no findings
    p = tt.gp("advise", gen(d, "nosteps"), cwd=d)
    tt.expect("no counted steps" in p.stdout and "nothing judged: no process has training steps" in p.stdout,
              f"no steps: {p.stdout!r}")
    tt.eq(advise(d, "nosteps.gpuprof")["findings"], [], "no steps: no findings")

    # the order records arrive in does not matter (gen_steps: step 0's GPU
    # records written last, as a late CUPTI buffer; ranges at push time)
    steps_gen = os.path.join(os.path.dirname(tt.GEN), "gen_steps")
    got = []
    for opt in ([], ["--late-activity"], ["--ranges-first"]):
        subprocess.run([steps_gen, *opt, os.path.join(d, "cat.gpuprof")], check=True)
        got.append(advise(d, "cat.gpuprof")["findings"])
    tt.expect(got[0] and got[1] == got[0] and got[2] == got[0], "same findings whatever the record order")

    # memory: what is held does not grow with the number of steps
    held = {}
    for n in (400, 2000):
        subprocess.run([steps_gen, "--steady", "--steps", str(n), os.path.join(d, f"long{n}.gpuprof")], check=True)
        p = tt.gp("advise", "--verbose", f"long{n}.gpuprof", cwd=d)
        lines = [x for x in p.stderr.splitlines() if "held at most" in x]
        tt.eq(len(lines), 1, f"--verbose line ({n} steps)")
        held[n] = int(lines[0].split("held at most ")[1].split()[0]) if lines else -1
    tt.expect(0 < held[2000] <= held[400] <= 1000, f"held at most {held} records (400 and 2000 steps)")

    # the rules are one list (advise.h's ADV_RULES): --help names each rule
    # docs/ADVISE.md has a section for, in the same order, and no other
    h = " ".join(tt.gp("help", "--full", "advise").stdout.split())
    listed = h.split("Rules: ")[1].split(". ")[0].split(", ")
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "ADVISE.md")
    with open(doc) as f:
        sections = [x[4:].strip() for x in f if x.startswith("### ")]
    tt.eq(listed, [r.strip() for s in sections for r in s.split("/")], "--help's rules = docs/ADVISE.md's sections")

    # layout
    tt.golden("advise_sync_stacks_table", "advise", "sync-stacks.gpuprof", cwd=d)
    tt.golden("advise_launch_table", "advise", "launch.gpuprof", cwd=d)
    tt.golden("advise_healthy_table", "advise", "healthy.gpuprof", cwd=d)
    tt.golden("advise_pageable_json", "advise", "--format", "json", "pageable.gpuprof", cwd=d)

tt.finish()
