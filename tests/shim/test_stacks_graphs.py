"""CUDA graph nodes (format 1.3 GP_REC_GRAPH_NODE, docs/FORMAT.md "CUDA
graph nodes"; docs/STACKS.md "CUDA graphs"): the job (stacks_py_graphs.py)
captures launches from forward methods (Model > Block > Attn, Mlp) into a
graph on the fake CUDA, instantiates it and launches it REPLAYS times from
outside any forward, then launches once eagerly.

- every node made during the capture has a record on the launching thread
  whose time lies inside exactly one captured cudaLaunchKernel (a call with
  a stack and no kernel record of its own), in launch order;
- instantiation copies each made node once (origin = a made node);
- every kernel of a graph launch carries a copy's node id and the graph
  launch's correlation id;
- `gpuprof stats --report layers`: the replayed kernels under Model > Block
  > Attn / Mlp > (CUDA graph, captured here), with their kernel time; the
  eager launch under Attn; the Self column adds up to all kernel time;
- fail safe: CUPTI without graph ids (FAKE_CUPTI_GRAPH_IDS=fail) or stacks
  off: no graph_node records, the job unharmed, and the replayed kernels
  stay on the graph launch ("(CUDA graph replay)").
GPUPROF_TEST_PYTHON picks the interpreter; skips unless CPython 3.11-3.13."""
import json
import os
import subprocess
import sys

from stackslib import Env, Trace, cpython_or_skip

E = Env(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "stacks_py_graphs.py")
REPLAYS = 4
py, major, minor = cpython_or_skip()


def layers(trace):
    p = subprocess.run([E.gpuprof, "stats", "--report", "layers", "--format", "json", trace], capture_output=True,
                       text=True)
    E.check(p.returncode == 0, "stats layers: %s" % p.stderr)
    return json.loads(p.stdout)["layers"] if p.returncode == 0 else []


def paths(rows):
    """{path tuple: (kernels, kernel_ns, self_ns)} from the depth-first rows."""
    out, stack = {}, []
    for r in rows:
        del stack[r["depth"]:]
        stack.append(r["layer"])
        out[tuple(stack)] = (r["kernels"], r["kernel_ns"], r["self_ns"])
    return out


def run(mode, extra, name):
    # GPUPROF_GRAPH_SITES is left at its default (on with stacks) unless extra sets it
    env = {"GPUPROF_STACKS": mode} if mode else {}
    env.update(extra)
    rc, out, err, trace = E.run([py, JOB, E.cudart, str(REPLAYS)], env, name)
    E.check(rc == 0 and out == "graphs done\n", "%s: exit %d, stdout %r, stderr %r" % (name, rc, out, err))
    return Trace(E, trace), trace


for mode in ("all", "1"):
    t, trace = run(mode, {}, "graphs-" + mode)
    nodes = [r for r in t.recs if r["type"] == "graph_node"]
    made = [n for n in nodes if n["origin_node_id"] == 0]
    copies = [n for n in nodes if n["origin_node_id"] != 0]
    launches = [a for a in t.apis if a["name"] == "cudaLaunchKernel"]
    kernels = [r for r in t.recs if r["type"] == "kernel"]
    kernel_corrs = {k["corr"] for k in kernels}
    E.check(len(made) == 3 and len(copies) == 3, "%s: %d made, %d copied nodes (want 3, 3)" %
            (mode, len(made), len(copies)))
    captured = []
    for n in made:
        inside = [a for a in launches if a["tid"] == n["tid"] and a["start"] <= n["ts_ns"] <= a["end"]]
        if E.check(len(inside) == 1, "%s: node %d inside %d launch calls" % (mode, n["node_id"], len(inside))):
            a = inside[0]
            E.check(a.get("stack") in t.stacks and a["corr"] not in kernel_corrs,
                    "%s: node %d's launch has stack %s, kernel record %s" %
                    (mode, n["node_id"], a.get("stack"), a["corr"] in kernel_corrs))
            captured.append(a)
    E.check([a["corr"] for a in captured] == sorted(a["corr"] for a in captured) and
            captured == sorted(launches, key=lambda a: a["start"])[:3], "%s: captured calls not the first 3" % mode)
    made_ids = {n["node_id"] for n in made}
    copy_ids = {n["node_id"] for n in copies}
    E.check(sorted(n["origin_node_id"] for n in copies) == sorted(made_ids), "%s: copies' origins %s, made %s" %
            (mode, [n["origin_node_id"] for n in copies], made_ids))
    graph_launch_corrs = {a["corr"] for a in t.apis if a["name"] == "cudaGraphLaunch"}
    gk = [k for k in kernels if k.get("graph_node_id")]
    E.check(len(gk) == 3 * REPLAYS and all(k["graph_node_id"] in copy_ids and k["corr"] in graph_launch_corrs
                                          for k in gk), "%s: graph kernels %s" % (mode, gk[:3]))
    got = paths(layers(trace))
    ns = lambda name: sum(k["dur"] for k in gk if k["name"] == name)  # noqa: E731
    want = {
        ("Model", "Block", "Attn", "(CUDA graph, captured here)"): (REPLAYS, ns("k_attn"), ns("k_attn")),
        ("Model", "Block", "Mlp", "(CUDA graph, captured here)"): (2 * REPLAYS, ns("k_mlp"), ns("k_mlp")),
    }
    for p, w in want.items():
        E.check(got.get(p) == w, "%s: layers %s = %s, want %s" % (mode, p, got.get(p), w))
    E.check(got.get(("Attn",), (0,))[0] == 1, "%s: eager Attn %s" % (mode, got.get(("Attn",))))
    E.check(not any(p[0] == "(CUDA graph replay)" for p in got), "%s: replay rows left: %s" % (mode, list(got)))
    E.check(sum(v[2] for v in got.values()) == sum(k["dur"] for k in kernels), "%s: self sum %d, kernels %d" %
            (mode, sum(v[2] for v in got.values()), sum(k["dur"] for k in kernels)))

# fail safe: no ids from CUPTI, or stacks off; and off with GPUPROF_GRAPH_SITES=0 (on by default with stacks
# since the H200 sites run of 2026-12-04)
for mode, extra, name in (("all", {"FAKE_CUPTI_GRAPH_IDS": "fail"}, "graphs-noids"), (None, {}, "graphs-nostacks"),
                          ("all", {"GPUPROF_GRAPH_SITES": "0"}, "graphs-off")):
    t, trace = run(mode, extra, name)
    E.check(not [r for r in t.recs if r["type"] == "graph_node"], "%s: graph_node records" % name)
    E.check(len([k for k in t.recs if k["type"] == "kernel" and k.get("graph_node_id")]) == 3 * REPLAYS,
            "%s: graph kernels" % name)
    if mode:
        got = paths(layers(trace))
        E.check(got.get(("(CUDA graph replay)",), (0,))[0] == 3 * REPLAYS and
                not any(p[-1] == "(CUDA graph, captured here)" for p in got), "%s: layers %s" % (name, got))
print("python %s.%s: graph kernels under the layers that captured them" % (major, minor))
E.finish()
