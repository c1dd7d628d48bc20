"""The drop rule, drop>P%/W (docs/FLIGHT.md "Anomaly rules"), on the fake
CUPTI and NVML (one device; FAKE_NVML_BUSY_FIRST=K: the first K
utilisation answers say 90 %, then 0, 10, 20 % in turn), NVML sampled at
100 Hz.  The workload's `plain` mode with WL_IRREGULAR (no step structure:
the rule's case) or without (steps found online: the rule works on time all
the same).

D1. No step structure, busy for 150 samples (1.5 s, 7 windows of 0.2 s) then
    about 10 %: one capture, by time (GPUPROF_TRIGGER_SECONDS), whose mark
    names the rule, the window's busy below half the median of 90 %.
D2. The same job never busy above 20 % (the steady 0/10/20 cycle), windows
    of 0.5 s: no capture (every window is the median).
D3. Steps found online, busy then idle: one capture of K steps
    (GPUPROF_TRIGGER_STEPS) from the step after the drop, its mark the rule's.
D4. drop>50% (and idle>) without GPU metrics: one line says the rules
    need them and are off; no capture.
Each job: exit 0, its stdout, only gpuprof: lines on stderr."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import Env, Facts, Job  # noqa: E402

E = Env(sys.argv[1])
NVML = os.path.join(E.build, "tests/fake/libnvidia-ml.so.1")
ARMED = {"GPUPROF_FLIGHT_RECORDER": "1s", "GPUPROF_GPU_METRICS": "100", "GPUPROF_NVML": NVML,
         "FAKE_NVML_DEVICES": "1", "GPUPROF_TRIGGER_SECONDS": "0.3"}


def plain(name, steps, extra, ms=5):
    j = Job(E, name, ["plain", steps, ms], dict(ARMED, **extra))
    j.wait()
    j.check_ran(E, steps)
    return j


def drop_marks(caps):
    return [c.marks[0] if c.marks else "" for c in caps]


# D1: no step structure
j = plain("d1", 700, {"GPUPROF_TRIGGER": "drop>50%/0.2s", "FAKE_NVML_BUSY_FIRST": "150", "WL_IRREGULAR": "1"})
caps = [Facts(E, c) for c in j.captures()]
m = drop_marks(caps)
E.check(len(caps) == 1 and m[0].startswith("gpuprof capture 1: rule drop>50%: GPU busy ") and
        "over 0.2 s, the median of the " in m[0] and m[0].endswith("windows before it 90.0%; 0.300 s"),
        "D1: capture marks %s" % m)
if len(caps) == 1 and "GPU busy " in m[0]:
    busy = float(m[0].split("GPU busy ")[1].split("%")[0])
    E.check(busy < 45.0, "D1: the window's busy %.1f is no drop below half of 90" % busy)

# D2: steady
j = plain("d2", 600, {"GPUPROF_TRIGGER": "drop>50%/0.5s", "WL_IRREGULAR": "1"})
E.check(not j.captures(), "D2: captures %s" % drop_marks([Facts(E, c) for c in j.captures()]))

# D3: found steps
j = plain("d3", 700, {"GPUPROF_TRIGGER": "drop>50%/0.2s", "FAKE_NVML_BUSY_FIRST": "150",
                      "GPUPROF_TRIGGER_STEPS": "5"})
caps = [Facts(E, c) for c in j.captures()]
m = drop_marks(caps)
E.check(len(caps) == 1 and "rule drop>50%: GPU busy " in m[0] and "windows before it 90.0%; 5 steps from step " in m[0],
        "D3: capture marks %s" % m)

# D4: no GPU metrics, no measure
j = Job(E, "d4", ["plain", 100, 2], {"GPUPROF_FLIGHT_RECORDER": "1s", "GPUPROF_TRIGGER": "drop>50%,idle>50%,step>50x"})
j.wait()
j.check_ran(E, 100)
E.check(sum("GPUPROF_TRIGGER: idle> and drop> need GPU metrics (GPUPROF_GPU_METRICS, gpuprof run --gpu-metrics); off"
            in l for l in j.gp_lines()) == 1 and not j.captures(), "D4: lines %s" % j.gp_lines())
E.finish()
