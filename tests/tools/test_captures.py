"""test_captures.py — a flight-recorder capture (docs/FLIGHT.md "Captures")
analyses as a trace: its captured steps are counted, warm-up is judged by a
step's place in the run, not in the file, and the history before the
capture is shown as context (docs/STEPS.md "Warm-up", "Windowed traces").

gen_steps --steady --steps 40 --capture 5:15 (tests/tools/gen_steps.c):
steps 0..39 as "step <k>" NVTX ranges, one GPU-activity window over steps
5..14, GPU records only inside it; steps 0..4 are the history (API calls and
NVTX only, 500 us before the window), 15..39 what the capture wrote after it.
Step k starts at 100000 k (k <= 5), 650000 + 100000 (k - 6) after; step 5
is 95000 long, the others 60000; step 5 also makes a cudaMalloc call.

 - steps: 40 steps, 10 counted (5..14), none warm-up: step 5 is unlike the
   steady state (95000 and an allocation) but it is step 5 of the run, after
   steps whose GPU work was not recorded; it is an outlier instead (95000 vs
   the median 60000: more than 20 % off).  Median 60000.  The summary says
   "history: 500.000 us before GPU activity was recorded (5 steps)".
   (Before: the steady state was the second half of the file's steps, 20..39,
   none with GPU records: a median of 0, every captured step warm-up, 0
   counted.)
 - advise, diff (the capture against itself), stats util (its span: the
   counted steps), stats --report steps and report's data see the same 10
   counted steps; advise has findings.  stats --threads 4 gives the steps of
   one pass; stats --steps 5:14 selects the captured steps (2 kernels each).
 - --no-history (nothing before the window but the metadata): the first
   step in the file is step 5 of the run (its number; steps count from 0 or
   1) in a window that opened after the trace began: not warm-up, 10
   counted (before: 10 warm-up, 0 counted).
 - --no-nvtx: the trace method finds the steps from the GPU work, so only the
   captured ones (10, the last partial); the first (step 5, with its
   cudaMalloc) is not warm-up: the window opened after the trace began, the
   run's steps before left no GPU record.  9 counted.
 - --gpu-window traces are unchanged where the first window opens with the
   trace: gen_steps --steady --steps 40 (no window) keeps its warm-up step 0."""
import json
import os
import re
import subprocess

import tt

GEN_STEPS = os.path.abspath(os.path.join(tt.B, "tests", "tools", "gen_steps"))


def gen(path, *opts):
    subprocess.run([GEN_STEPS, *opts, path], check=True)
    return path


def steps_json(path, *extra):
    return json.loads(tt.gp("steps", "--format", "json", "--report", "steps,step_rows", *extra, path).stdout)


def summary(js):
    s = js["steps"][0]
    return (s["method"], s["steps"], s["warmup"], s["counted"], s["median_ns"])


with tt.tmpdir() as d:
    cap = gen(os.path.join(d, "cap.gpuprof"), "--steady", "--steps", "40", "--capture", "5:15")

    # ---------------- steps: the captured steps are counted
    js = steps_json(cap)
    tt.eq(summary(js), ("nvtx", 40, 0, 10, 60000), "capture: steps, warm-up, counted, median")
    flags = [r["flags"] for r in js["step_rows"]]
    tt.eq(flags[:5], ["no GPU record"] * 5, "capture: the history's steps")
    tt.eq(flags[5:15], ["outlier"] + [""] * 9, "capture: the captured steps (step 5 an outlier, not warm-up)")
    tt.eq(flags[15:], ["no GPU record"] * 25, "capture: the steps after the window")
    tt.eq([r["step"] for r in js["step_rows"] if not r["flags"] or r["flags"] == "outlier"], list(range(5, 15)),
          "capture: counted steps by number")
    text = tt.gp("steps", cap).stdout
    tt.expect("history: 500.000 us before GPU activity was recorded (5 steps), API calls and NVTX only" in text,
              "capture: the history line: " + text)
    tt.expect(re.search(r"0 warm-up steps .*; 10 counted\.", text) is not None, "capture: counted line: " + text)
    # one pass and the time shards agree; stats --report steps is the same
    tt.eq(steps_json(cap, "--threads", "4"), js, "capture: stats --threads 4 as one pass")
    sj = json.loads(tt.gp("stats", "--report", "steps,step_rows", "--format", "json", cap).stdout)
    tt.eq(sj, js, "capture: stats --report steps as gpuprof steps")
    # --steps A:B selects the captured steps by their numbers in the run
    kj = json.loads(tt.gp("stats", "--steps", "5:14", "--report", "kernels", "--format", "json", cap).stdout)
    tt.eq(sorted((r["name"], r["instances"]) for r in kj["kernels"]),
          [("relu_kernel", 10), ("sm90_xmma_gemm_f32f32_kernel", 10)], "capture: stats --steps 5:14")

    # ---------------- advise: the same steps, and findings
    adv = tt.gp("advise", cap).stdout
    tt.expect("0 warm-up, 10 counted" in adv and "no counted steps" not in adv and "no findings" not in adv,
              "capture: advise: " + adv[:600])
    aj = json.loads(tt.gp("advise", "--format", "json", cap).stdout)
    tt.expect(len(aj.get("advise", [])) > 0, "capture: advise has findings: %s" % aj)

    # ---------------- diff, util, report
    dj = json.loads(tt.gp("diff", "--format", "json", cap, cap).stdout)
    ds = dj["diff_steps"][0]
    tt.eq((ds["steps_a"], ds["steps_b"], ds["median_a_ns"]), (10, 10, 60000), "capture: diff's steady steps")
    uj = json.loads(tt.gp("stats", "--report", "util", "--format", "json", cap).stdout)
    tt.eq([r["span_of"] for r in uj["util"] if r["stream"] == "all"], ["steps 5..14"], "capture: util's span")
    page = os.path.join(d, "cap.html")
    tt.gp("report", "-o", page, cap)
    m = re.search(r'<script type="application/json" id="gpuprof-data">(.*?)</script>', open(page).read(), re.S)
    rj = json.loads(m.group(1)) if m else {}
    tt.eq([s["counted"] for s in rj.get("runs", [{}])[0].get("steps", {}).get("steps", [])], [10],
          "capture: report's steps")

    # ---------------- no history: the step numbers say where the steps are
    nh = gen(os.path.join(d, "cap-nohist.gpuprof"), "--steady", "--steps", "40", "--capture", "5:15", "--no-history")
    nj = steps_json(nh)
    tt.eq(summary(nj), ("nvtx", 35, 0, 10, 60000), "capture without history: step 5 of the run is no warm-up")
    tt.eq([r["flags"] for r in nj["step_rows"]][:2], ["outlier", ""], "capture without history: flags")

    # ---------------- the trace method: only the captured steps exist
    tr = gen(os.path.join(d, "cap-trace.gpuprof"), "--steady", "--no-nvtx", "--steps", "40", "--capture", "5:15")
    tj = steps_json(tr)
    tt.eq(summary(tj)[:4], ("trace", 10, 0, 9), "trace capture: steps, warm-up, counted")
    tt.eq([r["flags"] for r in tj["step_rows"]][0], "outlier", "trace capture: its first step is no warm-up")

    # ---------------- a whole run keeps its warm-up (the rule is about place)
    full = gen(os.path.join(d, "full.gpuprof"), "--steady", "--steps", "40")
    fj = steps_json(full)
    tt.eq(summary(fj)[2], 1, "whole run: step 0 is warm-up")

tt.finish()
