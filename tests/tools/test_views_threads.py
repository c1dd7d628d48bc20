"""test_views_threads.py — the commands that view the steps and the
selections give at --threads N (2, 4, 16) the output of --threads 1, byte
for byte, with the same messages and exit status:

 * `gpuprof steps` and `gpuprof advise` (docs/ADVISE.md: every finding
   and figure, JSON with --all), whose steps analysis runs its second pass
   in slices (analysis/steps/steps_slice.h: each slice's engine from a lead-in;
   advise's steps_slice_pass), and advise's facts pass too
   (analysis/advise/advise_slice.h), also where every lead-in falls short of
   one pass's state (GPUPROF_STEPS_LEAD=1us: the slice before reads the slice
   again), on gen_advise's scenarios, whose calls, gaps and busy stretches
   lie across the cuts;
 * the windows of `--steps A:B` and `--range NAME` in `export` (Perfetto),
   `dump` and `stats`, whose read of the whole trace to find the steps or
   ranges runs in slices (reports/stats_selection.h: the pre-pass of
   stats --threads, then the intervals from it): on gen_cuts' ranges across
   every cut (--range "step 7", a step's window whose ranges begin before
   a cut and end after it), on a bigtrace whose cuts fall inside steps, on
   the trace method's steps (gen_steps --no-nvtx: the selection's steps
   analysis runs on the pre-pass's pipe), and with a --steps A:B that names
   no step (the same usage error and exit 1);
 * `gpuprof report`: the page's data (export/report_data.h: the header,
   the stats tables, the steps, the busy % per bin, the memory timeline,
   the findings), whose pre-pass (with the header, the memory timeline and
   advise's inputs) and stats reports run in slices (reports/stats_drive.h)
   and whose busy % bins add up over the slices: on the traces above,
   gen_advise's pageable scenario with stacks and PM samples (a pinned copy
   and samples in every slice: their merge), a gen_memory trace
   (memory records, frees without a size across the cuts), a page of two
   rank traces, a --step-range no trace has (no steps: the page says
   why), and with the devices' unions cut every 8 intervals
   (GPUPROF_UNION_LAG=8: the slices' unions merge at the cuts, and the
   pieces summed there go to the bins);
 * on a truncated trace: the same messages and exit status (the pre-pass
   is not cut: one thread's read).

A window that lost a range of the slice before its cut, or numbered the
steps from the slice's first, would select other records; the export of
steps 20:22 of the bigtrace is checked against the steps' own times (from
`steps --format json` at one thread): every kernel it holds launched in
them."""
import json
import os
import re
import shutil
import subprocess

import tt

GEN_BIG = os.path.abspath(os.path.join(tt.B, "bench", "gen_bigtrace"))
GEN_DIR = os.path.dirname(tt.GEN)
THREADS = (2, 4, 16)


def same(what, run):
    """run(n) -> (stdout bytes or text, stderr, rc) for --threads n."""
    one = run(1)
    for n in THREADS:
        p = run(n)
        tt.expect(p[0] == one[0], f"{what}: --threads {n} = --threads 1")
        tt.eq(p[1], one[1], f"{what}: messages, --threads {n}")
        tt.eq(p[2], one[2], f"{what}: exit status, --threads {n}")
    return one


def gp_run(*args):
    def run(n):
        p = tt.gp(args[0], "--threads", n, *args[1:], check=False)
        return p.stdout, p.stderr, p.returncode
    return run


def export_run(d, path, *sel):
    def run(n):
        out = os.path.join(d, f"w{n}.json")
        if os.path.exists(out):
            os.remove(out)
        p = tt.gp("export", "--threads", n, "--format", "perfetto", *sel, "-o", out, path, check=False)
        data = open(out, "rb").read() if os.path.exists(out) else b""
        return data, p.stderr, p.returncode
    return run


def report_run(d, *paths, opts=()):
    """The page's data (its JSON element) at --threads n (the same -o: the
    data holds the command line)."""
    def run(n):
        out = os.path.join(d, "page.html")
        if os.path.exists(out):
            os.remove(out)
        p = tt.gp("report", "--threads", n, *opts, "-o", out, *paths, check=False)
        html = open(out).read() if os.path.exists(out) else ""
        m = re.search(r'<script type="application/json" id="gpuprof-data">(.*?)</script>', html, re.S)
        return m.group(1) if m else "", p.stderr, p.returncode
    return run


with tt.tmpdir() as d:
    big = os.path.join(d, "big.gpuprof")
    subprocess.run([GEN_BIG, "200000", big], check=True, capture_output=True)
    cuts = os.path.join(d, "cuts.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_cuts"), "--seed", "3", cuts], check=True, capture_output=True)
    nonvtx = os.path.join(d, "nonvtx.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_steps"), "--no-nvtx", "--steady", "--steps", "60", nonvtx], check=True, capture_output=True)
    nvtx = os.path.join(d, "nvtx.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_steps"), nvtx], check=True, capture_output=True)
    adv = os.path.join(d, "sync.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_advise"), "sync", "--stacks", adv], check=True, capture_output=True)
    traces = ((big, "bigtrace"), (cuts, "gen_cuts"), (nonvtx, "gen_steps --no-nvtx --steady --steps 60"), (nvtx, "gen_steps"),
              (adv, "gen_advise sync --stacks"))

    for path, name in traces:
        o = same(f"{name}: steps", gp_run("steps", "--format", "json", path))
        tt.expect(o[2] == 0 and '"steps"' in o[0], f"{name}: steps ran: {o[1]!r}")
        o = same(f"{name}: advise", gp_run("advise", "--all", "--format", "json", path))
        tt.expect(o[2] == 0 and '"findings"' in o[0], f"{name}: advise ran: {o[1]!r}")

    # report: the page's data at every thread count
    mem = os.path.join(d, "mem.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_memory"), "--noise", "leak", mem], check=True, capture_output=True)
    r0, r1 = os.path.join(d, "r0.gpuprof"), os.path.join(d, "r1.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_diff"), "--pid", "7000", "--rank", "0", "--counters", r0], check=True)
    subprocess.run([os.path.join(GEN_DIR, "gen_diff"), "--pid", "7001", "--rank", "1", "--gemm-ns", "150000", r1],
                   check=True)
    streamed = os.path.join(d, "streamed.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_diff"), "--warmup", "--jitter", "20000", "--counters", "--settings",
                    "activity=kernel,memcpy,memset,peer,device api=default", streamed], check=True)
    # advise's inputs across the cuts: a pinned copy and PM samples every
    # step, the stacks in the first slice's metadata (the pre-pass's slices
    # merge them: reports/stats_drive.h)
    pinned = os.path.join(d, "pinned.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_advise"), "pageable", "--stacks", "--pm", pinned], check=True,
                   capture_output=True)
    for paths, name in [((p,), n) for p, n in traces] + [((pinned,), "gen_advise pageable --stacks --pm"),
                                                          ((mem,), "gen_memory --noise leak"),
                                                          ((r0, r1), "two rank traces"), ((streamed,), "gen_diff --settings")]:
        o = same(f"{name}: report", report_run(d, *paths))
        tt.expect(o[2] == 0 and '"runs"' in o[0], f"{name}: report wrote its page: {o[1]!r}")
    # a --step-range no trace has: no steps, the page still made (the
    # pre-pass in slices says why, as one thread's)
    o = same("bigtrace --step-range nosuch: report", report_run(d, big, opts=("--step-range", "nosuch")))
    tt.expect("no NVTX range named 'nosuch'" in json.loads(o[0])["runs"][0]["steps_error"],
              f"--step-range nosuch: the steps' error on the page: {o[1]!r}")
    mem_page = json.loads(same("gen_memory: report", report_run(d, mem))[0])
    tt.expect(any(m["peak_bytes"] > 0 for m in mem_page["runs"][0]["procs"][0]["memory"]),
              "gen_memory: the page has its memory series")
    # (not the bigtrace: its NCCL kernels come more than 8 records late,
    # whose time before a cut is not counted, and the cuts of the slices
    # are not one pass's: stats --threads 3 differs there too)
    os.environ["GPUPROF_UNION_LAG"] = "8"
    o = same("gen_diff --settings, union lag 8: report", report_run(d, streamed))
    busy = json.loads(o[0])["runs"][0]["procs"][0]["devices"][0]["series"]["GPU busy %"]
    tt.expect(sum(v or 0 for v in busy) > 0, "gen_diff --settings, union lag 8: a busy % series")
    del os.environ["GPUPROF_UNION_LAG"]

    # advise's steps ran in the slices; with a lead-in of 1 us every slice
    # after the first starts short of one pass's state: the slice before
    # reads it again (or, where a runtime call and its driver call straddle
    # the lead-in, one engine reads the trace), and the findings are still
    # one thread's
    v = tt.gp("advise", "--threads", "4", "--verbose", big).stderr
    tt.expect("the steps analysis in 4 slices: each went on from the state the one before it ended in" in v,
              f"bigtrace: advise's steps in 4 slices: {v!r}")
    # advise is a view of stats' driver (reports/advise_drive.h): its first
    # pass, with advise's inputs, is the driver's pre-pass, in slices too
    tt.expect("the pre-pass in 4 slices" in v, f"bigtrace: advise's pre-pass in 4 slices: {v!r}")
    os.environ["GPUPROF_STEPS_LEAD"] = "1us"
    v = tt.gp("advise", "--threads", "4", "--verbose", big).stderr
    tt.expect("in 4 slices: " in v and "read again on one thread" in v, f"bigtrace, lead-in 1 us: read again: {v!r}")
    for path, name in ((big, "bigtrace"), (cuts, "gen_cuts")):
        same(f"{name}: advise, lead-in 1 us", gp_run("advise", "--all", "--format", "json", path))
    # a lead-in of 50 ms: on gen_cuts the slices after the first start short
    # of one pass's state, and the slice before goes on over each
    os.environ["GPUPROF_STEPS_LEAD"] = "50ms"
    v = tt.gp("advise", "--threads", "4", "--verbose", cuts).stderr
    tt.expect("in 4 slices: some read again on one thread" in v, f"gen_cuts, lead-in 50 ms: read again: {v!r}")
    same("gen_cuts: advise, lead-in 50 ms", gp_run("advise", "--all", "--format", "json", cuts))
    del os.environ["GPUPROF_STEPS_LEAD"]

    # advise's facts pass runs in the same slices (analysis/advise/advise_slice.h),
    # each engine from a lead-in, its state at its first own record compared
    # with the one before's: on gen_advise's scenarios, whose blocking calls
    # (sync, synccopy, pageable: a window from the call to the next work;
    # alloc-lead: an allocation's window until the host next waits), idle
    # gaps (input, launch) and busy stretches whose GPU-side savings wait for
    # the stretch's end (fp32, underpar) lie across the cuts; with lead-ins of
    # 1 us and 50 ms (short of one pass's state: an engine trusted from one
    # gives other figures on every scenario here) and the default
    facts = []
    for sc in ("sync", "synccopy", "pageable", "alloc-lead", "input", "launch", "fp32", "underpar"):
        path = os.path.join(d, f"adv-{sc}.gpuprof")
        subprocess.run([os.path.join(GEN_DIR, "gen_advise"), sc, "--stacks", path], check=True, capture_output=True)
        facts.append((path, f"gen_advise {sc} --stacks"))
    for lead in (None, "1us", "50ms"):
        if lead:
            os.environ["GPUPROF_STEPS_LEAD"] = lead
        for path, name in facts:
            o = same(f"{name}: advise, lead-in {lead or 'default'}", gp_run("advise", "--all", "--format", "json", path))
            tt.expect(o[2] == 0 and '"findings"' in o[0], f"{name}: advise ran: {o[1]!r}")
            v = tt.gp("advise", "--threads", "4", "--verbose", path).stderr
            tt.expect(re.search(r"the facts in (the steps' pass|a pass of their own) in 4 slices: ", v),
                      f"{name}, lead-in {lead}: facts in 4 slices: {v!r}")
    del os.environ["GPUPROF_STEPS_LEAD"]
    # the facts beside the steps, in the driver's pass (advise_facts.h
    # adv_facts_opts.beside: NVTX steps), in its slices; a warm-up step among
    # the first 64 (gen_steps --steady's first, gen_diff's first 3) has what
    # it gave as counted taken back after the steps (adv_facts_settle); a
    # warm-up run longer (gen_diff's first 70) makes the facts in a pass of
    # their own after the steps; the same findings at every --threads
    v = tt.gp("advise", "--threads", "4", "--verbose", big).stderr
    tt.expect("the facts in the steps' pass in 4 slices: each went on from the state the one before it ended in" in v,
              f"bigtrace: advise's facts in 4 slices, beside the steps: {v!r}")
    steady = os.path.join(d, "steady.gpuprof")
    subprocess.run([os.path.join(GEN_DIR, "gen_steps"), "--steady", "--steps", "60", steady], check=True, capture_output=True)
    for n in (3, 70):
        warm = os.path.join(d, f"warm{n}.gpuprof")
        subprocess.run([os.path.join(GEN_DIR, "gen_diff"), "--steps", "200", "--warmup-steps", str(n), warm], check=True,
                       capture_output=True)
        for path, name, how in ((steady, "gen_steps --steady", "the steps' pass"),
                                (warm, f"gen_diff --warmup-steps {n}", "the steps' pass" if n < 64 else "a pass of their own")):
            o = same(f"{name}: advise", gp_run("advise", "--all", "--format", "json", path))
            tt.expect(f'"warmup":{1 if path == steady else n},' in o[0], f"{name}: warm-up steps: {o[0][:300]!r}")
            v = tt.gp("advise", "--threads", "4", "--verbose", path).stderr
            tt.expect(f"the facts in {how} in 4 slices: " in v, f"{name}: the facts in {how}: {v!r}")

    # the windows: --steps A:B and --range NAME, resolved in slices
    for path, name, sel in ((big, "bigtrace", ("--steps", "20:22")), (big, "bigtrace", ("--steps", "0:0")),
                            (cuts, "gen_cuts", ("--steps", "7:9")), (cuts, "gen_cuts", ("--range", "step 7")),
                            (cuts, "gen_cuts", ("--range", "prefetch 3")),
                            (nonvtx, "gen_steps --no-nvtx", ("--steps", "30:33")),
                            (nvtx, "gen_steps", ("--steps", "2:4", "--since", "0s"))):
        what = f"{name} {' '.join(sel)}"
        o = same(f"{what}: export", export_run(d, path, *sel))
        tt.expect(o[2] == 0 and len(o[0]) > 100, f"{what}: export wrote a window: {o[1]!r}")
        o = same(f"{what}: dump", gp_run("dump", *sel, path))
        tt.expect(o[2] == 0 and len(o[0]) > 100, f"{what}: dump printed records: {o[1]!r}")
        same(f"{what}: stats", gp_run("stats", "--format", "json", "--report", "kernels,nvtx", *sel, path))
    # a selection that names nothing: the usage error of one thread
    o = same("bigtrace --steps 900000:900001: export", export_run(d, big, "--steps", "900000:900001"))
    tt.eq(o[2], 1, "--steps naming no step: exit 1")
    tt.expect("no step numbered" in o[1], f"--steps naming no step: says so: {o[1]!r}")
    o = same("gen_cuts --range nothing: dump", gp_run("dump", "--range", "no such range", cuts))
    tt.eq(o[2], 1, "--range naming no range: exit 1")

    # the window holds the steps asked for: its outermost ranges are the
    # 21st to 23rd train_step ranges of the trace (steps are numbered from
    # 0 by the order of their start; found here from dump at one thread)
    dumped = tt.gp("dump", "--threads", "1", "--json", "--type", "nvtx_range", big).stdout.splitlines()
    steps = sorted(r["start"] for r in map(json.loads, dumped) if r["message"] == "train_step")
    tt.expect(len(steps) > 100, f"bigtrace: its train_step ranges: {len(steps)}")
    ev = json.loads(export_run(d, big, "--steps", "20:22")(16)[0])
    got = sorted(round(e["ts"] * 1000) for e in ev["traceEvents"]
                 if e.get("cat") == "nvtx" and e.get("name") == "train_step")
    tt.eq(got, steps[20:23], "the export of --steps 20:22 at 16 threads: the steps numbered 20, 21 and 22")

    # a truncated trace: not cut, one thread's messages and exit status
    cut = os.path.join(d, "cut.gpuprof")
    shutil.copy(big, cut)
    with open(cut, "r+b") as f:
        f.truncate(os.path.getsize(big) * 2 // 3)
    for cmd in (("advise",), ("steps",)):
        same(f"truncated: {cmd[0]}", gp_run(*cmd, cut))
    same("truncated: report", report_run(d, cut))
    same("truncated: export --steps 20:22", export_run(d, cut, "--steps", "20:22"))

tt.finish()
