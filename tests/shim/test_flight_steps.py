"""Steps found online without NVTX (docs/STEPS.md "Steps found online
(shim)", docs/FLIGHT.md "Steps") on the fake CUPTI.  The workload's `plain`
mode: 24 parameter copies, then steps of a 64 KiB host-to-device copy, two
kernels whose grid names the step, a memset, a 4-byte device-to-host copy and
a stream synchronisation; no NVTX.

S1. --sample-steps 1/10: the trace has the finder's mark (a host-to-device
    copy of 65536 bytes, period 3 events), NVTX ranges "step N" in domain
    "gpuprof" numbered as the workload's steps, consecutive up to the last
    whole step, found within the first 40 steps, and the last one, open at
    exit, as "step 199 (partial)" after step 198; the sampled steps are the
    found ones that are multiples of 10, two kernels each, one window each;
    each sampled step's input copy is in its step's range (the boundary is
    at the copy, which begins the step) and in its window.
S2. Armed, step>100x (above the loaded test machine's jitter, docs/FLIGHT.md), a 700 ms stall at step 100: one capture, of steps
    101..105, whose mark names the rule and step 100.
S3. Armed, `gpuprof trigger --steps 10` at step >= 60: a capture of exactly
    10 consecutive steps' kernels, the reply says 10 whole steps.
S4. Armed, GPUPROF_FLIGHT_API=auto with a rate of 100 (the switch comes
    within a second), a stall at step 400: the switch's line, then the
    step rule still captures 401..405; the capture's history holds no API
    record outside its window (the launches' callbacks are off) but the
    found steps' ranges up to the stall.
S5. NVTX steps win: the same job with NVTX step ranges from step 0 has no
    found step (no mark, no range in domain gpuprof) and samples steps 0,
    10, ..., 90; with NVTX from step 60, the found steps end by step 61 and
    the NVTX ones take over (no step has both).
S6. No structure (sizes, kernels and counts at random): --sample-steps says
    at exit that no step was found and what the trace holds (no kernel);
    the idle rule (NVML busy for 5 samples, then idle) captures by time
    (GPUPROF_TRIGGER_SECONDS).
S7. GPUPROF_STEPS=nvtx: no found step, the sampling line names the setting.
S8. Kernels only (no copy, no sync): --sample-steps 1/10 finds the step at
    its first kernel (the one after the host gap) and samples the steps that
    are multiples of 10, two kernels each; armed with a rate of 100 the
    switch turns the launches' callbacks off after the finder learnt: one
    line says the steps are no longer seen and the rules fall back to time.
S9. Warm-up: 5 first steps with a bigger input copy and an extra kernel:
    the steady input copy is still the boundary (not the loss copy, which
    occurs since step 0), so each sampled step holds one loop step's two
    kernels; its numbers count the steady steps (5 lower than the loop's).
S10. A new phase: from step 150 the input copy is 32 KiB.  The finder
    learns again (a second mark, 32768 bytes); the step around the change is
    abandoned, so the step rule (50x, which its ~85 steps' time exceeds)
    does not fire; the numbers go on increasing.
S12. GPUPROF_API_MODE=activity (API records from CUPTI activity, so the
    marker callbacks feed the finder only): --sample-steps 1/10 finds the
    same boundary and samples the found steps as S1; armed with step>50x and
    a 700 ms stall at step 100, one capture of steps 101..105.
S16. An HF Trainer's step with padded batches (S11's, the input copies of
    a size drawn per step): the sizes are left out once the learning
    window slid (steps found from about step 100, numbered a constant
    below the job's), the boundary is the first input copy in its context
    ("of any size"), the sampled steps those of the found numbers.
S17. The steps on a thread of their own (WL_STEP_THREAD=1),
    the main thread idle after the model load: the step thread takes the
    finder's place (2 s, 1,024 events) and its steps are found there.
S18. The steps on a thread of their own beside a busy main thread
    (WL_STEP_THREAD=2, kernels only: the finder's first thread goes on
    making copies that repeat in no step, as JAX's transfer threads make the
    first calls and its main thread every launch): the launching thread
    takes the finder's place after 64 launches while the main thread
    made none, and its kernel boundary is found there.
S19. S18 with each step one CUDA graph launch and nothing else (WL_GRAPH_STEP,
    as JAX's XLA launches a step): the launcher takes the place, and the
    graph launch, a period of one event, is the boundary.
S13. GPUPROF_CAPTURE_RANGE with --sample-steps: sampling is refused with one
    line, so no finder runs (no found mark, no found step range).
S14. The status file (and `gpuprof top`) of an armed job with found steps (no NVTX), read at
    step 250 of 5 ms steps: the step, step_ms_median and steps_per_s are the
    found steps' (a median of at least the 5 ms sleep, a rate below 1 over
    it).
S15. Armed with API records off (GPUPROF_FLIGHT_API=capture, and
    GPUPROF_API_MODE=activity), no capture: once the boundary (the input
    copy) is found, the callbacks kept for learning narrow to its classes at
    once (cudaStreamSynchronize's off, cudaMemcpy's on: the fake CUPTI asked
    at step 250); with the API history on (all) both stay on (the records'),
    and with a boundary in its context (WL_TWIN) every marker's stays on.
Each job: exit 0, its stdout, only gpuprof: lines on stderr."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import Env, Facts, Job  # noqa: E402

E = Env(sys.argv[1])
FLIGHT = {"GPUPROF_FLIGHT_RECORDER": "1s"}


def plain(name, steps, extra, ms=2):
    j = Job(E, name, ["plain", steps, ms], extra)
    j.wait()
    j.check_ran(E, steps)
    return j


def found_ranges(f):
    """{step: (start, end)} of the ranges in domain gpuprof named "step N"."""
    return {int(r["message"][5:]): (r["start"], r["end"]) for r in f.recs
            if r["type"] == "nvtx_range" and r.get("domain") == "gpuprof" and r["message"].startswith("step ")
            and r["message"][5:].isdigit()}


def partial_ranges(f):
    """[(message, start, end)] of the found step left open at exit."""
    return [(r["message"], r["start"], r["end"]) for r in f.recs
            if r["type"] == "nvtx_range" and r.get("domain") == "gpuprof" and r["message"].endswith(" (partial)")]


def job_ranges(f):
    return {int(r["message"][5:]) for r in f.recs
            if r["type"] == "nvtx_range" and r.get("domain") != "gpuprof" and r["message"].startswith("step ")
            and r["message"][5:].isdigit()}


def found_marks(f):
    return [m for m in f.marks if m.startswith("gpuprof steps found online")]


def check_found(f, what):
    """The plain job's 200 steps found at its input copy: one mark, the found
    steps from 14..40 (learning) to 198 (199 stays open); (ranges, first)."""
    fm = found_marks(f)
    E.check(len(fm) == 1 and "each starts at a host-to-device copy of 65536 bytes (period 3 API events" in fm[0],
            "%s: marks %s" % (what, f.marks))
    fr = found_ranges(f)
    first = min(fr) if fr else -1
    E.check(fr and 14 <= first <= 40 and sorted(fr) == list(range(first, 199)), "%s: found steps %s" % (what, sorted(fr)))
    return fr, first


# S1: sampling on found steps
j = plain("s1", 200, {"GPUPROF_SAMPLE_STEPS": "1/10"})
E.check(len(j.traces()) == 1, "S1: files %s" % j.traces())
if j.traces():
    f = Facts(E, j.traces()[0])
    fr, first = check_found(f, "S1")
    want = [s for s in range(0, 200, 10) if s >= first and s < 199]
    f.check_sampled(E, "S1", want)
    # the last step (199) is left open at exit: recorded by the final flush, flagged, after step 198
    pr = partial_ranges(f)
    E.check(len(pr) == 1 and pr[0][0] == "step 199 (partial)" and 198 in fr and fr[198][1] <= pr[0][1] < pr[0][2],
            "S1: partial step %s" % pr)
    launch = {a["corr"]: a["start"] for a in f.apis}
    htod = [m for m in f.recs if m["type"] == "memcpy" and m.get("bytes") == 65536]
    E.check(len(htod) == len(want), "S1: %d input copies in the windows, want %d" % (len(htod), len(want)))
    for m in htod:
        t = launch.get(m["corr"], -1)
        inside = [s for s, (a, b) in fr.items() if a <= t <= b]
        E.check(len(inside) == 1 and inside[0] in want, "S1: input copy at %d in steps %s" % (t, inside))
        E.check(any(a <= t <= b for a, b in f.windows), "S1: input copy at %d in no window" % t)

# S2: the step rule on found steps, armed
j = plain("s2", 200, dict(FLIGHT, GPUPROF_TRIGGER="step>100x", WL_STALL="100:700"), ms=5)
caps = [Facts(E, c) for c in j.captures()]
E.check([c.own_steps() for c in caps] == [list(range(101, 106))], "S2: captured %s" % [c.own_steps() for c in caps])
if caps:
    E.check(len(caps[0].marks) == 1 and "rule step>100x: step 100 took 7" in caps[0].marks[0] and
            caps[0].marks[0].endswith("; 5 steps from step 101"), "S2: marks %s" % caps[0].marks)
    E.check(all(n == 2 for n in caps[0].kernel_steps.values()), "S2: kernels %s" % dict(caps[0].kernel_steps))

# S3: gpuprof trigger --steps 10
j = Job(E, "s3", ["plain", 600, 5], FLIGHT)
E.check(j.registered(timeout=20, min_step=60) is not None, "S3: no registration with step >= 60")
r = j.trigger(j.pid, "--steps", 10, "--wait")
E.check(r.returncode == 0 and "accepted: capture 1: 10 whole steps" in r.stdout and ": done: capture 1" in r.stdout,
        "S3: trigger %d %r %r" % (r.returncode, r.stdout, r.stderr))
j.wait()
j.check_ran(E, 600)
caps = [Facts(E, c) for c in j.captures()]
E.check(len(caps) == 1, "S3: captures %s" % j.captures())
if caps:
    st = caps[0].own_steps()
    E.check(len(st) == 10 and st == list(range(st[0], st[0] + 10)) and st[0] >= 60 and
            all(caps[0].kernel_steps[s] == 2 for s in st), "S3: captured %s" % st)

# S4: the API callbacks switched off (auto): the markers still make steps
j = plain("s4", 600, dict(FLIGHT, GPUPROF_FLIGHT_API_RATE="100", GPUPROF_TRIGGER="step>100x", WL_STALL="400:700"), ms=3)
E.check(any("API calls are kept only in captures from now on" in l for l in j.gp_lines()), "S4: no switch: %s" %
        j.gp_lines())
caps = [Facts(E, c) for c in j.captures()]
E.check([c.own_steps() for c in caps] == [list(range(401, 406))], "S4: captured %s" % [c.own_steps() for c in caps])
if caps:
    f = caps[0]
    out = f.apis_outside_windows()
    E.check(not out, "S4: %d API records outside the window (%s)" % (len(out), out[:2]))
    fr = found_ranges(f)
    E.check(fr and 399 in fr and len([s for s in fr if s < 400]) >= 50, "S4: found steps in the history %s" % sorted(fr)[:5])

# S11: a step in which no call occurs once (WL_TWIN: an HF Trainer's two alike input copies and
# three loss copies, each synchronised): the boundary is told apart by the calls before it, and is
# still seen after the auto switch (every marker's callback stays on)
j = plain("s11", 600, dict(FLIGHT, GPUPROF_FLIGHT_API_RATE="100", GPUPROF_TRIGGER="step>100x", WL_STALL="400:700",
                           WL_TWIN="1"), ms=3)
E.check(not any("no more steps are seen" in l for l in j.gp_lines()), "S11: lost at the switch: %s" % j.gp_lines())
caps = [Facts(E, c) for c in j.captures()]
E.check([c.own_steps() for c in caps] == [list(range(401, 406))], "S11: captured %s" % [c.own_steps() for c in caps])
if caps:
    E.check(all(n == 2 for n in caps[0].kernel_steps.values()), "S11: kernels %s" % dict(caps[0].kernel_steps))

def in_context(name, steps, extra, copy, what):
    """A twin-copy job (WL_TWIN) sampled 1 step in 10: its one mark, the boundary the first input
    copy (of `copy`) told apart by the 2 calls before it; (facts, found ranges), or (None, {})."""
    j = plain(name, steps, dict({"GPUPROF_SAMPLE_STEPS": "1/10", "WL_TWIN": "1"}, **extra))
    if not j.traces():
        return None, {}
    f = Facts(E, j.traces()[0])
    fm = found_marks(f)
    E.check(len(fm) == 1 and ("each starts at a host-to-device copy of %s, told apart by the 2 calls before it "
                              "(period 10 API events" % copy) in fm[0], "%s: marks %s" % (what, f.marks))
    return f, found_ranges(f)


f, fr = in_context("s11b", 200, {}, "65536 bytes", "S11")
if f:
    first = min(fr) if fr else -1
    E.check(fr and 10 <= first <= 40 and sorted(fr) == list(range(first, max(fr) + 1)) and max(fr) >= 197,
            "S11: found steps %s" % sorted(fr))
    # the boundary in its context first occurs in the job's step 1 (step 0's input copy follows the
    # model's, not a loss copy): the found steps are numbered one below the job's own
    want = [s for s in range(0, 200, 10) if s >= first and s <= max(fr)]
    E.check(sorted(f.kernel_steps) == [s + 1 for s in want] and all(n == 2 for n in f.kernel_steps.values()),
            "S11: kernels of the job's steps %s, want those of found %s" % (dict(f.kernel_steps), want))

# S16: an HF Trainer's step with its batch padded to its longest sample (WL_TWIN and WL_PAD: the two
# input copies of a size drawn per step): no step runs alike with the copies' sizes; without them the
# boundary is the first input copy told apart by the calls before it, as S11's
f, fr = in_context("s16", 300, {"WL_PAD": "1"}, "any size", "S16")
if f:
    # without the sizes only once the learning window slid (1,024 markers, 10 a step); the numbers
    # count the boundary in the window only (docs/STEPS.md), so they run a constant k below the job's
    E.check(fr and sorted(fr) == list(range(min(fr), max(fr) + 1)), "S16: found steps %s" % sorted(fr))
    want = [s for s in range(0, 300, 10) if fr and min(fr) <= s <= max(fr) + 1]  # + 1: the partial last
    k = min(f.kernel_steps) - want[0] if want and f.kernel_steps else 0
    E.check(want and sorted(f.kernel_steps) == [s + k for s in want] and all(n == 2 for n in f.kernel_steps.values())
            and 100 <= min(fr) + k <= 140 and max(fr) + k >= 298,
            "S16: kernels of the job's steps %s, want those of found %s (+ %d)" % (dict(f.kernel_steps), want, k))
    sizes = {m["bytes"] for m in f.recs if m["type"] == "memcpy" and m.get("kind") == "HtoD"}
    E.check(len(sizes) > 5, "S16: the input copies' sizes vary: %s" % sorted(sizes))

def step_thread_case(name, extra, boundary):
    """S17-S19: a 3,000-step job whose steps run on a thread of their own; the finder's one mark names
    boundary, its steps are numbered without a gap, on that thread (not the main one).  The facts, or
    None when no trace came."""
    j = plain(name.lower(), 3000, dict({"GPUPROF_SAMPLE_STEPS": "1/10"}, **extra), ms=1)
    if not j.traces():
        return None
    f = Facts(E, j.traces()[0])
    fm = found_marks(f)
    E.check(len(fm) == 1 and boundary in fm[0], "%s: marks %s" % (name, f.marks))
    fr = found_ranges(f)
    E.check(len(fr) >= 300 and sorted(fr) == list(range(min(fr), max(fr) + 1)), "%s: %d found steps" % (name, len(fr)))
    tids = {r["tid"] for r in f.recs if r["type"] == "nvtx_range" and r.get("domain") == "gpuprof"}
    E.check(tids and j.pid not in tids, "%s: the found steps' thread %s (the main thread is %d)" % (name, tids, j.pid))
    return j, f


# S17: the steps on a thread of their own (WL_STEP_THREAD): the main thread, the finder's first owner,
# makes no call after the model load; once it has made none for 2 s while the step thread made 1,024, the
# step thread takes its place
step_thread_case("S17", {"WL_STEP_THREAD": "1"}, "each starts at a host-to-device copy of 65536 bytes (period 3 API events")

# S18: as S17, but the main thread stays busy with copies that repeat in no step (WL_STEP_THREAD=2) and the
# step thread only launches: it takes the place by its 64 launches
jf = step_thread_case("S18", {"WL_STEP_THREAD": "2", "WL_KERNELS_ONLY": "1"}, "each starts at a kernel launch")
if jf:
    j, f = jf
    copies = [r for r in f.recs if r["type"] == "api" and r.get("tid") == j.pid and "Memcpy" in r.get("name", "")]
    E.check(len(copies) > 300, "S18: the main thread's copies during the steps: %d" % len(copies))

# S19: S18 with a step of one graph launch (JAX's): found at the graph, on the launching thread
step_thread_case("S19", {"WL_STEP_THREAD": "2", "WL_GRAPH_STEP": "1"},
                 "each starts at a CUDA graph launch (period 1 API events")

# S5: NVTX steps win
j = plain("s5", 100, {"GPUPROF_SAMPLE_STEPS": "1/10", "WL_NVTX_FROM": "0"})
if j.traces():
    f = Facts(E, j.traces()[0])
    E.check(not found_marks(f) and not found_ranges(f), "S5: found %s %s" % (found_marks(f), found_ranges(f)))
    f.check_sampled(E, "S5", list(range(0, 100, 10)))
j = plain("s5late", 150, {"GPUPROF_SAMPLE_STEPS": "1/10", "WL_NVTX_FROM": "60"})
if j.traces():
    f = Facts(E, j.traces()[0])
    fr, jr = set(found_ranges(f)), job_ranges(f)
    E.check(fr and max(fr) <= 61 and not (fr & jr) and set(range(62, 150)) <= jr,
            "S5 late: found %s, NVTX %s" % (sorted(fr)[-3:], sorted(jr)[:3]))

# S6: no structure
j = plain("s6", 300, {"GPUPROF_SAMPLE_STEPS": "1/10", "WL_IRREGULAR": "1"})
E.check(any("step sampling (GPUPROF_SAMPLE_STEPS=1/10): no training step in this process (no repeating step found" in l
            and "no GPU activity" in l for l in j.gp_lines()), "S6: lines %s" % j.gp_lines())
if j.traces():
    f = Facts(E, j.traces()[0])
    E.check(not f.kernels and not found_ranges(f), "S6: %d kernels" % len(f.kernels))
nvml = os.path.join(E.build, "tests/fake/libnvidia-ml.so.1")
j = plain("s6idle", 400, dict(FLIGHT, GPUPROF_TRIGGER="idle>70%", GPUPROF_GPU_METRICS="100", GPUPROF_NVML=nvml,
                              FAKE_NVML_DEVICES="1", FAKE_NVML_BUSY_FIRST="5", GPUPROF_TRIGGER_SECONDS="0.3",
                              WL_IRREGULAR="1"), ms=5)
caps = [Facts(E, c) for c in j.captures()]
E.check(len(caps) == 1 and caps[0].marks and "rule idle>70%: GPU idle" in caps[0].marks[0] and
        caps[0].marks[0].endswith("0.300 s"), "S6 idle: captures %s" % [c.marks for c in caps])

# S7: GPUPROF_STEPS=nvtx
j = plain("s7", 100, {"GPUPROF_SAMPLE_STEPS": "1/10", "GPUPROF_STEPS": "nvtx"})
E.check(any("no training step in this process (no NVTX step range, and GPUPROF_STEPS=nvtx)" in l
            for l in j.gp_lines()), "S7: lines %s" % j.gp_lines())
if j.traces():
    f = Facts(E, j.traces()[0])
    E.check(not f.kernels and not found_ranges(f), "S7: %d kernels" % len(f.kernels))
# S8: a kernel launch as the boundary
j = plain("s8", 800, {"GPUPROF_SAMPLE_STEPS": "1/10", "WL_KERNELS_ONLY": "1"}, ms=1)
if j.traces():
    f = Facts(E, j.traces()[0])
    fm = found_marks(f)
    E.check(len(fm) == 1 and "each starts at a kernel launch (period 2 API events" in fm[0], "S8: marks %s" % f.marks)
    fr = found_ranges(f)
    first = min(fr) if fr else -1
    E.check(fr and sorted(fr) == list(range(first, 799)), "S8: found steps %s" % sorted(fr)[:3])
    f.check_sampled(E, "S8", [s for s in range(0, 800, 10) if first <= s < 799])
j = plain("s8off", 20000, dict(FLIGHT, GPUPROF_FLIGHT_API_RATE="100", WL_KERNELS_ONLY="1"), ms=0)
E.check(any("steps: each step starts at a kernel launch, and the API callbacks for launches are now off" in l
            for l in j.gp_lines()), "S8 off: lines %s" % j.gp_lines())
# S9: warm-up
j = plain("s9", 150, {"GPUPROF_SAMPLE_STEPS": "1/10", "WL_WARMUP": "5"})
if j.traces():
    f = Facts(E, j.traces()[0])
    fm = found_marks(f)
    E.check(len(fm) == 1 and "a host-to-device copy of 65536 bytes" in fm[0], "S9: marks %s" % f.marks)
    fr = found_ranges(f)
    E.check(fr and sorted(fr) == list(range(min(fr), 144)), "S9: found %s" % sorted(fr)[:3])
    f.check_sampled(E, "S9", [s + 5 for s in range(0, 150, 10) if fr and min(fr) <= s < 144])

# S10: a new phase, learnt again
j = plain("s10", 450, {"GPUPROF_SAMPLE_STEPS": "1/10", "GPUPROF_TRIGGER": "step>50x", "WL_BATCH_FROM": "150:32768"})
if j.traces():
    f = Facts(E, j.traces()[0])
    fm = found_marks(f)
    E.check(len(fm) == 2 and "65536 bytes" in fm[0] and "32768 bytes" in fm[1], "S10: marks %s" % f.marks)
    E.check(not [m for m in f.marks if m.startswith("gpuprof capture")], "S10: a rule fired: %s" % f.marks)
    fr = sorted(found_ranges(f))
    E.check(fr and fr[0] < 150 and fr[-1] > 250 and len(set(fr)) == len(fr), "S10: found %s..%s" % (fr[:1], fr[-1:]))

# S12: API records from activity
j = plain("s12", 200, {"GPUPROF_SAMPLE_STEPS": "1/10", "GPUPROF_API_MODE": "activity"})
if j.traces():
    f = Facts(E, j.traces()[0])
    fr, first = check_found(f, "S12")
    f.check_sampled(E, "S12", [s for s in range(0, 200, 10) if s >= first and s < 199])
j = plain("s12armed", 200, dict(FLIGHT, GPUPROF_API_MODE="activity", GPUPROF_TRIGGER="step>50x", WL_STALL="100:700"))
caps = [Facts(E, c) for c in j.captures()]
E.check(len(caps) == 1 and caps[0].kernel_steps and sorted(caps[0].kernel_steps) == [101, 102, 103, 104, 105] and
        any("rule step>50x: step 100 took" in m for m in caps[0].marks),
        "S12 armed: captures %s" % [(sorted(c.kernel_steps), c.marks) for c in caps])

# S13: a capture range leaves no room for sampling, so no finder
j = plain("s13", 100, {"GPUPROF_SAMPLE_STEPS": "1/10", "GPUPROF_CAPTURE_RANGE": "cudaProfilerApi"})
E.check(any("GPUPROF_SAMPLE_STEPS cannot be combined with GPUPROF_CAPTURE_RANGE; no step sampling" in l
            for l in j.gp_lines()), "S13: lines %s" % j.gp_lines())
for t in j.traces():
    f = Facts(E, t)
    E.check(not found_marks(f) and not found_ranges(f), "S13: found %s %s" % (found_marks(f), found_ranges(f)))

# S14: the status file's steps are the found steps
status, ready = os.path.join(E.tmp, "s14-status.json"), os.path.join(E.tmp, "s14-ready")
j = Job(E, "s14", ["plain", 800, 5], dict(FLIGHT, GPUPROF_STATUS=status, WL_READY="250:" + ready))
end = time.time() + 30
while time.time() < end and not os.path.exists(ready):
    time.sleep(0.01)
time.sleep(1.1)  # a status write (once a second) after step 250
try:
    st = json.load(open(status))
except (OSError, ValueError) as e:
    st = {"error": str(e)}
j.wait()
j.check_ran(E, 800)
E.check(st.get("capture_state") == "armed" and st.get("step", -1) >= 200 and
        4.9 <= st.get("step_ms_median", 0) <= 30.0 and 20 < st.get("steps_per_s", 0) <= 1000 / 4.9,
        "S14: status %s" % st)
# and `gpuprof top` shows them, under the capture state
with open(status + ".seen", "w") as f:
    json.dump(st, f)
top = subprocess.run([E.gpuprof, "top", "--once", status + ".seen"], capture_output=True, text=True)
E.check(top.returncode == 0 and ("\n  step %d, step time median %.3f ms, " % (st.get("step", -1), st.get("step_ms_median", 0)))
        in top.stdout, "S14: top %r" % top.stdout)

# S15: the learning's callbacks narrow at once
for name, extra, want in (("s15cap", {"GPUPROF_FLIGHT_API": "capture"}, "memcpy 1 sync 0"),
                          ("s15act", {"GPUPROF_API_MODE": "activity"}, "memcpy 1 sync 0"),
                          ("s15all", {}, "memcpy 1 sync 1"),
                          ("s15twin", {"GPUPROF_FLIGHT_API": "capture", "WL_TWIN": "1"}, "memcpy 1 sync 1")):
    cb = os.path.join(E.tmp, name + ".callbacks")
    plain(name, 300, dict(FLIGHT, WL_CALLBACKS="250:" + cb, **extra))
    got = open(cb).read().strip() if os.path.exists(cb) else None
    E.check(got == want, "S15 %s: callbacks at step 250: %s, want %s" % (name, got, want))
E.finish()
