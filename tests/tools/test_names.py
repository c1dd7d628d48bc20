"""`gpuprof stats` tables that fit a terminal (issue 21): kernel names in the
form --names asks for (base by default, as nsys :base), lines that fit
$COLUMNS / --width / 120 columns (test_widths.py: every command), --time-unit, and CSV/JSON that always
carry the full and the mangled name.  Names GNU's demangler rejects (the
1,675-character cutlass kernel of examples/mnist-h200.gpuprof) get their
scope-qualified name from the mangling's start."""
import json
import os

import tt

MNIST = os.path.join(tt.HERE, "..", "..", "examples", "mnist-h200.gpuprof")
CUTLASS_PREFIX = "_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolution"


def table_rows(text, title):
    """Rows (lists of cells split on 2+ spaces) of the table named title."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f" ** ") and f"({title}):" in l)
    rows = []
    for l in lines[start + 4:]:
        if not l.strip():
            break
        rows.append(l)
    return lines[start + 2], rows


def widest(text):
    return max(len(l) for l in text.splitlines())


env = dict(os.environ)
env.pop("COLUMNS", None)

with tt.tmpdir() as d:
    trace = tt.gen(os.path.join(d, "t.gpuprof"))
    # ---- base names by default: no return type, parameters or template arguments
    out = tt.gp("stats", "--report", "kernels", trace, env=env).stdout
    head, rows = table_rows(out, "kernels")
    names = [r.split("  ")[-1].strip() for r in rows]
    tt.eq(names, ["my_plain_kernel", "vecAdd"], "kernels table: base names by default")
    out = tt.gp("stats", "--report", "kernels", "--names", "full", trace, env=env).stdout
    tt.eq([r.split("  ")[-1].strip() for r in table_rows(out, "kernels")[1]],
          ["my_plain_kernel", "vecAdd(float const*, float const*, float*, int)"], "--names full")
    out = tt.gp("stats", "--report", "kernels,occupancy", "--names", "mangled", trace, env=env).stdout
    tt.eq([r.split("  ")[-1].strip() for r in table_rows(out, "kernels")[1]],
          ["my_plain_kernel", "_Z6vecAddPKfS0_Pfi"], "--names mangled")
    tt.eq([r.split("  ")[-1].strip() for r in table_rows(out, "occupancy")[1]],
          ["my_plain_kernel", "_Z6vecAddPKfS0_Pfi"], "occupancy --names mangled")
    # ---- CSV and JSON: the full name and the mangled one, whatever --names says
    j = json.loads(tt.gp("stats", "--report", "kernels,occupancy", "--format", "json", "--names", "base",
                         trace).stdout)
    for rep in ("kernels", "occupancy"):
        tt.eq([(r["name"], r["mangled"]) for r in j[rep]],
              [("my_plain_kernel", "my_plain_kernel"),
               ("vecAdd(float const*, float const*, float*, int)", "_Z6vecAddPKfS0_Pfi")], f"{rep} JSON names")
    csv = tt.gp("stats", "--report", "kernels", "--format", "csv", trace).stdout.splitlines()
    tt.expect(csv[0].endswith(",Name,Mangled Name"), f"CSV header: {csv[0]}")
    tt.expect(csv[2].endswith(',"vecAdd(float const*, float const*, float*, int)",_Z6vecAddPKfS0_Pfi'),
              f"CSV row: {csv[2]}")
    # ---- --time-unit: the (ns) columns of tables in another unit, 3 decimals
    out = tt.gp("stats", "--report", "api", "--time-unit", "us", trace, env=env).stdout
    head, rows = table_rows(out, "api")
    tt.expect("Total Time (us)" in head and "Avg (us)" in head and "(ns)" not in head, f"us heading: {head}")
    tt.expect(rows[0].split()[1] == "13.000" and rows[0].split()[3] == "3.250", f"us values: {rows[0]}")
    out = tt.gp("stats", "--report", "api", "--time-unit", "s", trace, env=env).stdout
    tt.expect(table_rows(out, "api")[1][0].split()[1] == "0.000", "s values")
    tt.expect("Total Time (s)" in out, "s heading")
    # JSON stays in ns whatever the unit
    j = json.loads(tt.gp("stats", "--report", "api", "--format", "json", "--time-unit", "ms", trace).stdout)
    tt.eq(j["api"][0]["total_ns"], 13000, "JSON in ns with --time-unit")
    p = tt.gp("stats", "--time-unit", "min", trace, check=False)
    tt.expect(p.returncode == 1 and "unknown --time-unit 'min'" in p.stderr, f"bad unit: {p.stderr}")
    p = tt.gp("stats", "--names", "short", trace, check=False)
    tt.expect(p.returncode == 1 and "unknown --names 'short'" in p.stderr, f"bad --names: {p.stderr}")

# ---- a real trace: no line wider than 120 columns off a terminal, or than $COLUMNS
out = tt.gp("stats", "--report", "kernels,api,nvtx,memops", MNIST, env=env).stdout
tt.expect(widest(out) <= 120, f"mnist kernels table {widest(out)} columns wide, want <= 120")
out = tt.gp("stats", "--report", "kernels", MNIST, env=dict(env, COLUMNS="130")).stdout
tt.expect(widest(out) <= 130, f"COLUMNS=130: {widest(out)} columns")
tt.expect(any("..." in l for l in out.splitlines()), "long names are shortened with ...")
out = tt.gp("stats", "--report", "kernels", "--width", "0", "--names", "full", MNIST, env=env).stdout
tt.expect(widest(out) > 1000, "--width 0: not cut")
# the cutlass kernel GNU's demangler rejects: base from the mangling's prefix,
# full = scope-qualified name, then the mangled name
out = tt.gp("stats", "--report", "kernels", MNIST, env=env).stdout
tt.expect(any(l.endswith("  Kernel") for l in out.splitlines()), "cutlass kernel's base name 'Kernel'")
j = json.loads(tt.gp("stats", "--report", "kernels", "--format", "json", MNIST).stdout)
cut = [r for r in j["kernels"] if r["mangled"].startswith(CUTLASS_PREFIX)]
tt.eq(len(cut), 1, "the cutlass kernel is there")
if cut:
    tt.expect(cut[0]["name"] == "cutlass__5x_cudnn::Kernel [" + cut[0]["mangled"] + "]",
              f"full form of a rejected name: {cut[0]['name'][:80]}")
tt.finish()
