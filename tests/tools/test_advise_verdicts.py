"""test_advise_verdicts.py — what `gpuprof advise` answers when there is no
training step to judge, and the findings it hides (issue 38 "Other answers
that mislead", issue 43 item 2; docs/ADVISE.md "When nothing is judged").
Each trace's figures are in tests/tools/gen_steps.c.

 - a header-only trace (the first 100 bytes of one): not "no findings" (a
   healthy job's words) but "nothing to judge: no steps and no GPU work ...
   cut short"; the JSON says it in "nothing_judged".
 - gen_steps --repeat compile: 10 repeats of 8 short kernels (7.2 ms of GPU
   of kernel time) after two 50 ms kernels: the trace method finds steps,
   but they launched 7.2 / 107.18 = 6.7 % of the kernel time (< 50 %): "no
   training step was found", no finding (before: host-gaps on 9 steps).
 - gen_steps --repeat one: 15 launches of one kernel (a job's last
   operations before it ran out of memory): the trace method finds no step
   ("no steps: the only repeat is one GPU operation (15 times): no step
   structure", docs/STEPS.md), so steps counts none and advise judges
   nothing (before: 14 counted steps and a finding).
 - a capture of 2 steps (gen_steps --steady --steps 40 --capture 5:7):
   "too few steps to judge: 2 counted (advise needs 3)" (before: "no counted
   steps": both were taken for warm-up).
 - gen_steps --steady --no-nvtx --steps 40 --capture 5:15: alloc-churn's
   saving is 0.000 ms per step (one cudaMalloc in 9 steps): hidden, said in
   a line and in "hidden_nothing_saved"; --all shows it."""
import json
import os
import subprocess

import tt

GEN_STEPS = os.path.abspath(os.path.join(tt.B, "tests", "tools", "gen_steps"))


def gen(path, *opts):
    subprocess.run([GEN_STEPS, *opts, path], check=True)
    return path


def advise_json(path, *extra):
    return json.loads(tt.gp("advise", "--format", "json", *extra, path).stdout)["advise"][0]


with tt.tmpdir() as d:
    # ---------------- header only
    full = gen(os.path.join(d, "full.gpuprof"), "--steady")
    head = os.path.join(d, "head.gpuprof")
    with open(full, "rb") as f, open(head, "wb") as g:
        g.write(f.read(100))
    p = tt.gp("advise", head)
    tt.expect("no findings" not in p.stdout and
              "nothing to judge: no steps and no GPU work in the intact part of the trace (it is cut short"
              in p.stdout, "header only: " + p.stdout)
    tt.expect("truncated" in p.stderr, "header only: the truncation warning: " + p.stderr)
    tt.expect(advise_json(head).get("nothing_judged", "").startswith("nothing to judge: "), "header only: JSON")

    # ---------------- a compile-dominated job: the repeats are not its step
    comp = gen(os.path.join(d, "compile.gpuprof"), "--repeat", "compile")
    p = tt.gp("advise", "--width", "0", comp)  # the sentence on one line
    tt.expect("no training step was found: the steps found launched 6.7 % of the process's kernel time" in p.stdout
              and "no findings" not in p.stdout, "compile: " + p.stdout)
    cj = advise_json(comp)
    tt.eq((cj["findings"], cj["processes"][0]["counted"]), ([], 9), "compile: no finding, the 9 steps found")
    tt.expect(cj.get("nothing_judged", "").startswith("nothing judged"), "compile: JSON nothing_judged")

    # ---------------- one operation repeated: no step structure
    one = gen(os.path.join(d, "one.gpuprof"), "--repeat", "one")
    oj = advise_json(one)
    tt.eq((oj["findings"], oj["processes"][0]["counted"]), ([], 0), "one op: no finding, no counted step")
    want = "no steps: the only repeat is one GPU operation (15 times): no step structure"
    tt.eq(oj["processes"][0]["steps_are"], want, "one op: advise says why")
    sj = json.loads(tt.gp("steps", "--format", "json", "--report", "steps", one).stdout)["steps"][0]
    tt.eq((sj["method"], sj["steps"], sj.get("defined_by")), ("none", 0, want), "one op: steps says why")

    # ---------------- too few steps
    few = gen(os.path.join(d, "few.gpuprof"), "--steady", "--steps", "40", "--capture", "5:7")
    fj = advise_json(few)
    tt.eq((fj["processes"][0]["counted"], fj["processes"][0].get("not_judged"), fj["findings"]),
          (2, "too few steps to judge: 2 counted (advise needs 3)", []), "2 steps: too few")

    # ---------------- findings that save nothing: hidden unless --all
    cap = gen(os.path.join(d, "cap.gpuprof"), "--steady", "--no-nvtx", "--steps", "40", "--capture", "5:15")
    allj = advise_json(cap, "--all")
    zero = [x["rule"] for x in allj["findings"] if x["saving_ns_per_step"] is not None and
            x["saving_ns_per_step"] < 500]
    tt.eq(zero, ["alloc-churn"], "--all: the finding that saves 0.000 ms")
    shown = advise_json(cap)
    tt.eq([x["rule"] for x in shown["findings"]], [x["rule"] for x in allj["findings"] if x["rule"] not in zero],
          "default: the others, in the same order")
    tt.eq(shown.get("hidden_nothing_saved"), 1, "default: one hidden, said")
    txt = tt.gp("advise", cap).stdout
    tt.expect("1 finding saving 0.000 ms per step hidden (--all shows them)." in txt and "alloc-churn" not in txt,
              "default text: " + txt[:800])

tt.finish()
