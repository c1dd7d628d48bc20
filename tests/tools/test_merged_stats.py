"""Merged traces (issue 21): api, kernels, nvtx, memops (and memsize, sync)
keep the processes apart — one row per process and name, with PID and Rank
columns, in the table only when the trace holds more than one process.
Counts and totals recomputed per process from `gpuprof dump --json`."""
import json
import os
import subprocess
from collections import defaultdict

import tt

GEN_RANKS = os.path.join(os.path.abspath(tt.B), "tests", "tools", "gen_ranks")


def dump(path):
    return [json.loads(l) for l in tt.gp("dump", "--json", path).stdout.splitlines()]


def per_process(recs):
    """(pid, name) -> [count, total ns] for api, kernels (mangled), nvtx ranges"""
    out = {"api": defaultdict(lambda: [0, 0]), "kernels": defaultdict(lambda: [0, 0]),
           "nvtx": defaultdict(lambda: [0, 0])}
    for r in recs:
        if r["type"] == "api":
            k = ("api", (r["pid"], r["name"]))
        elif r["type"] == "kernel":
            k = ("kernels", (r["pid"], r["name"]))
        elif r["type"] == "nvtx_range":
            k = ("nvtx", (r["pid"], (r["domain"] + ":" if r["domain"] else "") + r["message"]))
        else:
            continue
        c = out[k[0]][k[1]]
        c[0] += 1
        c[1] += r["dur"]
    return out


def columns(table_text, title):
    lines = table_text.splitlines()
    i = next(i for i, l in enumerate(lines) if f"({title}):" in l)
    return lines[i + 2].split("  ")


with tt.tmpdir() as d:
    r0 = os.path.join(d, "r0.gpuprof")
    r1 = os.path.join(d, "r1.gpuprof")
    subprocess.run([GEN_RANKS, "--rank", "1", r1], check=True)  # rank 1 first: rows must still come by rank
    subprocess.run([GEN_RANKS, "--rank", "0", r0], check=True)
    m = os.path.join(d, "m.gpuprof")
    tt.gp("merge", r1, r0, "-o", m)
    want = per_process(dump(m))
    ranks = {r["pid"]: r["rank"] for r in dump(m) if r["type"] == "process"}
    st = json.loads(tt.gp("stats", "--format", "json", "--report", "api,kernels,nvtx", "--nvtx-instances", m).stdout)
    for rep, name_key in (("api", "name"), ("kernels", "mangled"), ("nvtx", "range")):
        got = {(r["pid"], r[name_key]): [r[{"api": "num_calls"}.get(rep, "instances")], r["total_ns"]]
               for r in st[rep]}
        tt.eq(got, dict(want[rep]), f"{rep}: one row per process and name, counts and totals")
        tt.expect(all(r["rank"] == ranks[r["pid"]] for r in st[rep]), f"{rep}: rank of the row's process")
        order = [r["rank"] for r in st[rep]]
        tt.eq(order, sorted(order), f"{rep}: rows by rank")
        for pid in {r["pid"] for r in st[rep]}:
            tt.approx(sum(r["time_pct"] for r in st[rep] if r["pid"] == pid), 100, f"{rep}: time % per process",
                      tol=1e-9)
    tt.expect(len({r["pid"] for r in st["kernels"]}) == 2, "kernels of both ranks")
    # the table shows PID and Rank for the merged trace, not for one rank
    tab = tt.gp("stats", "--report", "api,kernels,nvtx", "--width", "0", m).stdout  # headings on one line
    for rep in ("api", "kernels", "nvtx"):
        cols = [c.strip() for c in columns(tab, rep) if c.strip()]
        tt.expect("PID" in cols and "Rank" in cols, f"{rep} table of the merged trace: PID and Rank columns {cols}")
    tab = tt.gp("stats", "--report", "api,kernels,nvtx", r0).stdout
    for rep in ("api", "kernels", "nvtx"):
        cols = [c.strip() for c in columns(tab, rep) if c.strip()]
        tt.expect("PID" not in cols and "Rank" not in cols, f"{rep} table of one rank: no PID/Rank {cols}")

    # two processes without and with a rank: the ranked one first; Rank null
    a = tt.gen(os.path.join(d, "a.gpuprof"))
    b = tt.gen(os.path.join(d, "b.gpuprof"), variant="b")
    ab = os.path.join(d, "ab.gpuprof")
    tt.gp("merge", a, b, "-o", ab)
    st = json.loads(tt.gp("stats", "--format", "json", "--report", "kernels,memops", ab).stdout)
    tt.eq([(r["pid"], r["rank"]) for r in st["kernels"]][:1], [(2000, 1)], "ranked process first")
    tt.expect({r["pid"] for r in st["memops"]} == {1000, 2000}, "memops per process")
    tt.expect(all(r["rank"] is None for r in st["kernels"] if r["pid"] == 1000), "no rank: null")
tt.finish()
