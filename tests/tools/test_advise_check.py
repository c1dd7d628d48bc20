"""tests/gpu/advise_check.py (the GPU session's `advise` phase) without a GPU:
its judging on advise's real JSON for gen_advise.c's traces, standing in for
the pathology jobs' traces (their stacks name "train.py", so the job is
called "train" here), and on made-up step times:

 - sync trace (bad), with stacks, sync-no (fixed), measured saving 1.9 ms
   (the median of three bare repetitions' differences 1.9, 2.5, 1.6) against
   the estimate 1.804 ms: every check passes;
 - measured 1.0 ms: the estimate is off by more than 30 %: fails; with
   --measure traced the traced runs' difference is the one checked;
 - a rule expected below the first (JOB_BELOW): found after it with a
   smaller estimate passes, absent or first fails;
 - a job with no rule yet: one SKIP, "not judged" in the table;
 - expecting input-bound: the first finding check fails (both traces);
 - the bad trace as the fixed one: "cause gone" fails;
 - no stacks trace: "file:line" fails;
 - healthy trace for the healthy job passes (nothing above low); the sync
   trace as "healthy" fails (high);
 - RESULT parsing, the markdown table, an unknown job (exit 1).
"""
import json
import os
import subprocess
import sys

import tt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import advise_check as ac  # noqa: E402

GEN = os.path.join(os.path.dirname(tt.GEN), "gen_advise")


def advise(d, scen, *opts):
    path = os.path.join(d, scen + "".join(opts) + ".gpuprof")
    subprocess.run([GEN, scen, *opts, path], check=True)
    return json.loads(tt.gp("advise", "--format", "json", path).stdout)["advise"][0]


def verdicts(row):
    return {name: v for name, v, _ in row["checks"]}


with tt.tmpdir() as d:
    bad, stacks, fixed, healthy = advise(d, "sync"), advise(d, "sync", "--stacks"), advise(d, "sync-no"), \
        advise(d, "healthy")
    ms = {"bare_pairs": [(6.1, 4.2), (6.6, 4.1), (5.9, 4.3)], "traced_bad": 6.03, "traced_fixed": 6.03 - 1.9}
    row = ac.judge("train", "sync", bad, stacks, fixed, ms)
    tt.eq(verdicts(row), {"first finding (no stacks)": "PASS", "first finding (stacks)": "PASS",
                          "file:line (stacks)": "PASS", "estimate +-30 %": "PASS", "cause gone": "PASS"},
          "all pass")
    tt.approx(row["estimate_ms"], 1.803556, "estimate", tol=1e-6)
    tt.approx(row["measured_ms"], 1.9, "measured (traced)", tol=1e-9)
    tt.approx(row["measured_bare_ms"], 1.9, "measured (bare): the median of the pairs' differences", tol=1e-9)

    off = ac.judge("train", "sync", bad, stacks, fixed, dict(ms, bare_pairs=[(6.1, 5.1), (6.0, 5.0), (7.0, 4.0)]))
    tt.eq(verdicts(off)["estimate +-30 %"], "FAIL", "estimate 80 % above the measured saving")
    tr = ac.judge("train", "sync", bad, stacks, fixed, dict(ms, traced_fixed=6.03 - 1.0), "traced")
    tt.eq(verdicts(tr)["estimate +-30 %"], "FAIL", "--measure traced: the traced difference is checked")
    tt.eq(verdicts(ac.judge("train", "sync", bad, stacks, fixed, ms, "bare", "sync"))["sync below"], "FAIL",
          "a rule expected below the first: it is first")
    fp = advise(d, "fp32")  # fp32-matmul first, its cudaStreamSynchronize below (saving 0)
    tt.eq(verdicts(ac.judge("train", "fp32-matmul", fp, fp, None, ms, "bare", "sync")).get("sync below"),
          "PASS", "a rule expected below the first: found after it, smaller estimate")
    tt.eq(verdicts(ac.judge("train", "fp32-matmul", healthy, healthy, None, ms, "bare", "sync")).get("sync below"),
          "FAIL", "a rule expected below the first: absent")
    norule = ac.judge("serial", "", bad, stacks, fixed, ms)
    tt.eq([c[1] for c in norule["checks"]], ["SKIP"], "no rule yet: one SKIP")
    tt.expect(ac.table([norule]).splitlines()[2].endswith("| not judged |"), "no rule yet: not judged")
    wrong = ac.judge("train", "input-bound", bad, stacks, fixed, ms)
    tt.eq((verdicts(wrong)["first finding (no stacks)"], verdicts(wrong)["first finding (stacks)"]),
          ("FAIL", "FAIL"), "another cause expected")
    same = ac.judge("train", "sync", bad, stacks, bad, ms)
    tt.eq(verdicts(same)["cause gone"], "FAIL", "fixed trace still has the cause")
    nost = ac.judge("train", "sync", bad, None, fixed, ms)
    tt.eq((verdicts(nost)["file:line (stacks)"], verdicts(nost)["first finding (stacks)"]), ("FAIL", "FAIL"),
          "no stacks trace")
    tt.eq(verdicts(ac.judge("healthy", None, healthy, healthy, None, {})),
          {"healthy (no stacks)": "PASS", "healthy (stacks)": "PASS"}, "healthy job")
    tt.eq(verdicts(ac.judge("healthy", None, bad, healthy, None, {}))["healthy (no stacks)"], "FAIL",
          "a job with a high finding is not healthy")

    tt.eq((ac.job_steps("alloc_churn", 0), ac.job_steps("item_in_step", 0), ac.job_steps("alloc_churn", 40)),
          (100, 30, 40), "steps: each job's own unless --steps")
    tt.eq(ac.parse_result("noise\nRESULT steps=30 step_ms_mean=6.5000 loss=2.3 job=x variant=bad\n"),
          {"steps": 30.0, "step_ms_mean": 6.5, "loss": 2.3, "job": "x", "variant": "bad"}, "RESULT line")
    tt.eq(ac.parse_result("no result"), None, "no RESULT line")
    t = ac.table([row, off]).splitlines()
    tt.eq(len(t), 4, "table: header, rule, two rows")
    tt.expect("| train | sync | sync (high) | sync | 1.804 | 1.900 | 1.900 | 0.95 | all pass |" in t,
              f"table row {t[2]!r}")
    tt.expect(t[3].endswith("FAIL: estimate +-30 % |"), f"failing row {t[3]!r}")

    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "gpu", "advise_check.py"), "--gpuprof",
                        tt.GPUPROF, "--out", os.path.join(d, "out"), "--jobs", "nosuch"],
                       capture_output=True, text=True)
    tt.eq(p.returncode, 1, "unknown job: exit 1")
    tt.expect("ADVISE FAIL nosuch: unknown job" in p.stdout, f"unknown job: {p.stdout!r}")

tt.finish()
