#!/usr/bin/env python3
"""test_scripts.py — CPU self-test of the GPU-side scripts (no GPU needed).

The GPU suite, the overhead bench and the fidelity cross-check only run on
the GPU machine, where a bug in their checks would waste scarce device time
or, worse, pass a broken trace.  This runs their logic on synthetic traces
here: a correct trace must pass, each kind of corruption must fail.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench", "overhead"))
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


def main():
    with tempfile.TemporaryDirectory() as d:
        test_kernel_names()
        test_check_trace(d)
        test_truncated_and_shared_corr(d)
        for extra in ("test_summarize", "test_crosscheck"):
            fn = globals().get(extra)
            if fn:
                fn(d)
    print(f"{len(failures)} failure(s)" + (f": {failures}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
