"""Anomaly rules and step sampling on the fake CUPTI (docs/FLIGHT.md).
The workload's `steps` mode (5 ms steps; kernels named by their step through
their grid) with host stalls, a failing cudaMalloc or a named range at given
steps.

R1. step>100x, stalls of 700 ms at steps 100 and 200, the default 60 s
    cool-down: exactly one capture, of steps 101..105 (GPUPROF_TRIGGER_STEPS
    5), whose mark names the rule and the step, whose counters hold the
    stalled step's time and the median; the first 10 steps (no median yet)
    never fire, whatever their time.
R1b. The same stall between two step ranges (WL_GAP: the data loading of a
    job that marks only the compute of a step): a step's time runs from
    the previous step's end, so step 100 is the slow one, 101..105 captured.
R2. Cool-down 0: the second stall is captured too (101..105, 201..205).
    Cool-down 0 and GPUPROF_TRIGGER_MAX=1: only the first.
R3. cuda-error: the failing cudaMalloc at step 100: one capture of 5
    consecutive steps, from the first step after the flush thread's next
    tick (GPUPROF_FLUSH_MS=100: within ~20 steps of 5 ms; the error is
    noted inside the CUPTI callback, acted on outside it).
R4. range=bad batch: the range at step 120: one capture, 121..125.
R5. idle>70% with the fake NVML (one device, 0-20 % busy): one capture,
    once the job has run 10 steps.
R6. GPUPROF_SAMPLE_STEPS=1/7, no flight recorder, 100 steps: the one trace
    holds the kernels of steps 0, 7, ..., 98 exactly (two each), one window
    around each of those steps, API records of all 100 steps.  With
    step>3x and a stall, a rule capture adds 5 whole steps to it.
Each job: exit 0, its stdout, only gpuprof: lines on stderr."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import Env, Facts, run_job  # noqa: E402

E = Env(sys.argv[1])
FLIGHT = {"GPUPROF_FLIGHT_RECORDER": "1s"}


def captured_steps(j):
    out = []
    for c in j.captures():
        f = Facts(E, c)
        out.append((f.own_steps(), f))
    return out


# R1: one capture, then the cool-down holds
RULE = "step>100x"
STALLS = "100:700,200:700"
j = run_job(E, "r1", 260, dict(FLIGHT, GPUPROF_TRIGGER=RULE, WL_STALL="3:700," + STALLS))
caps = captured_steps(j)
E.check([c[0] for c in caps] == [list(range(101, 106))], "R1: captured steps %s" % [c[0] for c in caps])
if caps:
    f = caps[0][1]
    E.check(all(n == 2 for n in f.kernel_steps.values()) and not f.launches_in_windows(), "R1: kernels %s" %
            dict(f.kernel_steps))
    E.check(len(f.marks) == 1 and f.marks[0].startswith("gpuprof capture 1: rule step>100x: step 100 took 7") and
            f.marks[0].endswith("; 5 steps from step 101"), "R1: mark %s" % f.marks)
    c = f.counters
    E.check(c["gpuprof.capture.reason"] == [2] and c["gpuprof.capture.steps"] == [5] and
            c["gpuprof.capture.step_ns"][0] >= 700_000_000 and 4_000_000 <= c["gpuprof.capture.median_ns"][0] <= 12_000_000,
            "R1: counters %s" % dict(c))
    E.check(99 in f.step_ranges and 50 in f.step_ranges, "R1: history before the stall missing")

# R1b: a stall between the ranges belongs to the step it comes before
j = run_job(E, "r1b", 200, dict(FLIGHT, GPUPROF_TRIGGER=RULE, WL_GAP="100:700"))
caps = captured_steps(j)
E.check([c[0] for c in caps] == [list(range(101, 106))], "R1b: captured steps %s" % [c[0] for c in caps])
if caps:
    f = caps[0][1]
    E.check(len(f.marks) == 1 and f.marks[0].startswith("gpuprof capture 1: rule step>100x: step 100 took 7"),
            "R1b: mark %s" % f.marks)

# R2: no cool-down: both stalls; with the hourly cap of 1: the first only
j = run_job(E, "r2", 260, dict(FLIGHT, GPUPROF_TRIGGER=RULE, GPUPROF_TRIGGER_COOLDOWN="0", WL_STALL=STALLS))
E.check([c[0] for c in captured_steps(j)] == [list(range(101, 106)), list(range(201, 206))],
        "R2: captured %s" % [c[0] for c in captured_steps(j)])
j = run_job(E, "r2max", 260, dict(FLIGHT, GPUPROF_TRIGGER=RULE, GPUPROF_TRIGGER_COOLDOWN="0", GPUPROF_TRIGGER_MAX="1",
                           WL_STALL=STALLS))
E.check([c[0] for c in captured_steps(j)] == [list(range(101, 106))], "R2 max 1: captured %s" %
        [c[0] for c in captured_steps(j)])

# R3: a CUDA error
j = run_job(E, "r3", 200, dict(FLIGHT, GPUPROF_TRIGGER="cuda-error", WL_ERROR_AT="100"))
caps = captured_steps(j)
E.check(len(caps) == 1 and 101 <= caps[0][0][0] <= 160 and caps[0][0] == list(range(caps[0][0][0], caps[0][0][0] + 5)),
        "R3: captured %s" % [c[0] for c in caps])
if caps:
    E.check(caps[0][1].marks and "rule cuda-error: cudaMalloc returned 2" in caps[0][1].marks[0], "R3: %s" %
            caps[0][1].marks)

# R4: a named range
j = run_job(E, "r4", 200, dict(FLIGHT, GPUPROF_TRIGGER="range=bad batch", WL_RANGE_AT="120:bad batch,130:bad batch"))
caps = captured_steps(j)
E.check([c[0] for c in caps] == [list(range(121, 126))], "R4: captured %s" % [c[0] for c in caps])
if caps:
    E.check(caps[0][1].marks and "rule range=bad batch" in caps[0][1].marks[0], "R4: %s" % caps[0][1].marks)

# R5: GPU idle (NVML)
nvml = os.path.join(E.build, "tests/fake/libnvidia-ml.so.1")
j = run_job(E, "r5", 300, dict(FLIGHT, GPUPROF_TRIGGER="idle>70%", GPUPROF_GPU_METRICS="100", GPUPROF_NVML=nvml,
                        FAKE_NVML_DEVICES="1"))
caps = captured_steps(j)
E.check(len(caps) == 1 and len(caps[0][0]) == 5 and caps[0][0][0] >= 10, "R5: captured %s" % [c[0] for c in caps])
if caps:
    E.check(caps[0][1].marks and "rule idle>70%: GPU idle" in caps[0][1].marks[0], "R5: %s" % caps[0][1].marks)

# R6: one step in 7, in the one trace
j = run_job(E, "r6", 100, {"GPUPROF_SAMPLE_STEPS": "1/7"}, ms=1)
E.check(j.captures() == [] and len(j.traces()) == 1, "R6: files %s" % j.traces())
if len(j.traces()) == 1:
    f = Facts(E, j.traces()[0])
    want = list(range(0, 100, 7))
    f.check_sampled(E, "R6", want)
    for (ws, we), s in zip(f.windows, want):
        rs = f.step_ranges.get(s)
        E.check(rs and ws <= rs[0] and rs[1] <= we, "R6: step %d %s not inside its window %s" % (s, rs, (ws, we)))
    E.check(f.launches() == 200 and len(f.step_ranges) == 100,
            "R6: API launches / step ranges of all steps")
j = run_job(E, "r6rule", 300, {"GPUPROF_SAMPLE_STEPS": "1/50", "GPUPROF_TRIGGER": RULE, "WL_STALL": "120:700"})
if len(j.traces()) == 1:
    f = Facts(E, j.traces()[0])
    E.check(sorted(f.kernel_steps) == [0, 50, 100, 121, 122, 123, 124, 125, 150, 200, 250],
            "R6 + rule: kernels of steps %s" % sorted(f.kernel_steps))
    E.check(len(f.marks) == 1 and "rule step>100x: step 120" in f.marks[0], "R6 + rule: marks %s" % f.marks)
E.finish()
