#!/usr/bin/env python3
"""scripts/matrix_table.py and scripts/matrix.sh (the compatibility matrix,
docs/RELIABILITY.md) without a GPU.

1. `table` on canned rows: each way a cell can fail gives its own cell text
   (FAIL rc=139, FAIL timeout, FAIL out≠, FAIL stdout, FAIL no trace, FAIL
   decode, FAIL truncated, FAIL status, FAIL k=99≠100), a kernel count that
   differs under an option of --kernels-na is "n/a", not a failure; a failed
   bare run skips its row; a default run that did not decode leaves nothing
   to compare with ("no ref"); one line per failing cell; exit 1, and exit 0
   for an all-green table.
2. `cell` with the real gpuprof on gen_trace's traces: two traces of the
   documented timeline (5 kernels, 3 dropped records each) -> kernels 10,
   dropped 6, complete; files that are not the run's (another prefix, no pid)
   are not counted; stderr lines new against the bare run's (digits masked)
   and gpuprof messages (the summary line aside) are counted; a cut trace is
   "truncated", a corrupt one and a non-trace fail to decode, a status file
   must say "exited"; each of these exits 1.
3. scripts/matrix.sh end to end on the fake-CUDA workload (real shim, fake
   CUPTI) and on a job that crashes whenever LD_PRELOAD is set: the first row
   all ok with the workload's exact kernel count (83 in the parent + 2 in the
   CUDA-using fork child), the second all "FAIL rc=139"; traces of passing
   runs removed; BUDGET_S=0: every cell "not run", exit 0; stopped by
   SIGTERM: the table all the same; an unknown option set: exit 2.
"""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import tt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "matrix_table.py")
MATRIX = os.path.join(ROOT, "scripts", "matrix.sh")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import matrix_table  # noqa: E402

B = os.path.abspath(tt.B)


def py(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True)


def cells_of(md):
    """{(workload, column): text} from the first markdown table of md."""
    lines = [l for l in md.splitlines() if l.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for l in lines[1:]:
        if l.startswith("| workload"):
            break  # the seconds table
        cols = [c.strip() for c in l.strip("|").split("|")]
        for h, c in zip(head[1:], cols[1:]):
            out[(cols[0], h)] = c
    return out


def row(wl, opt, **kw):
    r = dict.fromkeys(matrix_table.FIELDS, "")
    r.update(workload=wl, option=opt, state="run", rc="0", wall_s="1.0", result="RESULT loss=1.000000",
             stdout_gpuprof="0", new_stdout="0", new_stderr="0")
    if opt != "bare":
        r.update(traces="1", decode="ok", integrity="complete", kernels="100", dropped="0")
    r.update({k: str(v) for k, v in kw.items()})
    return r


def write_rows(d, name, rows):
    p = os.path.join(d, name)
    with open(p, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=matrix_table.FIELDS)
        w.writeheader()
        w.writerows(rows)
    return p


def test_table(d):
    rows = [
        row("w1", "bare"),
        row("w1", "default"),
        row("w1", "api-all", new_stderr=2, new_stderr_sample="UserWarning: x"),
        row("w1", "stacks", kernels=99),
        row("w1", "pm-sampling", gpuprof_msgs="gpuprof: PM sampling off on device 0"),
        row("w1", "activity", rc=139, result="", traces=1, integrity="truncated", err_tail="Segmentation fault"),
        row("w1", "gpu-metrics", result="RESULT loss=1.000001"),
        row("w1", "gpu-window", integrity="truncated", kernels=10),
        row("w1", "capture-range", decode="info exit 2 on m-1.gpuprof: corrupt", integrity="unread"),
        row("w1", "status", status="missing"),
        row("w1", "late", state="not run", rc="", result="", traces="", decode="", integrity="", kernels=""),
        row("w1", "slow", rc=124, result=""),
        row("w1", "chatty", stdout_gpuprof=1),
        row("w1", "empty", traces=0, decode="", integrity="", kernels=""),
        row("w2", "bare", rc=1, result="", err_tail="ModuleNotFoundError: No module named 'timm'"),
        row("w2", "default", state="skip", rc="", result="", traces="", decode="", integrity="", kernels=""),
        row("w3", "bare"),
        row("w3", "default", decode="dump exit 2 on m-2.gpuprof: corrupt"),
        row("w3", "stacks", kernels=5),
        row("w3", "gpu-window", new_stderr=2, crash="[vm:05267] Signal: Segmentation fault (11)"),
    ]
    p = py("table", write_rows(d, "rows.csv", rows), "--md", os.path.join(d, "m.md"), "--csv",
           os.path.join(d, "all.csv"), "--title", "Compatibility matrix: build test")
    tt.eq(p.returncode, 1, "table with failures: exit (stderr %r)" % p.stderr)
    md = open(os.path.join(d, "m.md")).read()
    tt.eq(md, p.stdout, "the markdown file is what was printed")
    tt.expect(md.startswith("Compatibility matrix: build test\n"), "title first")
    c = cells_of(md)
    want = {
        ("w1", "bare"): "ok",
        ("w1", "default"): "ok (k=100)",
        ("w1", "api-all"): "ok (k=100, +2 err)",
        ("w1", "stacks"): "FAIL k=99≠100",
        ("w1", "pm-sampling"): "ok* (k=100)",
        ("w1", "activity"): "FAIL rc=139",
        ("w1", "gpu-metrics"): "FAIL out≠",
        ("w1", "gpu-window"): "FAIL truncated",
        ("w1", "capture-range"): "FAIL decode",
        ("w1", "status"): "FAIL status",
        ("w1", "late"): "not run",
        ("w1", "slow"): "FAIL timeout",
        ("w1", "chatty"): "FAIL stdout",
        ("w1", "empty"): "FAIL no trace",
        ("w2", "bare"): "FAIL rc=1",
        ("w2", "default"): "skip",
        ("w2", "stacks"): "not run",  # no row at all
        ("w3", "default"): "FAIL decode",
        ("w3", "stacks"): "ok (k=5, no ref)",
        ("w3", "gpu-window"): "FAIL crash",
    }
    for k, v in want.items():
        tt.eq(c.get(k), v, "cell %s × %s" % k)
    fl = [l for l in md.splitlines() if l.startswith("FAIL ")]
    tt.expect(any(l.startswith("FAIL w1 × activity: rc=139; out≠; truncated — stderr: Segmentation fault")
                  for l in fl), "activity's failure line: %s" % fl)
    tt.expect(any(l.startswith("FAIL w1 × stacks: k=99≠100") for l in fl), "stacks' failure line")
    tt.expect(any(l.startswith("FAIL w2 × bare: bare run exit 1 — stderr: ModuleNotFoundError") for l in fl),
              "w2's bare failure line: %s" % fl)
    tt.expect(any(l.startswith("FAIL w1 × capture-range: decode — info exit 2") for l in fl),
              "the decode failure names its cause")
    tt.eq(sum(1 for l in fl if l.startswith("FAIL w2 ")), 1, "a skipped row: one line (its bare run)")
    tt.expect("note w1 × pm-sampling: gpuprof: PM sampling off on device 0" in md, "gpuprof message noted")
    tt.expect("note w1 × api-all: 2 new stderr line(s), e.g. UserWarning: x" in md, "new stderr noted")
    # 3 workloads x 13 options; ok: w1 default, api-all, pm-sampling, w3 stacks; not run: w1 late and
    # the cells of w2 (12) and w3 (11) without a row
    m = re.search(r"^MATRIX (\d+) ok, (\d+) FAIL, (\d+) skipped, (\d+) not run \(of (\d+) cells\)$", md, re.M)
    tt.expect(m is not None, "summary line")
    if m:
        tt.eq(tuple(int(x) for x in m.groups()), (4, 11, 1, 23, 39), "summary counts")
    with open(os.path.join(d, "all.csv"), newline="") as f:
        tt.eq(len(list(csv.DictReader(f))), len(rows), "--csv keeps every row")

    green = [row("w1", "bare"), row("w1", "default"), row("w1", "stacks"),
             row("w1", "gpu-window", kernels=7), row("w1", "late", state="not run")]
    p = py("table", write_rows(d, "green.csv", green))
    tt.eq(p.returncode, 0, "all green (a not-run cell is no failure): exit")
    tt.eq(cells_of(p.stdout).get(("w1", "gpu-window")), "ok (k=7, n/a)", "window: its own count, n/a")
    p = py("table", write_rows(d, "green.csv", green), "--kernels-na", "")
    tt.eq(cells_of(p.stdout).get(("w1", "gpu-window")), "FAIL k=7≠100", "--kernels-na '': window compared")
    # options of --kernels-na: at most the default's count; options of --no-trace: no trace, and said so
    nt = dict(traces=0, decode="no trace, as expected", integrity="", kernels="")
    rows2 = [row("w1", "bare"), row("w1", "default"), row("w1", "sample-steps", kernels=0),
             row("w1", "capture-range", kernels=101), row("w1", "flight-recorder", **nt),
             row("w2", "bare"), row("w2", "default"), row("w2", "flight-recorder", traces=1, kernels=100),
             row("w3", "bare"), row("w3", "default"),
             row("w3", "flight-recorder", traces=0, decode="no 'nothing was captured' line", integrity="",
                 kernels="")]
    p = py("table", write_rows(d, "na.csv", rows2))
    c = cells_of(p.stdout)
    tt.eq(c.get(("w1", "sample-steps")), "ok (k=0, n/a)", "sample-steps: fewer kernels than default is n/a")
    tt.eq(c.get(("w1", "capture-range")), "FAIL k=101>100", "a part of the run with MORE kernels fails")
    tt.eq(c.get(("w1", "flight-recorder")), "ok (no trace)", "armed, not triggered: no trace is ok")
    tt.eq(c.get(("w2", "flight-recorder")), "FAIL trace written", "armed, not triggered, a trace: fails")
    tt.eq(c.get(("w3", "flight-recorder")), "FAIL not said", "no trace but no 'nothing was captured': fails")
    tt.eq(p.returncode, 1, "those failures: exit 1")
    p = py("table", os.path.join(d, "missing.csv"))
    tt.eq(p.returncode, 2, "no rows: exit 2")
    tt.expect("cannot read" in p.stderr and "Traceback" not in p.stderr, "missing file: message %r" % p.stderr)


def cell(d, name, *extra, out="RESULT loss=1.0\n", err="", bare_err="", rc=0):
    for fn, text in ((name + ".out", out), (name + ".err", err), ("bare.err", bare_err), ("bare.out", out)):
        with open(os.path.join(d, fn), "w") as f:
            f.write(text)
    rowf = os.path.join(d, name + ".csv")
    p = py("cell", "--workload", "w", "--option", name, "--row", rowf, "--rc", str(rc), "--wall-ms", "1234",
           "--stdout", os.path.join(d, name + ".out"), "--stderr", os.path.join(d, name + ".err"),
           "--bare-stdout", os.path.join(d, "bare.out"), "--bare-stderr", os.path.join(d, "bare.err"),
           "--gpuprof", tt.GPUPROF, *extra)
    with open(rowf, newline="") as f:
        rows = list(csv.DictReader(f))
    tt.eq(len(rows), 1, "%s: one row" % name)
    return p.returncode, rows[0] if rows else {}


def test_cell(d):
    t = os.path.join(d, "t")
    os.mkdir(t)
    tt.gen(os.path.join(t, "m-w-o-1000.gpuprof"))
    tt.gen(os.path.join(t, "m-w-o-2000.gpuprof"), variant="b")
    # not this run's: another prefix, no pid, something after the pid
    tt.gen(os.path.join(t, "m-w-other-3.gpuprof"))
    tt.gen(os.path.join(t, "m-w-o-x.gpuprof"))
    tt.gen(os.path.join(t, "m-w-o-4-old.gpuprof"))
    rc, r = cell(d, "good", "--traces", os.path.join(t, "m-w-o-"),
                 err="warn: step 2 took 5 ms\ngpuprof: 12 events, 0 dropped, wrote 2 files: a, b\n"
                     "gpuprof: PM sampling off on device 0\nnew line at 0x7f00\n",
                 bare_err="warn: step 1 took 13 ms\n")
    tt.eq(rc, 0, "good cell: exit")
    tt.eq((r.get("traces"), r.get("kernels"), r.get("dropped"), r.get("decode"), r.get("integrity")),
          ("2", "10", "6", "ok", "complete"), "two gen_trace traces: traces, kernels, dropped, decode, integrity")
    tt.eq(r.get("files"), "1000:k=5:complete 2000:k=5:complete", "per-file facts")
    tt.eq(r.get("result"), "RESULT loss=1.0", "RESULT line")
    tt.eq(r.get("wall_s"), "1.2", "wall seconds")
    tt.eq(r.get("new_stderr"), "1", "one new stderr line (the warning differs in digits only)")
    tt.eq(r.get("new_stderr_sample"), "new line at 0x7f00", "the new line")
    tt.eq(r.get("gpuprof_msgs"), "gpuprof: PM sampling off on device 0", "gpuprof messages, summary aside")

    data = open(os.path.join(t, "m-w-o-1000.gpuprof"), "rb").read()
    for name, content, field, want in (
            ("cut", data[:len(data) * 2 // 3], "integrity", "truncated"),
            ("corrupt", None, "decode", "info exit 2"),
            ("text", b"not a trace\n" * 8, "decode", "info exit 2")):
        if content is None:
            c = bytearray(data)
            for i in range(len(data) // 2, len(data) // 2 + 16):
                c[i] ^= 0x5A
            content = bytes(c)
        sub = os.path.join(d, name)
        os.mkdir(sub)
        with open(os.path.join(sub, "m-w-%s-77.gpuprof" % name), "wb") as f:
            f.write(content)
        rc, r = cell(d, name, "--traces", os.path.join(sub, "m-w-%s-" % name))
        tt.eq(rc, 1, "%s trace: exit" % name)
        tt.expect(r.get(field, "").startswith(want), "%s trace: %s %r, want %r..." % (name, field, r.get(field), want))
    rc, r = cell(d, "none", "--traces", os.path.join(d, "nothing-here-"))
    tt.eq((rc, r.get("traces")), (1, "0"), "no trace file: exit 1, traces 0")

    s = os.path.join(d, "s")
    os.mkdir(s)
    tr = ("--traces", os.path.join(t, "m-w-o-"))
    rc, r = cell(d, "st-none", *tr, "--status", os.path.join(s, "st-"))
    tt.eq((rc, r.get("status")), (1, "missing"), "no status file")
    with open(os.path.join(s, "st-11.json"), "w") as f:
        json.dump({"state": "exited", "kernels": 3}, f)
    rc, r = cell(d, "st-ok", *tr, "--status", os.path.join(s, "st-"))
    tt.eq((rc, r.get("status")), (0, "ok"), "status file exited")
    with open(os.path.join(s, "st-12.json"), "w") as f:
        json.dump({"state": "running"}, f)
    rc, r = cell(d, "st-run", *tr, "--status", os.path.join(s, "st-"))
    tt.eq(rc, 1, "status file still running: exit")
    tt.expect(r.get("status", "").startswith("bad: st-12.json"), "status running: %r" % r.get("status"))
    with open(os.path.join(s, "st-12.json"), "w") as f:
        f.write('{"state": "exi')
    rc, r = cell(d, "st-cut", *tr, "--status", os.path.join(s, "st-"))
    tt.expect(rc == 1 and r.get("status", "").startswith("bad: st-12.json"), "half a status file: %r" % r)

    # --expect-no-trace (flight recorder armed, not triggered): no file and the summary saying so
    said = "gpuprof: flight recorder: nothing was captured, nothing written\n"
    rc, r = cell(d, "armed", "--traces", os.path.join(d, "nothing-here-"), "--expect-no-trace", err=said)
    tt.eq((rc, r.get("traces"), r.get("decode")), (0, "0", "no trace, as expected"), "armed, no trace: ok")
    rc, r = cell(d, "armed-file", *tr, "--expect-no-trace", err=said)
    tt.eq((rc, r.get("decode")), (1, "2 trace(s) written"), "armed, traces written: exit 1")
    rc, r = cell(d, "armed-mute", "--traces", os.path.join(d, "nothing-here-"), "--expect-no-trace")
    tt.eq(rc, 1, "armed, no trace, nothing said: exit 1")

    rc, r = cell(d, "childcrash", *tr, err="[vm:05267] *** Process received signal ***\n"
                 "[vm:05267] Signal: Segmentation fault (11)\n")
    tt.eq(rc, 1, "a child's crash on stderr, job exit 0: exit 1")
    tt.expect("Segmentation fault" in r.get("crash", ""), "crash field: %r" % r.get("crash"))

    rc, r = cell(d, "crashed", *tr, rc=139, out="")
    tt.eq((rc, r.get("rc"), r.get("result")), (1, "139", ""), "a crashed run: exit 1, rc, no RESULT")
    rc, r = cell(d, "polluted", *tr, out="gpuprof: hello\nRESULT loss=1.0\n")
    tt.eq((rc, r.get("stdout_gpuprof")), (1, "1"), "a gpuprof line on stdout: exit 1")
    p = py("cell", "--workload", "w", "--option", "o", "--row", os.path.join(d, "nr.csv"), "--state", "not run")
    tt.eq(p.returncode, 0, "a not-run row: exit 0")


def test_matrix_sh(d):
    fake_cupti = os.path.join(B, "tests", "fake", "libcupti.so.13")
    workload = os.path.join(B, "tests", "fake", "workload")
    for f in (fake_cupti, workload, tt.GPUPROF):
        if not os.path.exists(f):
            tt.fail("missing %s (build first)" % f)
            return
    job = os.path.join(d, "fakejob.sh")
    with open(job, "w") as f:
        f.write('#!/bin/sh\n# the fake-CUDA workload, its stdout as RESULT lines\n'
                '"%s" > "%s/job.$$.out"; rc=$?\nsed "s/^/RESULT /" "%s/job.$$.out"; rm -f "%s/job.$$.out"\n'
                'exit $rc\n' % (workload, d, d, d))
    crash = os.path.join(d, "crash.sh")
    with open(crash, "w") as f:
        f.write('#!/bin/sh\n[ -n "${LD_PRELOAD:-}" ] && kill -SEGV $$\necho "RESULT same"\n')
    os.chmod(job, 0o755)
    os.chmod(crash, 0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPROF_", "LD_PRELOAD", "CUDA_INJECTION"))}
    res = os.path.join(d, "res")
    env.update(GPUPROF_CUPTI=fake_cupti, GPUPROF=tt.GPUPROF, RESULTS_DIR=res, MATRIX_CMD_fake=job,
               MATRIX_CMD_crash=crash, WORKLOADS="fake crash", JOBS="2", BUILD="selftest",
               OPTIONS="default stacks memory gpu-window status pm-sampling flight-recorder sample-steps "
                       "extra:--api=all+--flush-ms=50")
    p = subprocess.run(["bash", MATRIX], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    tt.eq(p.returncode, 1, "matrix.sh with a crashing row: exit (stderr %r)" % p.stderr[-500:])
    md = open(os.path.join(res, "matrix.md")).read() if os.path.exists(os.path.join(res, "matrix.md")) else ""
    tt.expect(md and md in p.stdout, "matrix.md is what was printed")
    tt.expect("Compatibility matrix: build selftest" in md, "title names the build")
    c = cells_of(md)
    for o in ("default", "stacks", "memory", "status", "extra"):
        tt.eq(c.get(("fake", o)), "ok (k=85)", "fake × %s" % o)
    tt.eq(c.get(("fake", "gpu-window")), "ok (k=85, n/a)", "fake × gpu-window")
    tt.expect(c.get(("fake", "pm-sampling"), "").startswith("ok"), "fake × pm-sampling: %r" % c.get(("fake", "pm-sampling")))
    tt.eq(c.get(("fake", "bare")), "ok", "fake bare")
    tt.eq(c.get(("fake", "flight-recorder")), "ok (no trace)", "fake × flight-recorder: armed, nothing written")
    # the fake job has no step (no NVTX step range, nothing that repeats for
    # the shim's step finder): its trace has no kernel, and its gpuprof: line
    # says so (docs/FLIGHT.md, "Step sampling"): ok*, k=0
    tt.eq(c.get(("fake", "sample-steps")), "ok* (k=0, n/a)", "fake × sample-steps")
    for o in ("default", "stacks", "memory", "gpu-window", "status", "pm-sampling", "flight-recorder", "sample-steps",
              "extra"):
        tt.eq(c.get(("crash", o)), "FAIL rc=139", "crash × %s" % o)
    tt.expect("`--api=all --flush-ms=50`" in md, "a NAME:ARG+ARG option set's arguments")
    left = [n for n in os.listdir(res) if n.endswith(".gpuprof")]
    tt.eq(left, [], "traces of passing runs removed")
    tt.expect(os.path.exists(os.path.join(res, "matrix.csv")), "matrix.csv")

    env.update(BUDGET_S="0", WORKLOADS="fake", OPTIONS="default stacks")
    p = subprocess.run(["bash", MATRIX], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    tt.eq(p.returncode, 0, "BUDGET_S=0: exit")
    c = cells_of(p.stdout)
    tt.eq([c.get(("fake", o)) for o in ("bare", "default", "stacks")], ["not run"] * 3, "BUDGET_S=0: not run")
    # stopped from outside (gpu-session's timeout): the table of what ran all the same
    slow = os.path.join(d, "slow.sh")
    with open(slow, "w") as f:
        f.write('#!/bin/sh\necho $$ > "%s/slow.pid"\nsleep 20\necho "RESULT slow"\n' % d)
    os.chmod(slow, 0o755)
    env.update(BUDGET_S="480", WORKLOADS="slow", MATRIX_CMD_slow=slow)
    # SIGTERM once the job is in flight (a fixed delay lost the race on a
    # loaded machine: the signal came before matrix.sh had set its trap)
    proc = subprocess.Popen(["bash", MATRIX], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if os.path.exists(os.path.join(d, "slow.pid")) or proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, "")
    tt.expect(p.returncode == 124 and "(stopped by a signal)" in p.stdout, "SIGTERM: exit 124 and says so")
    tt.eq([cells_of(p.stdout).get(("slow", o)) for o in ("bare", "default")], ["not run"] * 2,
          "SIGTERM: the table, with the cells that did not finish 'not run'")
    try:
        pid = int(open(os.path.join(d, "slow.pid")).read())
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        state = "gone"
    tt.expect(state in ("gone", "Z", "X"), "SIGTERM: the job in flight was killed too (state %s)" % state)
    env.update(OPTIONS="default no-such-option")
    p = subprocess.run(["bash", MATRIX], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    tt.expect(p.returncode == 2 and "unknown option set 'no-such-option'" in p.stderr,
              "unknown option set: exit 2 and says so (%d, %r)" % (p.returncode, p.stderr))


with tt.tmpdir() as d:
    for name, fn in (("table", test_table), ("cell", test_cell), ("matrix.sh", test_matrix_sh)):
        sub = os.path.join(d, name)
        os.mkdir(sub)
        fn(sub)
    shutil.rmtree(d, ignore_errors=True)
tt.finish()
