"""test_flamegraph.py — scripts/flamegraph.py (the docs' SVG flame graph) on
the folded export of the gen_stacks trace: valid SVG, one frame per node of
the stack tree with the weight summed by hand, widths proportional to the
weights, and clear errors for bad input."""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, HERE, eq, expect, finish, gp, tmpdir  # noqa: E402

FLAME = os.path.join(HERE, "..", "..", "scripts", "flamegraph.py")
GEN_STACKS = os.path.abspath(os.path.join(B, "tests", "tools", "gen_stacks"))
NS = "{http://www.w3.org/2000/svg}"

d = tmpdir()
trace = os.path.join(d.name, "t.gpuprof")
subprocess.run([GEN_STACKS, trace], check=True, capture_output=True)
folded = os.path.join(d.name, "t.folded")
gp("export", "--format", "folded", trace, "-o", folded)
svg = os.path.join(d.name, "t.svg")
p = subprocess.run([sys.executable, FLAME, folded, svg, "--title", "gen_stacks <test>", "--width", "1000"],
                   capture_output=True, text=True)
eq(p.returncode, 0, f"flamegraph.py exit ({p.stderr.strip()})")

# expected nodes: every prefix of every line, weight summed over the lines
want = Counter()
total = 0
with open(folded) as f:
    for line in f:
        stack, _, w = line.rstrip("\n").rpartition(" ")
        total += int(w)
        frames = stack.split(";")
        for i in range(len(frames)):
            want[tuple(frames[:i + 1])] += int(w)
want_nodes = Counter({("all", total): 1})
for path, w in want.items():
    want_nodes[(path[-1], w)] += 1

root = ET.parse(svg).getroot()
got_nodes = Counter()
ratios = []
for g in root.iter(NS + "g"):
    title = g.find(NS + "title").text
    m = re.fullmatch(r"(.*) \(([\d,]+) ns, ([\d.]+)%\)", title)
    expect(m is not None, f"tooltip format: {title!r}")
    if not m:
        continue
    name, value = m.group(1), int(m.group(2).replace(",", ""))
    got_nodes[(name, value)] += 1
    ratios.append(float(g.find(NS + "rect").get("width")) / value)
# frames narrower than 0.1 px are left out: here the smallest weight is 30 of 11810
eq(got_nodes, want_nodes, "one SVG frame per tree node, weights summed")
expect(max(ratios) - min(ratios) < 1e-3 * max(ratios), "widths proportional to weights")
expect(abs(ratios[0] * total - (1000 - 20)) < 0.01, "the root spans the width")
expect("gen_stacks &lt;test&gt;" in open(svg).read(), "title escaped")

for content, what in (("a;b notanumber\n", "bad weight"), ("", "empty")):
    bad = os.path.join(d.name, "bad.folded")
    with open(bad, "w") as f:
        f.write(content)
    p = subprocess.run([sys.executable, FLAME, bad, os.path.join(d.name, "bad.svg")], capture_output=True, text=True)
    eq(p.returncode, 1, f"{what}: exit status")
    expect(p.stderr.startswith("flamegraph.py: ") and "Traceback" not in p.stderr, f"{what}: {p.stderr!r}")
p = subprocess.run([sys.executable, FLAME, os.path.join(d.name, "missing"), svg], capture_output=True, text=True)
expect(p.returncode == 1 and "cannot read" in p.stderr, f"missing input: {p.stderr!r}")
finish()
