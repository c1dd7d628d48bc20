#!/usr/bin/env python3
"""test_scripts.py — CPU self-test of the GPU-side scripts (no GPU needed).

The GPU suite, the overhead bench and the fidelity cross-check only run on
the GPU machine, where a bug in their checks would waste scarce device time
or, worse, pass a broken trace.  This runs their logic on synthetic traces
here: a correct trace must pass, each kind of corruption must fail.
"""
import contextlib
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench", "overhead"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import synth  # noqa: E402

failures = []


def expect(name, cond, detail=""):
    print(f"{'ok  ' if cond else 'FAIL'} {name} {detail}")
    if not cond:
        failures.append(name)


def write_jsonl(d, name, recs):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return p


def check_trace(*args):
    r = subprocess.run([sys.executable, os.path.join(HERE, "check_trace.py"), *args],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def test_check_trace(d):
    recs, exp = synth.vector_add()
    ef = os.path.join(d, "va.stderr")
    with open(ef, "w") as f:
        f.write("some noise\n" + "\n".join(exp) + "\n")
    good = write_jsonl(d, "va.jsonl", recs)
    rc, out = check_trace("--json", good, "--expect", ef)
    expect("vector_add: correct trace passes", rc == 0, out if rc else "")
    expect("vector_add: every expectation evaluated", "SKIP" not in out, out if "SKIP" in out else "")

    # Through a fake gpuprof binary: the dump subprocess path.
    fake = os.path.join(d, "gpuprof")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\n[ "$1" = dump ] && [ "$2" = --json ] && exec cat "$3"\nexit 3\n')
    os.chmod(fake, 0o755)
    rc, out = check_trace("--gpuprof", fake, good, "--expect", ef)
    expect("vector_add via gpuprof dump passes", rc == 0, out if rc else "")
    rc, out = check_trace("--gpuprof", os.path.join(d, "missing"), good)
    ok = rc == 2 and "not found" in out
    expect("missing gpuprof is a clear error", ok, "" if ok else out)

    def mutated(name, fn, must):
        rs = json.loads(json.dumps(recs))
        fn(rs)
        p = write_jsonl(d, name + ".jsonl", rs)
        rc, out = check_trace("--json", p, "--expect", ef)
        expect(f"vector_add: {name} fails", rc == 1 and must in out, out if rc != 1 or must not in out else "")

    def drop_kernel(rs):
        i = next(i for i, r in enumerate(rs) if r.get("demangled", "").startswith("vecAdd"))
        del rs[i]
    mutated("missing kernel", drop_kernel, "FAIL kernels.vecAdd")
    mutated("dropped records", lambda rs: rs.append(
        {"type": "dropped", "pid": 100, "count": 3, "where": "ring"}), "FAIL no dropped")

    def early(rs):
        k = next(r for r in rs if r["type"] == "kernel")
        k["start"] -= 10**6
        k["end"] = k["start"] + k["dur"]
    mutated("kernel before its launch", early, "FAIL GPU op starts after")

    def orphan(rs):
        next(r for r in rs if r["type"] == "kernel")["corr"] = 999999
    mutated("orphan kernel", orphan, "FAIL kernel correlation")

    def overlap(rs):
        ks = [r for r in rs if r["type"] == "kernel" and r["stream"] == 9]
        ks[1]["start"] = ks[0]["start"] + 10
    mutated("overlapping kernels on a stream", overlap, "FAIL kernels on one stream")

    def wrong_bytes(rs):
        next(r for r in rs if r["type"] == "memcpy" and r["kind"] == "DtoH")["bytes"] -= 4
    mutated("wrong memcpy bytes", wrong_bytes, "FAIL memcpy.DtoH.bytes")

    def bad_nest(rs):
        r = next(r for r in rs if r.get("message") == "launch_loop")
        r["start"] -= 10**9
    mutated("range outside its parent", bad_nest, "FAIL NVTX nesting")

    # Training-step mode.
    tr = write_jsonl(d, "train.jsonl", synth.training(steps=6))
    rc, out = check_trace("--json", tr, "--steps", "6", "--skip", "1", "--nested")
    ok = rc == 0 and "kernels_per_step=6" in out
    expect("steps: correct trace passes", ok, "" if ok else out)
    rc, out = check_trace("--json", tr, "--steps", "6", "--skip", "1", "--nested", "--same-thread")
    ok = "kernels_per_step=4" in out
    expect("steps: --same-thread leaves the backward thread's kernels out", ok, "" if ok else out)
    rc, out = check_trace("--json", tr, "--steps", "6", "--skip", "0")
    ok = rc == 1 and "step 0: missing {} extra {'zero_state" in out
    expect("steps: step 0's extra kernel fails without --skip", ok, "" if ok else out)
    rc, out = check_trace("--json", tr, "--steps", "7", "--skip", "1")
    ok = rc == 1 and "FAIL step ranges" in out
    expect("steps: wrong step count fails", ok, "" if ok else out)
    rs = synth.training(steps=6)
    i = max(i for i, r in enumerate(rs) if r.get("demangled") == "relu(float*)")
    del rs[i]
    p = write_jsonl(d, "train_bad.jsonl", rs)
    rc, out = check_trace("--json", p, "--steps", "6", "--skip", "1", "--nested")
    ok = rc == 1 and "step 5: missing {'relu" in out
    expect("steps: a step missing a kernel fails", ok, "" if ok else out)
    rs = [r for r in synth.training(steps=6) if not (r.get("message") == "backward")]
    p = write_jsonl(d, "train_nonest.jsonl", rs)
    rc, out = check_trace("--json", p, "--steps", "6", "--skip", "1", "--nested")
    ok = rc == 1 and "FAIL nested 'backward'" in out
    expect("steps: missing nested range fails", ok, "" if ok else out)


def test_truncated_and_shared_corr(d):
    # A killed job: steps 8-9 lost their kernels, step 7 half of them.
    rs = synth.training(steps=10)
    step_start = {int(r["message"].split()[1]): r["start"] for r in rs
                  if r.get("message", "").startswith("step ")}
    apis = {r["corr"]: r for r in rs if r["type"] == "api"}
    cut = step_start[7] + (step_start[8] - step_start[7]) // 2
    rs = [r for r in rs if not (r["type"] == "kernel" and apis[r["corr"]]["start"] > cut)]
    p = write_jsonl(d, "killed.jsonl", rs)
    rc, out = check_trace("--json", p, "--step-mode", "--min-steps", "5", "--skip", "1",
                          "--allow-truncated")
    ok = rc == 0 and "2 trailing step(s)" in out and "7 steps" in out
    expect("truncated: whole steps before the cut pass", ok, "" if ok else out)
    rc, out = check_trace("--json", p, "--step-mode", "--min-steps", "8", "--skip", "1",
                          "--allow-truncated")
    expect("truncated: too few whole steps fails", rc == 1, "" if rc == 1 else out)
    # Two ranks (two pids) in one dump: each process's steps checked.
    r0 = synth.training(steps=4)
    r1 = [dict(r, pid=200) for r in synth.training(steps=4)]
    p = write_jsonl(d, "ranks.jsonl", r0 + r1)
    rc, out = check_trace("--json", p, "--each-pid", "--min-pids", "2", "--steps", "4", "--skip", "1")
    ok = rc == 0 and "--- process 200" in out and out.count("PASS step ranges") == 2
    expect("each-pid: two ranks pass", ok, "" if ok else out)
    rc, out = check_trace("--json", p, "--each-pid", "--min-pids", "3", "--steps", "4", "--skip", "1")
    expect("each-pid: too few ranks fails", rc == 1, "" if rc == 1 else out)
    # A driver call sharing its runtime call's correlation id: counted once.
    rs = synth.training(steps=4)
    extra = []
    for r in rs:
        if r["type"] == "api" and r["name"].startswith("cudaLaunchKernel"):
            extra.append(dict(r, name="cuLaunchKernel", domain="driver", start=r["start"] + 10))
    p = write_jsonl(d, "shared.jsonl", rs + extra)
    rc, out = check_trace("--json", p, "--steps", "4", "--skip", "1", "--nested")
    ok = rc == 0 and "kernels_per_step=6" in out
    expect("shared runtime/driver correlation id counted once", ok, "" if ok else out)


def test_summarize(d):
    import summarize
    rows = []
    def row(rep, cfg, metric, ok=1, rss=1000, tb="", ev=""):
        rows.append({"rep": str(rep), "workload": "mnist", "config": cfg, "ok": str(ok), "rc": "0",
                     "metric_name": "step_ms_mean", "metric": str(metric), "step_ms_median": "",
                     "step_ms_mean": str(metric), "total_s": "", "loss": "", "wall_s": "1",
                     "maxrss_kb": str(rss), "trace_bytes": str(tb), "events": str(ev), "note": ""})
    # Drift between repetitions: ratios must be taken within a repetition.
    row(1, "bare", 2.0); row(1, "floor", 2.2); row(1, "gpuprof", 3.0, tb=1000, ev=100)
    row(2, "bare", 4.0); row(2, "floor", 4.4); row(2, "gpuprof", 5.0, rss=3048)
    row(3, "gpuprof", 9.0, ok=0)
    text = summarize.summarize(rows)
    line = next((l for l in text.splitlines() if l.startswith("| gpuprof |")), "")
    cells = [c.strip() for c in line.strip("|").split("|")]
    ok = (len(cells) == 13 and cells[1] == "2/3" and cells[2] == "4.000" and cells[4] == "1.375"
          and cells[12] == "10.0" and "failed: rep 3 gpuprof" in text)
    expect("summarize: per-repetition ratios, failed runs listed", ok, "" if ok else text)


def test_pool(d):
    """Several calls pooled: rep numbers repeat across calls and must not mix."""
    import pool
    head = "rep,workload,config,ok,rc,metric_name,metric\n"
    paths = []
    for n, body in enumerate([
            # call 1: rep 1 bare 2.0, gpuprof 2.2 (1.1x); rep 2 bare 4.0, gpuprof 4.8 (1.2x)
            "1,mnist,bare,1,0,m,2.0\n1,mnist,gpuprof,1,0,m,2.2\n1,mnist,floor,1,0,m,2.0\n"
            "2,mnist,bare,1,0,m,4.0\n2,mnist,gpuprof,1,0,m,4.8\n2,mnist,floor,1,0,m,4.0\n",
            # call 2: rep 1 again (a different repetition): bare 10, gpuprof 13 (1.3x);
            # a failed run and another workload are left out; rep 2 has no bare run
            "1,mnist,bare,1,0,m,10\n1,mnist,gpuprof,1,0,m,13\n1,mnist,floor,0,1,m,\n"
            "1,resnet50,bare,1,0,m,1\n1,resnet50,gpuprof,1,0,m,9\n"
            "2,mnist,gpuprof,1,0,m,7\n2,mnist,floor,1,0,m,5\n"]):
        paths.append(os.path.join(d, "pool%d.csv" % n))
        with open(paths[-1], "w") as f:
            f.write(head + body)
    r = pool.pool(paths, "mnist")
    g = r["gpuprof"]
    ok = (sorted(round(x, 3) for x in g["bare"]) == [1.1, 1.2, 1.3]
          and sorted(round(x, 3) for x in g["floor"]) == [1.1, 1.2, 1.4]
          and r["floor"]["bare"] == [1.0, 1.0] and "bare" not in r)
    expect("pool: ratios within each call's repetition, failed runs and other workloads left out", ok, repr(dict(r)))
    line = next((l for l in pool.table(r).splitlines() if l.startswith("| gpuprof |")), "")
    want = "| gpuprof | 1.200 (1.100–1.300; 3) | 1.200 (1.100–1.400; 3) |"
    expect("pool: table row", line == want, "got %r" % line)


def test_summarize_toggled(d):
    """The in-process A/B table: medians over reps, per-rep Δ/ratio over floor."""
    import summarize
    rows = []
    def row(rep, cfg, on, off, ratio, delta, ok=1):
        rows.append({"rep": str(rep), "workload": "empty_kernel", "config": cfg, "ok": str(ok),
                     "rc": "0", "metric_name": "us_per_launch", "metric": str((on + off) / 2),
                     "step_ms_median": "", "step_ms_mean": "", "total_s": "", "loss": "",
                     "wall_s": "1", "maxrss_kb": "1000", "trace_bytes": "", "events": "",
                     "note": "", "ab_pairs": "10", "ab_on": str(on), "ab_off": str(off),
                     "ab_ratio": str(ratio), "ab_delta": str(delta)})
    # Rep 2 is a "lucky" process (everything 2x faster): only same-rep
    # comparisons with the floor cancel that.
    row(1, "bare", 4.0, 4.0, 1.00, 0.00); row(1, "floor", 6.0, 4.0, 1.50, 2.00)
    row(1, "gpuprof", 6.4, 4.0, 1.60, 2.40)
    row(2, "bare", 2.0, 2.0, 1.01, 0.02); row(2, "floor", 3.0, 2.0, 1.50, 1.00)
    row(2, "gpuprof", 3.3, 2.0, 1.65, 1.30)
    row(3, "bare", 4.0, 4.0, 0.99, -0.04); row(3, "floor", 6.0, 4.0, 1.20, 2.00)
    row(3, "gpuprof", 6.0, 4.0, 1.50, 2.00)
    row(4, "gpuprof", 9.0, 4.0, 2.25, 5.00, ok=0)  # failed: never averaged in
    text = summarize.summarize(rows)
    lines = text.splitlines()
    has = any(l.startswith("In-process A/B") for l in lines)
    expect("summarize A/B: table present", has, "" if has else text)

    def ab_cells(cfg):
        i = next((k for k, l in enumerate(lines) if l.startswith("In-process A/B")), len(lines))
        line = next((l for l in lines[i:] if l.startswith(f"| {cfg} |")), "")
        return [c.strip() for c in line.strip("|").split("|")]
    g, f, b = ab_cells("gpuprof"), ab_cells("floor"), ab_cells("bare")
    # gpuprof: on median(6.4, 3.3, 6.0) = 6.0; off 4.0; ratio median(1.6, 1.65, 1.5) = 1.6;
    # Δ median(2.4, 1.3, 2.0) = 2.0; Δ over floor median(0.4, 0.3, 0.0) = 0.3;
    # ratio over floor median(1.6/1.5, 1.65/1.5, 1.5/1.2) = median(1.0667, 1.1, 1.25) = 1.1
    want_g = ["gpuprof", "3", "6.000", "4.000", "1.6000", "1.5000–1.6500", "2.000", "0.300", "1.1000"]
    expect("summarize A/B: gpuprof row", g == want_g, "" if g == want_g else f"got {g}\n{text}")
    expect("summarize A/B: floor row has no over-floor cells",
           f[:2] == ["floor", "3"] and f[4] == "1.5000" and f[7:] == ["–", "–"], f"got {f}")
    # bare: ratio median(1.00, 1.01, 0.99) = 1.0 (the method's bias); Δ over
    # floor median(0-2, 0.02-1, -0.04-2) = -2.0; ratio over floor
    # median(1/1.5, 1.01/1.5, 0.99/1.2) = median(0.6667, 0.6733, 0.825) = 0.6733
    expect("summarize A/B: bare row", b[4] == "1.0000" and b[7:] == ["-2.000", "0.6733"], f"got {b}")
    plain_ok = any(l.startswith("| gpuprof | 3/4 |") for l in lines)
    expect("summarize A/B: the plain table is still there", plain_ok, "" if plain_ok else text)
    # Rows without ab_* (plain runs): no A/B table.
    plain = [dict(r, ab_ratio="", ab_on="", ab_off="", ab_delta="", ab_pairs="") for r in rows]
    expect("summarize A/B: no table for plain runs",
           "In-process A/B" not in summarize.summarize(plain), "")


def test_runone_ab_columns(d):
    """runone.py carries a job's ab_* RESULT fields into the CSV's ab_* columns."""
    csvp = os.path.join(d, "ab.csv")
    for rep, line in ((1, "RESULT launches=100 us_per_launch=4.5 total_s=0.1 ab_pairs=5 "
                          "ab_on_us=5.0 ab_off_us=4.0 ab_ratio=1.25 ab_delta_us=1.0"),
                      (2, "RESULT steps=20 step_ms_median=2 step_ms_mean=2.1 total_s=1 loss=0.5 "
                          "ab_pairs=5 ab_on_ms=2.2 ab_off_ms=2.0 ab_ratio=1.1 ab_delta_ms=0.2"),
                      (3, "RESULT launches=100 us_per_launch=4.5 total_s=0.1")):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "overhead", "runone.py"),
                            "--csv", csvp, "--dir", os.path.join(d, f"run{rep}"), "--rep", str(rep),
                            "--workload", "w", "--config", "floor", "--", "echo", line],
                           capture_output=True, text=True, timeout=60)
        expect(f"runone: job {rep} ran", r.returncode == 0, "" if r.returncode == 0 else r.stdout + r.stderr)
    with open(csvp, newline="") as f:
        got = list(csv.DictReader(f))
    ab = [[r.get(k) for k in ("ab_pairs", "ab_on", "ab_off", "ab_ratio", "ab_delta")] for r in got]
    ok = (len(got) == 3 and ab[0] == ["5", "5.0", "4.0", "1.25", "1.0"]
          and ab[1] == ["5", "2.2", "2.0", "1.1", "0.2"] and ab[2] == [""] * 5
          and got[0]["metric"] == "4.5" and got[1]["metric"] == "2.1")
    expect("runone: ab_* columns (µs and ms), empty for a plain run", ok, "" if ok else str(got))


def test_toggle_schedule():
    import steploop
    expect("steploop imports without torch", "torch" not in sys.modules, "")
    got = steploop.toggle_schedule(4)
    expect("toggle_schedule(4) is ABBA",
           got == [True, False, False, True, True, False, False, True], str(got))
    expect("toggle_schedule(0) is empty", steploop.toggle_schedule(0) == [], "")
    sched = steploop.toggle_schedule(5)
    pairs_ok = all(sched[2 * i] != sched[2 * i + 1] for i in range(5))
    expect("toggle_schedule: each pair one on, one off", pairs_ok, str(sched))
    st = steploop.pair_stats([1.2, 2.6, 1.3, 9.0], [1.0, 2.0, 1.0, 3.0])
    # ratios 1.2, 1.3, 1.3, 3.0 -> 1.3; deltas 0.2, 0.6, 0.3, 6.0 -> 0.45
    ok = (abs(st["on"] - 1.95) < 1e-9 and abs(st["off"] - 1.5) < 1e-9
          and abs(st["ratio"] - 1.3) < 1e-9 and abs(st["delta"] - 0.45) < 1e-9)
    expect("pair_stats medians over pairs", ok, str(st))
    try:
        steploop.pair_stats([1.0, 2.0], [1.0])
        expect("pair_stats rejects unpaired blocks", False, "no error")
    except ValueError:
        expect("pair_stats rejects unpaired blocks", True, "")
    a = types.SimpleNamespace(steps=7, toggle_pairs=3, toggle_steps=50)
    steploop.apply_toggle_args(a)
    expect("apply_toggle_args: steps = 2NK", a.steps == 300, str(a))
    a = types.SimpleNamespace(steps=7)  # a caller without the toggle options
    steploop.apply_toggle_args(a)
    expect("apply_toggle_args: no toggle options leaves steps", a.steps == 7 and a.toggle_pairs == 0,
           str(a))
    try:
        steploop.apply_toggle_args(types.SimpleNamespace(steps=1, toggle_pairs=2, toggle_steps=0))
        expect("apply_toggle_args: pairs without steps is an error", False, "no error")
    except SystemExit as e:
        expect("apply_toggle_args: pairs without steps is an error", "toggle-steps" in str(e), str(e))


def fake_torch(events, state):
    """Just enough of torch for steploop.run_steps on a "cuda" device: the
    profiler calls flip state["on"] and are logged, like synchronize and the
    NVTX ranges, in events."""
    def sync():
        events.append("sync")
    def start():
        events.append("start")
        state["on"] = True
    def stop():
        events.append("stop")
        state["on"] = False
    nvtx = types.SimpleNamespace(range_push=lambda n: events.append(("push", n)),
                                 range_pop=lambda: events.append("pop"))
    cuda = types.SimpleNamespace(synchronize=sync, is_available=lambda: True, manual_seed_all=id,
                                 profiler=types.SimpleNamespace(start=start, stop=stop), nvtx=nvtx)
    return types.SimpleNamespace(cuda=cuda, device=lambda s: types.SimpleNamespace(type=s),
                                 manual_seed=id)


@contextlib.contextmanager
def faked_steploop(steploop, events, state, fake_time):
    """steploop with fake_torch(events, state) as torch and fake_time as its
    time module, restored afterwards."""
    saved_torch, saved_time = sys.modules.get("torch"), steploop.time
    sys.modules["torch"] = fake_torch(events, state)
    steploop.time = fake_time
    try:
        yield
    finally:
        steploop.time = saved_time
        if saved_torch is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved_torch


def test_steploop_toggled():
    """run_steps --toggle-pairs 3 --toggle-steps 2 with a fake torch and a
    fake clock: the block order, the profiler calls between synchronizes,
    the step numbering and the RESULT numbers."""
    import argparse
    import contextlib
    import steploop
    p = steploop.add_common_args(argparse.ArgumentParser(), steps=999, warmup=2)
    args = p.parse_args(["--toggle-pairs", "3", "--toggle-steps", "2", "--no-nested-nvtx"])
    events, state, clock = [], {"on": False}, {"t": 100.0}
    # ms/step of each block (b0..b5 = on, off, off, on, on, off); pairs:
    # (1.2, 1.0) (2.6, 2.0) (1.3, 1.0) -> ratio 1.3, delta 0.3, on 1.3, off 1.0
    block_ms = [1.2, 1.0, 2.0, 2.6, 1.3, 1.0]
    seen = []

    def step(i, ann):
        seen.append((i, state["on"]))
        b = (i - args.warmup) // args.toggle_steps
        clock["t"] += (block_ms[b] if b >= 0 else 50.0) / 1e3  # warm-up: slow, untimed
        return types.SimpleNamespace(item=lambda: 0.25)

    out = io.StringIO()
    with faked_steploop(steploop, events, state,
                        types.SimpleNamespace(perf_counter=lambda: clock["t"], time=lambda: 0.0)):
        steploop.setup(args)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            res = steploop.run_steps(args, step)
    expect("toggled: steps = 2NK", args.steps == 12 and res["steps"] == 12, str(res))
    want_seen = [(0, False), (1, False)] + [
        (2 + b * 2 + j, on) for b, on in enumerate([True, False, False, True, True, False])
        for j in range(2)]
    expect("toggled: warm-up off, blocks in ABBA order", seen == want_seen, str(seen))
    calls = [e for e in events if e in ("sync", "start", "stop")]
    # Before each block: sync, then start/stop only when the state changes;
    # after each block: sync; the last (off) block leaves nothing to stop.
    want_calls = (["sync", "start", "sync"] + ["sync", "stop", "sync"] + ["sync", "sync"]
                  + ["sync", "start", "sync"] + ["sync", "sync"] + ["sync", "stop", "sync"])
    expect("toggled: profiler calls between synchronizes", calls == want_calls, str(calls))
    names = [e[1] for e in events if isinstance(e, tuple)]
    expect("toggled: NVTX 'step i' for warm-up and all blocks",
           names == [f"step {i}" for i in range(14)], str(names))
    line = out.getvalue().strip()
    f = dict(t.split("=", 1) for t in line.split()[1:])
    ok = (line.startswith("RESULT ") and out.getvalue().count("\n") == 1 and f["steps"] == "12"
          and f["ab_pairs"] == "3" and f["ab_on_ms"] == "1.3000" and f["ab_off_ms"] == "1.0000"
          and f["ab_ratio"] == "1.3000" and f["ab_delta_ms"] == "0.3000"
          and f["step_ms_mean"] == f"{sum(block_ms) / 6:.4f}"
          and f["step_ms_median"] == f"{statistics.median(block_ms):.4f}" and f["loss"] == "0.250000")
    expect("toggled: RESULT line", ok, line)


def test_steploop_stall(d):
    """--stall-at 2 --stall-s 0.5 --step-times FILE on a plain run (fake
    torch, fake clock): the sleep happens once, inside step 2's NVTX range
    after its work; FILE has each step's start on the clock."""
    import argparse
    import contextlib
    import steploop
    path = os.path.join(d, "steps.txt")
    p = steploop.add_common_args(argparse.ArgumentParser(), steps=4, warmup=1)
    args = p.parse_args(["--stall-at", "2", "--stall-s", "0.5", "--step-times", path, "--no-nested-nvtx",
                         "--device", "cpu"])
    events, state, clock = [], {"on": False}, {"t": 10.0}

    def step(i, ann):
        events.append(("work", i))
        clock["t"] += 0.001
        return types.SimpleNamespace(item=lambda: 0.5)

    def sleep(s):
        events.append(("sleep", s))
        clock["t"] += s

    with faked_steploop(steploop, events, state,
                        types.SimpleNamespace(perf_counter=lambda: clock["t"], time=lambda: 0.0, sleep=sleep)):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            steploop.run_steps(args, step)
    i = events.index(("sleep", 0.5)) if ("sleep", 0.5) in events else -1
    ok = (sum(1 for e in events if e[0] == "sleep") == 1 and i > 0 and events[i - 1] == ("work", 2)
          and events[i + 1] == "pop")
    expect("stall: one sleep inside step 2, after its work", ok, str(events))
    rows = [l.split() for l in open(path)] if os.path.exists(path) else []
    starts = [float(r[1]) for r in rows]
    ok = ([int(r[0]) for r in rows] == list(range(5)) and abs(starts[3] - starts[2] - 0.501) < 1e-6
          and abs(starts[1] - starts[0] - 0.001) < 1e-6)
    expect("step-times: every step's start; the stall is step 2's period", ok, str(rows))


# struct fake_cupti_call (tests/fake/fake_api.h) for the ctypes drivers below
FAKE_CALL = r"""
class Call(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_int), ("cbid", ctypes.c_uint32), ("func", ctypes.c_char_p),
                ("symbol", ctypes.c_char_p), ("params", ctypes.c_void_p), ("ret", ctypes.c_int),
                ("correlation_id", ctypes.c_uint32), ("correlation_data", ctypes.c_uint64),
                ("start", ctypes.c_uint64), ("tid", ctypes.c_uint32)]
"""

FLOOR_DRIVER = r"""
import ctypes, os, sys
fake, floor, log = sys.argv[1:4]
def mark(s):
    with open(log, "a") as f:
        f.write(f"{os.getpid()} mark {s}\n")
""" + FAKE_CALL + r"""
cupti = ctypes.CDLL(fake, mode=ctypes.RTLD_GLOBAL)
mark("load")
ctypes.CDLL(floor, mode=ctypes.RTLD_GLOBAL)
mark("loaded")
DRV, RT = 1, 2
def call(domain, cbid, name, nested=None):
    c = Call(domain, cbid, name.encode(), None, None, 0, 0, 0, 0, 0)
    mark(name + " enter")
    cupti.fake_cupti_call_enter(ctypes.byref(c))
    if nested:
        nested()
    mark(name + " exit")
    cupti.fake_cupti_call_exit(ctypes.byref(c))
    mark(name + " done")
drv_start = lambda: call(DRV, 308, "cuProfilerStart")
drv_stop = lambda: call(DRV, 309, "cuProfilerStop")
call(RT, 211, "cudaLaunchKernel_v7000")
call(RT, 171, "cudaProfilerStart_v4000", drv_start)
call(RT, 171, "cudaProfilerStart_v4000", drv_start)
call(RT, 172, "cudaProfilerStop_v4000", drv_stop)
drv_start()
drv_stop()
"""


def floor_setup(d, what, driver_name, driver_text):
    """The fake libcupti and libcupti_floor.so of the build B, and the ctypes
    driver script written to d/driver_name; (None, None, None) when a bare
    run of this script finds the libraries unbuilt (under make test, which
    builds both, that is a failure)."""
    b = os.path.join(ROOT, os.environ.get("B", "build"))
    fake = os.path.join(b, "tests", "fake", "libcupti.so.13")
    floor = os.path.join(b, "lib", "libcupti_floor.so")
    missing = [p for p in (fake, floor) if not os.path.exists(p)]
    if missing:
        expect(f"{what}: built (make all and the fake libcupti)", "B" not in os.environ,
               f"missing {missing}")
        print(f"skip {what} test: {missing} not built")
        return None, None, None
    drv = os.path.join(d, driver_name)
    with open(drv, "w") as f:
        f.write(driver_text)
    return fake, floor, drv


def test_floor_capture(d):
    """cupti_floor.c under CUPTI_FLOOR_CAPTURE=1, against the fake libcupti:
    kinds off at load, on at the start call's exit, off at the stop call's
    entry, once per runtime+driver pair; without it, on at load and no
    subscription."""
    fake, floor, drv = floor_setup(d, "floor capture", "floor_driver.py", FLOOR_DRIVER)
    if not fake:
        return

    def run(capture):
        log = os.path.join(d, f"floor-{capture}.log")
        env = dict(os.environ, CUPTI_FLOOR_LIB=fake, FAKE_CUPTI_LOG=log)
        env.pop("CUPTI_FLOOR_CAPTURE", None)
        if capture:
            env["CUPTI_FLOOR_CAPTURE"] = "1"
        r = subprocess.run([sys.executable, drv, fake, floor, log], env=env, capture_output=True,
                           text=True, timeout=60)
        with open(log) as f:
            ev = [l.split(None, 1)[1].strip() for l in f]
        return r, [e for e in ev if e != "first-launch"]

    r, ev = run(True)
    want = ["mark load", "subscribe", "mark loaded",
            "mark cudaLaunchKernel_v7000 enter", "mark cudaLaunchKernel_v7000 exit",
            "mark cudaLaunchKernel_v7000 done",
            "mark cudaProfilerStart_v4000 enter", "mark cuProfilerStart enter",
            "mark cuProfilerStart exit",
            "activity-enable 10", "activity-enable 1", "activity-enable 2",
            "mark cuProfilerStart done", "mark cudaProfilerStart_v4000 exit",
            "mark cudaProfilerStart_v4000 done",
            "mark cudaProfilerStart_v4000 enter", "mark cuProfilerStart enter",
            "mark cuProfilerStart exit", "mark cuProfilerStart done",
            "mark cudaProfilerStart_v4000 exit", "mark cudaProfilerStart_v4000 done",
            "mark cudaProfilerStop_v4000 enter",
            "activity-disable 10", "activity-disable 1", "activity-disable 2",
            "mark cuProfilerStop enter", "mark cuProfilerStop exit", "mark cuProfilerStop done",
            "mark cudaProfilerStop_v4000 exit", "mark cudaProfilerStop_v4000 done",
            "mark cuProfilerStart enter", "mark cuProfilerStart exit",
            "activity-enable 10", "activity-enable 1", "activity-enable 2",
            "mark cuProfilerStart done",
            "mark cuProfilerStop enter",
            "activity-disable 10", "activity-disable 1", "activity-disable 2",
            "mark cuProfilerStop exit", "mark cuProfilerStop done", "flush-all"]
    ok = r.returncode == 0 and ev == want
    expect("floor capture: kinds follow cudaProfilerStart/Stop", ok, "" if ok else "\n".join(ev) + r.stderr)
    expect("floor capture: exit line counts 2 captures", "captures=2" in r.stderr, r.stderr)
    r, ev = run(False)
    ok = (r.returncode == 0 and "subscribe" not in ev
          and ev[:5] == ["mark load", "activity-enable 10", "activity-enable 1", "activity-enable 2",
                         "mark loaded"]
          and not any(e.startswith("activity-disable") for e in ev) and "captures=" not in r.stderr)
    expect("floor without CUPTI_FLOOR_CAPTURE: on from load, no subscription", ok,
           "" if ok else "\n".join(ev) + r.stderr)


FLOOR_API_DRIVER = r"""
import ctypes, sys
fake, floor = sys.argv[1:3]
""" + FAKE_CALL + r"""
cupti = ctypes.CDLL(fake, mode=ctypes.RTLD_GLOBAL)
ctypes.CDLL(floor, mode=ctypes.RTLD_GLOBAL)
DRV, RT = 1, 2
def cbid(dom, want):
    name = ctypes.c_char_p()
    for i in range(1, 4096):
        if cupti.cuptiGetCallbackName(dom, i, ctypes.byref(name)) == 0 and name.value == want:
            return i
    raise SystemExit(f"no cbid for {want}")
watch = [(RT, cbid(RT, b"cudaLaunchKernel_v7000")), (DRV, cbid(DRV, b"cuLaunchKernel")),
         (RT, cbid(RT, b"cudaGetDevice_v3020"))]
def state(tag):
    print(tag, " ".join(str(cupti.fake_cupti_callback_enabled(d, c)) for d, c in watch), flush=True)
def call(domain, cb, name):
    c = Call(domain, cb, name, None, None, 0, 0, 0, 0, 0)
    cupti.fake_cupti_call_enter(ctypes.byref(c))
    cupti.fake_cupti_call_exit(ctypes.byref(c))
state("loaded")
call(RT, watch[0][1], b"cudaLaunchKernel_v7000")
call(RT, cbid(RT, b"cudaProfilerStart_v4000"), b"cudaProfilerStart_v4000")
state("started")
call(RT, watch[0][1], b"cudaLaunchKernel_v7000")
call(DRV, watch[1][1], b"cuLaunchKernel")
call(RT, cbid(RT, b"cudaProfilerStop_v4000"), b"cudaProfilerStop_v4000")
state("stopped")
"""


def test_floor_api(d):
    """CUPTI_FLOOR_API: empty callbacks on gpuprof's default set (by name:
    launches yes, cudaGetDevice no), driver domain only with =default, and
    under CUPTI_FLOOR_CAPTURE switched with the activity kinds."""
    fake, floor, drv = floor_setup(d, "floor api", "floor_api_driver.py", FLOOR_API_DRIVER)
    if not fake:
        return

    def run(api, capture):
        env = dict(os.environ, CUPTI_FLOOR_LIB=fake, CUPTI_FLOOR_API=api)
        env.pop("CUPTI_FLOOR_CAPTURE", None)
        env.pop("FAKE_CUPTI_LOG", None)
        if capture:
            env["CUPTI_FLOOR_CAPTURE"] = "1"
        r = subprocess.run([sys.executable, drv, fake, floor], env=env, capture_output=True,
                           text=True, timeout=60)
        return r, r.stdout.split("\n")[:3]

    # columns: cudaLaunchKernel, cuLaunchKernel, cudaGetDevice
    r, st = run("default", True)
    ok = r.returncode == 0 and st == ["loaded 0 0 0", "started 1 1 0", "stopped 0 0 0"]
    expect("floor api=default under capture: launch callbacks only inside the range", ok,
           "" if ok else r.stdout + r.stderr)
    n = re.search(r"api_cbids=(\d+)", r.stderr)
    expect("floor api: exit line counts the default set", n is not None and int(n.group(1)) > 20,
           r.stderr)
    expect("floor api: the range still switches the kinds", "captures=1" in r.stderr, r.stderr)
    r, st = run("runtime", False)
    ok = r.returncode == 0 and st == ["loaded 1 0 0", "started 1 0 0", "stopped 1 0 0"]
    expect("floor api=runtime without capture: runtime set on from load, no driver callbacks", ok,
           "" if ok else r.stdout + r.stderr)


def test_crosscheck(d):
    def run(name, g_recs, k_doc, must_fail=None):
        gp = write_jsonl(d, name + ".jsonl", g_recs)
        kp = os.path.join(d, name + ".kineto.json")
        with open(kp, "w") as f:
            json.dump(k_doc, f)
        r = subprocess.run([sys.executable, os.path.join(HERE, "crosscheck.py"), "--compare", gp, kp,
                            "--skip", "1", "--warmup", "2"], capture_output=True, text=True, timeout=120)
        out = r.stdout + r.stderr
        if must_fail is None:
            ok = r.returncode == 0 and "crosscheck: 10 passed, 0 failed" in out
        else:
            ok = r.returncode == 1 and f"FAIL offline: {must_fail}" in out
        expect(f"crosscheck: {name}", ok, "" if ok else out)

    recs = synth.training(steps=6)
    run("identical runs pass", recs, synth.to_kineto(recs))
    # Run-to-run noise inside the tolerances still passes: +1.5 % on everything.
    noisy = synth.training(steps=6, kdur=lambda i, n: 5075)
    run("1.5 % slower kernels pass", recs, synth.to_kineto(noisy))
    slow = synth.training(steps=6, kdur=lambda i, n: 9000 if n == "relu(float*)" else 5000)
    doc = synth.to_kineto(slow)
    # relu 4 µs slower: outside max(5 %, 2 µs); total time +13 %: both fail.
    gp = write_jsonl(d, "slow.jsonl", recs)
    r = subprocess.run([sys.executable, os.path.join(HERE, "crosscheck.py"), "--compare", gp,
                        os.path.join(d, "x.json"), "--skip", "1"], capture_output=True, text=True)
    expect("crosscheck: unreadable Kineto file is an error", r.returncode != 0, "")
    with open(os.path.join(d, "slow.kineto.json"), "w") as f:
        json.dump(doc, f)
    r = subprocess.run([sys.executable, os.path.join(HERE, "crosscheck.py"), "--compare", gp,
                        os.path.join(d, "slow.kineto.json"), "--skip", "1"], capture_output=True, text=True)
    out = r.stdout
    ok = (r.returncode == 1 and "FAIL offline: per-kernel median duration" in out
          and "FAIL offline: total kernel time" in out and "relu: 5.00 vs 9.00" in out)
    expect("crosscheck: slower kernel fails medians and total", ok, "" if ok else out)
    # Kineto lost a kernel in step 4.
    doc = synth.to_kineto(recs)
    i = max(i for i, e in enumerate(doc["traceEvents"]) if e.get("name") == "gemm_bwd(float*)")
    del doc["traceEvents"][i]
    run("missing kernel", recs, doc, must_fail="kernel names/counts per step")
    # A memcpy with other bytes.
    doc = synth.to_kineto(recs)
    next(e for e in reversed(doc["traceEvents"]) if e.get("cat") == "gpu_memcpy")["args"]["bytes"] += 1
    run("memcpy bytes differ", recs, doc, must_fail="memcpy count and bytes")
    # One nested annotation missing.
    doc = synth.to_kineto(recs)
    i = next(i for i, e in enumerate(doc["traceEvents"]) if e.get("name") == "backward")
    del doc["traceEvents"][i]
    run("annotation count differs", recs, doc, must_fail="ranges 'backward'")


def test_steploop_profiler_steps(d):
    """--profile torch --profiler-steps: torch.profiler gets a schedule that
    records every step (warm-up included) and prof.step() follows each step,
    after its NVTX range closed (so ProfilerStep#i is step i)."""
    import argparse
    import contextlib
    import steploop
    p = steploop.add_common_args(argparse.ArgumentParser(), steps=3, warmup=2)
    args = p.parse_args(["--profile", "torch", "--profiler-steps", "--no-nested-nvtx",
                         "--profile-out", os.path.join(d, "k.json")])
    events, state = [], {"on": False}
    torch = fake_torch(events, state)
    made = {}

    class Prof:
        def __init__(self, activities, schedule=None):
            made["schedule"] = schedule
        def __enter__(self):
            return self
        def __exit__(self, *a):
            return False
        def step(self):
            events.append("prof.step")
        def export_chrome_trace(self, path):
            open(path, "w").write("{}")

    def schedule(wait, warmup, active, repeat):
        made["active"] = (wait, warmup, active, repeat)
        return "sched"
    torch.profiler = types.SimpleNamespace(profile=Prof, schedule=schedule,
                                           ProfilerActivity=types.SimpleNamespace(CPU=1, CUDA=2),
                                           record_function=lambda n: contextlib.nullcontext())
    torch.cuda.Event = lambda enable_timing: types.SimpleNamespace(record=lambda: None,
                                                                   elapsed_time=lambda o: 1.0)
    saved = sys.modules.get("torch")
    sys.modules["torch"] = torch
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            steploop.run_steps(args, lambda i, ann: types.SimpleNamespace(item=lambda: 0.5))
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
    expect("profiler-steps: a schedule recording all 5 steps", made.get("schedule") == "sched"
           and made.get("active") == (0, 0, 5, 1), str(made))
    seq = [e for e in events if e == "prof.step" or e == "pop" or (isinstance(e, tuple) and e[0] == "push")]
    want = []
    for i in range(5):
        want += [("push", f"step {i}"), "pop", "prof.step"]
    expect("profiler-steps: prof.step() after each step's range", seq == want, str(seq))


def test_steps_check(d):
    """steps_check.py --compare on hand-made gpuprof stats outputs and a
    Kineto trace: 4 steps of 1 ms (step 0 warm-up), 500 us of kernels each,
    the trace method's steps 100 us late; Kineto's ProfilerStep#i the same
    (pass) or with 4 % longer kernels (fail), or without ProfilerStep# (fail)."""
    B = ("compute", "comm", "memory", "host_wait", "sync", "launch", "other")

    def stats(method, start_off, n=4):
        return {"steps": [{"pid": 7, "method": method, "steps": n, "counted": n - 1, "median_ns": 1000000,
                           "spread_pct": 1.0, "gpu_busy_pct": 50.0, "defined_by": f"{method} steps"}],
                "step_buckets": [{"pid": 7, "bucket": b, "step_time_pct": 50.0 if b in ("compute", "host_wait") else 0.0}
                                 for b in B],
                "step_rows": [{"pid": 7, "step": i, "start_ns": i * 1000000 + start_off, "time_ns": 900000,
                               "kernel_time_ns": 500000, "flags": "warm-up" if i == 0 else ""} for i in range(n)]}

    def kineto(kdur_us, with_steps=True):
        ev = []
        for i in range(4):
            if with_steps:
                ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 9, "tid": 9,
                           "ts": i * 1000.0, "dur": 1000.0})
            # the forward kernel from the main thread, the backward one from autograd's
            for j, tid in ((0, 9), (1, 10)):
                c = 10 * i + j
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": tid,
                           "ts": i * 1000.0 + 10 + j, "dur": 5.0, "args": {"correlation": c}})
                ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": i * 1000.0 + 50 + j * 300,
                           "dur": kdur_us / 2, "args": {"correlation": c}})
        return {"traceEvents": ev}

    def run(name, kin, want_rc, want_text):
        paths = []
        for tag, st in (("nv", stats("nvtx", 0)), ("tr", stats("trace", 100000)), ("bare", stats("trace", 0))):
            paths.append(os.path.join(d, f"sc-{tag}.json"))
            with open(paths[-1], "w") as f:
                json.dump(st, f)
        paths.append(os.path.join(d, "sc-kineto.json"))
        with open(paths[-1], "w") as f:
            json.dump(kin, f)
        r = subprocess.run([sys.executable, os.path.join(HERE, "steps_check.py"), "--compare", *paths,
                            "--warmup", "1", "--steps", "3"], capture_output=True, text=True, timeout=120)
        out = r.stdout + r.stderr
        ok = r.returncode == want_rc and want_text in out
        expect(f"steps_check: {name}", ok, "" if ok else out)
        return out

    out = run("matching runs pass", kineto(500.0), 0, "steps_check: 6 passed, 0 failed")
    expect("steps_check: tables for docs/STEPS.md", "| offline | 4 | 4 | 4 | 100 / 100 / 100 |" in out
           and "| offline | 3 | 500.0 | 500.0 | +0.00 | 0.0 | 250.0 |" in out, out)
    run("4 % more GPU time in Kineto fails", kineto(520.0), 1,
        "FAIL offline: ProfilerStep# GPU time, median over the steady steps, within 2 %")
    run("no ProfilerStep# fails", kineto(500.0, with_steps=False), 1, "FAIL offline: ProfilerStep# GPU time")


def test_kernel_names():
    import gptrace
    cases = {
        "vecAdd(const float*, const float*, float*, int)": "vecAdd",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)": "vectorized_elementwise_kernel",
        "emptyKernel()": "emptyKernel",
        "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32": "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32",
    }
    for name, want in cases.items():
        got = gptrace.kernel_base(name)
        expect(f"kernel_base {want[:30]}", got == want, f"got {got!r}")
    expect("norm_api", gptrace.norm_api("cudaLaunchKernel_v7000") == "cudaLaunchKernel"
           and gptrace.norm_api("cudaMemcpy_ptds_v7000") == "cudaMemcpy", "")
    expect("union_ns", gptrace.union_ns([(0, 10), (5, 20), (30, 40)]) == 30, "")


def test_report_phase():
    """scripts/gpu-session.sh parses; its report phase runs each A/B config AB_REPS (3) times,
    interleaved, and diffs the runs with --vs (issue 23)"""
    sh = os.path.join(ROOT, "scripts", "gpu-session.sh")
    p = subprocess.run(["bash", "-n", sh], capture_output=True, text=True)
    expect("gpu-session.sh parses", p.returncode == 0, p.stderr)
    text = open(sh).read()
    phase = text[text.index("  report)"):text.index(";;", text.index("  report)"))]
    expect("report: AB_REPS default 3", "reps=${AB_REPS:-3}" in phase, "")
    expect("report: interleaved A1 B1 A2 B2", re.search(r'ab "\$a-\$i" .*; ab "\$b-\$i"', phase) is not None, "")
    expect("report: diff with --vs", '"${la[@]}" --vs "${lb[@]}"' in phase, "")


def test_coexist_check(d):
    """tests/gpu/coexist_check.py: kernels per ProfilerStep# by their launch's
    correlation (a kernel that runs after its step's range still counts for
    it); a run that lost a kernel differs from the bare one (issue 42)"""
    import coexist_check

    def chrome(name, kernels):
        ev = [{"ph": "X", "name": "ProfilerStep#%d" % i, "ts": 100 * i, "dur": 100} for i in range(3)]
        for i, (launch_ts, run_ts) in enumerate(kernels):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": launch_ts, "dur": 2,
                       "args": {"correlation": i}})
            ev.append({"ph": "X", "cat": "kernel", "name": "k", "ts": run_ts, "dur": 5, "args": {"correlation": i}})
        p = os.path.join(d, name)
        json.dump({"traceEvents": ev}, open(p, "w"))
        return p
    bare = chrome("bare.json", [(10, 20), (50, 150), (120, 130), (250, 400)])
    got = coexist_check.chrome_steps(bare)
    expect("coexist: kernels per ProfilerStep# by launch",
           got == {"ProfilerStep#0": 2, "ProfilerStep#1": 1, "ProfilerStep#2": 1}, str(got))
    same = chrome("same.json", [(11, 30), (60, 101), (150, 160), (201, 500)])
    lost = chrome("lost.json", [(11, 30), (150, 160), (201, 500)])
    with contextlib.redirect_stdout(io.StringIO()):
        sys.argv = ["coexist_check.py", "same", bare, same]
        rc_same = coexist_check.main()
        sys.argv = ["coexist_check.py", "same", bare, lost]
        rc_lost = coexist_check.main()
    expect("coexist: the same kernels per step pass", rc_same == 0, "")
    expect("coexist: a lost kernel fails", rc_lost != 0, "")


def main():
    with tempfile.TemporaryDirectory() as d:
        test_coexist_check(d)
        test_kernel_names()
        test_report_phase()
        test_toggle_schedule()
        test_pool(d)
        test_steploop_toggled()
        test_steploop_stall(d)
        test_summarize_toggled(d)
        test_runone_ab_columns(d)
        test_floor_capture(d)
        test_floor_api(d)
        test_check_trace(d)
        test_truncated_and_shared_corr(d)
        test_steploop_profiler_steps(d)
        test_steps_check(d)
        for extra in ("test_summarize", "test_crosscheck"):
            fn = globals().get(extra)
            if fn:
                fn(d)
    print(f"{len(failures)} failure(s)" + (f": {failures}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
