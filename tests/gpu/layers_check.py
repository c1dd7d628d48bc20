#!/usr/bin/env python3
"""layers_check.py — issue #43 item 3 on the GPU: backward kernels per layer
without emit_nvtx (`gpuprof run --layers`, docs/STACKS.md "Backward kernels
without emit_nvtx") against the same job under emit_nvtx, and the job's
results unchanged.  Run by `scripts/gpu-session.sh layers-bwd` (about 3-4
minutes).

Jobs (examples/thirdparty): hf (HF Trainer, GPT-2 from a GPT2Config with 4
blocks, random tokens, 8 steps) and timm (resnet18, 10 steps).  Each runs
three times, in separate processes:

1. bare: its RESULT line (the loss after N steps; both jobs are
   deterministic);
2. `gpuprof run --stacks --layers` (GPUPROF_STACKS=all): its RESULT line
   must be the bare run's, byte for byte (the hooks only mark); then `stats
   --report layers`: backward kernel time per layer path (the "(backward)"
   rows, by their parent path) and "(backward, unattributed)";
3. the truth: `gpuprof run --stacks` with the job wrapped in
   torch.autograd.profiler.emit_nvtx() (a wrapper, the job unchanged): the
   same per-path backward times, by PyTorch's sequence numbers.

Printed per job: the share of backward kernel time that got a layer in each
run, and per layer path with >= 2 % of the truth's attributed backward time
the two times and their difference.  LAYERS PASS for a job when the loss
is unchanged, the --layers share is >= 90 % and every such path is within
5 % of the truth.  (The truth leaves a share unattributed where sequence
numbers are ambiguous, 31 % on the hf job in docs/STACKS.md: a path the
truth under-counts by that much shows as a difference; the table says how
much the truth left unattributed so the reader can tell.)

  python3 tests/gpu/layers_check.py [--gpuprof build/bin/gpuprof] [--out DIR] [--jobs hf,timm]
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from gptrace import EMIT_NVTX_WRAPPER, run_job  # noqa: E402

JOBS = {
    "hf": ("examples/thirdparty/hf_trainer.py", ["--steps", "8", "--n-layer", "4"]),
    "timm": ("examples/thirdparty/timm_model.py", ["--steps", "10"]),
}
BWD = "(backward)"
UNATTR = "(backward, unattributed)"


def run(cmd, env=None, timeout=300):
    return run_job(cmd, ROOT, env, timeout, width=170, tail=10, said=True)


def result(p):
    m = re.search(r"^RESULT .*$", p.stdout or "", re.M)
    return m.group(0) if m else None


def backward_by_path(gp, trace):
    """({layer path: backward ns}, unattributed ns, the layers table text)"""
    p = run([gp, "stats", "--report", "layers", "--format", "json", trace])
    by, chain, un = {}, [], 0
    for r in json.loads(p.stdout)["layers"]:
        chain = chain[:r["depth"]] + [r["layer"]]
        if chain[-1] == BWD:
            path = " > ".join(chain[:-1])
            by[path] = by.get(path, 0) + r["kernel_ns"]
        elif r["depth"] == 0 and chain[0] == UNATTR:
            un += r["kernel_ns"]
    table = run([gp, "stats", "--report", "layers", "--width", "170", trace]).stdout
    return by, un, table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuprof", default=os.path.join(ROOT, "build/bin/gpuprof"))
    ap.add_argument("--out", default="/tmp/layers-out")
    ap.add_argument("--jobs", default="hf,timm")
    a = ap.parse_args()
    out = os.path.join(a.out, "layers")
    os.makedirs(out, exist_ok=True)
    wrapper = os.path.join(out, "emit_nvtx_job.py")
    open(wrapper, "w").write(EMIT_NVTX_WRAPPER)
    env = dict(os.environ, GPUPROF_STACKS="all")
    md, all_ok = [], True
    for job in a.jobs.split(","):
        script, args = JOBS[job]
        print("== %s: %s %s" % (job, script, " ".join(args)))
        bare = result(run([sys.executable, script] + args))
        ta, tb = os.path.join(out, job + "-layers.gpuprof"), os.path.join(out, job + "-emit-nvtx.gpuprof")
        pa = run([a.gpuprof, "run", "-o", ta, "--stacks", "--layers", "--", sys.executable, script] + args, env=env)
        pb = run([a.gpuprof, "run", "-o", tb, "--stacks", "--", sys.executable, wrapper, script] + args, env=env)
        la = result(pa)
        loss_ok = bare is not None and la == bare
        print("  bare:     %s\n  --layers: %s  %s" % (bare, la, "same" if loss_ok else "DIFFERS"))
        if not (os.path.exists(ta) and os.path.exists(tb)):
            all_ok = False
            print("LAYERS FAIL job=%s (no trace)" % job)
            continue
        A, ua, table_a = backward_by_path(a.gpuprof, ta)
        B, ub, _ = backward_by_path(a.gpuprof, tb)
        sa, sb = sum(A.values()), sum(B.values())
        share_a = 100.0 * sa / (sa + ua) if sa + ua else 0.0
        share_b = 100.0 * sb / (sb + ub) if sb + ub else 0.0
        print(table_a)
        rows, paths_ok, n = [], True, 0
        for path in sorted(set(A) | set(B), key=lambda k: -B.get(k, 0)):
            an, bn = A.get(path, 0), B.get(path, 0)
            if bn < 0.02 * sb:
                continue
            n += 1
            d = (an - bn) / bn
            good = abs(d) <= 0.05
            paths_ok &= good
            rows.append("| %s | %.3f | %.3f | %+.1f %% | %s |" % (path, an / 1e6, bn / 1e6, 100 * d,
                                                                 "ok" if good else "DIFFERS"))
        others = sum(v for k, v in A.items() if B.get(k, 0) < 0.02 * sb)
        hdr = ["| Layer path (backward) | ms --layers | ms emit_nvtx | diff | |", "|---|---|---|---|---|"]
        summary = ("backward kernel time: --layers %.3f ms attributed, %.3f ms unattributed (%.1f %%); "
                   "emit_nvtx %.3f ms attributed, %.3f ms unattributed (%.1f %%); --layers on paths "
                   "under 2 %% of the truth's: %.3f ms" % (sa / 1e6, ua / 1e6, share_a, sb / 1e6, ub / 1e6,
                                                         share_b, others / 1e6))
        print("\n".join(hdr + rows))
        print("  " + summary)
        ok = loss_ok and share_a >= 90.0 and paths_ok and n > 0
        line = "LAYERS %s job=%s share=%.1f%% truth_share=%.1f%% paths_within_5pct=%d/%d loss_same=%s" % (
            "PASS" if ok else "FAIL", job, share_a, share_b, sum(r.endswith("ok |") for r in rows), n, loss_ok)
        print(line)
        all_ok &= ok
        md += ["## %s" % job, "", "```", table_a.rstrip(), "```", ""] + hdr + rows + ["", summary, "", line, ""]
        for t in (ta, tb):  # the session brings back logs, not traces
            os.remove(t)
    open(os.path.join(out, "report.md"), "w").write("\n".join(md) + "\n")
    print("LAYERS %s" % ("ALL PASS" if all_ok else "SOME FAILED"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
