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
bucket means move by exactly the change.  These cases run with --noise 0
(the rank test alone decides); with the default floor of 15 % the -35 us
(-5.9 %) of --attn flash is "within the run-to-run noise" for one run a
side, and the same change over 3 + 3 runs is called by Welch's t test.

Run-level noise: a run-level offset is a --load-ns other than 200 us (every
step of the run longer by the same amount).  Two identical runs but B's
steps all 8 % longer: one run a side, within the noise (though the rank
test gives p < 1e-9); 3 + 3 identical runs whose offsets scatter by up to
8 %: not significant (Welch's t on the run medians, recomputed here with
Student's t by numerical integration of its density); --attn flash across
3 + 3 runs with small offsets: B faster.  What differs is named first:
command-line options (added, removed, changed; an option whose value
changes between the runs of a side varies and is not named), settings
words, threads, and the kernels only one side runs.  Independently of the tool: the step
times (from `gpuprof steps --per-step`), aligned by step number, give the
medians, means, spreads, the Mann-Whitney U and p (computed here: exact by
enumerating every split of the pooled values for small runs, else the normal
approximation with tie and continuity corrections) and the bootstrap
interval (splitmix64 seeded with 1, as documented).  Merged two-rank traces
are compared rank by rank.  The text and JSON outputs are golden files
(tests/tools/golden/diff_*.out; GPUPROF_UPDATE_GOLDEN=1 rewrites them).
With --threads N each trace's pre-pass and steps' pass run in N slices
(--verbose says so) and the output is that of one thread, on two bigtraces."""
import itertools
import json
import math
import os
import re
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


def diff_runs_json(la, lb, *extra):
    return json.loads(gp("diff", "--format", "json", "--top", "0", *extra, *la, "--vs", *lb).stdout)


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
    js = diff_json(a, b, "--noise", "0")
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
    eq((st["runs_a"], st["runs_b"], st["noise_pct"], st["basis"]),
       (1, 1, 0, "steps: Mann-Whitney U and the noise floor"), f"{name}: one run a side")
    head = js["diff"][0]["headline"]
    # --width 0: the headline on one line (it wraps at the width otherwise)
    eq(head, gp("diff", "--noise", "0", "--width", "0", a, b).stdout.splitlines()[0],
       f"{name}: the text output's first line is the headline")
    # the default floor, 15 %: only the changes of 15 % or more are called
    dflt = diff_json(a, b)["diff_steps"][0]
    pct = 100 * delta / st["median_a_ns"]
    eq(dflt["verdict"], st["verdict"] if abs(pct) >= 15 else "within the run-to-run noise",
       f"{name}: default --noise 15 ({pct:+.1f} %)")

h = out["flash"]["diff"][0]["headline"]
expect(h.startswith("B: kernels only in A: 14 % of A's kernel time (largest softmax_kernel), only in B: 5 % of "
                    "B's kernel time (largest flash_fwd_kernel). Step time 592.495 us -> 557.495 us median "
                    "(-35.000 us") and "B faster" in h and
       "softmax_kernel -50.000 us/step (only A)" in h and "flash_fwd_kernel +15.000 us/step (only B)" in h,
       f"flash: the headline names the change: {h}")
# a kernel in an anonymous namespace (PyTorch's are) is named up to its
# parameter list, not cut at "(anonymous namespace)" (it was "at::native::")
h = diff_json(a, gen("anon", "--attn", "flash", "--anon-ns"), "--noise", "0")["diff"][0]["headline"]
anon = "at::native::(anonymous namespace)::flash_fwd_kernel<float>"
expect(f"(largest {anon})" in h and f"{anon} +15.000 us/step (only B)" in h,
       f"anon: the headline names the kernel in an anonymous namespace whole: {h}")
expect(out["same"]["diff"][0]["headline"].startswith("Same command line, settings, threads and kernels. Step time"),
       f"same run: nothing differs: {out['same']['diff'][0]['headline']}")
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
# a graph launch's copies share its correlation id: each counts its own kind and bytes
cp = rows_of(diff_json(a, gen("gcopies", "--graph-copies"), "--noise", "0"), "diff_copies", "copy")
eq((cp["DtoH"]["in"], cp["DtoH"]["b_count_per_step"], cp["DtoH"]["b_bytes_per_step"], cp["DtoH"]["b_ns_per_step"]),
   ("only B", 1.0, 4096, 1000), "graph copies: the DtoH copy")
eq((cp["HtoD"]["b_count_per_step"], cp["HtoD"]["b_bytes_per_step"], cp["HtoD"]["b_ns_per_step"]),
   (2.0, (1 << 20) + 64, 20500), "graph copies: the HtoD copy with the step's own")
expect("unknown" not in cp, "graph copies: no copy of an unknown kind")
st = out["same"]["diff_steps"][0]
eq((st["p_value"], st["delta_median_ns"], st["verdict"]), (1, 0, "no significant difference"), "same run: p = 1")
expect(all(r["delta_ns_per_step"] == 0 for t in ("diff_kernels", "diff_api", "diff_nvtx", "diff_copies")
           for r in out["same"][t]), "same run: no delta anywhere")

# another draw of the noise: no significant difference
s2 = gen("seed2", "--seed", "2")
st = diff_json(a, s2, "--noise", "0")["diff_steps"][0]
p = check_stats("seed 2", a, s2, st)
eq(st["verdict"], "no significant difference", f"seed 2: identical runs, other noise (p = {p:.3g})")
expect(st["ci95_low_ns"] <= 0 <= st["ci95_high_ns"], "seed 2: the bootstrap interval holds 0")


# ------------------------------------------------------------ run-level noise

def t_pdf(x, v):
    return math.exp(math.lgamma((v + 1) / 2) - math.lgamma(v / 2)) / math.sqrt(v * math.pi) * \
        (1 + x * x / v) ** (-(v + 1) / 2)


def t_p(t, v, n=20000):
    """two-sided P(|T| >= |t|): 1 - 2 x the density integrated over [0, |t|] (Simpson)"""
    t = abs(t)
    if t == 0:
        return 1.0
    h = t / n
    acc = t_pdf(0, v) + t_pdf(t, v) + sum((4 if i % 2 else 2) * t_pdf(i * h, v) for i in range(1, n))
    return max(0.0, 1 - 2 * acc * h / 3)


def t_inv(p, v):
    lo, hi = 0.0, 64.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_p(mid, v, 4000) > p else (lo, mid)
    return (lo + hi) / 2


def welch(ma, mb):
    na, nb = len(ma), len(mb)
    xa, xb = sum(ma) / na, sum(mb) / nb
    va = sum((x - xa) ** 2 for x in ma) / (na - 1)
    vb = sum((x - xb) ** 2 for x in mb) / (nb - 1)
    se2 = va / na + vb / nb
    t = (xb - xa) / math.sqrt(se2)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    q = t_inv(0.05, df)
    return dict(mean_a=xa, mean_b=xb, sd_a=math.sqrt(va), sd_b=math.sqrt(vb), t=t, df=df, p=t_p(t, df),
                lo=xb - xa - q * math.sqrt(se2), hi=xb - xa + q * math.sqrt(se2))


def run_medians(traces):
    return [median([r["time_ns"] for r in counted_steps(x).values()]) for x in traces]


def check_welch(what, la, lb, row):
    """diff_steps' run-level columns against Welch's t on the runs' medians, recomputed here"""
    w = welch(run_medians(la), run_medians(lb))
    eq((row["runs_a"], row["runs_b"], row["basis"]), (len(la), len(lb), "runs: Welch t on the runs' medians"),
       f"{what}: run-level basis")
    eq((row["run_median_a_ns"], row["run_median_b_ns"]), (round(w["mean_a"]), round(w["mean_b"])),
       f"{what}: mean of the run medians")
    approx(row["run_sd_a_pct"], 100 * w["sd_a"] / w["mean_a"], f"{what}: run SD A")
    approx(row["welch_t"], w["t"], f"{what}: t")
    approx(row["welch_df"], w["df"], f"{what}: df")
    expect(abs(row["run_p_value"] - w["p"]) <= 1e-9 + 1e-6 * w["p"], f"{what}: p {row['run_p_value']} vs {w['p']:.9g}")
    expect(abs(row["run_ci95_low_ns"] - w["lo"]) <= 2 and abs(row["run_ci95_high_ns"] - w["hi"]) <= 2,
           f"{what}: CI {row['run_ci95_low_ns']}..{row['run_ci95_high_ns']} vs {w['lo']:.0f}..{w['hi']:.0f}")
    return w


# the tool's t distribution against the integral, over a range of t and df (a 2 + 2 run pair: df ~ 1..2)
for k, (offs_a, offs_b) in enumerate((((0, 3000), (1000, 9000)), ((0, 40000, 5000), (2000, 1000, 90000)),
                                      ((0, 1000, 2000, 3000), (60000, 61000, 59000, 62500)))):
    la = [gen(f"wa{k}_{i}", "--load-ns", str(200000 + o), "--seed", str(20 + i)) for i, o in enumerate(offs_a)]
    lb = [gen(f"wb{k}_{i}", "--load-ns", str(200000 + o), "--seed", str(30 + i)) for i, o in enumerate(offs_b)]
    check_welch(f"welch {k}", la, lb, diff_runs_json(la, lb)["diff_steps"][0])

# two identical runs, but every step of B 8 % longer (a run-level offset, as between identical H200 runs)
off8 = round(0.08 * out["same"]["diff_steps"][0]["median_a_ns"])
b8 = gen("off8", "--load-ns", str(200000 + off8))
js = diff_json(a, b8)
st = js["diff_steps"][0]
expect(st["p_value"] < 1e-9, f"offset 8 %: the rank test alone would call it (p = {st['p_value']:.3g})")
eq((st["verdict"], st["noise_pct"]), ("within the run-to-run noise", 15), "offset 8 %: one run a side: within the noise")
h = js["diff"][0]["headline"]
expect(h.startswith("Same command line, settings, threads and kernels. Step time ") and
       h.endswith("within the run-to-run noise (\u00b115 %, one run per side: give 2+ runs per side to measure it)."),
       f"offset 8 %: the headline says so: {h}")
eq(diff_json(a, b8, "--noise", "5")["diff_steps"][0]["verdict"], "B slower", "offset 8 %: --noise 5 calls it")

# 3 + 3 identical runs whose offsets scatter by up to 8 %: not significant
sa = [gen(f"sa{i}", "--load-ns", str(200000 + o), "--seed", str(40 + i)) for i, o in enumerate((0, off8, off8 // 2))]
sb = [gen(f"sb{i}", "--load-ns", str(200000 + o), "--seed", str(50 + i)) for i, o in enumerate((off8, 0, off8 // 4))]
js = diff_runs_json(sa, sb)
st = js["diff_steps"][0]
w = check_welch("scatter", sa, sb, st)
expect(w["p"] > 0.05, f"scatter: p = {w['p']:.3g}")
eq(st["verdict"], "no significant difference", "scatter: 3 + 3 identical runs, scattered offsets: not significant")
runs = js["diff_runs"]
eq([(r["side"], r["run"], r["steps"]) for r in runs], [("A", 1, 29), ("A", 2, 29), ("A", 3, 29), ("B", 1, 29),
                                                         ("B", 2, 29), ("B", 3, 29)], "scatter: one row per run")
eq([r["median_ns"] for r in runs], [round(m) for m in run_medians(sa) + run_medians(sb)], "scatter: run medians")
eq((st["steps_a"], st["steps_b"], st["aligned"]), (87, 87, "by step number: the 29 steps counted in every run (1..29)"),
   "scatter: the steps of all runs pooled for the per-step tables")

# a real change across 3 + 3 runs: --attn flash (-5.9 %, within the floor with one run a side), offsets of a few us
ra = [gen(f"ra{i}", "--load-ns", str(200000 + o), "--seed", str(60 + i)) for i, o in enumerate((0, 3000, 1500))]
rb = [gen(f"rb{i}", "--attn", "flash", "--load-ns", str(200000 + o), "--seed", str(70 + i))
      for i, o in enumerate((2000, 0, 3500))]
eq(diff_json(ra[0], rb[0])["diff_steps"][0]["verdict"], "within the run-to-run noise",
   "flash, one run a side: within the noise")
js = diff_runs_json(ra, rb)
st = js["diff_steps"][0]
w = check_welch("flash 3+3", ra, rb, st)
expect(w["p"] < 0.05, f"flash 3+3: p = {w['p']:.3g}")
eq(st["verdict"], "B faster", "flash 3+3: B faster")
h = js["diff"][0]["headline"]
expect(h.startswith("B: kernels only in A: 14 % of A's kernel time (largest softmax_kernel), only in B: 5 % of B's "
                    "kernel time (largest flash_fwd_kernel). Step time ") and ", mean of the runs' medians (" in h and
       "3 vs 3 runs" in h and "): B faster." in h, f"flash 3+3: headline {h}")
bk = rows_of(js, "diff_buckets", "bucket")
eq(bk["compute"]["delta_ns_per_step"], -35000, "flash 3+3: compute -35 us per step (pooled over the runs)")

# what differs: command-line options, settings, threads
ca = [gen(f"ca{i}", "--cmd", f"python train.py --sdpa math --seed {i} --out /tmp/x", "--settings",
          "activity=kernel api=all stacks=off", "--seed", str(80 + i)) for i in range(2)]
cb = [gen(f"cb{i}", "--cmd", f"python train.py --sdpa flash --seed {i + 5} --amp=bf16", "--settings",
          "activity=kernel api=all stacks=python", "--threads", "3", "--seed", str(90 + i)) for i in range(2)]
js = diff_runs_json(ca, cb)
h = js["diff"][0]["headline"]
expect(h.startswith("B: --sdpa math -> flash; --out /tmp/x removed; --amp bf16 added; setting stacks=off -> python; "
                    "1 more (diff_setup). Step time "), f"what differs: headline {h}")
eq((su_t := {r["item"]: r for r in js["diff_setup"]}["threads"])["a"], "1", "what differs: threads in A")
eq((su_t["b"], su_t["differs"]), ("3", "yes"), "what differs: threads in B")
su = {r["item"]: r for r in js["diff_setup"]}
eq((su["command line --seed"]["a"], su["command line --seed"]["b"], su["command line --seed"]["differs"]),
   ("varies", "varies", "varies"), "what differs: --seed varies within a side: not the change")
eq((su["command line --amp"]["a"], su["command line --amp"]["b"]), ("(none)", "bf16"), "what differs: --amp=bf16")
expect("settings api" not in su, "what differs: equal settings not listed")
one = diff_json(ca[0], cb[0])["diff"][0]["headline"]
expect(one.startswith("B: --sdpa math -> flash; --seed 0 -> 5; --out /tmp/x removed; --amp bf16 added; "
                      "2 more (diff_setup). Step time"), f"what differs, one run a side: {one}")

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
text = gp("diff", "--width", "0", ma, mb).stdout.splitlines()
expect(text[0].startswith("rank 0: B: kernels only in A") and text[1].startswith("rank 1: Same command line") and
       all("Step time" in t for t in text[:2]),
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
eq(gp("diff", "--noise", "-1", a, a, check=False).returncode, 1, "--noise -1: exit 1")
eq(gp("diff", a, a, a, check=False).returncode, 1, "three traces without --vs: exit 1")
eq(gp("diff", a, "--vs", check=False).returncode, 1, "nothing after --vs: exit 1")
eq(gp("diff", "--vs", a, check=False).returncode, 1, "nothing before --vs: exit 1")
eq(gp("diff", a, "--vs", a, "--vs", a, check=False).returncode, 1, "--vs twice: exit 1")
eq(gp("diff", "--format", "json", a, "--vs", a).stdout, gp("diff", "--format", "json", a, a).stdout,
   "A --vs B is A B")
p = gp("diff", a, os.path.join(W, "missing.gpuprof"), check=False)
eq(p.returncode, 2, "missing trace: exit 2")
expect("missing.gpuprof" in p.stderr, "missing trace: named")
nosteps = os.path.join(W, "nosteps.gpuprof")
subprocess.run([os.path.join(os.path.dirname(GEN), "gen_ranks"), "--launcher", nosteps], check=True)
p = gp("diff", a, nosteps, check=False)
eq(p.returncode, 2, "a trace without steps: exit 2")
expect("no steps to compare" in p.stderr, f"a trace without steps: says so ({p.stderr.strip()})")
# a --step-range no trace has: the trace named, nothing else said (a truncated one too)
trunc = os.path.join(W, "trunc.gpuprof")
with open(a, "rb") as f, open(trunc, "wb") as g:
    g.write(f.read()[:os.path.getsize(a) * 2 // 3])
for first, strict in ((a, ()), (trunc, ()), (trunc, ("--strict",))):
    p = gp("diff", "--step-range", "nope", *strict, first, a, check=False)
    eq((p.returncode, p.stderr.replace(W + "/", "")),
       (2, f"gpuprof diff: {os.path.basename(first)}: no NVTX range named 'nope' (nor numbered 'nope <N>') in the trace\n"),
       f"--step-range nope {strict} on {os.path.basename(first)}: exit 2, the one message")

# --threads N: each trace's steps through stats' driver, its pre-pass and the
# steps' pass in slices (reports/stats_drive.h), as `gpuprof steps` does; on two
# bigtraces of many chunks whose cuts fall inside steps, the output of one thread
GEN_BIG = os.path.abspath(os.path.join(B, "bench", "gen_bigtrace"))
big = []
for seed in (7, 8):
    big.append(os.path.join(W, f"big{seed}.gpuprof"))
    subprocess.run([GEN_BIG, "--seed", str(seed), "200000", big[-1]], check=True, capture_output=True)
for args in (("--format", "json", "--top", "0"), ("--keep-warmup", "--width", "0")):
    one = gp("diff", "--threads", "1", *args, *big)
    for n in (2, 4):
        p = gp("diff", "--threads", str(n), "--verbose", *args, *big)
        eq(p.stdout, one.stdout, f"bigtraces {args}: --threads {n} = --threads 1")
        cuts = re.findall(r"the pre-pass in (\d+) slices, the steps' pass in (\d+)", p.stderr)
        expect(len(cuts) == 2 and all(int(k) == n and int(m) == n for k, m in cuts),
               f"bigtraces --threads {n} --verbose: each trace's pre-pass and steps' pass in {n} slices ({p.stderr.strip()})")
finish()
