"""`gpuprof advise` on a real job that carries no hint from us: the committed
H100 trace of examples/pathologies/slow_dataset.py --no-nvtx --steps 30
--warmup 5 (a DataLoader without workers loads every batch on the main
thread while the GPU waits; no NVTX range), checked against figures
computed here from `gpuprof dump --json`:

 - the trace method's steps start at the launch call of the batch's
   262,144-byte host-to-device copy (x, 64 x 1024 floats); computed here:
   those calls, by correlation id;
 - input-bound is the first finding, at high severity: its cost per step is
   the mean over the counted steps (all but the first, warm-up, and the
   last, partial) of the GPU idle from the end of the last GPU operation
   that started before the next step's copy call to that call: the loading
   of the next batch (docs/ADVISE.md "input-bound", steps found at their
   input copy).  Blocking calls in that idle would take it first; this job
   makes almost none, so the two agree within 0.1 %;
 - the site is the next step's copy call, and advise's own GPU-bound
   estimate on the same job (its saving) is what advise_check.py measured
   against the fixed job on the GPU (docs/ADVISE.md's table).
Build a724445 put launch-bound first (medium) and no input-bound here.
"""
import bisect
import json
import os

import tt

TRACE = os.path.join(tt.HERE, "..", "..", "examples", "slowdata-nonvtx-h100.gpuprof")
if not os.path.exists(TRACE):
    print("skip: examples/slowdata-nonvtx-h100.gpuprof is not there")
    tt.finish()

recs = [json.loads(ln) for ln in tt.gp("dump", "--json", TRACE).stdout.splitlines() if ln.startswith("{")]
tt.eq([r for r in recs if r["type"] == "nvtx_range"], [], "the job has no NVTX range")
call = {r["corr"]: r["start"] for r in recs if r["type"] == "api" and r.get("corr")}
ops = [r for r in recs if r["type"] in ("kernel", "memcpy", "memset")]
starts = sorted(call[r["corr"]] for r in ops
                if r["type"] == "memcpy" and r["kind"] == "HtoD" and r["bytes"] == 262144 and r["corr"] in call)

adv = json.loads(tt.gp("advise", "--format", "json", TRACE).stdout)["advise"][0]
p = adv["processes"][0]
tt.eq((p["method"], p["steps"]), ("trace", len(starts)), "steps by the trace method, one per input copy")
tt.expect(p["steps_are"].endswith("the input copy)"), f"steps at the input copy: {p['steps_are']!r}")

# the GPU idle before each counted step's end (the next step's copy call)
ends = sorted((r["start"], r["end"]) for r in ops)
idle = []
for k in range(1, len(starts) - 1):
    nxt = starts[k + 1]
    last = max(e for s, e in ends[:bisect.bisect_left(ends, (nxt,))])
    idle.append(max(0, nxt - last))
tt.eq(p["counted"], len(idle), "counted steps: all but the first (warm-up) and the last")
want = sum(idle) / len(idle)

f = adv["findings"][0]
tt.eq((f["rule"], f["severity"]), ("input-bound", "high"), "the first finding")
tt.approx(f["cost_ns_per_step"], want, "input-bound: the idle before the next step's copy, per step",
          tol=0.001 * want)
tt.approx(f["saving_ns_per_step"], f["cost_ns_per_step"], "input-bound: saving = cost", tol=1)
tt.expect("between steps" in f["title"], f"the title says where the wait is: {f['title']!r}")
tt.eq([s["label"] for s in f["sites"]], ["cudaMemcpyAsync"], "the site: the next step's copy call")
tt.finish()
