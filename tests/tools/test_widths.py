"""Every command that prints tables fits the width (issue #40): at $COLUMNS=120
(stdout a pipe) and at --width 80, no line of info, stats (the default set,
every report by name, --per-step), steps, memory, advise and diff is longer
than the width, on the committed traces (examples/*.gpuprof) and on the
generated ones the other tests use.  --names full and --width 0 print the
whole names; CSV and JSON carry them at any width; numbers are never cut;
prose columns (Meaning) move under the table whole, not cut mid-word."""
import csv
import io
import json
import os
import subprocess

import tt

TOOLS = os.path.dirname(tt.GEN)
EXAMPLES = os.path.join(tt.HERE, "..", "..", "examples")


def run(args, env_cols=None):
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if env_cols is not None:
        env["COLUMNS"] = str(env_cols)
    p = subprocess.run([tt.GPUPROF] + [str(a) for a in args], capture_output=True, text=True, errors="replace",
                       env=env)
    if p.returncode != 0:
        tt.fail(f"gpuprof {' '.join(map(str, args))} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout


def check_fits(args, width, out):
    long = [l for l in out.split("\n") if len(l) > width]
    tt.expect(not long, f"gpuprof {' '.join(map(str, args))} at width {width}: {len(long)} lines longer, "
              f"the longest {max((len(l) for l in long), default=0)}: {long[:1]}")


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


d = tt.tmpdir()
D = d.name


def gen(tool, *args):
    path = os.path.join(D, f"{tool}-{len(os.listdir(D))}.gpuprof")
    subprocess.run([os.path.join(TOOLS, tool), *args, path], check=True, capture_output=True)
    return path


mnist = os.path.join(EXAMPLES, "mnist-h200.gpuprof")
vadd = os.path.join(EXAMPLES, "vector_add-h200.gpuprof")
traces = [mnist, vadd, tt.gen(os.path.join(D, "t.gpuprof")), tt.gen(os.path.join(D, "w.gpuprof"), windows=True),
          gen("gen_steps"), gen("gen_steps", "--no-nvtx"), gen("gen_memory", "leak"), gen("gen_memory", "oom"),
          gen("gen_layers", "--emit-nvtx"), gen("gen_stacks"), gen("gen_advise", "pageable", "--stacks"),
          gen("gen_advise", "fp32-ahead"), gen("gen_ranks", "--rank", "0")]
diff_a = gen("gen_diff", "--seed", "1")
diff_b = gen("gen_diff", "--seed", "2", "--attn", "flash")
traces.append(diff_a)
ranks1 = gen("gen_ranks", "--rank", "1")
merged = os.path.join(D, "merged.gpuprof")
run(["merge", traces[-2], ranks1, "-o", merged])
traces.append(merged)

reports = run(["help", "--words", "stats", "--report"]).split()
tt.expect(len(reports) > 20, f"the report names: {reports}")

commands = []
for t in traces:
    commands += [["info", t], ["stats", t], ["stats", "--report", ",".join(reports), t], ["stats", "--per-step", t],
                 ["steps", t], ["memory", t], ["advise", "--all", t]]
commands += [["diff", mnist, vadd], ["diff", mnist, mnist], ["diff", diff_a, diff_b],
             ["diff", diff_a, diff_a, "--vs", diff_b, diff_b]]

tt.expect(len(commands) > 100, f"{len(commands)} command lines")
for args in commands:
    for width, extra, cols in ((120, [], 120), (80, ["--width", "80"], None)):
        a = [args[0]] + extra + args[1:]
        check_fits(a, width, run(a, env_cols=cols))
# the default without $COLUMNS and a terminal: 120
check_fits(["diff", mnist, vadd], 120, run(["diff", mnist, vadd]))

# --- whole names: --names full, --width 0; CSV and JSON at any width
kcsv = csv_rows(run(["stats", "--report", "kernels", "--format", "csv", mnist], env_cols=40))
keys = kcsv[0].keys()
full_col = next(k for k in keys if k in ("Name", "Full Name"))
full = [r[full_col] for r in kcsv]
longest = max(full, key=len)
tt.expect(len(longest) > 200, f"a long kernel name in the MNIST trace ({len(longest)} characters)")
out = run(["stats", "--report", "kernels", "--names", "full", mnist], env_cols=120)
lines = out.split("\n")
for name in full:
    tt.expect(any(l.endswith("  " + name) for l in lines), f"stats --names full shows the whole name {name[:60]}...")
out = run(["stats", "--report", "kernels", mnist], env_cols=120)
tt.expect(longest not in out, "at width 120 the longest full name is not in the base-name table")
jkern = json.loads(run(["stats", "--report", "kernels", "--format", "json", mnist], env_cols=40))["kernels"]
tt.expect(longest in [r.get("name") for r in jkern] or any(longest in json.dumps(r) for r in jkern),
          "JSON at $COLUMNS=40 has the whole name")

# diff: the kernel column holds full names; cut at 120, whole with --names full and in CSV
dcsv = csv_rows(run(["diff", "--report", "diff_kernels", "--format", "csv", "--top", "0", mnist, mnist],
                    env_cols=40).split("\n", 1)[1])
dnames = [r["Kernel"] for r in dcsv]
dlong = max(dnames, key=len)
tt.expect(len(dlong) > 120, f"diff's longest kernel name is longer than a line ({len(dlong)})")
out = run(["diff", "--report", "diff_kernels", "--top", "0", "--names", "full", mnist, mnist], env_cols=120)
for name in dnames:
    tt.expect(("  " + name + "\n") in out, f"diff --names full shows the whole name {name[:60]}...")
out0 = run(["diff", "--report", "diff_kernels", "--top", "0", "--width", "0", mnist, mnist], env_cols=40)
tt.expect(("  " + dlong + "\n") in out0, "diff --width 0 shows the whole longest name")
out = run(["diff", "--report", "diff_kernels", "--top", "0", mnist, mnist], env_cols=120)
tt.expect(dlong not in out, "diff at width 120 cuts the longest name")
# the C++ cutter: a signature too long loses its parameters first ("(...)"), not its start
cut_rows = [l for l in out.split("\n") if l.endswith("(...)")]
tt.expect(cut_rows, "diff at width 120: some C++ names shortened to NAME<...>(...)")

# --- numbers are never cut: every total of the kernels table, at width 80 and 60
for w in (80, 60):
    out = run(["stats", "--report", "kernels", "--width", str(w), mnist])
    check_fits(["stats", "--report", "kernels", "--width", str(w)], w, out)
    cells = set(out.split())
    for r in kcsv:
        total = f"{int(r['Total Time (ns)']):,}"
        tt.expect(total in cells, f"width {w}: the total {total} in the table")

# --- prose moves under the table whole: step_buckets' Meaning at width 80
bcsv = csv_rows(run(["stats", "--report", "step_buckets", "--format", "csv", mnist]))
out = run(["stats", "--report", "step_buckets", "--width", "80", mnist])
flowed = " ".join(out.split())  # a note longer than a line goes on in the next
for r in bcsv:
    m = r["Meaning"]
    tt.expect(("] " + m + " [") in flowed or flowed.find("] " + m) > flowed.find("Meaning"),
              f"the meaning '{m}' whole under the table")
tt.expect(not any(l.rstrip().endswith("...") for l in out.split("\n")), "no prose cut with ...")

# --- --width and --names on every command that prints tables; a bad value is a usage error
for cmd in ("info", "stats", "steps", "memory", "advise", "diff"):
    h = run(["help", "--full", cmd])
    tt.expect("--width N" in h, f"gpuprof help --full {cmd} documents --width")
    p = subprocess.run([tt.GPUPROF, cmd, "--width", "x", mnist], capture_output=True, text=True)
    tt.expect(p.returncode == 1 and "--width" in p.stderr, f"{cmd} --width x: usage error ({p.returncode})")
p = subprocess.run([tt.GPUPROF, "stats", "--names", "short", mnist], capture_output=True, text=True)
tt.expect(p.returncode == 1 and "--names" in p.stderr, f"stats --names short: usage error ({p.returncode})")

tt.finish()
