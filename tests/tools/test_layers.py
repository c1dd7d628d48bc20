"""test_layers.py — model layers and the --site rules on a trace whose Python
stacks have forward frames (tests/tools/gen_layers.c lists every stack and
launch; the expected values below are worked out by hand from that list):

- `stats --report layers`: the tree (depth, total, self, kernels), the rows
  of their own (no python stack, not in a forward, backward, other thread,
  CUDA graph replay), the self column summing to the kernels report's total;
- `stats --report launch_sites --site user|inner|layer|GLOB`: each rule's
  site per stack; a bad --site is a usage error;
- `export --format folded --site layer|inner`: the same paths / stacks cut
  at the site;
- `advise --site` and `report --site` take the option;
- CUDA graphs (gen_layers --graphs): a replayed kernel whose node was made
  inside a launch call with a stack goes under that launch's layers, in a
  "(CUDA graph, captured here)" row; a node made outside any call, or a
  kernel's node with no record, stays on the graph launch (fail safe);
- emit_nvtx (gen_layers --emit-nvtx): a backward kernel inside a backward
  node's range goes to the layer of the forward op range with the same
  seq, in a "(backward)" row below it; an ambiguous seq, a forward op with
  no layer or no known path, and a seq with no forward op stay in
  "(backward, unattributed)";
- `gpuprof run --layers` ranges (gen_layers --layer-ranges): a backward
  kernel inside a "gpuprof.backward PATH" push/pop range of its launching
  thread goes to PATH > "(backward)" (the innermost range); another range,
  an empty PATH, a range of another thread or none leave it unattributed;
- `export --format folded --site layer` gives, on each of these traces,
  every layers row's Self time at that row's path (the one attribution of
  both, graph and backward joins included);
- `stats --report launch_sites`: a graph kernel of known capture counts at
  the captured launch's site;
- `stats --report launch_sites` when one site holds most of the time
  (gen_layers, and gen_layers --trainer with a library frame under the
  user's site): the note names the frame where its time splits, the shares
  below it, and the --site GLOB of the library code it calls; not under
  another --site rule, nor when no site holds half of the time."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, eq, expect, finish, gp, tmpdir  # noqa: E402

GEN_LAYERS = os.path.abspath(os.path.join(B, "tests", "tools", "gen_layers"))
d = tmpdir()
T = os.path.join(d.name, "layers.gpuprof")
subprocess.run([GEN_LAYERS, T], check=True)


def stats_json(report, *extra, trace=T):
    p = gp("stats", "--report", report, "--format", "json", *extra, trace)
    return json.loads(p.stdout)[report]


def layer_rows(trace, *extra):
    """(depth, layer, kernel_ns, self_ns, kernels) of each layers row"""
    return [(r["depth"], r["layer"], r["kernel_ns"], r["self_ns"], r["kernels"])
            for r in stats_json("layers", *extra, trace=trace)]


# ---- the layer tree
rows = [(r["depth"], r["layer"], r["kernel_ns"], r["self_ns"], r["kernels"]) for r in stats_json("layers")]
want = [
    (0, "GPT2Model", 5200, 0, 5),
    (1, "GPT2Block", 5200, 0, 5),
    (2, "GPT2Attention", 3200, 400, 4),
    (3, "Linear", 2500, 2500, 2),
    (3, "MyLinear", 300, 300, 1),     # Linear.forward run on a MyLinear: self's class
    (2, "GPT2MLP", 2000, 0, 1),
    (3, "Linear", 2000, 2000, 1),
    (0, "(backward, unattributed)", 3000, 3000, 1),
    (0, "(not in a forward)", 890, 0, 2),
    (1, "train.py:20 step", 800, 800, 1),
    (1, "model.py:42 Net.forward", 90, 90, 1),  # the trace has classes: Net.forward has none, not a layer
    (0, "(CUDA graph replay)", 450, 0, 2),
    (1, "GPT2Model", 450, 450, 2),
    (0, "(no python stack)", 110, 110, 2),
    (0, "(other thread, unattributed)", 60, 60, 1),
]
eq(rows, want, "layers tree")
total = sum(r["total_ns"] for r in stats_json("kernels"))
eq(total, 9710, "kernels total")
eq(sum(r[3] for r in rows), total, "layers: self times add up to all kernel time")
eq(sum(r[2] for r in rows if r[0] == 0), total, "layers: top rows add up to all kernel time")
# a node's total = its self + its children's totals
for i, r in enumerate(rows):
    kids = []
    for s in rows[i + 1:]:
        if s[0] <= r[0]:
            break
        if s[0] == r[0] + 1:
            kids.append(s)
    eq(r[2], r[3] + sum(k[2] for k in kids), f"layers: {r[1]} total = self + children")
table = gp("stats", "--report", "layers", T).stdout
expect("      GPT2Attention" in table and "        MyLinear" in table, "layers table: depth indented\n" + table)
# the default set has the layers table only when some stack has a forward frame
expect("(layers)" in gp("stats", T).stdout, "layers in the default set of a trace with forward frames")


# a trace without class fields (an older shim): the class each forward is defined in
T_OLD = os.path.join(d.name, "old.gpuprof")
subprocess.run([GEN_LAYERS, "--no-class", T_OLD], check=True)
p = gp("stats", "--report", "layers", "--format", "json", T_OLD)
old = [(r["depth"], r["layer"], r["self_ns"]) for r in json.loads(p.stdout)["layers"]]
eq(old[:6], [(0, "GPT2Model", 0), (1, "GPT2Block", 0), (2, "GPT2Attention", 400), (3, "Linear", 2500 + 300),
             (2, "GPT2MLP", 0), (3, "Linear", 2000)], "no class field: Linear.forward on a MyLinear is Linear")
expect((0, "Net", 90) in old, "no class field: Net.forward is the layer Net")
eq(sum(r[2] for r in old), 9710, "no class field: self times add up")


# ---- launch sites by rule
def sites(*extra):
    return {r["site"]: r["kernel_ns"] for r in stats_json("launch_sites", *extra)}


eq(sites(), {"train.py:20 step": 6450, "train.py:22 step": 3060, "model.py:42 Net.forward": 90, "0x1234": 70,
             "(no stack)": 40}, "--site user (the default)")
eq(sites("--site", "user"), sites(), "--site user = no --site")
G = "transformers/models/gpt2/modeling_gpt2.py"
eq(sites("--site", "inner"), {"torch/nn/modules/linear.py:125 Linear.forward": 4800, "train.py:22 step": 3060,
                              "torch/optim/adamw.py:100 AdamW.step": 800, G + ":900 GPT2Model.forward": 450,
                              G + ":310 GPT2Attention.forward": 400, "model.py:42 Net.forward": 90, "0x1234": 70,
                              "(no stack)": 40}, "--site inner")
eq(sites("--site", "transformers/models/*"),
   {G + ":300 GPT2Attention.forward": 2800, G + ":350 GPT2MLP.forward": 2000, "train.py:22 step": 3060,
    "train.py:20 step": 800, G + ":900 GPT2Model.forward": 450, G + ":310 GPT2Attention.forward": 400,
    "model.py:42 Net.forward": 90, "0x1234": 70, "(no stack)": 40}, "--site GLOB")
eq(sites("--site", "*/no/such/*"), sites(), "--site GLOB matching nothing: as user")
eq(sites("--site", "layer"),
   {"GPT2Model > GPT2Block > GPT2Attention > Linear": 2500, "GPT2Model > GPT2Block > GPT2MLP > Linear": 2000,
    "GPT2Model > GPT2Block > GPT2Attention": 400, "GPT2Model > GPT2Block > GPT2Attention > MyLinear": 300,
    "GPT2Model": 450, "model.py:42 Net.forward": 90, "train.py:22 step": 3060, "train.py:20 step": 800, "0x1234": 70,
    "(no stack)": 40}, "--site layer")
for bad in ([], [""]):
    p = gp("stats", "--report", "launch_sites", *(["--site"] + bad if bad else ["--site"]), T, check=False)
    expect(p.returncode != 0, f"--site {bad}: usage error, got exit {p.returncode}")


# ---- folded
def folded(*extra, trace=T):
    p = gp("export", "--format", "folded", *extra, trace, "-o", "-")
    out = {}
    for line in p.stdout.splitlines():
        stack, _, w = line.rpartition(" ")
        out[stack] = out.get(stack, 0) + int(w)
    return out


f = folded("--site", "layer", "--weight", "kernel-time")
eq(f, {"GPT2Model;GPT2Block;GPT2Attention;Linear": 2500, "GPT2Model;GPT2Block;GPT2Attention;MyLinear": 300,
       "GPT2Model;GPT2Block;GPT2Attention": 400, "GPT2Model;GPT2Block;GPT2MLP;Linear": 2000,
       "(backward, unattributed)": 3000, "(not in a forward);train.py:20 step": 800,
       "(CUDA graph replay);GPT2Model": 450, "(no python stack)": 110, "(not in a forward);model.py:42 Net.forward": 90,
       "(other thread, unattributed)": 60}, "folded --site layer = the layers rows")
f = folded("--site", "inner", "--weight", "kernel-time")
eq(f.get("step (train.py:20);AdamW.step (torch/optim/adamw.py:100)"), 800, "folded --site inner: cut at the site")
expect(not any(k.endswith("Module._call_impl (torch/nn/modules/module.py:1750)") for k in f),
       "folded --site inner: no stack ends below its site")
eq(sum(f.values()), total, "folded --site inner: all kernel time")
eq(sum(folded().values()), sum(folded("--site", "user").values()), "folded --site user: same total")
p = gp("export", "--format", "perfetto", "--site", "inner", T, "-o", os.path.join(d.name, "x.json"), check=False)
expect(p.returncode != 0, "--site with perfetto: usage error")

# ---- advise and report take the option
for cmd in (["advise", "--site", "layer", T], ["report", "--site", "inner", "-o", os.path.join(d.name, "r.html"), T]):
    gp(*cmd)
    p = gp(*(cmd[:1] + ["--site", ""] + cmd[3:]), check=False)
    expect(p.returncode == 2 or p.returncode == 1, f"{cmd[0]} --site '': usage error, got {p.returncode}")
html = open(os.path.join(d.name, "r.html")).read()
expect("linear.py:125 Linear.forward" in html, "report --site inner: the launch_sites table's sites by that rule")

# ---- CUDA graphs: kernels under the layer that captured them
TG = os.path.join(d.name, "graphs.gpuprof")
subprocess.run([GEN_LAYERS, "--graphs", TG], check=True)
grows = layer_rows(TG)
gwant = [
    (0, "GPT2Model", 6300, 0, 7),
    (1, "GPT2Block", 6300, 0, 7),
    (2, "GPT2Attention", 3700, 400, 5),
    (3, "Linear", 3000, 2500, 3),
    (4, "(CUDA graph, captured here)", 500, 500, 1),   # node 102, a copy of 100, made in call 20 (stack 1)
    (3, "MyLinear", 300, 300, 1),
    (2, "GPT2MLP", 2600, 0, 2),
    (3, "Linear", 2600, 2000, 2),
    (4, "(CUDA graph, captured here)", 600, 600, 1),   # node 103 <- 101, call 21 (stack 3)
    (0, "(backward, unattributed)", 3000, 3000, 1),
    (0, "(not in a forward)", 890, 0, 2),
    (1, "train.py:20 step", 800, 800, 1),
    (1, "model.py:42 Net.forward", 90, 90, 1),
    (0, "(CUDA graph replay)", 600, 0, 4),              # 450 as before + node 105 (104: no call) + node 999
    (1, "GPT2Model", 600, 600, 4),
    (0, "(no python stack)", 110, 110, 2),
    (0, "(other thread, unattributed)", 60, 60, 1),
]
eq(grows, gwant, "layers tree with graphs")
gtotal = sum(r["total_ns"] for r in stats_json("kernels", trace=TG))
eq(sum(r[3] for r in grows), gtotal, "graphs: self times add up to all kernel time")
# the same trace read by a selection that leaves the capture out: still attributed
# (the capture calls are at 3.6-3.9 us, every kernel after 100 us)
srows = layer_rows(TG, "--since", "50us")
eq([r for r in srows if "captured" in r[1]], [r for r in gwant if "captured" in r[1]],
   "graphs: a selection without the capture keeps the capture's layers")

# ---- emit_nvtx: backward kernels under the forward layer of their seq
TN = os.path.join(d.name, "nvtx.gpuprof")
subprocess.run([GEN_LAYERS, "--emit-nvtx", TN], check=True)
nrows = layer_rows(TN)
nwant = [
    (0, "GPT2Model", 6700, 0, 8),
    (1, "GPT2Block", 6700, 0, 8),
    (2, "GPT2Attention", 4400, 400, 6),
    (3, "Linear", 3700, 2500, 4),
    (4, "(backward)", 1200, 1200, 2),     # AddmmBackward0 seq 7 <- aten::linear seq 7 (and its aten::t)
    (3, "MyLinear", 300, 300, 1),
    (2, "GPT2MLP", 2300, 0, 2),
    (3, "Linear", 2300, 2000, 2),
    (4, "(backward)", 300, 300, 1),      # GeluBackward0 seq 9 <- aten::gelu seq 9
    # 3000 (no range) + seq 11 (two paths) 200 + seq 12 (no path) 100
    # + seq 13 (no layer) 80 + seq 99 (no forward) 50
    (0, "(backward, unattributed)", 3430, 3430, 5),
    (0, "(not in a forward)", 890, 0, 2),
    (1, "train.py:20 step", 800, 800, 1),
    (1, "model.py:42 Net.forward", 90, 90, 1),
    (0, "(CUDA graph replay)", 450, 0, 2),
    (1, "GPT2Model", 450, 450, 2),
    (0, "(no python stack)", 110, 110, 2),
    (0, "(other thread, unattributed)", 60, 60, 1),
]
eq(nrows, nwant, "layers tree with emit_nvtx ranges")
ntotal = sum(r["total_ns"] for r in stats_json("kernels", trace=TN))
eq(ntotal, 9710 + 1930, "emit_nvtx: kernels total")
eq(sum(r[3] for r in nrows), ntotal, "emit_nvtx: self times add up to all kernel time")

# ---- gpuprof run --layers: backward kernels under the path their range names
TR = os.path.join(d.name, "lranges.gpuprof")
subprocess.run([GEN_LAYERS, "--layer-ranges", TR], check=True)
rrows = layer_rows(TR)
rwant = [
    (0, "GPT2Model", 6700, 0, 8),
    (1, "GPT2Block", 6400, 0, 7),
    (2, "GPT2Attention", 3700, 400, 5),
    (3, "Linear", 3000, 2500, 3),
    (4, "(backward)", 500, 500, 1),      # 40: the outer range only
    (3, "MyLinear", 300, 300, 1),
    (2, "GPT2MLP", 2700, 0, 2),
    (3, "Linear", 2000, 2000, 1),
    (3, "(backward)", 700, 700, 1),      # 41: the inner range, GPT2MLP's
    (1, "(backward)", 300, 300, 1),      # 42: GPT2Model's
    # 3000 (no range) + 43 (another range) 200 + 44 (none) 100 + 45 (no path) 80
    # + 46 (a range of main, not of its thread) 50
    (0, "(backward, unattributed)", 3430, 3430, 5),
    (0, "(not in a forward)", 890, 0, 2),
    (1, "train.py:20 step", 800, 800, 1),
    (1, "model.py:42 Net.forward", 90, 90, 1),
    (0, "(CUDA graph replay)", 450, 0, 2),
    (1, "GPT2Model", 450, 450, 2),
    (0, "(no python stack)", 110, 110, 2),
    (0, "(other thread, unattributed)", 60, 60, 1),
]
eq(rrows, rwant, "layers tree with --layers ranges")
eq(sum(r[3] for r in rrows), sum(r["total_ns"] for r in stats_json("kernels", trace=TR)),
   "--layers ranges: self times add up to all kernel time")
# the time shards of --threads give the same tree
eq(layer_rows(TR, "--threads", "4"), rwant, "--layers ranges: the same with --threads 4")

# ---- folded --site layer = the layers report's Self column, per path
def self_by_path(trace):
    """{"A;B;C": self_ns} of the layers rows with self time, the path built from the depths"""
    out, chain = {}, []
    for r in stats_json("layers", trace=trace):
        chain = chain[:r["depth"]] + [r["layer"]]
        if r["self_ns"]:
            out[";".join(chain)] = r["self_ns"]
    return out


for name, trace in (("plain", T), ("no class", T_OLD), ("graphs", TG), ("emit_nvtx", TN), ("layer ranges", TR)):
    want_self = self_by_path(trace)
    got = folded("--site", "layer", "--weight", "kernel-time", trace=trace)
    eq(got, want_self, f"{name}: folded --site layer per path = stats --report layers Self per path")
    # gpu-time adds the memcpys/memsets at their call's path: never less per path
    g = folded("--site", "layer", trace=trace)
    expect(all(g.get(k, 0) >= v for k, v in got.items()), f"{name}: folded gpu-time >= kernel-time per path")
expect(any(k.endswith(";(CUDA graph, captured here)") for k in folded("--site", "layer", trace=TG)),
       "folded --site layer: graph kernels under their capture's path")
expect(any(k.endswith(";(backward)") for k in folded("--site", "layer", trace=TN)),
       "folded --site layer: backward kernels under their forward layer")

# ---- launch_sites: a graph kernel of known capture at its captured launch's site
gsites = {r["site"]: r["kernel_ns"] for r in stats_json("launch_sites", "--site", "layer", trace=TG)}
eq(gsites["GPT2Model > GPT2Block > GPT2Attention > Linear"], 2500 + 500, "launch_sites: node 102 at call 20's site")
eq(gsites["GPT2Model > GPT2Block > GPT2MLP > Linear"], 2000 + 600, "launch_sites: node 103 at call 21's site")
eq(gsites["GPT2Model"], 600, "launch_sites: graph kernels of unknown capture stay at the graph launch's site")
eq(sum(gsites.values()), gtotal, "launch_sites with graphs: all kernel time")


def site_label(frame):
    """a folded leaf frame, func (file:line), as launch_sites writes a site: file:line func"""
    if frame.endswith(")") and " (" in frame:
        func, _, loc = frame[:-1].rpartition(" (")
        return loc + " " + func
    return frame


# the folded export cut at the site gives each site launch_sites' kernel time (graph join included)
# (not inner: the folded frame names a forward by self's class, MyLinear.forward, the site label by
# the class it is defined in)
for rule in ("user", "transformers/models/*"):
    by_site = {}
    for stack, w in folded("--site", rule, "--weight", "kernel-time", trace=TG).items():
        k = site_label(stack.split(";")[-1])
        by_site[k] = by_site.get(k, 0) + w
    want_sites = {r["site"]: r["kernel_ns"] for r in stats_json("launch_sites", "--site", rule, trace=TG)
                  if r["kernel_ns"]}
    eq(by_site, want_sites, f"graphs: folded --site {rule} per site = launch_sites per site")

# ---- launch_sites: a site that holds most of the time says where it splits
# train.py:20 holds stacks 1-4, 9, 10: 2500 + 400 + 2000 + 800 + 300 + 450 = 6450 ns of
# 9710 (66.4 %); below it GPT2Model.forward 5650 (87.6 %), AdamW.step 800 (12.4 %)
def sites_text(*extra, trace=T):
    return gp("stats", "--report", "launch_sites", *extra, trace).stdout


split_note = ("One site holds 66.4 % of all kernel time: train.py:20 step.\n"
              "   Its time splits at train.py:20 step into (% of the site's):\n"
              "      87.6 %  GPT2Model.forward (transformers/models/gpt2/modeling_gpt2.py:900)\n"
              "      12.4 %  AdamW.step (torch/optim/adamw.py:100)\n"
              "   Sites inside the library code it calls: --site 'transformers/*'\n")
out = sites_text()
expect(split_note in out, f"launch_sites: the dominant site's split:\n{out}")
TT = os.path.join(d.name, "trainer.gpuprof")
subprocess.run([GEN_LAYERS, "--trainer", TT], check=True)
out = sites_text(trace=TT)
# Trainer.train holds all of the site's time (100 % >= 90 %): the split is below it
expect(split_note.replace("at train.py:20 step", "below it, at Trainer.train (transformers/trainer.py:2000)")
       in out, f"launch_sites --trainer: the split below the library frame:\n{out}")
for rule in ("transformers/*", "layer", "inner"):
    expect("One site holds" not in sites_text("--site", rule, trace=TT), f"launch_sites --site {rule}: no split note")
# the --site it names makes the model code sites: no site over half of the time any more
tsites = stats_json("launch_sites", "--site", "transformers/*", trace=TT)
expect(max(r["time_pct"] for r in tsites) < 50 and
       any(r["site"].startswith("transformers/models/gpt2/modeling_gpt2.py:") for r in tsites),
       f"launch_sites --site 'transformers/*': model code sites, none over half: {tsites}")
# the note exactly when the first site holds half of the time or more (the emit_nvtx
# trace's backward kernels make train.py:22 heavier)
TE0 = os.path.join(d.name, "half.gpuprof")
subprocess.run([GEN_LAYERS, "--emit-nvtx", TE0], check=True)
half = stats_json("launch_sites", trace=TE0)
expect(("One site holds" in sites_text(trace=TE0)) == (half[0]["time_pct"] >= 50),
       f"launch_sites: the note exactly when the first site holds half: {half[0]}")

finish()
