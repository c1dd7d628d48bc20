#!/usr/bin/env python3
"""The committed real H200 traces (examples/*-h200.gpuprof, recorded by the
shim on an H200 with CUDA 13 / torch 2.11) through every subcommand.

Figures are recomputed independently from `dump --json` in this script and
compared with `stats --format json`: kernel count and total time per name,
utilisation busy time as the union of kernel intervals (sorted here, since
GPU records are not in start order in a real trace), memcpy bytes.  The
Perfetto export must hold one GPU slice per kernel/memcpy/memset and one
flow per correlated launch; the SQLite export the same counts.
"""
import json, os, sqlite3, subprocess, sys, tempfile

import tt

B = sys.argv[1] if len(sys.argv) > 1 else "build"
G = os.path.join(B, "bin", "gpuprof")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = [os.path.join(ROOT, "examples", f) for f in ("mnist-h200.gpuprof", "vector_add-h200.gpuprof")]
# the shared helpers of the tool tests (tests/tools/tt.py): a failed check is
# printed and counted, tt.finish() exits non-zero if any failed
check = tt.expect


def run(*args):
    p = subprocess.run([G, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def union_busy(ivs):
    ivs = sorted(ivs)
    busy, cur = 0, None
    for s, e in ivs:
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
        else:
            if cur:
                busy += cur[1] - cur[0]
            cur = [s, e]
    if cur:
        busy += cur[1] - cur[0]
    return busy


for t in TRACES:
    name = os.path.basename(t)
    rc, out, err = run("info", t)
    check(rc == 0 and "integrity:  complete" in out, f"{name}: info exit 0, integrity complete")
    rc, out, err = run("dump", "--json", t)
    check(rc == 0, f"{name}: dump --json exit 0")
    recs = [json.loads(l) for l in out.splitlines()]
    kern = [r for r in recs if r["type"] == "kernel"]
    copies = [r for r in recs if r["type"] == "memcpy"]
    sets = [r for r in recs if r["type"] == "memset"]
    apis = {r["corr"] for r in recs if r["type"] == "api"}
    check(len(kern) > 0 and all(r["end"] >= r["start"] for r in kern), f"{name}: {len(kern)} kernels, none ends before it starts")
    check(all(r["corr"] in apis for r in kern), f"{name}: every kernel has its launch call (by correlation id)")

    rc, out, err = run("stats", "--format", "json", t)
    check(rc == 0, f"{name}: stats exit 0")
    st = json.loads(out)
    by_name = {}
    for r in kern:
        n = r["name"]  # mangled: stats JSON carries it beside the demangled name
        c, tot = by_name.get(n, (0, 0))
        by_name[n] = (c + 1, tot + r["dur"])
    got = {k["mangled"]: (k["instances"], k["total_ns"]) for k in st["kernels"]}
    check(got == by_name, f"{name}: kernel summary = per-name count and total from dump ({len(by_name)} names)")
    busy = union_busy([(r["start"], r["end"]) for r in kern])
    dev_all = [u for u in st["util"] if u["stream"] == "all"]
    check(len(dev_all) == 1 and dev_all[0]["busy_ns"] == busy and dev_all[0]["kernels"] == len(kern),
          f"{name}: util busy {dev_all[0]['busy_ns'] if dev_all else '?'} ns = union of kernel intervals {busy} ns")
    for u in st["util"]:
        if u["stream"] == "all":
            continue
        sk = [(r["start"], r["end"]) for r in kern if str(r["stream"]) == u["stream"]]
        if union_busy(sk) != u["busy_ns"]:
            check(False, f"{name}: stream {u['stream']} busy {u['busy_ns']} != {union_busy(sk)}")
            break
    else:
        check(True, f"{name}: per-stream busy = union of that stream's kernels")
    cbytes = sum(r["bytes"] for r in copies)
    mem = {m["operation"]: m for m in st.get("memsize", [])} if st.get("memsize") and "operation" in st["memsize"][0] else None
    total = sum(m["total_bytes"] for m in st.get("memsize", []))
    check(total == cbytes + sum(r["bytes"] for r in sets),
          f"{name}: memsize total {total} B = copy+set bytes from dump")

    with tempfile.TemporaryDirectory() as d:
        pj = os.path.join(d, "t.json")
        rc, out, err = run("export", "--format", "perfetto", t, "-o", pj)
        check(rc == 0, f"{name}: export perfetto exit 0")
        ev = json.load(open(pj))
        ev = ev["traceEvents"] if isinstance(ev, dict) else ev
        gpu_x = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "memcpy", "memset")]
        check(len(gpu_x) == len(kern) + len(copies) + len(sets),
              f"{name}: perfetto has {len(gpu_x)} GPU slices = kernels+memcpys+memsets {len(kern) + len(copies) + len(sets)}")
        flows = [e for e in ev if e.get("ph") in ("s", "f")]
        check(len(flows) >= 2 * len(kern), f"{name}: perfetto has launch->GPU flows ({len(flows)} flow events)")
        db = os.path.join(d, "t.db")
        rc, out, err = run("export", "--format", "sqlite", t, "-o", db)
        check(rc == 0, f"{name}: export sqlite exit 0")
        con = sqlite3.connect(db)
        nk = con.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        joined = con.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join "
                             "(select correlationId from CUPTI_ACTIVITY_KIND_RUNTIME union "
                             " select correlationId from CUPTI_ACTIVITY_KIND_DRIVER) a "
                             "on a.correlationId = k.correlationId").fetchone()[0]
        check(nk == len(kern) and joined == len(kern), f"{name}: sqlite kernels {nk}, joined to their API call {joined}")

# Golden output: info and every stats report (csv) of the real MNIST trace are
# pinned in tests/tools/golden/real/ (regenerate: GPUPROF_UPDATE_GOLDEN=1).
GOLD = os.path.join(ROOT, "tests", "tools", "golden", "real")
mnist = TRACES[0]
for gname, args in [("mnist_info", ["info", mnist]),
                    ("mnist_stats_csv", ["stats", "--format", "csv", mnist]),
                    ("vector_add_stats", ["stats", TRACES[1]])]:
    rc, out, err = run(*args)
    out = out.replace(mnist, "TRACE").replace(TRACES[1], "TRACE")
    path = os.path.join(GOLD, gname + ".out")
    if os.environ.get("GPUPROF_UPDATE_GOLDEN"):
        os.makedirs(GOLD, exist_ok=True)
        open(path, "w").write(out)
    want = open(path).read() if os.path.exists(path) else None
    check(rc == 0 and out == want, f"golden {gname}: gpuprof {' '.join(args[:-1])} output as committed")
    if want is not None and out != want:
        import difflib
        print("".join(list(difflib.unified_diff(want.splitlines(True), out.splitlines(True)))[:30]))

tt.finish()
