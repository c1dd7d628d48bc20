"""test_diff.py — `gpuprof diff A B` on generated runs whose differences are
known (tests/tools/gen_diff.c has the timeline):

  run A: 30 steps, a warm-up step 0, jitter j_k in [0, 20 us) (seed 1);
  B = A with one change, the same jitter:
    --attn flash     softmax_kernel (50 us) -> flash_fwd_kernel (15 us): step -35 us,
                     all of it compute
    --gemm-ns 60000  gemm_fwd 100 -> 60 us, gemm_bwd 150 -> 90 us: step -100 us, compute
    --load-ns 50000  200 -> 50 us of loading before each step: -150 us, host_wait
    --device-sync    a 10 us cudaDeviceSynchronize after the stream sync: +10 us, sync;
                     a new synchronising call
    --dtoh           a 2 us DtoH copy of 4 bytes after the optimizer: +2 us on the GPU,
                     memory; a new copy; within the jitter: not significant
    (nothing)        the same run: p = 1, no difference
    --seed 2         another draw of the jitter: no significant difference

Every step of B is its step of A plus the change, so the medians, means and
bucket means move by exactly the change.  Independently of the tool: the step
times (from `gpuprof steps --per-step`), aligned by step number, give the
medians, means, spreads, the Mann-Whitney U and p (computed here: exact by
enumerating every split of the pooled values for small runs, else the normal
approximation with tie and continuity corrections) and the bootstrap
interval (splitmix64 seeded with 1, as documented).  Merged two-rank traces
are compared rank by rank.  The text and JSON outputs are golden files
(tests/tools/golden/diff_*.out; GPUPROF_UPDATE_GOLDEN=1 rewrites them)."""
import itertools
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, HERE, approx, eq, expect, fail, finish, gp, tmpdir  # noqa: E402

GEN = os.path.abspath(os.path.join(B, "tests", "tools", "gen_diff"))
GOLD = os.path.join(HERE, "golden")
BUCKETS = ["compute", "comm", "memory", "host_wait", "sync", "launch", "other"]

d = tmpdir()
W = d.name


def gen(name, *args, base=("--warmup", "--jitter", "20000")):
    path = os.path.join(W, name + ".gpuprof")
    subprocess.run([GEN, *base, *args, path], check=True)
    return path


def diff_json(a, b, *extra):
    return json.loads(gp("diff", "--format", "json", "--top", "0", *extra, a, b).stdout)


# ------------------------------------------------------------ statistics, here

def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def quantile(v, q):
    s = sorted(v)
    h = (len(s) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def u_stat(a, b):
    return sum((x > y) + 0.5 * (x == y) for x in a for y in b)


def mwu_p(a, b):
    n1, n2 = len(a), len(b)
    u = u_stat(a, b)
    pooled = a + b
    ties = len(set(pooled)) != len(pooled)
    if not ties and n1 <= 8 and n2 <= 8:
        # every split of the pooled values into n1 and n2: the share with a U
        # at least as far from the middle
        lo = min(u, n1 * n2 - u)
        count = total = 0
        for idx in itertools.combinations(range(n1 + n2), n1):
            s = set(idx)
            x = [pooled[i] for i in s]
            y = [pooled[i] for i in range(n1 + n2) if i not in s]
            total += 1
            count += u_stat(x, y) <= lo
        return min(1.0, 2 * count / total), "exact"
    n = n1 + n2
    counts = {}
    for v in pooled:
        counts[v] = counts.get(v, 0) + 1
    tie = sum(t ** 3 - t for t in counts.values())
    var = n1 * n2 / 12 * ((n + 1) - tie / (n * (n - 1)))
    if var <= 0:
        return 1.0, "normal"
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2))), "normal"


M64 = (1 << 64) - 1


class SplitMix:
    def __init__(self, seed):
        self.s = seed

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def bootstrap(a, b):
    g = SplitMix(1)
    diffs = []
    for _ in range(2000):
        ma = median([a[g.next() % len(a)] for _ in a])
        mb = median([b[g.next() % len(b)] for _ in b])
        diffs.append(mb - ma)
    return quantile(diffs, 0.025), quantile(diffs, 0.975)


def counted_steps(trace):
    rows = json.loads(gp("steps", "--per-step", "--report", "step_rows", "--format", "json", trace).stdout)
    return {r["step"]: r for r in rows["step_rows"] if not r["flags"]}


def check_stats(what, a, b, row, exact_ok=False):
    """diff_steps against the steps of A and B, recomputed here."""
    ra, rb = counted_steps(a), counted_steps(b)
    common = sorted(set(ra) & set(rb))
    ta = [ra[k]["time_ns"] for k in common]
    tb = [rb[k]["time_ns"] for k in common]
    eq((row["steps_a"], row["steps_b"]), (len(ta), len(tb)), f"{what}: aligned steps")
    eq(row["aligned"], f"by step number: the {len(common)} steps counted in both ({common[0]}..{common[-1]})",
       f"{what}: alignment")
    eq(row["median_a_ns"], round(median(ta)), f"{what}: median A")
    eq(row["median_b_ns"], round(median(tb)), f"{what}: median B")
    eq(row["mean_a_ns"], round(sum(ta) / len(ta)), f"{what}: mean A")
    eq(row["mean_b_ns"], round(sum(tb) / len(tb)), f"{what}: mean B")
    sp = 100 * (quantile(ta, 0.9) - quantile(ta, 0.1)) / median(ta)
    approx(row["spread_a_pct"], sp, f"{what}: spread A")
    eq(row["mann_whitney_u"], round(u_stat(ta, tb), 1), f"{what}: U")
    p, test = mwu_p(ta, tb)
    eq(row["test"], test, f"{what}: test used")
    # machine output is unrounded (docs/CLI.md): the independent p to 1e-9 relative
    expect(abs(row["p_value"] - p) <= 1e-12 + 1e-9 * p, f"{what}: p {row['p_value']} vs {p:.6g}")
    lo, hi = bootstrap(ta, tb)
    eq((row["ci95_low_ns"], row["ci95_high_ns"]), (round(lo), round(hi)), f"{what}: bootstrap interval")
    return p


def rows_of(js, table, key):
    return {r[key]: r for r in js[table]}


a = gen("a")

# --- the known changes
cases = [
    ("flash", ("--attn", "flash"), -35000, {"compute": -35000}),
    ("gemm", ("--gemm-ns", "60000"), -100000, {"compute": -100000}),
    ("load", ("--load-ns", "50000"), -150000, {"host_wait": -150000}),
    ("dsync", ("--device-sync",), 10000, {"sync": 10000}),
    ("dtoh", ("--dtoh",), 2000, {"memory": 2000}),
    ("same", (), 0, {}),
]
out = {}
for name, args, delta, buckets in cases:
    b = gen(name, *args)
    js = diff_json(a, b)
    out[name] = js
    st = js["diff_steps"][0]
    eq(st["delta_median_ns"], delta, f"{name}: median step time moves by {delta}")
    eq(st["mean_b_ns"] - st["mean_a_ns"], delta, f"{name}: mean step time moves by {delta}")
    p = check_stats(name, a, b, st)
    bk = rows_of(js, "diff_buckets", "bucket")
    for k in BUCKETS:
        eq(bk[k]["delta_ns_per_step"], buckets.get(k, 0), f"{name}: bucket {k} delta")
    eq(sum(bk[k]["delta_ns_per_step"] for k in BUCKETS), bk["step"]["delta_ns_per_step"],
       f"{name}: bucket deltas add up to the step's")
    sig = name in ("flash", "gemm", "load", "dsync")
    eq(st["verdict"], ("B faster" if delta < 0 else "B slower") if sig else "no significant difference",
       f"{name}: verdict (p = {p:.3g})")
    head = js["diff"][0]["headline"]
    eq(head, gp("diff", a, b).stdout.splitlines()[0], f"{name}: the text output's first line is the headline")

h = out["flash"]["diff"][0]["headline"]
expect(h.startswith("step time 592.495 us -> 557.495 us median (-35.000 us") and "B faster" in h and
       "softmax_kernel -50.000 us/step (only A)" in h and "flash_fwd_kernel +15.000 us/step (only B)" in h,
       f"flash: the headline names the change: {h}")
k = rows_of(out["flash"], "diff_kernels", "kernel")
eq((k["softmax_kernel"]["in"], k["softmax_kernel"]["a_count_per_step"], k["softmax_kernel"]["b_count_per_step"],
    k["softmax_kernel"]["a_ns_per_step"], k["softmax_kernel"]["delta_ns_per_step"]),
   ("only A", 1.0, 0.0, 50000, -50000), "flash: softmax_kernel only in A")
eq((k["flash_fwd_kernel"]["in"], k["flash_fwd_kernel"]["b_ns_per_step"]), ("only B", 15000), "flash: flash only in B")
eq([r["kernel"] for r in out["flash"]["diff_kernels"]][:2], ["softmax_kernel", "flash_fwd_kernel"],
   "flash: ranked by |delta|")
eq(k["gemm_fwd_kernel"]["delta_ns_per_step"], 0, "flash: gemm unchanged")
nv = rows_of(out["flash"], "diff_nvtx", "range")
eq((nv["forward"]["a_kernel_ns_per_step"], nv["forward"]["b_kernel_ns_per_step"]), (170000, 135000),
   "flash: forward's kernel time (gemm 100 + relu 20 + attention)")
eq((nv["forward"]["a_ns_per_step"], nv["forward"]["delta_ns_per_step"]), (8000, 0),
   "flash: forward's wall time 8 us, unchanged")
eq(out["flash"]["diff_nvtx"][0]["range"], "forward", "flash: forward first (ranked by its kernel time's move)")
eq(sorted(nv), ["backward", "forward", "optimizer"], "flash: ranges in the steps (not the steps themselves)")
k = rows_of(out["gemm"], "diff_kernels", "kernel")
eq((k["gemm_fwd_kernel"]["delta_ns_per_step"], k["gemm_bwd_kernel"]["delta_ns_per_step"]), (-40000, -60000),
   "gemm: both gemms")
api = rows_of(out["dsync"], "diff_api", "api")
eq((api["cudaDeviceSynchronize"]["in"], api["cudaDeviceSynchronize"]["kind"],
    api["cudaDeviceSynchronize"]["b_calls_per_step"], api["cudaDeviceSynchronize"]["b_ns_per_step"]),
   ("only B", "sync", 1.0, 10000), "dsync: a new synchronising call")
expect("More synchronising/copy calls in B: cudaDeviceSynchronize 0 -> 1/step." in out["dsync"]["diff"][0]["headline"],
       "dsync: the headline names the new sync call")
api = rows_of(out["dtoh"], "diff_api", "api")
eq((api["cudaMemcpyAsync"]["a_calls_per_step"], api["cudaMemcpyAsync"]["b_calls_per_step"],
    api["cudaMemcpyAsync"]["kind"]), (1.0, 2.0, "copy"), "dtoh: one more copy call per step")
cp = rows_of(out["dtoh"], "diff_copies", "copy")
eq((cp["DtoH"]["in"], cp["DtoH"]["b_count_per_step"], cp["DtoH"]["b_bytes_per_step"], cp["DtoH"]["b_ns_per_step"]),
   ("only B", 1.0, 4, 2000), "dtoh: the new DtoH copy")
eq((cp["HtoD"]["a_bytes_per_step"], cp["HtoD"]["delta_ns_per_step"]), (1 << 20, 0), "dtoh: HtoD unchanged")
expect("no significant difference" in out["dtoh"]["diff"][0]["headline"] and
       "cudaMemcpyAsync 1 -> 2/step" in out["dtoh"]["diff"][0]["headline"],
       "dtoh: within the noise, but the new copy is named")
st = out["same"]["diff_steps"][0]
eq((st["p_value"], st["delta_median_ns"], st["verdict"]), (1, 0, "no significant difference"), "same run: p = 1")
expect(all(r["delta_ns_per_step"] == 0 for t in ("diff_kernels", "diff_api", "diff_nvtx", "diff_copies")
           for r in out["same"][t]), "same run: no delta anywhere")

# another draw of the noise: no significant difference
s2 = gen("seed2", "--seed", "2")
st = diff_json(a, s2)["diff_steps"][0]
p = check_stats("seed 2", a, s2, st)
eq(st["verdict"], "no significant difference", f"seed 2: identical runs, other noise (p = {p:.3g})")
expect(st["ci95_low_ns"] <= 0 <= st["ci95_high_ns"], "seed 2: the bootstrap interval holds 0")

# small runs: the exact test (7 counted steps a run, no ties)
sa = gen("small_a", "--steps", "8", base=("--warmup", "--jitter", "20000"))
sb = gen("small_b", "--steps", "8", "--attn", "flash", base=("--warmup", "--jitter", "20000"))
st = diff_json(sa, sb)["diff_steps"][0]
check_stats("8 steps", sa, sb, st)
eq((st["test"], st["steps_a"]), ("exact", 7), "8 steps: exact test on 7 aligned steps")

# no NVTX numbers in common: every counted step of each (A with 30 steps vs B with 12 from step 0)
# (the alignment by number needs >= 3 common numbers; with --keep-warmup the warm-up step counts too)
st = diff_json(a, gen("short", "--steps", "12"), "--keep-warmup")["diff_steps"][0]
eq((st["steps_a"], st["steps_b"]), (12, 12), "--keep-warmup: steps 0..11 of both")

# merged ranks: rank by rank
r = {}
for name, pid, rank, args in (("a0", 7000, 0, ()), ("a1", 7001, 1, ()), ("b0", 7000, 0, ("--attn", "flash")),
                              ("b1", 7001, 1, ("--gemm-ns", "60000"))):
    r[name] = gen(name, "--pid", str(pid), "--rank", str(rank), *args)
ma, mb = os.path.join(W, "ma.gpuprof"), os.path.join(W, "mb.gpuprof")
gp("merge", r["a0"], r["a1"], "-o", ma)
gp("merge", r["b1"], r["b0"], "-o", mb)
js = diff_json(ma, mb)
eq([(x["rank"], x["delta_median_ns"]) for x in js["diff_steps"]], [(0, -35000), (1, -100000)],
   "merged: rank 0 -35 us (flash), rank 1 -100 us (gemm)")
eq([(x["rank"], x["pid_a"], x["pid_b"]) for x in js["diff"]], [(0, 7000, 7000), (1, 7001, 7001)], "merged: pairs")
text = gp("diff", ma, mb).stdout.splitlines()
expect(text[0].startswith("rank 0: step time") and text[1].startswith("rank 1: step time"),
       "merged: one headline per rank first")

# golden files: the exact layout
for name, args in (("diff_flash_table", ("diff", a, os.path.join(W, "flash.gpuprof"))),
                   ("diff_dsync_json", ("diff", "--format", "json", a, os.path.join(W, "dsync.gpuprof"))),
                   ("diff_merged_csv", ("diff", "--format", "csv", "--report", "diff_steps,diff_kernels", ma, mb))):
    got = gp(*args).stdout.replace(W + "/", "")
    path = os.path.join(GOLD, name + ".out")
    if os.environ.get("GPUPROF_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(got)
    else:
        with open(path) as f:
            want = f.read()
        if got != want:
            import difflib
            fail(f"golden/{name}.out differs:\n" + "".join(list(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True), "want", "got"))[:40]))

# bad use
eq(gp("diff", a, check=False).returncode, 1, "one trace: exit 1")
eq(gp("diff", "--alpha", "2", a, a, check=False).returncode, 1, "--alpha 2: exit 1")
eq(gp("diff", "--report", "nope", a, a, check=False).returncode, 1, "--report nope: exit 1")
p = gp("diff", a, os.path.join(W, "missing.gpuprof"), check=False)
eq(p.returncode, 2, "missing trace: exit 2")
expect("missing.gpuprof" in p.stderr, "missing trace: named")
nosteps = os.path.join(W, "nosteps.gpuprof")
subprocess.run([os.path.join(os.path.dirname(GEN), "gen_ranks"), "--launcher", nosteps], check=True)
p = gp("diff", a, nosteps, check=False)
eq(p.returncode, 2, "a trace without steps: exit 2")
expect("no steps to compare" in p.stderr, f"a trace without steps: says so ({p.stderr.strip()})")
finish()
