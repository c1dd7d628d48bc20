"""`gpuprof export --format perfetto`: valid Chrome trace-event JSON with
process/thread names, GPU stream tracks, a flow from every launch call to its
GPU op, properly nested NVTX ranges, async start/end ranges, marks, counters."""
import json
import os

import tt

US = 1000.0  # ns per us

with tt.tmpdir() as d:
    trace = tt.gen(os.path.join(d, "t.gpuprof"))
    out = os.path.join(d, "t.json")
    tt.gp("export", "--format", "perfetto", trace, "-o", out)
    with open(out) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    meta = [e for e in ev if e["ph"] == "M"]
    pname = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    tt.eq(pname.get(1000), "python train.py", "process name")
    gpu_pids = [p for p, n in pname.items() if n == "GPU 0"]
    tt.eq(len(gpu_pids), 1, "one GPU process")
    gpid = gpu_pids[0] if gpu_pids else None
    tt.eq(tname.get((1000, 1000)), "main", "thread name main")
    tt.eq(tname.get((gpid, 7)), "Stream 7", "stream 7 track")
    tt.eq(tname.get((gpid, 8)), "Stream 8", "stream 8 track")

    X = [e for e in ev if e["ph"] == "X"]
    api = [e for e in X if e["cat"] == "cuda_api"]
    gpu = [e for e in X if e["cat"] in ("kernel", "memcpy", "memset")]
    tt.eq(len(api), 9, "API slices")
    tt.eq(sorted((e["cat"]) for e in gpu), ["kernel"] * 5 + ["memcpy"] * 2 + ["memset"], "GPU slices")
    tt.expect(all(e["pid"] == gpid for e in gpu), "GPU ops on the GPU process")
    k2 = [e for e in gpu if e["args"].get("corr") == 2][0]
    tt.eq((k2["tid"], k2["args"]["grid"], k2["args"]["block"]), (7, [4096, 1, 1], [256, 1, 1]), "kernel args")
    tt.eq(k2["name"], "vecAdd(float const*, float const*, float*, int)", "kernel slice name")
    # timestamps: us since trace start with ns precision (kernel corr 2 at 30000 ns)
    tt.eq((k2["ts"], k2["dur"]), (30.0, 10.0), "kernel ts/dur in us")
    api2 = [e for e in api if e["args"]["corr"] == 2][0]
    tt.eq((api2["pid"], api2["tid"], api2["ts"]), (1000, 1000, 10.0), "launch slice")

    # flows: one s/f pair per launch -> GPU op (corr 1,2,3,4,5,7,8,9), s at the
    # API call's start on its thread, f at the GPU op's start on its stream
    s = {e["id"]: e for e in ev if e["ph"] == "s"}
    f = {e["id"]: e for e in ev if e["ph"] == "f"}
    tt.eq(sorted(s), sorted(f), "every flow start has an end")
    api_at = {(e["pid"], e["tid"], e["ts"]): e["args"]["corr"] for e in api}
    gpu_at = {(e["pid"], e["tid"], e["ts"]): e["args"]["corr"] for e in gpu}
    pairs = set()
    for i in s:
        a = api_at.get((s[i]["pid"], s[i]["tid"], s[i]["ts"]))
        g = gpu_at.get((f[i]["pid"], f[i]["tid"], f[i]["ts"]))
        tt.expect(a is not None and g is not None and a == g, f"flow {i} does not link a launch to its op")
        tt.eq(f[i].get("bp"), "e", "flow end binds to the enclosing slice")
        pairs.add(a)
    tt.eq(sorted(pairs), [1, 2, 3, 4, 5, 7, 8, 9], "flows for every launch->GPU op pair")

    # NVTX push/pop nesting on the main thread: children inside parents
    nv = sorted((e for e in X if e["cat"] == "nvtx"), key=lambda e: (e["ts"], -e["dur"]))
    tt.eq([(e["name"], e["args"]["depth"]) for e in nv],
          [("train_step", 0), ("forward", 1), ("backward", 1), ("train_step", 0), ("forward", 1)], "nvtx slices")
    for child in (e for e in nv if e["args"]["depth"] == 1):
        parents = [p for p in nv if p["args"]["depth"] == 0 and p["tid"] == child["tid"]
                   and p["ts"] <= child["ts"] and child["ts"] + child["dur"] <= p["ts"] + p["dur"]]
        tt.eq(len(parents), 1, f"{child['name']} at {child['ts']} nested in one train_step")
    # API slices on the main thread sit inside the innermost open range or outside all
    for a in (e for e in api if e["tid"] == 1000):
        for r in nv:
            overlap = a["ts"] < r["ts"] + r["dur"] and r["ts"] < a["ts"] + a["dur"]
            inside = r["ts"] <= a["ts"] and a["ts"] + a["dur"] <= r["ts"] + r["dur"]
            tt.expect(not overlap or inside, f"API {a['name']} at {a['ts']} crosses range {r['name']}")
    # start/end range as async b/e with the same id
    b = [e for e in ev if e["ph"] == "b"]
    e_ = [e for e in ev if e["ph"] == "e"]
    tt.eq([(x["name"], x["ts"]) for x in b], [("epoch", 0.5)], "async begin")
    tt.eq([(x["name"], x["ts"], x["id"]) for x in e_], [("epoch", 300.0, b[0]["id"] if b else None)], "async end")
    # marks and counters
    marks = [e["name"] for e in ev if e["ph"] == "i" and e.get("cat") == "nvtx"]
    tt.expect("checkpoint" in marks, "mark exported")
    cnt = [(e["name"], e["ts"], e["args"]["value"]) for e in ev if e["ph"] == "C"]
    tt.eq(cnt, [("nvml.gpu_util", 100.0, 50), ("nvml.gpu_util", 200.0, 75)], "counters")

    # '-' writes to stdout
    p = tt.gp("export", "--format", "perfetto", trace, "-o", "-")
    tt.eq(len(json.loads(p.stdout)["traceEvents"]), len(ev), "stdout export")
    tt.eq(tt.gp("export", trace, "-o", out, check=False).returncode, 1, "missing --format exit")
tt.finish()
