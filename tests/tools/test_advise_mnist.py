"""`gpuprof advise` on the committed H200 MNIST trace
(examples/mnist-h200.gpuprof), checked against figures computed here from
`gpuprof dump --json` (the counted steps are those `gpuprof steps` does not
flag; docs/ADVISE.md has the definitions):

 - launch-bound is the first finding, at high severity: of the kernels whose
   launch call (joined by correlation id, any thread) started inside a
   counted step, those whose GPU time is shorter than the call's duration
   (2,414 of 3,180; over the whole trace 2,537 of 3,316; issue 22 quoted
   2,466 of 3,245, the kernels launched from inside step 0's optimizer on);
 - the 8 async copies from pageable memory are reported with --all
   (pageable-copy, info): all 8 before the first step, the records range
   from the first to the last of their calls; they save nothing per step
   (0.000 ms), so without --all the finding is hidden and counted
   (hidden_nothing_saved: 3, with under-parallel and fp32-matmul, whose
   GPU-side savings are 0 while the host is the bottleneck);
 - input-bound's host time before the first launch = the mean over the
   counted steps of (first launch call start - step start).
"""
import collections
import json
import os

import tt

TRACE = os.path.join(tt.HERE, "..", "..", "examples", "mnist-h200.gpuprof")

adv = json.loads(tt.gp("advise", "--all", "--format", "json", TRACE).stdout)["advise"][0]
shown = json.loads(tt.gp("advise", "--format", "json", TRACE).stdout)["advise"][0]
tt.eq([x["rule"] for x in shown["findings"]],
      [x["rule"] for x in adv["findings"] if x["saving_ns_per_step"] is None or x["saving_ns_per_step"] >= 500],
      "without --all: the findings that save something (or are not estimated)")
tt.eq((shown.get("hidden_nothing_saved"), "pageable-copy" in [x["rule"] for x in shown["findings"]]), (3, False),
      "without --all: under-parallel, fp32-matmul (the host is the bottleneck) and pageable-copy hidden")
st = json.loads(tt.gp("steps", "--per-step", "--format", "json", "--report", "step_rows", TRACE).stdout)
recs = [json.loads(line) for line in tt.gp("dump", "--json", "--abs-time", TRACE).stdout.splitlines() if line.strip()]
info = json.loads(tt.gp("info", "--json", TRACE).stdout)

calls = collections.defaultdict(list)
for r in recs:
    if r["type"] == "api" and r.get("corr"):
        calls[r["corr"]].append(r)


def call_of(op):
    c = calls.get(op["corr"])
    if not c:
        return None
    return min(x["start"] for x in c), max(x["end"] for x in c)


warm = {r["step"] for r in st["step_rows"] if "warm-up" in r["flags"]}
ranges = sorted((r for r in recs if r["type"] == "nvtx_range" and r["message"].startswith("step ")),
                key=lambda r: r["start"])
counted = [(r["start"], r["end"]) for r in ranges if int(r["message"].split()[1]) not in warm]
tt.eq(len(counted), 53, "counted steps")


def step_of(t):
    for s, e in counted:
        if s <= t < e:
            return (s, e)
    return None


kernels = short = 0
first = {}
for r in recs:
    if r["type"] not in ("kernel", "memcpy", "memset"):
        continue
    c = call_of(r)
    if not c:
        continue
    s = step_of(c[0])
    if not s:
        continue
    first[s] = min(first.get(s, c[0]), c[0])
    if r["type"] == "kernel":
        kernels += 1
        short += r["dur"] < c[1] - c[0]
tt.eq((short, kernels), (2414, 3180), "short kernels in the counted steps (computed here)")

f = adv["findings"]
tt.eq((f[0]["rule"], f[0]["severity"]), ("launch-bound", "high"), "first finding")
ev = f[0]["evidence"]
tt.eq((ev["short_kernels"], ev["kernels_with_call"]), (short, kernels), "launch-bound counts")
tt.expect(f"{short} of {kernels} kernels" in f[0]["what"], f"launch-bound says the counts: {f[0]['what']!r}")

pageable = [r for r in recs if r["type"] == "memcpy" and r["async"] and "pageable" in (r["src_kind"], r["dst_kind"])]
tt.eq(len(pageable), 8, "pageable async copies in the trace (computed here)")
tt.expect(all(call_of(m)[0] < counted[0][0] and call_of(m)[0] < ranges[0]["start"] for m in pageable),
          "all before the first step")
pg = [x for x in f if x["rule"] == "pageable-copy"]
tt.eq(len(pg), 1, "a pageable-copy finding")
if pg:
    tt.eq((pg[0]["severity"], pg[0]["evidence"].get("outside_count")), ("info", 8), "pageable: info, 8 copies")
    tt.expect("before the first step" in pg[0]["where"], f"pageable: where {pg[0]['where']!r}")
    t0 = min(call_of(m)[0] for m in pageable)
    t1 = max(call_of(m)[0] for m in pageable)
    rec = pg[0]["records"]
    tt.eq((rec["since_ns"], rec["until_ns"]), (t0 - info["start_trace_ns"], t1 - info["start_trace_ns"] + 1),
          "pageable: records from the first to the last call")

inp = [x for x in f if x["rule"] == "input-bound"]
tt.eq(len(inp), 1, "an input-bound finding")
if inp:
    want = sum(first[s] - s[0] for s in counted if s in first) / len(counted)
    tt.approx(inp[0]["evidence"]["pre_launch_ns_per_step"], want, "host time before the first launch", tol=1)

p = adv["processes"][0]
tt.eq((p["steps"], p["warmup"], p["counted"]), (55, 2, 53), "steps")
tt.expect(all(x["severity"] in ("info", "low", "medium", "high") for x in f), "severities")
tt.finish()
