"""The trace method (step detection without NVTX, docs/STEPS.md "Step
detection") on the GPU-bound workload traces of gen_steps.c --workload,
which reproduce what the H200 runs of ResNet-50 and the transformer showed
(issue 20): no GPU idle gap between steps, a first step with other kernels,
the longest (small) GPU gap mid-step, identical layers inside the step, an
extra kernel every 10 steps, a Hugging Face Trainer's input copies that
occur twice a step.  Each trace has NVTX "step <k>" ranges; the
trace method (forced) must find the same steps: as many, each starting
inside the NVTX step of the same index, at the launch of the step's first
operation (the input copy, launched 2000 ns after the range began), and
overlapping that step most."""
import json
import os
import subprocess

import tt

GEN_STEPS = os.path.join(os.path.dirname(tt.GEN), "gen_steps")
# gen_steps.c: the first launch call of a step starts 2000 ns after its range
FIRST_CALL = 2000


def steps(path, *extra):
    p = tt.gp("steps", "--format", "json", "--report", "steps,step_rows", *extra, path)
    tt.eq(p.stderr, "", f"stderr of steps {' '.join(extra)}")
    return json.loads(p.stdout)


def check(name, path, ops_per_step, marker, first=0):
    """first: the first NVTX step the trace method can find (a marker told
    apart by the copy before it: step 0's input has no copy before it)"""
    nv = steps(path)
    tt.eq(nv["steps"][0]["method"], "nvtx", f"{name}: NVTX steps")
    rows = nv["step_rows"][first:]
    tr = steps(path, "--method", "trace")
    s = tr["steps"][0]
    trows = tr["step_rows"]
    tt.eq(s["method"], "trace", f"{name}: trace method")
    tt.eq(len(trows), len(rows), f"{name}: the trace method finds as many steps as NVTX ({s['defined_by']})")
    tt.expect(f"(period {ops_per_step} GPU operations" in s["defined_by"],
              f"{name}: the period is a step ({ops_per_step} operations): {s['defined_by']}")
    tt.expect(marker in s["defined_by"], f"{name}: a step starts at its input copy ({marker}): {s['defined_by']}")
    inside = most = 0
    offs = []
    for k, (t, n) in enumerate(zip(trows, rows)):
        ts, te = t["start_ns"], t["start_ns"] + t["time_ns"]
        inside += n["start_ns"] <= ts < n["start_ns"] + n["time_ns"]
        ov = [max(0, min(te, r["start_ns"] + r["time_ns"]) - max(ts, r["start_ns"])) for r in rows]
        most += max(range(len(rows)), key=lambda j: ov[j]) == k
        offs.append(ts - n["start_ns"])
    tt.eq(inside, len(rows), f"{name}: each detected step starts inside the NVTX step of the same index")
    tt.eq(most, len(rows), f"{name}: each detected step overlaps the NVTX step of the same index most")
    tt.eq(sorted(set(offs)), [FIRST_CALL], f"{name}: boundary offsets (detected - NVTX start, ns)")
    print(f"{name}: {len(trows)} steps, offsets {min(offs)}..{max(offs)} ns; {s['defined_by']}")


with tt.tmpdir() as d:
    # hf: no copy occurs once a step; the first of its two input copies is
    # told apart by the 1-byte device-to-host copy before it
    for name, ops, marker in (("cnn", 33, "host-to-device copy of 1048576 bytes"),
                              ("layers", 155, "host-to-device copy of 1048576 bytes"),
                              ("extra10", 155, "host-to-device copy of 1048576 bytes"),
                              ("hf", 37, "host-to-device copy of 8192 bytes after a 1-byte DtoH copy")):
        path = os.path.join(d, name + ".gpuprof")
        subprocess.run([GEN_STEPS, "--workload", name, path], check=True)
        check(name, path, ops, marker, first=1 if name == "hf" else 0)

tt.finish()
