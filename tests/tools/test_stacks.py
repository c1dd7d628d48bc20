"""test_stacks.py — call stacks in the tools: `stats --report launch_sites`,
`export --format folded`, the Perfetto export's stack args, `dump`, `merge`,
and the ELF symboliser against missing, truncated and damaged files.

The trace comes from gen_stacks (tests/tools/gen_stacks.c, which lists every
stack and launch); its native frames point into gen_stacks itself, so the
names below come from reading a real ELF file.  Expected values are worked
out by hand from that list."""
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, GEN, GPUPROF, eq, expect, fail, finish, gp, tmpdir  # noqa: E402

GEN_STACKS = os.path.abspath(os.path.join(B, "tests", "tools", "gen_stacks"))


def gen_stacks(path, bad_elf=None, pid=None, odd_names=False):
    args = [GEN_STACKS] + (["--bad-elf", bad_elf] if bad_elf else []) + (["--pid", str(pid)] if pid else []) + \
        (["--odd-names"] if odd_names else []) + [path]
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def folded(path, *extra):
    p = gp("export", "--format", "folded", *extra, path, "-o", "-")
    lines = {}
    for line in p.stdout.splitlines():
        stack, _, w = line.rpartition(" ")
        expect(stack not in lines, f"folded: stack listed twice: {stack}")
        lines[stack] = int(w)
    return lines


d = tmpdir()
T = os.path.join(d.name, "stacks.gpuprof")
facts = gen_stacks(T)
expect(facts["qsort_found"] == 1, "gen_stacks found qsort in libc")
BAD = "libbad.so+0x%x" % facts["bad_frame_off"]
CUDA = "libcuda.so.1+0x102f"      # frame 2: 0x30 - 1 + file offset 0x1000
CUDART = "libcudart.so.13+0x103f"  # frame 3 (or 1): 0x40 - 1 + 0x1000

# Display stacks, root first: Python frames outermost first, then native
# frames outermost first; the interpreter's frames (python3.11 and outward)
# and the tracer's own (libgpuprof, libcupti) dropped.
S1 = ";".join(["<module> (train.py:10)", "_call_impl (torch/nn/modules/module.py:1500)", "forward (model.py:42)",
               "conv2d (torch/nn/functional.py:4)", "stk_mid", "stk_leaf", CUDART, CUDA])
S2 = ";".join(["<module> (train.py:12)", "backward (torch/_tensor.py:522)", "[thread 4243 pt_autograd_0]",
               "qsort", "torch::autograd::Engine::thread_main()", CUDART, CUDA])
S3 = ";".join(["0x1234", "stk_outer", "stk_mid", "stk_leaf", CUDART])
S4 = ";".join(["new.so+0x20", BAD, "weird_frame"])

# ---- folded: each weight
eq(folded(T), {S1: 1000 + 3000 + 700, S2: 5500, S3: 2000, S4: 100, "(empty stack)": 50,
               "(missing stack)": 30, "(no stack)": 20 + 10}, "folded gpu-time")
eq(folded(T, "--weight", "gpu-time"), folded(T), "folded: gpu-time is the default")
eq(folded(T, "--weight", "kernel-time"), {S1: 4000, S2: 5500, S3: 2000, S4: 100, "(empty stack)": 50,
                                          "(missing stack)": 30, "(no stack)": 30}, "folded kernel-time")
# launches: corr 1 (runtime+driver: once), 2, 4, 11 on stack 1; cudaMalloc is no launch
eq(folded(T, "--weight", "launches"), {S1: 4, S2: 1, S3: 1, S4: 1, "(empty stack)": 1, "(missing stack)": 1,
                                       "(no stack)": 1}, "folded launches")
out = os.path.join(d.name, "out.folded")
gp("export", "--format", "folded", T, "-o", out)
with open(out) as f:
    text = f.read()
eq(text.splitlines(), sorted(text.splitlines()), "folded lines sorted")
expect(text.endswith("\n") and all(";" not in ln.rpartition(" ")[2] for ln in text.splitlines()),
       "folded file: one 'stack weight' per line")

# ---- folded: frame names that would break a line.  Stack 6 of --odd-names
# has a Python frame whose function and file hold ';' and a newline, and a
# leaf "odd frame 42".  Readers split a line at its LAST space (speedscope:
# /^(.*) (\d+)$/); flamegraph.pl and inferno then take a stack that still
# ends in "<space>NUMBER" as the first column of a differential line.
TO = os.path.join(d.name, "odd.gpuprof")
gen_stacks(TO, odd_names=True)
p = gp("export", "--format", "folded", TO, "-o", "-")
odd_lines = p.stdout.split("\n")
eq(odd_lines[-1], "", "odd names: file ends with a newline")
odd = {}
for ln in odd_lines[:-1]:
    m = re.match(r"^(.*) (\d+)$", ln)
    expect(m is not None, f"odd names: not 'stack WEIGHT': {ln!r}")
    if m:
        odd[m.group(1)] = int(m.group(2))
        expect(re.match(r"^(.*)\s+?(\d+(?:\.\d*)?)$", m.group(1)) is None,
               f"odd names: flamegraph.pl would read a differential line: {ln!r}")
eq(odd.get("a_b_c (x_y_.py:7);odd frame_42"), 900, f"odd names: the sanitised stack's line ({sorted(odd)})")
eq(len(odd), 8, "odd names: one line per stack, as without them plus one")
eq(sum(odd.values()), sum(folded(T).values()) + 900, "odd names: total weight")

# ---- launch_sites
j = json.loads(gp("stats", "--report", "launch_sites", "--format", "json", T).stdout)["launch_sites"]
total = 5500 + 4000 + 2000 + 100 + 50 + 30 + 30
want = [
    ("train.py:12 <module>", 5500, 2, 1, 0, 0, "backward (torch/_tensor.py:522)"),
    ("model.py:42 forward", 4000, 2, 4, 700, 1, "conv2d (torch/nn/functional.py:4)"),
    ("stk_leaf", 2000, 1, 1, 0, 0, CUDART),
    (BAD, 100, 1, 1, 0, 0, BAD),
    ("(empty stack)", 50, 1, 1, 0, 0, ""),
    ("(missing stack)", 30, 1, 1, 0, 0, ""),
    ("(no stack)", 30, 2, 1, 0, 0, ""),
]
eq(len(j), len(want), "launch_sites rows")
for row, (site, kns, nk, nl, mns, nm, inner) in zip(j, want):
    eq(row["site"], site, "site")
    eq(row["kernel_ns"], kns, f"{site}: kernel ns")
    eq(row["kernels"], nk, f"{site}: kernels")
    eq(row["launches"], nl, f"{site}: launches")
    eq(row["memop_ns"], mns, f"{site}: memop ns")
    eq(row["memops"], nm, f"{site}: memops")
    eq(row["innermost"], inner, f"{site}: innermost frame")
    expect(abs(row["time_pct"] - 100.0 * kns / total) < 0.051, f"{site}: time % {row['time_pct']}")
    expect(abs(row["avg_kernel_ns"] - kns / nk) < 0.051, f"{site}: avg")
expect(abs(sum(r["time_pct"] for r in j) - 100) < 0.3, "launch_sites: percentages add up")
txt = gp("stats", T).stdout
expect("Launch Sites (by kernel time launched)" in txt and "model.py:42 forward" in txt,
       "stats: launch_sites in the default set of a trace with stacks")
csv = gp("stats", "--report", "launch_sites", "--format", "csv", T).stdout.splitlines()
expect(csv[0].startswith("Time (%),Kernel Time (ns),Kernels,Launches") and len(csv) == 1 + len(want),
       f"launch_sites csv: {csv[:2]}")

# ---- no stacks: folded refuses, stats leaves the report out of the default set
NS = os.path.join(d.name, "nostacks.gpuprof")
subprocess.run([GEN, NS], check=True)
nsout = os.path.join(d.name, "nostacks.folded")
p = gp("export", "--format", "folded", NS, "-o", nsout, check=False)
eq(p.returncode, 1, "folded without stacks: exit status")
expect("trace has no stacks (record with --stacks)" in p.stderr, f"folded without stacks: message {p.stderr!r}")
expect(not os.path.exists(nsout), "folded without stacks: no output file")
expect("Launch Sites" not in gp("stats", NS).stdout, "stats default set without stacks: no launch_sites")
p = gp("stats", "--report", "launch_sites", NS)
expect("none, the trace has no stacks" in p.stdout, f"launch_sites without stacks says so: {p.stdout!r}")

# ---- bad options
for args, what in ((["--format", "folded", "--weight", "bogus"], "unknown weight"),
                   (["--format", "perfetto", "--weight", "launches"], "weight with perfetto")):
    p = gp("export", *args, T, "-o", os.path.join(d.name, "x"), check=False)
    eq(p.returncode, 1, f"{what}: exit status")
    expect(p.stderr.startswith("gpuprof export: ") and "Traceback" not in p.stderr, f"{what}: {p.stderr!r}")

# ---- Perfetto: API slices carry the stack, root first, and the site
pj = json.loads(gp("export", "--format", "perfetto", T, "-o", "-").stdout)
api = {}
for e in pj["traceEvents"]:
    if e.get("cat") == "cuda_api":
        api.setdefault(e["args"]["corr"], []).append(e)
eq([e["args"].get("stack") for e in api[1]], [None, S1.split(";")], "perfetto corr 1: driver none, runtime stack")
eq(api[1][1]["args"]["launch_site"], "model.py:42 forward", "perfetto launch_site")
eq(api[3][0]["args"]["stack"], S2.split(";"), "perfetto corr 3 (autograd thread)")
eq(api[3][0]["tid"], 4243, "perfetto corr 3 thread")
eq(api[7][0]["args"]["stack"], [], "perfetto: an empty stack")
eq(api[8][0]["args"].get("stack_id"), 99, "perfetto: undefined stack id kept as a number")
expect("stack" not in api[9][0]["args"] and "stack_id" not in api[9][0]["args"], "perfetto: no stack, no arg")

# ---- SQLite: CUDA_CALLCHAINS (nsys-style, stackDepth 0 innermost) and sites
import sqlite3  # noqa: E402
db = os.path.join(d.name, "stacks.db")
gp("export", "--format", "sqlite", T, "-o", db)
con = sqlite3.connect(db)
chains = {}
for cid, depth, sym in con.execute("SELECT c.id, c.stackDepth, s.value FROM CUDA_CALLCHAINS c "
                                   "JOIN StringIds s ON s.id = c.symbol ORDER BY c.id, c.stackDepth DESC"):
    chains.setdefault(cid, []).append(sym)
eq(chains, {1: S1.split(";"), 2: S2.split(";"), 3: S3.split(";"), 4: S4.split(";")}, "sqlite CUDA_CALLCHAINS")
sites = dict(con.execute("SELECT r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                         "JOIN CALLCHAIN_SITES c ON c.id = r.callchainId JOIN StringIds s ON s.id = c.site"))
eq(sites, {1: "model.py:42 forward", 2: "model.py:42 forward", 3: "train.py:12 <module>",
           4: "model.py:42 forward", 5: "stk_leaf", 6: BAD, 7: "(empty stack)", 11: "model.py:42 forward",
           12: "model.py:42 forward"}, "sqlite: launch site of each runtime call with a stack")
con.close()

# ---- dump shows frames and symbolic frames readably
dump = gp("dump", "--type", "stack", T).stdout
expect("[py /home/u/proj/model.py 42 forward]" in dump and "[ctx 4242]" in dump, f"dump text: {dump[:300]}")
dj = [json.loads(x) for x in gp("dump", "--json", "--type", "stack", T).stdout.splitlines()]
s2 = [x for x in dj if x["stack"] == 2][0]
eq(s2["frame_strings"][6:], ["ctx\t4242", "py\t/home/u/venv/lib/python3.11/site-packages/torch/_tensor.py\t522\tbackward",
                             "py\t/home/u/proj/train.py\t12\t<module>"], "dump json frame_strings")
eq(s2["frame_strings"][:6], [None] * 6, "dump json: native frames have no string")

# ---- merge renumbers stack ids and the API records' references with them
M = os.path.join(d.name, "merged.gpuprof")
gp("merge", T, T, "-o", M)
eq(folded(M), {k: 2 * v for k, v in folded(T).items()}, "merged trace: every stack twice the weight")
# two processes (another run: other load addresses): each resolves with its own modules
T2 = os.path.join(d.name, "pid5000.gpuprof")
gen_stacks(T2, pid=5000)
M2 = os.path.join(d.name, "merged2.gpuprof")
gp("merge", T, T2, "-o", M2)
want = Counter()
for k, v in folded(T).items():
    want[k] += v
    k = k.replace("[thread 4243 ", "[thread 5001 ").replace("libcudart.so.13", "libcudart.so.12")
    want[k] += v
want = dict(want)
eq(folded(M2), want, "merged trace of two processes")

# ---- the symboliser against damaged files.  The "bad" module maps like
# gen_stacks' own code, at the frame of stk_mid.
with open(GEN_STACKS, "rb") as f:
    elf = f.read()


def bad_line(content, name):
    path = os.path.join(d.name, name)
    if content is not None:
        with open(path, "wb") as f:
            f.write(content)
    tr = os.path.join(d.name, name + ".gpuprof")
    gen_stacks(tr, bad_elf=path)
    try:
        p = subprocess.run([GPUPROF, "export", "--format", "folded", tr, "-o", "-"], capture_output=True,
                           text=True, errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        fail(f"{name}: folded export hung")
        return None
    os.unlink(tr)
    if p.returncode != 0:
        fail(f"{name}: folded exited {p.returncode}: {p.stderr.strip()}")
        return None
    for line in p.stdout.splitlines():
        if line.endswith(";weird_frame 100"):
            return line[:-len(";weird_frame 100")].split(";")[1]
    fail(f"{name}: no line for stack 4 in {p.stdout!r}")
    return None


base = os.path.basename
off = "+0x%x" % facts["bad_frame_off"]
eq(bad_line(elf, "intact"), "stk_mid", "intact copy of the program: symbol found")
for cut in (0, 10, 64, 100, 1000, len(elf) // 2, len(elf) - 1):
    got = bad_line(elf[:cut], f"cut{cut}")
    expect(got in ("stk_mid", f"cut{cut}{off}"), f"truncated at {cut}: {got!r}")
eq(bad_line(b"\x7fELF" + b"\xff" * 60, "garbage"), "garbage" + off, "garbage after the magic")
os.makedirs(os.path.join(d.name, "adir"), exist_ok=True)
eq(bad_line(None, "adir"), "adir" + off, "a directory")
eq(bad_line(None, "missing"), "missing" + off, "a missing file")
os.mkfifo(os.path.join(d.name, "afifo"))
eq(bad_line(None, "afifo"), "afifo" + off, "a FIFO (must not block)")
# section headers pointing out of the file (e_shoff) and a symbol table whose
# string table index is out of range
broken = bytearray(elf)
broken[0x28:0x30] = (len(elf) + 4096).to_bytes(8, "little")
eq(bad_line(bytes(broken), "shoff"), "shoff" + off, "section headers beyond the end")
# random damage in the headers and tables: never a crash, always a frame name
rng = random.Random(8)
shoff = int.from_bytes(elf[0x28:0x30], "little")
for i in range(40):
    m = bytearray(elf)
    for _ in range(rng.randint(1, 16)):
        where = rng.choice((rng.randrange(0, 64), rng.randrange(64, 64 + 56 * 13),
                            rng.randrange(shoff, len(m)), rng.randrange(0, len(m))))
        m[where] = rng.randrange(256)
    got = bad_line(bytes(m), f"fuzz{i}")
    expect(isinstance(got, str) and got != "", f"fuzz {i}: {got!r}")
shutil.rmtree(os.path.join(d.name, "adir"))
finish()
