"""test_stats_threads.py — `gpuprof stats --threads N` gives the output of
--threads 1, byte for byte (JSON: every figure lossless), for N = 2, 4, 16:
the reports that run in time shards (reports/stats_shards.h: api, kernels,
memops, memsize, sync, occupancy, counters, memory, nvtx; the kernel shapes
and counters for util) merge their slices into the one-thread result.  The
reports that join GPU operations to their launch calls (nvtx,
launch_sites, layers) join each slice's own records; an operation whose call is in
an earlier slice joins at the merge (opjoin_merge: without it, nvtx's GPU
Kernel Time differs).  launch_sites and layers take the stacks, which every
slice of a format 1.4 trace reads (gen_stacks: its sites by every --site
rule; gen_layers: its layer tree, backward kernels by emit_nvtx's sequence
numbers).  The steps analysis (steps, util's default span) runs in the
slices too (analysis/steps/steps_slice.h): each slice's engine from a lead-in,
its state at the cut compared with the one the slice before ends in (equal:
its steps are one pass's; else the slice before goes on over its records):
gen_steps' traces, bigtraces whose cuts fall inside steps, and traces where
the comparison must fail (an idle gap, a lead-in of 1 us, a source out of
time order: --verbose says what was read again).

 * Every report together (the default set and --per-step) and each report
   alone, on a generated training trace (bench/bigtrace/gen_bigtrace,
   60,000 events, ~70 steps: fewer than 2^20 values, so every median is
   exact and must be the same), on gen_trace's traces (plain, windows, and
   two of them merged, ranked and not), two ranks (gen_ranks), the fuzz
   corpus' valid trace and a bigtrace with allocations and frees
   (gen_bigtrace --memory: a leak and frees of memory allocated before the
   trace, so the memory report's in-use floor at 0 meets the cuts); with a
   selection (--since/--until, --steps).
 * The shards ran: --verbose says how many threads read slices (N - 1: the
   pass of the other reports takes one) and that they read records.
 * The pre-pass in slices (reports/stats_prepass_shards.h): what it made
   (GPUPROF_PREPASS_DUMP=1: the ranges by id, names, lanes, windows, the
   steps' plans) is one thread's at 2, 4 and 16 threads, on gen_cuts'
   ranges across every cut (nested, popped inner first, start/end ranges
   ended on another thread, ranges never ended), the trace method's sample
   (gen_steps --no-nvtx) and the traces above; a damaged gen_cuts trace
   gives one thread's output, messages and exit status.  With the steps in
   slices, the longest GPU operation per process before each cut (the
   steps' prefix, reports/stats_prepass_prefix.h) from the slices is that
   of one thread's pre-pass over the same cuts (GPUPROF_PREPASS_ONE_THREAD=1),
   on gen_cuts --late-ops too (the longest operations written out of
   order around the cuts) and the late bigtrace.  Without the order
   of a whole read (the slices' ranges end to end) the range ids differ.
 * Damaged traces (no footer, a bad chunk, truncated): the same output,
   messages and exit status as one thread (a trace without footer is not
   cut; a slice that meets damage makes the whole trace be read on one
   thread)."""
import os
import re
import shutil
import subprocess

import tt

GEN_BIG = os.path.abspath(os.path.join(tt.B, "bench", "gen_bigtrace"))
GEN_RANKS = os.path.join(os.path.dirname(tt.GEN), "gen_ranks")
GEN_STACKS = os.path.join(os.path.dirname(tt.GEN), "gen_stacks")
GEN_LAYERS = os.path.join(os.path.dirname(tt.GEN), "gen_layers")
DATA = os.path.join(tt.HERE, "..", "data", "bad")
CORPUS = os.path.join(tt.HERE, "..", "fuzz", "corpus")
THREADS = (2, 4, 16)


def stats(path, threads, *opts, check=True):
    return tt.gp("stats", "--threads", threads, *opts, path, check=check)


def same_as_one(path, what, *opts, threads=THREADS):
    one = stats(path, 1, "--format", "json", *opts)
    tt.expect(len(one.stdout) > 10, f"{what}: output")
    for n in threads:
        p = stats(path, n, "--format", "json", *opts)
        tt.expect(p.stdout == one.stdout, f"{what}: --threads {n} = --threads 1")
        tt.eq(p.stderr, one.stderr, f"{what}: messages, --threads {n}")
    return one.stdout


def tables_of(path):
    """The names of the tables of the default set (the JSON keys)."""
    out = tt.gp("stats", "--threads", "1", "--format", "json", path).stdout
    return re.findall(r'^[{,]?"([a-z_]+)":', out, re.M)


with tt.tmpdir() as d:
    big = os.path.join(d, "big.gpuprof")
    subprocess.run([GEN_BIG, "60000", big], check=True, capture_output=True)
    mem = os.path.join(d, "mem.gpuprof")
    subprocess.run([GEN_BIG, "--memory", "60000", mem], check=True, capture_output=True)
    plain = tt.gen(os.path.join(d, "plain.gpuprof"))
    win = tt.gen(os.path.join(d, "win.gpuprof"), windows=True)
    ranks = os.path.join(d, "ranks.gpuprof")
    subprocess.run([GEN_RANKS, ranks], check=True, capture_output=True)
    valid = os.path.join(CORPUS, "valid.gpuprof")
    # two processes merged: one's process record lies in timed chunks
    merged = os.path.join(d, "merged.gpuprof")
    tt.gp("merge", plain, tt.gen(os.path.join(d, "b.gpuprof"), variant="b"), "-o", merged)

    # the shards ran: every report (the steps analysis too), nothing on
    # the driver's pass, on all N threads
    v = stats(big, 4, "--verbose", "--format", "json").stderr
    m = re.search(r"here: (\w+)\), shards [0-9.]+ s \((\d+) threads, (\d+) records", v)
    tt.expect(m is not None, f"--verbose gives the shards' phase: {v!r}")
    if m:
        tt.eq(m.group(1), "none", "--threads 4, all reports: nothing on the driver's pass")
        tt.eq(int(m.group(2)), 4, "--threads 4, all reports: 4 threads of shards")
        tt.expect(int(m.group(3)) >= 60000, f"the shards read the trace's records: {m.group(3)}")
    v = stats(big, 4, "--verbose", "--report", "kernels").stderr
    m = re.search(r"\((\d+) threads", v)
    tt.expect(m is not None and int(m.group(1)) == 4, f"--report kernels alone: 4 threads of shards: {v!r}")
    v = stats(mem, 4, "--verbose", "--report", "memory").stderr
    m = re.search(r"here: (\w+)\), shards [0-9.]+ s \((\d+) threads", v)
    tt.expect(m is not None and m.group(1) == "none" and int(m.group(2)) == 4,
              f"--report memory alone: in 4 threads of shards, nothing on the driver's pass: {v!r}")
    mem_one = same_as_one(mem, "bigtrace --memory: --report memory", "--report", "memory")
    tt.expect('"memory"' in mem_one and '"pinned"' in mem_one, f"the memory table has the pinned row: {mem_one[:200]!r}")

    for path, name in ((big, "bigtrace"), (plain, "gen_trace"), (win, "gen_trace --windows"),
                       (ranks, "gen_ranks"), (merged, "gen_trace + --b merged"), (valid, "fuzz valid"),
                       (mem, "bigtrace --memory")):
        same_as_one(path, f"{name}: all reports")
        tables = tables_of(path)
        tt.expect(len(tables) >= 3, f"{name}: tables {tables}")
        for t in tables:
            same_as_one(path, f"{name}: --report {t}", "--report", t)
    same_as_one(big, "bigtrace: --per-step", "--per-step")
    same_as_one(big, "bigtrace: --since/--until", "--since", "0.5s", "--until", "2s")
    same_as_one(big, "bigtrace: --steps", "--steps", "5:20")
    same_as_one(big, "bigtrace: --report kernels,memops,occupancy", "--report",
                "kernels,memops,occupancy")
    # the reports in shards, with tables (the table is the format for people)
    one = tt.gp("stats", "--threads", "1", "--report", "api,kernels,memsize,occupancy", big).stdout
    for n in THREADS:
        tt.eq(tt.gp("stats", "--threads", n, "--report", "api,kernels,memsize,occupancy", big).stdout, one,
              f"tables, --threads {n}")

    # the join reports in shards: nvtx and launch_sites read no record on
    # the driver's thread (its pre-pass gives the shards the NVTX ranges)
    v = stats(big, 4, "--verbose", "--report", "nvtx,launch_sites").stderr
    m = re.search(r"here: (\w+)\), shards [0-9.]+ s \((\d+) threads", v)
    tt.expect(m is not None and m.group(1) == "none" and int(m.group(2)) == 4,
              f"--report nvtx,launch_sites: in 4 threads of shards, nothing on the driver's pass: {v!r}")
    stk = os.path.join(d, "stacks.gpuprof")
    subprocess.run([GEN_STACKS, stk], check=True, capture_output=True)
    for site in ("user", "inner", "layer"):
        out = same_as_one(stk, f"gen_stacks: --report launch_sites --site {site}", "--report", "launch_sites",
                          "--site", site)
        tt.expect('"site":"model.py:42 forward"' in out or site != "user",
                  f"gen_stacks: the launch sites are resolved: {out[:300]!r}")
    # layers: the stacks' views and the backward join by sequence numbers
    # (emit_nvtx ranges) merged across the slices
    for opt in ("", "--emit-nvtx", "--no-class"):
        lay = os.path.join(d, f"layers{opt}.gpuprof")
        subprocess.run([GEN_LAYERS] + ([opt] if opt else []) + [lay], check=True, capture_output=True)
        v = stats(lay, 4, "--verbose", "--report", "layers").stderr
        tt.expect("here: none)" in v, f"gen_layers {opt}: layers in shards: {v!r}")
        out = same_as_one(lay, f"gen_layers {opt}: --report layers", "--report", "layers")
        tt.expect('"layer":"(backward, unattributed)"' in out or '"layer":"(backward)"' in out,
                  f"gen_layers {opt}: the backward rows: {out[:400]!r}")
        same_as_one(lay, f"gen_layers {opt}: all reports")

    # windows and util: the busy intervals in shards, their streaming
    # unions merged at the cuts (analysis/core/intervals.h ivpair_merge); util's
    # default span (the steps') takes a pass of its own over the GPU
    # operations at the end, in slices too.  With a lag of 512 intervals
    # (GPUPROF_UNION_LAG; none of these traces has a record that late) the
    # slices cut their unions, so the merges meet the heads they kept; a
    # merge that could not be exact would read the trace again on one
    # thread, and say so under --verbose: it must not.
    for r in ("windows", "util --whole-trace", "util --since 0.5s --until 2s", "util --steps 5:20"):
        v = stats(big, 4, "--verbose", "--report", *r.split()).stderr
        tt.expect("here: none)" in v, f"--report {r}: in shards, nothing on the driver's pass: {v!r}")
    os.environ["GPUPROF_UNION_LAG"] = "512"
    for path, name in ((big, "bigtrace"), (win, "gen_trace --windows"), (ranks, "gen_ranks"), (mem, "bigtrace --memory")):
        for r in ("windows", "util", "util --whole-trace") + (("util --steps 5:20",) if path in (big, mem) else ()):
            same_as_one(path, f"{name}: --report {r}, lag 512", "--report", *r.split())
            for n in THREADS:
                v = stats(path, n, "--verbose", "--format", "json", "--report", *r.split()).stderr
                tt.expect("read again" not in v, f"{name}: --report {r}, lag 512, --threads {n}: merged exactly: {v!r}")
    del os.environ["GPUPROF_UNION_LAG"]

    # comm in shards: a slice makes the steps (top-level ranges) that get
    # kernels, sums none that began before its slice, and the merge replays
    # the order of its steps' first kernels against the earlier slice's
    # open ones (256 newer steps sum a step).  gen_steps --steady --steps
    # 3000: 3000 steps, so every slice's ring is full; --late-kernel K
    # writes step K's relu kernel last in the file: one thread finds step
    # K summed by then (the comm_steps note); at K = 1 the first slice
    # holds more than 256 steps at 2 and 4 threads, so it sums step 1
    # itself and counts the kernel late as one thread does; at K = 2500 a
    # later slice summed the step by its own count, which may be early:
    # that slice's merge fails and the trace is read again on one thread
    # (said under --verbose), so the output is still one thread's.  (At 16
    # threads the late record, read by its slice at the slice's end, comes
    # before later slices' steps: one of the documented differences,
    # docs/CLI.md "Threads".)
    # A bigtrace of 662 steps (~380 kernels each, back to back): at 2 and 4
    # threads every slice's ring is full and every cut falls inside a step
    # with kernels on both sides, which the later slice must not sum.
    b600 = os.path.join(d, "b600k.gpuprof")
    subprocess.run([GEN_BIG, "600000", b600], check=True, capture_output=True)
    same_as_one(b600, "bigtrace 600k: --report comm", "--report", "comm")
    for n in (2, 4):
        v = stats(b600, n, "--verbose", "--report", "comm").stderr
        tt.expect("read again" not in v and "here: none)" in v, f"bigtrace 600k, --threads {n}: comm merged: {v!r}")
    GEN_STEPS = os.path.join(os.path.dirname(tt.GEN), "gen_steps")
    for extra, name, again in (([], "3000 steps", False), (["--late-kernel", "1"], "step 1's kernel late", False),
                               (["--late-kernel", "2500"], "step 2500's kernel late", True)):
        long = os.path.join(d, "long.gpuprof")
        subprocess.run([GEN_STEPS, "--steady", "--steps", "3000"] + extra + [long], check=True, capture_output=True)
        out = same_as_one(long, f"gen_steps {name}: --report comm", "--report", "comm", threads=(2, 4) if extra else THREADS)
        tt.expect(out.count('"range":"iteration') >= 3000, f"gen_steps {name}: a comm_steps row per step")
        for n in (2, 4):
            v = stats(long, n, "--verbose", "--report", "comm").stderr
            tt.expect(("read again" in v) == again, f"gen_steps {name}, --threads {n}: read again: {again}: {v!r}")
            tt.expect("here: none)" in v or again, f"gen_steps {name}, --threads {n}: comm in shards: {v!r}")
        if extra:
            note = stats(long, 4, "--report", "comm_steps").stdout
            tt.expect("1 kernels came after their step was summed" in note, f"gen_steps {name}: the late note")

    # the pre-pass in slices (reports/stats_prepass_shards.h): K threads
    # read the NVTX ranges, windows and the step detection's processes of
    # their slices, and the merge puts them back in the order of one
    # thread's read.  GPUPROF_PREPASS_DUMP=1 lists what the pre-pass made
    # (each range by id with its name's number and lane, the windows, the
    # steps' plans and their range ids): the same at 2, 4 and 16 threads
    # as at 1, and so is the output.  gen_cuts: ranges across the cuts at
    # every depth (push/pop ranges are written when popped: an outer range
    # begun before a cut comes after the inner ones begun after it), start/
    # end ranges ended on another thread, ranges never ended; without the
    # order of a whole read (the slices' ranges end to end) the ids differ.
    # gen_steps --no-nvtx: the trace method's sample, read after the slices.
    GEN_CUTS = os.path.join(os.path.dirname(tt.GEN), "gen_cuts")
    os.environ["GPUPROF_PREPASS_DUMP"] = "1"

    def dump(text):
        return [ln for ln in text.splitlines() if ln.startswith("prepass ")]

    pre = []
    for seed in (1, 2, 3):
        c = os.path.join(d, f"cuts{seed}.gpuprof")
        subprocess.run([GEN_CUTS, "--seed", str(seed), "--steps", "300", c], check=True, capture_output=True)
        pre.append((c, f"gen_cuts --seed {seed}"))
    # gen_cuts --late-ops: the longest GPU operation read before a cut is
    # often one its stream wrote after a record timed past the cut, which
    # the slices place by its key at the merge (reports/
    # stats_prepass_prefix.h; without that, or with the cut off by one,
    # the prefix differs at 16 threads)
    late_ops = []
    for seed in (1, 2, 3):
        c = os.path.join(d, f"cuts_late{seed}.gpuprof")
        subprocess.run([GEN_CUTS, "--seed", str(seed), "--steps", "300", "--late-ops", c], check=True,
                       capture_output=True)
        late_ops.append((c, f"gen_cuts --late-ops --seed {seed}"))
    cuts = pre[0][0]
    # the trace has what the test is for: at the cut of 2 slices (the
    # middle of its span), a range begun before it whose record comes after
    # one begun after it (so the slices end to end would number them
    # otherwise), and one never ended
    span = re.search(r"\((\d+) \.\. (\d+) ns\)", tt.gp("info", cuts).stdout)
    mid = (int(span.group(1)) + int(span.group(2))) // 2
    ranges = [re.match(r"prepass range (\d+) .* (\d+)\.\.(\d+) depth (\d+)", ln)
              for ln in dump(stats(cuts, 1, "--format", "json").stderr) if ln.startswith("prepass range")]
    across = [int(m.group(1)) for m in ranges if int(m.group(2)) < mid < int(m.group(3)) and int(m.group(4)) > 0]
    after = [int(m.group(1)) for m in ranges if int(m.group(2)) > mid]
    tt.expect(across and after and min(after) < max(across),
              f"gen_cuts: a range across the middle numbered after one begun past it ({len(across)}, {len(after)})")
    sten = os.path.join(d, "steps_nonvtx.gpuprof")
    subprocess.run([GEN_STEPS, "--steady", "--no-nvtx", "--steps", "200", sten], check=True, capture_output=True)
    pre += [(sten, "gen_steps --no-nvtx"), (big, "bigtrace"), (win, "gen_trace --windows"), (ranks, "gen_ranks"),
            (merged, "gen_trace + --b merged"), (valid, "fuzz valid")] + late_ops

    def prefix(text):
        return [ln for ln in text.splitlines() if ln.startswith("prepass prefix ")]

    def same_prefix(path, name, n, p, *opts):
        """The steps' prefix p's pre-pass in slices made (its dump) is that
        of one thread's pre-pass over the same cuts; that run."""
        os.environ["GPUPROF_PREPASS_ONE_THREAD"] = "1"
        q = stats(path, n, "--verbose", "--format", "json", *opts)
        del os.environ["GPUPROF_PREPASS_ONE_THREAD"]
        tt.expect(re.search(r"pre-pass [0-9.]+ s \([0-9.]+ s CPU\)", q.stderr) is not None,
                  f"{name} {opts}: GPUPROF_PREPASS_ONE_THREAD: {q.stderr[-300:]!r}")
        tt.expect(prefix(p.stderr) and prefix(p.stderr) == prefix(q.stderr),
                  f"{name} {opts}: the steps' prefix from the slices, --threads {n}")
        return q

    for path, name in pre:
        for opts in ((), ("--report", "nvtx"), ("--report", "steps"), ("--method", "trace"),
                     ("--attribution", "same-thread")):
            one = stats(path, 1, "--format", "json", *opts)
            d1 = dump(one.stderr)
            for n in THREADS:
                p = stats(path, n, "--verbose", "--format", "json", *opts)
                # in the slices of the steps' engines when they run in
                # slices (one fewer where a report stays on the driver's pass)
                m = re.search(r"pre-pass [0-9.]+ s \(in (\d+) slices", p.stderr)
                tt.expect(m is not None and int(m.group(1)) in (n, n - 1),
                          f"{name} {opts}: the pre-pass in {n} slices: {p.stderr[-400:]!r}")
                tt.expect([ln for ln in dump(p.stderr) if not ln.startswith("prepass prefix ")] == d1,
                          f"{name} {opts}: what the pre-pass made, --threads {n}")
                tt.expect(p.stdout == one.stdout, f"{name} {opts}: output, --threads {n}")
                # the steps' prefix (with the steps in slices, or read again
                # by one engine): that of one thread's pre-pass over the
                # same cuts
                if re.search(r"the steps analysis in \d+ slices|source out of time order across a cut", p.stderr):
                    q = same_prefix(path, name, n, p, *opts)
                    tt.expect(q.stdout == one.stdout, f"{name} {opts}: output, one thread's pre-pass, --threads {n}")
    tt.expect(all(dump(stats(c, 1, "--report", "nvtx").stderr) for c, _ in pre[:3]), "gen_cuts: the pre-pass dump")
    del os.environ["GPUPROF_PREPASS_DUMP"]
    # a damaged trace: the slices see the damage, and the pre-pass (as the
    # rest) runs on one thread: the output, messages and exit status of 1
    with open(cuts, "rb") as f:
        data = f.read()
    for what, b in (("cut", data[: len(data) * 2 // 3]),
                    ("flipped", data[: len(data) // 2] + bytes(x ^ 0x5A for x in data[len(data) // 2: len(data) // 2 + 64]) +
                     data[len(data) // 2 + 64:])):
        bad = os.path.join(d, f"cuts_{what}.gpuprof")
        with open(bad, "wb") as f:
            f.write(b)
        one = stats(bad, 1, "--format", "json", check=False)
        for n in THREADS:
            p = stats(bad, n, "--format", "json", check=False)
            tt.eq(p.returncode, one.returncode, f"gen_cuts {what}: exit status, --threads {n}")
            tt.expect(p.stdout == one.stdout, f"gen_cuts {what}: output, --threads {n}")
            tt.eq(p.stderr, one.stderr, f"gen_cuts {what}: messages, --threads {n}")
    # the steps analysis in slices (analysis/steps/steps_slice.h): steps and util
    # (its default span is the steps') run in the shards; a slice's engine
    # starts from a lead-in before its cut, and its state at the cut must
    # equal the one the slice before ends in, or that one goes on over its
    # records (said under --verbose); a source out of time order across a
    # cut makes one engine read the whole trace.  step_rows (--per-step)
    # has every figure of every step.
    def steps_slices(path, n, *opts, env=None):
        """--verbose's line on the steps' slices: (slices, read again) or
        'whole' (one engine over the whole trace)."""
        old = dict(os.environ)
        os.environ.update(env or {})
        try:
            v = stats(path, n, "--verbose", "--report", "steps", *opts).stderr
        finally:
            os.environ.clear()
            os.environ.update(old)
        if "read again on one thread\n" in v and "source out of time order" in v:
            return "whole"
        m = re.search(r"the steps analysis in (\d+) slices: (each went on|(\d+) of them read again)", v)
        tt.expect(m is not None, f"--verbose says how the steps ran: {v!r}")
        tt.expect("here: none)" in v, f"the steps in shards, nothing on the driver's pass: {v!r}")
        return (int(m.group(1)), int(m.group(3) or 0)) if m else None

    steps_traces = []
    for args, name in (([], "idle"), (["--steady"], "steady"), (["--steady", "--no-nvtx"], "no NVTX"),
                       (["--late-activity"], "late activity"), (["--workload", "cnn"], "cnn"),
                       (["--windows"], "windows"), (["--steady", "--steps", "3000"], "3000 steps"),
                       (["--steady", "--steps", "3000", "--no-nvtx"], "3000 steps, no NVTX")):
        path = os.path.join(d, f"steps_{len(steps_traces)}.gpuprof")
        subprocess.run([GEN_STEPS] + args + [path], check=True, capture_output=True)
        steps_traces.append((path, f"gen_steps {name}"))
    steps_traces += [(big, "bigtrace"), (b600, "bigtrace 600k")]
    for path, name in steps_traces:
        for r in ("steps --per-step", "util", "steps,util --since 0.5s --until 2s"):
            same_as_one(path, f"{name}: --report {r}", "--report", *r.split())
    same_as_one(b600, "bigtrace 600k: all reports --per-step", "--per-step")
    # the committed traces (format 1.0: launch_sites and layers stay on
    # the driver's pass, whose join must not feed the steps the slices
    # make; at --threads 2 the one slice beside it is the whole trace)
    for ex in ("vector_add-h200.gpuprof", "mnist-h200.gpuprof"):
        same_as_one(os.path.join(tt.HERE, "..", "..", "examples", ex), f"{ex}: all reports --per-step", "--per-step",
                    threads=(2, 3, 4))
    same_as_one(b600, "bigtrace 600k: --steps 100:300", "--report", "steps,util", "--steps", "100:300")
    # every cut of the 662 back-to-back steps falls inside a step: each
    # slice starts from its predecessor's state (lead-in: the step before
    # the cut's and 2 s), none is read again
    for n in THREADS:
        tt.eq(steps_slices(b600, n), (n, 0), f"bigtrace 600k, --threads {n}: every slice from the one before")
    tt.eq(steps_slices(steps_traces[6][0], 4), (4, 0), "gen_steps 3000 steps, --threads 4: no slice read again")
    # comparisons that must fail, with the output still one thread's: the
    # idle trace's last record is 10 s after its steps (slices in the gap
    # start empty: their states differ from the one before); a lead-in of
    # 1 us or 1 ms (GPUPROF_STEPS_LEAD) is shorter than a step, so no
    # slice's state is one pass's at its cut.  Without the comparison these
    # outputs differ from one thread's.  (The bigtrace's GPU records are
    # written when they end, so its sources are out of order by up to its
    # longest kernel: a lead-in shorter than that is crossed at 4 threads,
    # and one engine reads the whole trace.)
    tt.eq(steps_slices(steps_traces[0][0], 4), (4, 3), "gen_steps idle, --threads 4: the slices in the gap read again")
    for path, name, lead, threads in ((steps_traces[6][0], "gen_steps 3000 steps", "1us", THREADS),
                                      (steps_traces[0][0], "gen_steps idle", "1us", THREADS),
                                      (b600, "bigtrace 600k", "1ms", (2,))):
        os.environ["GPUPROF_STEPS_LEAD"] = lead
        same_as_one(path, f"{name}, lead-in {lead}: --report steps,util --per-step", "--report", "steps,util",
                    "--per-step", threads=threads)
        del os.environ["GPUPROF_STEPS_LEAD"]
        for n in threads:
            tt.eq(steps_slices(path, n, env={"GPUPROF_STEPS_LEAD": lead}), (n, n - 1),
                  f"{name}, lead-in {lead}, --threads {n}: every slice after the first read again")
    # one GPU record in 100,000 written 150,000 records (~6 s) late
    # (--late): a source out of time order across the cuts at 4 threads,
    # so one engine reads the whole trace (at 2 the one cut is not
    # crossed).  (util's busy time may differ there: a late record of the
    # unions, docs/CLI.md.)
    late = os.path.join(d, "late250k.gpuprof")
    subprocess.run([GEN_BIG, "--late", "250000", late], check=True, capture_output=True)
    same_as_one(late, "bigtrace 250k --late: --report steps --per-step", "--report", "steps", "--per-step",
                threads=(2, 4))
    tt.eq(steps_slices(late, 4), "whole", "bigtrace 250k --late, --threads 4: one engine over the whole trace")
    # its steps' prefix from the pre-pass' slices is one thread's all the same
    os.environ["GPUPROF_PREPASS_DUMP"] = "1"
    for n in THREADS:
        same_prefix(late, "bigtrace 250k --late", n, stats(late, n, "--verbose", "--report", "steps"), "--report",
                    "steps")
    del os.environ["GPUPROF_PREPASS_DUMP"]
    tt.eq(steps_slices(late, 2), (2, 0), "bigtrace 250k --late, --threads 2: the one cut is not crossed")

    # damaged traces: the same output, messages and exit status
    cut = os.path.join(d, "cut.gpuprof")
    with open(big, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    flipped = os.path.join(d, "flipped.gpuprof")
    b = bytearray(data)
    for i in range(len(b) // 2, len(b) // 2 + 64):
        b[i] ^= 0x5A
    with open(flipped, "wb") as f:
        f.write(bytes(b))
    for path in (cut, flipped, os.path.join(DATA, "no_footer.gpuprof"), os.path.join(DATA, "truncated_chunk.gpuprof"),
                 os.path.join(DATA, "bad_chunk_header.gpuprof")):
        one = stats(path, 1, "--format", "json", check=False)
        for n in (2, 4):
            p = stats(path, n, "--format", "json", check=False)
            what = os.path.basename(path)
            tt.eq(p.returncode, one.returncode, f"{what}: exit status, --threads {n}")
            tt.expect(p.stdout == one.stdout, f"{what}: output, --threads {n}")
            tt.eq(p.stderr, one.stderr, f"{what}: messages, --threads {n}")

tt.finish()
