"""The trace method (docs/STEPS.md "Like, not alike") on a real job whose
steps are not alike: the committed H100 trace of examples/thirdparty/
hf_trainer.py --pad-varies --nvtx --steps 80 (an HF Trainer whose batches
are padded to their longest sample), its NVTX step ranges the reference.

 - computed here from `gpuprof dump --json`: the GPU operations launched in
   each NVTX step (by launch call, correlation id), kernels by name, copies
   and memsets without their sizes, make several kinds of step, none 60 %
   of them: no exact look can find the steps;
 - `gpuprof steps --method trace` finds them all but the first (whose input
   copy follows no loss copy), `Steps Are` says they are alike within
   max(2, 10 %) operations with the sizes left out, and each step starts at
   its input copy's launch call, 0 to 3 ms before the next NVTX step's start
   (the Trainer's loader copies the batch before the step's callback opens
   its range);
 - the method's own sample agrees: the detected period is within 10 % of the
   median step's operations here.
"""
import bisect
import collections
import json
import os
import statistics

import tt

TRACE = os.path.join(tt.HERE, "..", "..", "examples", "hfpad-h100.gpuprof")
if not os.path.exists(TRACE):
    print("skip: examples/hfpad-h100.gpuprof is not there")
    tt.finish()

recs = [json.loads(ln) for ln in tt.gp("dump", "--json", TRACE).stdout.splitlines() if ln.startswith("{")]
steps = sorted((r["start"], r["end"]) for r in recs if r["type"] == "nvtx_range" and r["message"].startswith("step "))
call = {(r["pid"], r["corr"]): r["start"] for r in recs if r["type"] == "api" and r.get("corr")}
kinds = []
per = collections.defaultdict(collections.Counter)
starts = [s for s, _ in steps]
for r in recs:
    if r["type"] not in ("kernel", "memcpy", "memset"):
        continue
    t = call.get((r["pid"], r["corr"]))
    i = bisect.bisect_right(starts, t) - 1 if t is not None else -1
    if i < 0 or t >= steps[i][1]:
        continue
    per[i][r["name"] if r["type"] == "kernel" else r["type"] + (":" + r["kind"] if r["type"] == "memcpy" else "")] += 1
kinds = collections.Counter(tuple(sorted(per[i].items())) for i in range(2, len(steps)))
tt.expect(len(steps) == 80, f"80 NVTX steps ({len(steps)})")
common = kinds.most_common(1)[0][1] if kinds else 0
tt.expect(len(kinds) >= 2 and common * 10 < sum(kinds.values()) * 6,
          f"the steps (sizes left out) come in {len(kinds)} kinds, the most common {common} of {sum(kinds.values())}")

j = json.loads(tt.gp("steps", "--method", "trace", "--per-step", "--format", "json", TRACE).stdout)
s0 = j["steps"][0]
tt.eq((s0["method"], s0["steps"]), ("trace", len(steps) - 1), "the trace method finds every step but the first")
tt.expect("of any size" in s0["defined_by"] and "alike within max(2, 10 %) operations with copy and memset sizes left out"
          in s0["defined_by"], f"Steps Are: {s0['defined_by']!r}")
rows = j["step_rows"]
nxt = [bisect.bisect_left(starts, r["start_ns"]) for r in rows]
offs = [starts[k] - r["start_ns"] if k < len(starts) else None for k, r in zip(nxt, rows)]
tt.eq(nxt, list(range(1, len(steps))), "each detected step starts before NVTX step 1, 2, ... in turn")
tt.expect(rows and all(o is not None and 0 <= o <= 3_000_000 for o in offs),
          f"each step starts 0..3 ms before its NVTX step's start: {[o for o in offs if o is None or not 0 <= o <= 3e6]}")
period = int(s0["defined_by"].split("(period ")[1].split()[0]) if "(period " in s0["defined_by"] else 0
med = statistics.median(sum(per[i].values()) for i in range(2, len(steps)))
tt.expect(abs(period - med) <= med / 10, f"the period ({period}) is within 10 % of the median step's operations ({med})")
tt.finish()
