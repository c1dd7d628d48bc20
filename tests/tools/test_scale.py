"""test_scale.py — the offline tool's bounded-memory paths give the figures
the exact paths give, on traces from bench/bigtrace/gen_bigtrace (a
realistic training mix; no GPU).

 * GPU utilisation summed as the trace streams (analysis/gpu/gpu_activity.h: a
   process with settings and no windows) = the same trace whose process has
   no settings (every interval kept, merged at the end): identical util and
   comm tables, on 400k events (~170k kernels: the device is cut several
   times, GPU_ACTIVITY_LAG = 65536).
 * The same with records written 150,000 GPU records late (--late): the
   streamed Busy is short of the exact one by at most the uncounted time the
   table's note states, and never more than it.
 * --threads: every command gives the same output (and the same messages
   and exit status) with 1 and 4 decoding threads: info, stats (all
   reports, JSON), dump (order-sensitive), export perfetto, on a generated
   trace with numbered steps and on a damaged copy of it.
 * export perfetto: -o X.json.gz and --gzip write gzip whose content is
   the plain export, byte for byte; --summary holds one slice per outermost
   NVTX range and counters whose sums give back, independently of the
   exporter, the trace's kernel time, kernel count and API call count (from
   `stats --format json`), and it is far smaller than the full export.
 * comm and comm_steps (streamed: per-rank unions cut as they stream, the
   steps' attribution settled as the threads' outermost ranges come) equal
   the figures computed here from `dump --json`: unions of the NCCL and other
   kernels and their overlap; per outermost push/pop range, the kernels whose
   launch call started in it (any thread), their count, collectives and
   unions.  On 350k events: ~150k kernels (the ranks' unions are cut:
   COMM_LAG = 65536), 388 steps x 2 ranges (steps summed as they go:
   RANGE_ATTR_KEEP = 256)."""
import os
import subprocess

import tt

GEN_BIG = os.path.abspath(os.path.join(tt.B, "bench", "gen_bigtrace"))


def big(path, n, *opts):
    subprocess.run([GEN_BIG, *opts, str(n), path], check=True, capture_output=True)
    return path


with tt.tmpdir() as d:
    streamed = big(os.path.join(d, "s.gpuprof"), 400000)
    kept = big(os.path.join(d, "k.gpuprof"), 400000, "--no-settings")
    for fmt in ("csv", "table"):
        a = tt.gp("stats", "--report", "util", "--format", fmt, streamed).stdout
        b = tt.gp("stats", "--report", "util", "--format", fmt, kept).stdout
        tt.expect(a.count("\n") > 3, f"util ({fmt}) has rows")
        tt.eq(a, b, f"util ({fmt}) streamed vs kept")
    # the span: the steps' (default; summed clipped to it in a pass of its
    # own), the whole trace, a --steps selection (kept), --until (whole trace up to it)
    spans = {}
    for opts in ([], ["--whole-trace"], ["--steps", "20:120"], ["--until", "10s"]):
        a = tt.gp("stats", "--report", "util", "--format", "csv", *opts, streamed).stdout
        b = tt.gp("stats", "--report", "util", "--format", "csv", *opts, kept).stdout
        tt.eq(a, b, f"util {opts} streamed vs kept")
        spans[" ".join(opts)] = a.splitlines()[1].split(",")[5] if a.count("\n") > 1 else None
    tt.expect(len(set(spans.values())) == 4, f"the four spans differ: {spans}")
    # late records: Busy short by at most the stated bound (on one thread:
    # in time shards each slice's union cuts where its own records lead it,
    # so which records are late may differ, docs/CLI.md "Threads")
    late_s = big(os.path.join(d, "ls.gpuprof"), 400000, "--late")
    late_k = big(os.path.join(d, "lk.gpuprof"), 400000, "--late", "--no-settings")

    def busy(path):
        rows = tt.gp("stats", "--threads", "1", "--report", "util", "--format", "csv", path).stdout.splitlines()
        return int(rows[1].split(",")[4])
    note = tt.gp("stats", "--threads", "1", "--report", "util", late_s).stdout
    m = [l for l in note.splitlines() if "short by up to" in l]
    if tt.expect(m, "the note on late records"):
        bound = int(m[0].split("up to ")[1].split()[0])
        bs, bk = busy(late_s), busy(late_k)
        tt.expect(bs <= bk <= bs + bound, f"busy streamed {bs} <= exact {bk} <= streamed + {bound}")
        tt.expect(bound > 0, "some time was late")
    tt.expect("short by up to" not in tt.gp("stats", "--threads", "1", "--report", "util", late_k).stdout,
              "no note when every interval is kept")
    # --threads 1 vs 4: same bytes out
    numbered = big(os.path.join(d, "n.gpuprof"), 150000, "--numbered", "--seed", "7")
    damaged = os.path.join(d, "bad.gpuprof")
    data = bytearray(open(numbered, "rb").read())
    for at in (0.35, 0.7):
        o = int(len(data) * at)
        data[o:o + 48] = b"x" * 48
    open(damaged, "wb").write(bytes(data))
    for path in (numbered, damaged):
        for cmd in (["info"], ["stats", "--format", "json"], ["dump"],
                    ["export", "--format", "perfetto", "-o", "-"]):
            one = tt.gp(*cmd, "--threads", "1", path, check=False)
            four = tt.gp(*cmd, "--threads=4", path, check=False)
            what = f"{' '.join(cmd)} {os.path.basename(path)}"
            tt.expect(len(one.stdout) > 1000, f"{what}: has output")
            tt.eq(four.returncode, one.returncode, f"{what}: exit status, 4 vs 1 threads")
            tt.expect(four.stdout == one.stdout, f"{what}: output, 4 vs 1 threads")
            tt.eq(four.stderr, one.stderr, f"{what}: messages, 4 vs 1 threads")
    bad = tt.gp("info", "--threads", "0", numbered, check=False)
    tt.expect(bad.returncode == 1 and "--threads" in bad.stderr, "--threads 0 is a usage error")
    # perfetto: gzip and the summary
    import gzip
    import json
    plain = tt.gp("export", "--format", "perfetto", "-o", "-", numbered).stdout.encode()
    gz = os.path.join(d, "x.json.gz")
    tt.gp("export", "--format", "perfetto", "-o", gz, numbered)
    tt.expect(gzip.open(gz).read() == plain, "-o X.json.gz: gzip of the plain export")
    z = subprocess.run([tt.GPUPROF, "export", "--format", "perfetto", "--gzip", "-o", "-", numbered],
                       capture_output=True, check=True).stdout
    tt.expect(gzip.decompress(z) == plain, "--gzip -o -: gzip of the plain export")
    sm = os.path.join(d, "s.json.gz")
    tt.gp("export", "--format", "perfetto", "--summary", "-o", sm, numbered)
    doc = json.load(gzip.open(sm))
    width = doc["otherData"]["bucket_ns"]
    ev = doc["traceEvents"]
    st = json.loads(tt.gp("stats", "--format", "json", "--report", "api,kernels,nvtx", numbered).stdout)
    kern_ns = sum(r["total_ns"] for r in st["kernels"])
    kern_n = sum(r["instances"] for r in st["kernels"])
    api_n = sum(r["num_calls"] for r in st["api"])

    def total(name, scale):
        return sum(e["args"]["value"] for e in ev if e["ph"] == "C" and e["name"] == name) * scale
    tt.approx(total("GPU kernel time (%)", width / 100.0) / kern_ns, 1.0, "summary: kernel time", tol=1e-5)
    tt.approx(total("kernels started (per s)", width / 1e9) / kern_n, 1.0, "summary: kernels", tol=1e-5)
    tt.approx(total("CUDA API calls (per s)", width / 1e9) / api_n, 1.0, "summary: API calls", tol=1e-5)
    steps = [e for e in ev if e["ph"] == "X" and e["cat"] == "nvtx"]
    outer = sum(r["instances"] for r in st["nvtx"] if r["range"].startswith("step ") or r["range"] == "backward")
    tt.eq(len(steps), outer, "summary: one slice per outermost range")
    tt.expect(not [e for e in ev if e.get("cat") in ("cuda_api", "kernel", "memcpy", "launch")],
              "summary: no single calls, kernels or flows")
    tt.expect(len(json.dumps(doc)) * 10 < len(plain), "summary: under a tenth of the full export")
    # comm / comm_steps against an independent computation
    import bisect
    cpath = big(os.path.join(d, "c.gpuprof"), 350000, "--seed", "3")
    kern, launch, ranges = [], {}, []
    for line in tt.gp("dump", "--json", "--type", "kernel,api,nvtx_range", cpath).stdout.splitlines():
        r = json.loads(line)
        if r["type"] == "kernel":
            kern.append((r["start"], max(r["end"], r["start"]), r["corr"], "nccl" in r["name"].lower()))
        elif r["type"] == "api" and r["name"] == "cudaLaunchKernel":
            launch[r["corr"]] = min(launch.get(r["corr"], r["start"]), r["start"])
        elif r["type"] == "nvtx_range" and r["kind"] == "pushpop" and r["depth"] == 0:
            ranges.append((r["start"], max(r["end"], r["start"]), r["message"]))

    def split(ks):
        a = tt.union([(k[0], k[1]) for k in ks if k[3]])
        b = tt.union([(k[0], k[1]) for k in ks if not k[3]])
        ov, i, j = 0, 0, 0
        while i < len(a) and j < len(b):
            ov += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
            if a[i][1] <= b[j][1]:
                i += 1
            else:
                j += 1
        return sum(e_ - s_ for s_, e_ in a), sum(e_ - s_ for s_, e_ in b), ov
    cm = json.loads(tt.gp("stats", "--report", "comm", "--format", "json", cpath).stdout)
    want = split(kern)
    row = cm["comm"][0]
    tt.eq((row["comm_ns"], row["compute_ns"], row["overlap_ns"]), want, "comm: comm, compute, overlap")
    tt.expect(want[2] > 0, "comm: the NCCL kernels overlap the others")
    occ, exp_steps = {}, {}
    by_t = sorted((launch.get(k[2], k[0]), k) for k in kern)
    ts = [t for t, _ in by_t]
    for s_, e_, name in sorted(ranges):
        occ[name] = occ.get(name, 0) + 1
        ks = [k for _, k in by_t[bisect.bisect_left(ts, s_):bisect.bisect_left(ts, e_)]]
        exp_steps[(name, occ[name])] = (len(ks), sum(k[3] for k in ks)) + split(ks)
    got_steps = {(r["range"], r["occurrence"]): (r["kernels"], r["collectives"], r["comm_ns"], r["compute_ns"],
                                                 r["overlap_ns"]) for r in cm["comm_steps"]}
    tt.eq(len(got_steps), len(exp_steps), "comm_steps: rows")
    bad = [k for k in exp_steps if got_steps.get(k) != exp_steps[k]]
    tt.expect(not bad, f"comm_steps: {len(bad)} rows differ, e.g. {bad[:1]}: "
              f"{[got_steps.get(b) for b in bad[:1]]} vs {[exp_steps[b] for b in bad[:1]]}")
    tt.expect(len(exp_steps) > 2 * 256 and len(kern) > 2 * 65536, f"{len(exp_steps)} steps, {len(kern)} kernels")
    # the trace is long enough to be cut: more kernels than two lags
    info = tt.gp("info", streamed).stdout
    nk = int([l.split()[1] for l in info.splitlines() if l.strip().startswith("kernel ")][0])
    tt.expect(nk > 2 * 65536, f"{nk} kernels > 2 x GPU_ACTIVITY_LAG")
tt.finish()
