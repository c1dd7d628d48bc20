"""GPUPROF_FLIGHT_API=capture on the fake CUPTI (docs/FLIGHT.md "API calls
only in captures"): API calls are recorded only while GPU activity is on, so
an armed job's history is NVTX only.  The workload's `steps` mode launches
two kernels and a memset per step whose grid names the step.

P1. Armed (1 s history), step>100x, a 700 ms stall at step 100: one capture
    of steps 101..105 whose kernels and memsets all have their launch's API
    record inside the capture's window; no API record before the window
    (the history has none), while the step ranges of the second before it
    are there (NVTX history); the kernel launch callbacks are off again
    after the capture (the steps after 105 have no API records either: the
    trace holds none outside the window); `gpuprof info` names the setting.
P2. Step sampling 1/7 with capture: API records only in the sampled steps'
    windows, every kernel with its launch, the step ranges of all 100 steps.
P3. The same job with the default (auto, which switches only an armed
    job) and with always: API records of all 100 steps (what P2 leaves out
    is really left out by the setting).
P4. cuda-error with capture: one gpuprof: line says the rule is off, no
    capture is taken at the failing call, the job runs on.
P5. Bad value: one line, the default (API calls in the history).
P6. gpuprof run --flight-api without --flight-recorder/--sample-steps, or
    with a bad word: a usage error (exit 1) before the job starts.
P7. auto (the default) armed, GPUPROF_FLIGHT_API_RATE=100 (the job makes
    ~800 records a second): after a second or two one gpuprof: line, the
    counters gpuprof.flight_api.rate (> 100) and .history (0); a 10 s
    history then holds API records before that switch and none after it
    outside the capture, whose kernels all have their launch.  The same
    job with the default rate (10000), with always and a rate of 100, and
    with auto and the cuda-error rule (auto means always then; `info` says
    so): no switch, API records up to the capture's start.  The status
    file (written at exit) says api_history captures with the switch's
    rate after the switch, all otherwise, and `gpuprof top` says so.
P8. A call in flight when a capture opens (the fake's launches and memsets
    spend 10 ms between their driver call and their GPU record, so one
    nearly always is), three 0.2 s captures by gpuprof trigger each: with
    capture, every GPU record in each capture has its launch (a call that
    entered while API callbacks were off has none: its operation is
    dropped), and the counter gpuprof.ops_without_call says so in at least
    one; with always, the straddling launch is kept, begins before its
    window, and nothing is dropped.  (Each capture's own window only: its
    history may hold the previous capture's GPU records without their
    launches, which left the history with their chunk.)
Each job: exit 0, its stdout, only gpuprof: lines on stderr."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import SEC, Env, Facts, Job, run_job  # noqa: E402

E = Env(sys.argv[1])
CAPTURE = {"GPUPROF_FLIGHT_API": "capture"}


# P1: armed, one rule capture
j = run_job(E, "p1", 260, dict(CAPTURE, GPUPROF_FLIGHT_RECORDER="1s", GPUPROF_TRIGGER="step>100x", WL_STALL="100:700"))
caps = j.captures()
E.check(len(caps) == 1, "P1: captures %s" % caps)
if len(caps) == 1:
    f = Facts(E, caps[0])
    E.check(f.own_steps() == list(range(101, 106)) and all(n == 2 for n in f.kernel_steps.values()),
            "P1: kernels of steps %s" % dict(f.kernel_steps))
    E.check(len(f.windows) == 1, "P1: windows %s" % f.windows)
    E.check(f.kernels and not f.launches_in_windows(), "P1: GPU records without their launch in the window")
    E.check(len(f.memsets) == 5, "P1: %d memsets" % len(f.memsets))
    E.check(f.apis and not f.apis_outside_windows(), "P1: %d API records, %d outside the window" %
            (len(f.apis), len(f.apis_outside_windows())))
    E.check(f.launches() == 10, "P1: launches %d" % f.launches())
    if len(f.windows) == 1:
        ws = f.windows[0][0]
        hist = [s for s, (a, b) in f.step_ranges.items() if b < ws]
        E.check(50 in f.step_ranges and 99 in f.step_ranges and len(hist) >= 40,
                "P1: NVTX history: %d steps before the window" % len(hist))
        E.check(f.step_ranges and ws - min(a for a, b in f.step_ranges.values()) <= 1.4 * SEC + 700_000_000,
                "P1: step ranges older than the history")
    info = subprocess.run([E.gpuprof, "info", caps[0]], capture_output=True, text=True)
    E.check(info.returncode == 0 and "flight_api=capture" in info.stdout, "P1: info: %s" % info.stdout[-400:])

# P2: step sampling, API calls only in the sampled steps
j = run_job(E, "p2", 100, dict(CAPTURE, GPUPROF_SAMPLE_STEPS="1/7"), ms=1)
E.check(len(j.traces()) == 1, "P2: files %s" % j.traces())
if len(j.traces()) == 1:
    f = Facts(E, j.traces()[0])
    want = list(range(0, 100, 7))
    f.check_sampled(E, "P2", want)
    E.check(not f.apis_outside_windows(), "P2: %d API records outside the sampled steps" %
            len(f.apis_outside_windows()))
    E.check(f.launches() == 2 * len(want), "P2: %d launches" % f.launches())
    E.check(len(f.step_ranges) == 100, "P2: %d step ranges" % len(f.step_ranges))

# P3: the default (auto: only an armed job switches) and always record them all
for name, extra in (("p3", {}), ("p3-always", {"GPUPROF_FLIGHT_API": "always"})):
    j = run_job(E, name, 100, dict(extra, GPUPROF_SAMPLE_STEPS="1/7", GPUPROF_FLIGHT_API_RATE="1"), ms=1)
    if len(j.traces()) == 1:
        f = Facts(E, j.traces()[0])
        E.check(f.launches() == 200, "%s: %d launches" % (name, f.launches()))
    E.check(not [l for l in j.gp_lines() if "records a second" in l], "%s: %s" % (name, j.gp_lines()))

# P4: cuda-error cannot be seen without API calls
j = run_job(E, "p4", 200, dict(CAPTURE, GPUPROF_FLIGHT_RECORDER="1s", GPUPROF_TRIGGER="cuda-error", WL_ERROR_AT="100"))
lines = [l for l in j.gp_lines() if "cuda-error" in l]
E.check(len(lines) == 1 and "no cuda-error rule" in lines[0], "P4: lines %s" % j.gp_lines())
E.check(j.captures() == [], "P4: captures %s" % j.captures())

# P5: a bad value: the default
j = run_job(E, "p5", 100, {"GPUPROF_FLIGHT_API": "sometimes", "GPUPROF_SAMPLE_STEPS": "1/7"}, ms=1)
lines = [l for l in j.gp_lines() if "GPUPROF_FLIGHT_API" in l]
E.check(len(lines) == 1 and "auto|always|capture" in lines[0], "P5: lines %s" % j.gp_lines())
if len(j.traces()) == 1:
    f = Facts(E, j.traces()[0])
    E.check(f.launches() == 200, "P5: %d launches" % f.launches())

# P6: gpuprof run's checks
for args, want in ((["--flight-api=capture"], "needs --flight-recorder or --sample-steps"),
                   (["--flight-recorder", "--flight-api=sometimes"], "--flight-api needs auto, always or capture")):
    r = subprocess.run([E.gpuprof, "run"] + args + ["--", "true"], capture_output=True, text=True)
    E.check(r.returncode == 1 and want in r.stderr, "P6 %s: exit %d, %r" % (args, r.returncode, r.stderr))


# P7: auto's switch (armed, a stall at step 500 of 5 ms steps: the capture ~2.6 s in)
def counter_ts(f, name):
    return [r["ts"] for r in f.recs if r["type"] == "counter" and r["name"] == name]


ARMED = {"GPUPROF_FLIGHT_RECORDER": "10s", "GPUPROF_TRIGGER": "step>100x", "WL_STALL": "500:700"}
for name, extra, switch in (("p7", {"GPUPROF_FLIGHT_API_RATE": "100"}, True),
                            ("p7-rate", {}, False),
                            ("p7-always", {"GPUPROF_FLIGHT_API": "always", "GPUPROF_FLIGHT_API_RATE": "100"}, False),
                            ("p7-error", {"GPUPROF_FLIGHT_API_RATE": "100", "GPUPROF_TRIGGER": "step>100x,cuda-error"},
                             False)):
    status = os.path.join(E.tmp, name + "-status.json")
    j = run_job(E, name, 600, dict(ARMED, GPUPROF_STATUS=status, **extra))
    said = [l for l in j.gp_lines() if "records a second" in l]
    try:
        st = json.load(open(status))
    except (OSError, ValueError):
        st = {}
    E.check(st.get("api_history") == ("captures" if switch else "all") and
            (st.get("api_switch_rate", 0) > 100) == switch, "%s: status %s" % (name, st))
    top = subprocess.run([E.gpuprof, "top", "--once", status], capture_output=True, text=True)
    E.check(("; API calls in captures only (from %s records/s)" % st.get("api_switch_rate") in top.stdout) == switch,
            "%s: top %r" % (name, top.stdout))
    E.check(len(said) == (1 if switch else 0), "%s: lines %s" % (name, j.gp_lines()))
    caps = j.captures()
    E.check(len(caps) == 1, "%s: captures %s" % (name, caps))
    if len(caps) != 1:
        continue
    f = Facts(E, caps[0])
    E.check(len(f.windows) == 1 and f.kernels and not f.launches_in_windows(),
            "%s: windows %s, GPU records without their launch in the window" % (name, f.windows))
    if len(f.windows) != 1:
        continue
    ws = f.windows[0][0]
    before = sorted(a["start"] for a in f.apis_outside_windows() if a["start"] < ws)
    at = counter_ts(f, "gpuprof.flight_api.history")
    rate = f.counters.get("gpuprof.flight_api.rate", [])
    if switch:
        E.check(len(at) == 1 and len(rate) == 1 and rate[0] > 100, "%s: counters %s %s" % (name, at, rate))
        if len(at) == 1:
            E.check(before and before[-1] <= at[0] and ws - at[0] > 300_000_000,
                    "%s: API history ends %s, the switch at %s, the window at %d" %
                    (name, before[-1:] or None, at[0], ws))
    else:
        E.check(not at and not rate, "%s: switch counters %s %s" % (name, at, rate))
        # the 700 ms stall lies between the last API record of step 500 and the window
        E.check(before and ws - before[-1] < 800_000_000, "%s: API history ends %s, the window at %d" %
                (name, before[-1:] or None, ws))
    if name == "p7-error":
        info = subprocess.run([E.gpuprof, "info", caps[0]], capture_output=True, text=True)
        E.check("flight_api=always" in info.stdout, "%s: info: %s" % (name, info.stdout[-400:]))

# P8: the call in flight when a capture opens
for name, mode in (("p8", "capture"), ("p8-always", "always")):
    j = Job(E, name, ["loop", 4000], {"GPUPROF_FLIGHT_RECORDER": "1s", "GPUPROF_FLIGHT_API": mode,
                                      "FAKE_CUDA_LAUNCH_US": "10000"})
    E.check(j.registered() is not None, "%s: no registration" % name)
    for i in range(3):
        r = j.trigger(j.pid, "--seconds", "0.2", "--wait")
        E.check(r.returncode == 0, "%s: trigger %d: %r %r" % (name, i, r.stdout, r.stderr))
    j.wait()
    E.check(j.p.returncode == 0 and j.out.startswith("loop ") and not j.foreign(),
            "%s: job %s %r" % (name, j.p.returncode, j.err))
    caps = j.captures()
    E.check(len(caps) == 3, "%s: captures %s" % (name, caps))
    dropped = early = 0
    for c in caps:
        f = Facts(E, c)
        if not f.windows:
            E.fail("%s: %s: no window" % (name, os.path.basename(c)))
            continue
        # the capture's own window is its last; its history (1 s) may hold
        # the GPU records of the capture before it, whose launches aged out
        # of the history by whole chunks: only this window's are checked
        ws, we = f.windows[-1]
        launch = {a["corr"]: (a["start"], a["end"]) for a in f.apis}
        ops = [o for o in f.kernels + f.memsets if o["start"] >= ws]
        bad = [o for o in ops if o["corr"] not in launch or not (launch[o["corr"]][0] <= we and
                                                                  launch[o["corr"]][1] >= ws)]
        E.check(ops and not bad, "%s: %s: %d of %d GPU records without their launch" %
                (name, os.path.basename(c), len(bad), len(ops)))
        dropped += len(f.counters.get("gpuprof.ops_without_call", []))
        early += sum(1 for o in ops if o["corr"] in launch and launch[o["corr"]][0] < ws)
    if mode == "capture":
        E.check(dropped >= 1, "%s: no GPU operation dropped in 3 captures" % name)
    else:
        E.check(dropped == 0 and early >= 1, "%s: %d dropped, %d launches before their window" %
                (name, dropped, early))
E.finish()
