"""scripts/flight_check.py (the H200 flight phase's checks) on fake-CUDA runs,
against figures computed here independently (a kernel's grid names its step
in the workload's `steps` mode; docs/FLIGHT.md's definitions):

1. sample: --sample-steps 1/5 and a full trace of the same job: PASS, and
   the per-step GPU time it prints for the sampled steps is the mean of
   those steps' kernel durations summed per step, read from the dump here.
2. stall: a rule capture of a stall at step 100: PASS; asked about step 90,
   FAIL (its kernels do not start at step 91).
3. trigger: a 3-step trigger capture with the job's step times: PASS with
   --k 3, FAIL with --k 4; a 300 ms stall in the first captured step is
   reported as a pause over 50 ms (FAIL)."""
import collections
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import Env, Facts, Job, run_job  # noqa: E402

E = Env(sys.argv[1])
SCRIPT = os.path.join(os.getcwd(), "scripts", "flight_check.py")


def fc(*args):
    env = dict(os.environ, GPUPROF=E.gpuprof)
    return subprocess.run([sys.executable, SCRIPT] + [str(a) for a in args], env=env, capture_output=True,
                          text=True, timeout=120)


# 1. sample vs full
js = Job(E, "smp", ["steps", 60, 1], {"GPUPROF_SAMPLE_STEPS": "1/5"})
jf = Job(E, "full", ["steps", 60, 1], {})
for j in (js, jf):
    j.wait()
    j.check_ran(E, 60)
r = fc("sample", js.traces()[0], jf.traces()[0], "--n", 5)
E.check(r.returncode == 0 and r.stdout.count("FLIGHT PASS") == 4, "sample: %s %s" % (r.stdout, r.stderr))
f = Facts(E, js.traces()[0])
per = collections.defaultdict(int)
for k in f.kernels:
    per[k["grid"][0] - 1] += k["end"] - k["start"]
steps = [s for s in sorted(per) if s >= 5]
want = sum(per[s] for s in steps) / len(steps) / 1e6 if steps else -1
line = [l for l in r.stdout.splitlines() if l.startswith("sampled steps")]
E.check(line and abs(float(line[0].split()[-2]) - want) < 1e-4, "sample: printed %s, computed %.4f ms" % (line, want))

# 2. stall
j = run_job(E, "stall", 200, {"GPUPROF_FLIGHT_RECORDER": "1s", "GPUPROF_TRIGGER": "step>100x", "WL_STALL": "100:700"})
r = fc("stall", j.dir, "--stall-at", 100)
E.check(r.returncode == 0 and "FLIGHT FAIL" not in r.stdout and r.stdout.count("FLIGHT PASS") == 6,
        "stall: %s %s" % (r.stdout, r.stderr))
r = fc("stall", j.dir, "--stall-at", 90)
E.check(r.returncode == 1 and "FLIGHT FAIL stall: kernels from step 91 on" in r.stdout, "stall 90: %s" % r.stdout)

# 3. trigger, and a pause at the capture's start
times = os.path.join(E.tmp, "trig.times")
ready = os.path.join(E.tmp, "trig.ready")
j = Job(E, "trig", ["steps", 400, 5], {"GPUPROF_FLIGHT_RECORDER": "1s", "WL_STEP_TIMES": times,
                                      "WL_READY": "150:" + ready})
while not os.path.exists(ready) and j.p.poll() is None:
    time.sleep(0.01)
t = j.trigger(j.pid, "--steps", 3, "--wait")
j.wait()
j.check_ran(E, 400)
E.check(t.returncode == 0 and len(j.captures()) == 1, "trigger: %s %s" % (t.stdout, t.stderr))
if j.captures():
    r = fc("trigger", j.captures()[0], "--k", 3, "--step-times", times, "--pause-ms", 2000)
    E.check(r.returncode == 0 and r.stdout.count("FLIGHT PASS") == 4 and "capture start" in r.stdout,
            "trigger: %s %s" % (r.stdout, r.stderr))
    r = fc("trigger", j.captures()[0], "--k", 4, "--step-times", times)
    E.check(r.returncode == 1 and "FLIGHT FAIL trigger: exactly 4 consecutive steps" in r.stdout,
            "trigger --k 4: %s" % r.stdout)
    # the same capture, with step times in which the first captured step
    # took 300 ms longer: a pause at the capture's start
    first = sorted(Facts(E, j.captures()[0]).kernel_steps)[0]
    rows = [l.split() for l in open(times)]
    shifted = os.path.join(E.tmp, "shifted.times")
    with open(shifted, "w") as out:
        for i, tt in rows:
            out.write("%s %.9f\n" % (i, float(tt) + (0.3 if int(i) > first else 0)))
    r = fc("trigger", j.captures()[0], "--k", 3, "--step-times", shifted)
    # 300 ms added, plus or minus the step's own jitter (299.9 under load)
    m = re.search(r"FLIGHT FAIL trigger: largest step-period excess at capture start/stop ([0-9.]+) ms", r.stdout)
    E.check(r.returncode == 1 and m is not None and 250 <= float(m.group(1)) <= 350, "pause: %s" % r.stdout)
E.finish()
