"""memops with pinned and pageable copies apart and a throughput per row,
and the sync and memory reports (issue 21): every figure recomputed here from
`gpuprof dump --json` of the same trace.  Throughput = bytes / total time,
GB = 1e9 bytes; memory in use = allocated - freed so far in time order
(never below 0), peak its largest value."""
import json
import os
from collections import defaultdict

import tt

ROOT = os.path.join(tt.HERE, "..", "..")
MNIST = os.path.join(ROOT, "examples", "mnist-h200.gpuprof")
LONG = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device", "HtoH": "Host-to-Host",
        "PtoP": "Peer-to-Peer"}


def dump(path, types):
    return [json.loads(l) for l in tt.gp("dump", "--json", "--type", types, path).stdout.splitlines()]


def check_memops(path, what):
    want = defaultdict(lambda: [0, 0, 0])  # (op, src, dst, device) -> count, ns, bytes
    for r in dump(path, "memcpy,memset"):
        if r["type"] == "memcpy":
            key = (f"[CUDA memcpy {LONG.get(r['kind'], r['kind'])}]", r["src_kind"], r["dst_kind"], r["device"])
        else:
            key = ("[CUDA memset]", None, r["mem_kind"], r["device"])
        w = want[key]
        w[0] += 1; w[1] += r["dur"]; w[2] += r["bytes"]
    st = json.loads(tt.gp("stats", "--report", "memops,memsize", "--format", "json", path).stdout)
    got = {(r["operation"], r["src_kind"], r["dst_kind"], r["device"]): [r["count"], r["total_ns"], r["bytes"]]
           for r in st["memops"]}
    tt.eq(got, dict(want), f"{what}: memops rows by operation and memory kinds")
    for r in st["memops"]:
        if r["total_ns"]:
            tt.eq(r["throughput_gb_per_s"], r["bytes"] / r["total_ns"], f"{what}: throughput of {r['operation']}")
    sizes = {(r["operation"], r["src_kind"], r["dst_kind"], r["device"]): r["total_bytes"] for r in st["memsize"]}
    tt.eq(sizes, {k: v[2] for k, v in want.items()}, f"{what}: memsize rows the same groups")
    return st


with tt.tmpdir() as d:
    # ---- the real MNIST trace: pageable and pinned host-to-device copies are two rows
    st = check_memops(MNIST, "mnist")
    h2d = {r["src_kind"]: r for r in st["memops"] if r["operation"] == "[CUDA memcpy Host-to-Device]"}
    tt.eq(sorted(h2d), ["pageable", "pinned"], "mnist: HtoD pageable and pinned apart")
    if len(h2d) == 2:
        tt.expect(h2d["pageable"]["throughput_gb_per_s"] < h2d["pinned"]["throughput_gb_per_s"],
                  "mnist: pageable copies slower than pinned")
    tab = tt.gp("stats", "--report", "memops", "--width", "0", MNIST).stdout  # headings on one line
    tt.expect("Throughput (GB/s)" in tab and "pageable" in tab and "pinned" in tab, "memops table columns")

    # ---- gen_trace: no sync or memory records -> not in the default set
    trace = tt.gen(os.path.join(d, "t.gpuprof"))
    check_memops(trace, "gen_trace")
    j = json.loads(tt.gp("stats", "--format", "json", trace).stdout)
    tt.expect("sync" not in j and "memory" not in j, "sync/memory reports not in the default set without records")
    j = json.loads(tt.gp("stats", "--report", "sync,memory", "--format", "json", trace).stdout)
    tt.eq((j["sync"], j["memory"]), ([], []), "asked for: empty")

    # ---- the fake workload with every activity kind: sync and memory records
    w = tt.run_workload(d, GPUPROF_ACTIVITY="all")[0]
    check_memops(w, "workload")
    j = json.loads(tt.gp("stats", "--format", "json", w).stdout)
    tt.expect("sync" in j and "memory" in j, "sync and memory reports in the default set when recorded")
    recs = dump(w, "sync,memory")
    want = defaultdict(list)
    for r in recs:
        if r["type"] == "sync":
            want[r["sync_type"]].append(r["dur"])
    tt.eq({r["sync_type"]: (r["count"], r["total_ns"], r["min_ns"], r["max_ns"]) for r in j["sync"]},
          {k: (len(v), sum(v), min(v), max(v)) for k, v in want.items()}, "sync rows = dump's sync records by type")
    tt.eq(sorted(want), ["context_synchronize", "stream_synchronize"], "sync types seen")
    use = defaultdict(lambda: dict(allocs=0, frees=0, ab=0, fb=0, cur=0, peak=0, big=0))
    for r in sorted((r for r in recs if r["type"] == "memory"), key=lambda r: r["ts"]):
        u = use[(r["device"], r["mem_kind"])]
        if r["op"] == "alloc":
            u["allocs"] += 1; u["ab"] += r["bytes"]; u["cur"] += r["bytes"]
            u["peak"] = max(u["peak"], u["cur"]); u["big"] = max(u["big"], r["bytes"])
        elif r["op"] == "free":
            u["frees"] += 1; u["fb"] += r["bytes"]; u["cur"] = max(0, u["cur"] - r["bytes"])
    tt.eq({(r["device"], r["mem_kind"]): (r["allocs"], r["allocated_bytes"], r["frees"], r["freed_bytes"],
                                          r["largest_alloc_bytes"], r["peak_in_use_bytes"], r["end_in_use_bytes"])
           for r in j["memory"]},
          {k: (u["allocs"], u["ab"], u["frees"], u["fb"], u["big"], u["peak"], u["cur"]) for k, u in use.items()},
          "memory rows = dump's alloc/free records")
    tt.expect(any(r["peak_in_use_bytes"] > 0 for r in j["memory"]), "some memory in use")
tt.finish()
