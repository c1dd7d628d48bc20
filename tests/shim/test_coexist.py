"""GPUPROF_COEXIST on the fake CUPTI (docs/CONFIG.md "Beside the job's own
profiler"): the workload's WL_PROFILE=A:B is the job's own CUPTI profiler
over steps A..B, calling CUPTI as Kineto does (tests/fake/workload.c); it
prints what it recorded ("profile A..B subscribe RC callbacks N kernels
K,K,... unknown-buffers U"; refused its subscription it records no GPU
activity, as Kineto).  The fake CUPTI has one subscriber and one pair
of buffer callbacks, as the real one (tests/fake/fake_cupti.c says where
that comes from).  The `steps` mode launches two kernels a step whose grid
is the step + 1.

C1. gpuprof first, its profiler over steps 10..15 (default: yield): the
    profiler's line is a bare run's (subscribed, its launch callbacks —
    forwarded from gpuprof's shared subscription —, 2 kernels a step, no
    foreign buffer); gpuprof's trace has every step's launches, the 2
    kernels of every step outside 10..15 and none inside; marks say it
    shares the callbacks, gave the activity and took it back; counters
    gpuprof.coexist.shared 1 (Kineto keeps its subscription),
    gpuprof.coexist.activity 1 then 0, no gpuprof.coexist.callbacks; one
    gpuprof: line names the profiler's code.
C2. The same with teardown (Kineto's TEARDOWN_CUPTI=1: unsubscribe,
    cuptiFinalize): the profiler's line as bare; the finalize takes gpuprof's
    subscription too (shared 1 then 0, callbacks counter 1 then 0), made
    again at the flush thread's next tick: the kernels and launches of the last 10 steps are
    recorded, and their kernels lie inside their step's
    NVTX range (the timestamp callback was registered again after the
    finalize).
C3. keep: the profiler gets nothing (subscribe 39, 0 kernels: it went
    CPU-only, as Kineto does); gpuprof's trace is whole (every step's
    kernels and launches); one line says so.
C4. The profiler first (it subscribes before the first CUDA call): today's
    switch-off, its line as bare, one gpuprof: line naming the job's code,
    no trace.
C5. Armed (flight recorder), the profiler over steps 20..30: a trigger at
    step 5 captures steps 6..8; one at step 25 is refused and says the job's
    profiler holds CUPTI; one at step 40 captures steps 41..43 with their
    kernels.
C6. A profiler that registers its buffer callbacks before the first CUDA
    call (gpuprof binds later and registers its own over them) and enables
    its kind at step 10: its pair is registered again first, its line is a
    bare run's, gpuprof's gap as in C1.
C7. Two windows (10..15, then 20..25 with the same subscription: Kineto's
    next profile): both as bare, two activity gaps (counter 1 0 1 0),
    gpuprof's kernels of every step outside both.
C8. A profiler that registers its buffer callbacks again while its kind is
    on, over a window longer than the 1 s fallback (steps of 250 ms): gpuprof
    waits for its stop (the kinds it has on are kept), its line as bare.
Each job: exit 0, its stdout as told, only gpuprof: lines on stderr."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import Env, Facts, Job  # noqa: E402

E = Env(sys.argv[1] if len(sys.argv) > 1 else "build")
PROF = {"WL_PROFILE_CUPTI": E.cupti}


def bare(steps, ms, profile, extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPROF_", "WL_")) and k != "LD_PRELOAD"}
    e.update(PROF, WL_PROFILE=profile)
    e.update(extra or {})
    p = subprocess.run([E.workload, "steps", str(steps), str(ms)], env=e, capture_output=True, text=True,
                       timeout=60)
    E.check(p.returncode == 0, "bare %s: exit %d %s" % (profile, p.returncode, p.stderr))
    return p.stdout


def traced(name, steps, ms, profile, extra=None):
    x = dict(PROF, WL_PROFILE=profile)
    x.update(extra or {})
    j = Job(E, name, ["steps", steps, ms], x)
    j.wait()
    E.check(j.p.returncode == 0, "%s: exit %s: %s" % (name, j.p.returncode, j.err))
    E.check(not j.foreign(), "%s: foreign stderr %r" % (name, j.foreign()))
    return j


def launch_steps(f):
    """Steps whose kernels have their launch record in the trace."""
    corr = {a["corr"] for a in f.apis if a["name"] == "cudaLaunchKernel"}
    return sorted({k["grid"][0] - 1 for k in f.kernels if k["corr"] in corr})


STEPS, MS = 30, 5
window = set(range(10, 16))

# C1
want = bare(STEPS, MS, "10:15")
E.check(want.startswith("profile 10..15 subscribe 0 callbacks 12 kernels 2,2,2,2,2,2 unknown-buffers 0\n"),
        "C1 bare: %r" % want)
j = traced("c1", STEPS, MS, "10:15")
E.check(j.out == want, "C1: the profiler's line %r, bare %r" % (j.out, want))
f = Facts(E, j.traces()[0])
E.check(dict(f.kernel_steps) == {s: 2 for s in range(STEPS) if s not in window},
        "C1: gpuprof's kernels by step %s" % dict(f.kernel_steps))
E.check(f.counters["gpuprof.coexist.activity"] == [1, 0] and f.counters["gpuprof.coexist.shared"] == [1]
        and not f.counters["gpuprof.coexist.callbacks"], "C1: counters %s" % dict(f.counters))
E.check(len(f.marks) == 3 and "shares its CUPTI callbacks" in f.marks[0] and "activity buffers" in f.marks[1]
        and "took the CUPTI activity buffers back" in f.marks[2], "C1: marks %s" % f.marks)
E.check(f.launches() == 2 * STEPS and launch_steps(f) == sorted(set(range(STEPS)) - window),
        "C1: %d launches, of the steps with kernels %s" % (f.launches(), launch_steps(f)))
gp = [l for l in j.gp_lines() if "profiler" in l]
E.check(len(gp) == 1 and "profiler (workload)" in gp[0] and "GPUPROF_COEXIST=yield" in gp[0], "C1: lines %s" % gp)

# C2
STEPS2, MS2 = 40, 10
want = bare(STEPS2, MS2, "10:15:teardown")
j = traced("c2", STEPS2, MS2, "10:15:teardown")
E.check(j.out == want and " unknown-buffers 0\n" in want, "C2: the profiler's line %r, bare %r" % (j.out, want))
f = Facts(E, j.traces()[0])
# after the finalize ours are made again on the flush thread's tick (100 ms)
E.check(all(f.kernel_steps[s] == 2 for s in list(range(10)) + list(range(30, 40))) and not window & set(f.kernel_steps),
        "C2: gpuprof's kernels by step %s" % dict(f.kernel_steps))
E.check(f.counters["gpuprof.coexist.callbacks"] == [1, 0] and f.counters["gpuprof.coexist.shared"] == [1, 0],
        "C2: counters %s" % dict(f.counters))
got = launch_steps(f)
E.check(set(range(30, 40)) <= set(got) and not window & set(got), "C2: launches of steps %s" % got)
inside = [k for k in f.kernels if k["grid"][0] - 1 >= 30 and
          f.step_ranges[k["grid"][0] - 1][0] <= k["start"] <= f.step_ranges[k["grid"][0] - 1][1] + 50_000_000]
E.check(len(inside) == 20, "C2: %d of the last 10 steps' kernels inside their step" % len(inside))

# C3
j = traced("c4", STEPS, MS, "10:15", {"GPUPROF_COEXIST": "keep"})
E.check(j.out.startswith("profile 10..15 subscribe 39 callbacks 0 kernels 0,0,0,0,0,0 unknown-buffers 0\n"),
        "C3: the profiler's line %r" % j.out)
f = Facts(E, j.traces()[0])
E.check(dict(f.kernel_steps) == {s: 2 for s in range(STEPS)} and f.launches() == 2 * STEPS,
        "C3: kernels %s, %d launches" % (dict(f.kernel_steps), f.launches()))
gp = [l for l in j.gp_lines() if "profiler" in l]
E.check(len(gp) == 1 and "keeps CUPTI" in gp[0], "C3: lines %s" % gp)

# C4
want = bare(STEPS, MS, "-1:5")
j = traced("c5", STEPS, MS, "-1:5")
E.check(j.out == want, "C4: the profiler's line %r, bare %r" % (j.out, want))
gp = j.gp_lines()
E.check(len(gp) == 1 and "another CUPTI tool is attached (the job's own profiler, in workload)" in gp[0],
        "C4: lines %s" % gp)
E.check(not j.traces(), "C4: a trace while switched off: %s" % j.traces())

# C5
gates = {5: "g5", 25: "g25", 40: "g40"}
x = {"GPUPROF_FLIGHT_RECORDER": "30s", "WL_PROFILE": "20:30"}
j = Job(E, "c6", ["steps", 50, 10], dict(PROF, **x, WL_GATE=",".join(
    "%d:%s" % (s, os.path.join(E.tmp, "c6-" + g)) for s, g in gates.items())))
replies = {}
for s, g in gates.items():
    E.check(j.registered(timeout=20, min_step=s) is not None, "C5: step %d not reached" % s)
    replies[s] = j.trigger("--steps", 3, j.pid)
    open(os.path.join(E.tmp, "c6-" + g), "w").close()
j.wait(timeout=90)
E.check(j.p.returncode == 0 and not j.foreign(), "C5: exit %s %r" % (j.p.returncode, j.err))
E.check(replies[5].returncode == 0 and replies[40].returncode == 0,
        "C5: triggers %s" % [(r.returncode, r.stdout, r.stderr) for r in replies.values()])
r25 = replies[25].stdout + replies[25].stderr
E.check(replies[25].returncode != 0 and "the job's own profiler has held CUPTI" in r25, "C5: step 25's %r" % r25)
caps = j.captures()
E.check(len(caps) == 2, "C5: captures %s" % caps)
if len(caps) == 2:
    k1, k2 = Facts(E, caps[0]).kernel_steps, Facts(E, caps[1]).kernel_steps
    E.check(sorted(k1) == [6, 7, 8], "C5: capture 1 kernels of steps %s" % dict(k1))
    E.check({41, 42, 43} <= set(k2) and all(k2[s] == 2 for s in (41, 42, 43)),
            "C5: capture 2 kernels of steps %s" % dict(k2))
# C6
want = bare(STEPS, MS, "10:15:early")
E.check(want.startswith("profile 10..15 subscribe 0 callbacks 12 kernels 2,2,2,2,2,2 unknown-buffers 0\n"),
        "C6 bare: %r" % want)
j = traced("c7", STEPS, MS, "10:15:early")
E.check(j.out == want, "C6: the profiler's line %r, bare %r" % (j.out, want))
f = Facts(E, j.traces()[0])
E.check(dict(f.kernel_steps) == {s: 2 for s in range(STEPS) if s not in window},
        "C6: gpuprof's kernels by step %s" % dict(f.kernel_steps))
E.check(f.counters["gpuprof.coexist.activity"] == [1, 0], "C6: counters %s" % dict(f.counters))

# C7
window2 = set(range(20, 26))
x = {"WL_PROFILE_AGAIN": "20:25"}
want = bare(STEPS, MS, "10:15", x)
E.check("\nagain 20..25 kernels 2,2,2,2,2,2\n" in want, "C7 bare: %r" % want)
j = traced("c8", STEPS, MS, "10:15", x)
E.check(j.out == want, "C7: the profiler's lines %r, bare %r" % (j.out, want))
f = Facts(E, j.traces()[0])
E.check(dict(f.kernel_steps) == {s: 2 for s in range(STEPS) if s not in window | window2},
        "C7: gpuprof's kernels by step %s" % dict(f.kernel_steps))
E.check(f.counters["gpuprof.coexist.activity"] == [1, 0, 1, 0], "C7: counters %s" % dict(f.counters))
# C8
want = bare(20, 250, "10:15:twice")
j = traced("c9", 20, 250, "10:15:twice")
E.check(j.out == want and "kernels 2,2,2,2,2,2 " in want, "C8: the profiler's line %r, bare %r" % (j.out, want))
f = Facts(E, j.traces()[0])
E.check(dict(f.kernel_steps) == {s: 2 for s in range(20) if s not in window},
        "C8: gpuprof's kernels by step %s" % dict(f.kernel_steps))
E.finish()
