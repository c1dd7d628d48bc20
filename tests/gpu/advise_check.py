#!/usr/bin/env python3
"""advise_check.py — `gpuprof advise` against jobs with known causes
(examples/pathologies/, issue 22), on the GPU machine
(scripts/gpu-session.sh advise).

For each job: the bad and the fixed variant bare (no tracer), interleaved,
--reps times (3: bad, fixed, bad, fixed, ...), then under `gpuprof run` —
the bad one without and with --stacks, the fixed one without — and
`gpuprof advise --format json` on each trace.  Checks:

  first finding       the bad variant's first finding is the job's cause,
                      with and without stacks;
  file:line           with stacks, the finding names the job's file
                      ("<job>.py:<line>") in its sites, frames or where;
  estimate +-30 %     advise's estimated saving per step (bad trace) is
                      within 30 % of the measured saving: the median over
                      the repetitions of the bare bad run's step_ms_mean
                      minus the same repetition's fixed run's (issue #38's
                      acceptance; --measure traced: the traced bad run
                      minus the traced fixed run, printed beside it);
  cause gone          the fixed trace has no finding of that rule, or one
                      whose saving is at most 20 % of the bad one's;
  below               (JOB_BELOW) a rule that must be found in the bad
                      trace but not first, with a smaller estimate (the
                      sync of a job whose GPU work dominates);
  healthy             the healthy job gets nothing above low (both traces).

A job whose expected rule is "" has no rule yet: its first finding and
measured saving are recorded, one SKIP line, no check.

Prints one `ADVISE PASS|FAIL|SKIP job: check` line per check, then a
markdown table (estimate vs measured, per job) for docs/ADVISE.md; writes
OUT/advise.json.  Exit 0 when every check passed, 1 otherwise.  The judging
(judge, table) is tested without a GPU by tests/tools/test_advise_check.py.

Steps: --steps N for every job, or by default each job's own count
(JOB_STEPS: 30, 100 for alloc_churn, whose saving is a smaller share of a
shorter step, so its mean needs more steps to stand above the run-to-run
noise).

  advise_check.py --gpuprof build/bin/gpuprof --out DIR [--jobs a,b]
                  [--steps N] [--warmup 5] [--budget-s 520] [--no-nvtx]

--no-nvtx: every run (bare and traced) with the job's --no-nvtx, so no NVTX
range marks a step: advise judges the steps it finds in the trace (a job
with no hint from us), the checks the same.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATHO = os.path.join(ROOT, "examples", "pathologies")
# job -> the rule advise should put first (None: nothing above info)
JOBS = {
    "item_in_step": "sync",
    "pageable_copy": "pageable-copy",
    "deep_narrow": "launch-bound",
    "alloc_churn": "alloc-churn",
    "one_block": "under-parallel",
    "fp32_gemm": "fp32-matmul",
    "slow_dataset": "input-bound",
    "large_pageable": "pageable-copy",
    "sync_gpu_bound": "fp32-matmul",
    "serial_copies": "exposed-copies",
    "healthy": None,
}
# job -> a rule that must be found below the first one, with a smaller estimate
JOB_BELOW = {"sync_gpu_bound": "sync"}
# timed steps per job when --steps is not given: 30, more where the saving
# is a small share of a short step (docs/ADVISE.md "The pathology jobs")
JOB_STEPS = {"alloc_churn": 100}
DEFAULT_STEPS = 30
TOL = 0.30
GONE = 0.20
REPS = 3
EXIT_SKIP = 77


def job_steps(job, steps):
    """The timed steps of a job: `steps` when given (> 0), else its own."""
    return steps if steps > 0 else JOB_STEPS.get(job, DEFAULT_STEPS)


def parse_result(text):
    """The key=value pairs of the last RESULT line (numbers as floats), or None."""
    res = None
    for line in (text or "").splitlines():
        if line.startswith("RESULT "):
            res = {}
            for kv in line.split()[1:]:
                k, _, v = kv.partition("=")
                try:
                    res[k] = float(v)
                except ValueError:
                    res[k] = v
    return res


def first(adv):
    f = adv.get("findings") if adv else None
    return f[0] if f else None


def names_file(f, job):
    """Whether a finding names the job's file as file:line."""
    if not f:
        return False
    want = f"{job}.py:"
    texts = [f.get("where", "")]
    for s in f.get("sites", []):
        texts.append(s.get("label", ""))
        texts += s.get("frames", [])
    return any(want in t for t in texts)


def median(v):
    v = sorted(v)
    n = len(v)
    return None if not n else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def judge(job, expected, bad, stacks, fixed, ms, measure="bare", below=None):
    """One row: the checks of one job.  bad/stacks/fixed: advise's JSON for
    one file (or None: no trace); ms: step_ms_mean of the runs
    (bare_pairs: [(bad, fixed)] per repetition, traced_bad, traced_fixed;
    None when missing); measure: the saving the estimate is checked
    against, "bare" (median of the repetitions' differences) or "traced";
    below: a rule that must be found after the first, with a smaller
    estimate."""
    checks = []

    def check(name, ok, detail):
        checks.append((name, "PASS" if ok else "FAIL", detail))

    fb, fs = first(bad), first(stacks)
    row = {"job": job, "expected": expected or "(nothing above low)", "checks": checks,
           "first": fb["rule"] if fb else None, "first_stacks": fs["rule"] if fs else None,
           "severity": fb["severity"] if fb else None, "estimate_ms": None, "measured_ms": None,
           "measured_bare_ms": None, "ratio": None, "where": (fs or fb or {}).get("where", "")}
    pairs = [(b, f) for b, f in ms.get("bare_pairs", []) if b is not None and f is not None]
    if pairs:
        row["measured_bare_ms"] = median([b - f for b, f in pairs])
    if ms.get("traced_bad") is not None and ms.get("traced_fixed") is not None:
        row["measured_ms"] = ms["traced_bad"] - ms["traced_fixed"]
    if expected is None:
        for what, adv in (("no stacks", bad), ("stacks", stacks)):
            if adv is None:
                check(f"healthy ({what})", False, "no trace")
                continue
            above = [(x["rule"], x["severity"]) for x in adv["findings"] if x["severity"] not in ("info", "low")]
            check(f"healthy ({what})", not above, f"above low: {above}" if above else "nothing above low")
        return row
    if expected == "":
        row["expected"] = "(no rule yet)"
        checks.append(("no rule yet", "SKIP", f"first finding {row['first']}, measured "
                       f"{fmt(row['measured_bare_ms'])} ms bare, {fmt(row['measured_ms'])} ms traced"))
        return row
    for what, f, adv in (("no stacks", fb, bad), ("stacks", fs, stacks)):
        got = f["rule"] if f else ("no trace" if adv is None else "no finding")
        check(f"first finding ({what})", got == expected, f"{got} (want {expected})")
    check("file:line (stacks)", names_file(fs, job), (fs or {}).get("where", "no finding")[:160])
    est = fb.get("saving_ns_per_step") if fb and fb["rule"] == expected else None
    if est is not None:
        row["estimate_ms"] = est / 1e6
    m = row["measured_bare_ms"] if measure == "bare" else row["measured_ms"]
    e = row["estimate_ms"]
    if m is not None and e is not None and m > 0:
        row["ratio"] = e / m
        check("estimate +-30 %", abs(e - m) <= TOL * m,
              f"estimate {e:.3f} ms, measured {m:.3f} ms ({measure}, {len(pairs)} repetitions)")
    else:
        check("estimate +-30 %", False, f"estimate {e}, measured {m} ({measure})")
    if fixed is None:
        check("cause gone", False, "no fixed trace")
    else:
        same = [x for x in fixed["findings"] if x["rule"] == expected]
        left = max((x.get("saving_ns_per_step") or 0) for x in same) / 1e6 if same else 0.0
        ok = not same or (e is not None and left <= GONE * e)
        check("cause gone", ok, f"fixed: {expected} saving {left:.3f} ms" if same else f"fixed: no {expected}")
    if below:
        fl = (bad or {}).get("findings", [])
        at = [k for k, x in enumerate(fl) if x["rule"] == below]
        bs = (fl[at[0]].get("saving_ns_per_step") or 0) / 1e6 if at else None
        ok = bool(at) and at[0] > 0 and (e is None or bs < e)
        check(f"{below} below", ok, f"{below} at rank {at[0] + 1}, estimate {bs:.3f} ms" if at else f"no {below}")
    return row


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def table(rows):
    out = ["| job | expected | first finding | with stacks | estimate (ms/step) | measured, traced "
           "(ms/step) | measured, bare (ms/step) | estimate / measured | checks |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fails = [c[0] for c in r["checks"] if c[1] == "FAIL"]
        verdict = "all pass" if not fails and any(c[1] == "PASS" for c in r["checks"]) else \
            "FAIL: " + ", ".join(fails) if fails else "not judged"
        out.append(f"| {r['job']} | {r['expected']} | {r['first'] or '-'} ({r['severity'] or '-'}) | "
                   f"{r['first_stacks'] or '-'} | {fmt(r['estimate_ms'])} | {fmt(r['measured_ms'])} | "
                   f"{fmt(r['measured_bare_ms'])} | {fmt(r['ratio'], '.2f')} | "
                   f"{verdict} |")
    return "\n".join(out)


def run(cmd, timeout, env=None):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, e.stdout or "", e.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    print(f"  [{time.time() - t0:6.1f} s] rc={rc} {' '.join(cmd)[:200]}", flush=True)
    if rc not in (0, EXIT_SKIP):
        print("    " + "\n    ".join(err.strip().splitlines()[-6:]), flush=True)
    return rc, out, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuprof", default=os.path.join(ROOT, "build", "bin", "gpuprof"))
    ap.add_argument("--python", default="python3")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--steps", type=int, default=0,
                    help=f"timed steps of every job (0: each job's own, JOB_STEPS, else {DEFAULT_STEPS})")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=REPS, help="bare bad/fixed pairs per job, interleaved")
    ap.add_argument("--measure", choices=("bare", "traced"), default="bare",
                    help="the saving the estimate is checked against")
    ap.add_argument("--timeout", type=int, default=180, help="per run, s")
    ap.add_argument("--budget-s", type=float, default=520, help="no new job after this many seconds")
    ap.add_argument("--no-nvtx", action="store_true", help="the jobs with no NVTX ranges (steps found in the trace)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    rows, failed = [], 0
    for job in [j for j in a.jobs.split(",") if j]:
        if job not in JOBS:
            print(f"ADVISE FAIL {job}: unknown job (known: {', '.join(JOBS)})")
            failed += 1
            continue
        if time.time() - t_start > a.budget_s:
            print(f"ADVISE SKIP {job}: not run (budget of {a.budget_s:.0f} s spent)")
            continue
        print(f"=== {job}", flush=True)
        steps = job_steps(job, a.steps)
        script = [a.python, os.path.join(PATHO, job + ".py"), "--steps", str(steps), "--warmup", str(a.warmup),
                  *(["--no-nvtx"] if a.no_nvtx else [])]
        ms, adv, skipped = {"bare_pairs": []}, {}, False
        # the healthy job has no saving to measure: one pair
        for rep in range(max(1, a.reps) if JOBS[job] is not None else 1):
            pair = []
            for variant in ("bad", "fixed"):
                rc, out, _ = run(script + (["--fixed"] if variant == "fixed" else []), a.timeout)
                skipped |= rc == EXIT_SKIP
                r = parse_result(out)
                pair.append(r.get("step_ms_mean") if r and rc == 0 else None)
            ms["bare_pairs"].append(tuple(pair))
            if skipped:
                break
        if skipped:
            print(f"ADVISE SKIP {job}: the job cannot run here (exit {EXIT_SKIP})")
            continue
        for name, opts, variant in (("bad", [], "bad"), ("bad-stacks", ["--stacks"], "bad"),
                                    ("fixed", [], "fixed")):
            trace = os.path.join(a.out, f"{job}-{name}.gpuprof")
            if os.path.exists(trace):
                os.remove(trace)
            rc, out, _ = run([a.gpuprof, "run", "-q", *opts, "-o", trace, "--", *script,
                              *(["--fixed"] if variant == "fixed" else [])], a.timeout)
            r = parse_result(out)
            if name != "bad-stacks":
                ms[f"traced_{variant}"] = r.get("step_ms_mean") if r and rc == 0 else None
            if not os.path.exists(trace):
                adv[name] = None
                continue
            rc, out, err = run([a.gpuprof, "advise", "--format", "json", trace], a.timeout)
            try:
                adv[name] = json.loads(out)["advise"][0] if rc == 0 else None
            except (ValueError, KeyError, IndexError):
                adv[name] = None
            if adv[name] is not None:
                with open(trace + ".advise.json", "w") as f:
                    json.dump(adv[name], f, indent=1)
                tr = subprocess.run([a.gpuprof, "advise", trace], capture_output=True, text=True, timeout=a.timeout)
                with open(trace + ".advise.txt", "w") as f:
                    f.write(tr.stdout)
        row = judge(job, JOBS[job], adv.get("bad"), adv.get("bad-stacks"), adv.get("fixed"), ms, a.measure,
                    JOB_BELOW.get(job))
        row["step_ms_mean"] = ms
        rows.append(row)
        for name, verdict, detail in row["checks"]:
            print(f"ADVISE {verdict} {job}: {name}: {detail}", flush=True)
            failed += verdict == "FAIL"
    print()
    print(table(rows))
    with open(os.path.join(a.out, "advise.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
