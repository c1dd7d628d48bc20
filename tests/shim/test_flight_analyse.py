"""A flight-recorder capture made by the shim on the fake CUPTI analyses as a
trace (issue 43 item 2; docs/FLIGHT.md "Captures", docs/STEPS.md
"Warm-up"): an armed job (300 ms of history, 5 ms steps) is triggered with
`gpuprof trigger --steps 10 --wait`; the capture holds about 60 history
steps (API calls and NVTX only), the 10 captured steps, and about 140 steps
written after the window (2 x GPUPROF_FLUSH_MS + 0.5 s), so most of the
file's steps lie after the captured ones.

 - gpuprof steps: the 10 steps the trigger names ("steps S..S+9") are the
   counted ones, none warm-up, every other step 'no GPU record'; the summary
   names the history ("history: ... before GPU activity was recorded").
   (Before: the steady state was the file's second half, steps with no GPU
   record, so every captured step was warm-up: 0 counted.)
 - gpuprof advise: "0 warm-up, 10 counted" and at least one finding."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import Env, Job  # noqa: E402

E = Env(sys.argv[1])
ready = os.path.join(E.tmp, "ready")
j = Job(E, "a", ["steps", 400, 5], {"GPUPROF_FLIGHT_RECORDER": "300ms", "WL_READY": "100:" + ready})
end = time.time() + 20
while time.time() < end and not os.path.exists(ready):
    time.sleep(0.01)
E.check(os.path.exists(ready), "the job did not reach step 100")
r = j.trigger(j.pid, "--steps", 10, "--wait")
m = re.search(r"steps (\d+)\.\.(\d+) and ", r.stdout)
E.check(r.returncode == 0 and m is not None, "trigger: %r %r" % (r.stdout, r.stderr))
j.wait()
j.check_ran(E, 400)
caps = j.captures()
E.check(len(caps) == 1, "captures: %s" % caps)
if m and len(caps) == 1:
    first, last = int(m.group(1)), int(m.group(2))
    cap = caps[0]
    p = subprocess.run([E.gpuprof, "steps", "--format", "json", "--report", "steps,step_rows", cap],
                       capture_output=True, text=True)
    js = json.loads(p.stdout) if p.returncode == 0 else {}
    s = (js.get("steps") or [{}])[0]
    E.check((s.get("warmup"), s.get("counted")) == (0, 10), "steps: warm-up %s counted %s" %
            (s.get("warmup"), s.get("counted")))
    rows = js.get("step_rows", [])
    counted = [w["step"] for w in rows if w["flags"] in ("", "outlier")]
    E.check(counted == list(range(first, last + 1)), "counted steps %s, the trigger said %d..%d" %
            (counted, first, last))
    E.check(all(w["flags"] == "no GPU record" for w in rows if not first <= w["step"] <= last),
            "the other steps: %s" % sorted({w["flags"] for w in rows if not first <= w["step"] <= last}))
    hist = [w for w in rows if w["step"] < first]
    E.check(len(hist) >= 20, "history steps: %d" % len(hist))
    text = subprocess.run([E.gpuprof, "steps", cap], capture_output=True, text=True).stdout
    E.check("history: " in text and "(%d steps), API calls and NVTX only" % len(hist) in text,
            "steps text: %s" % text[:900])
    adv = subprocess.run([E.gpuprof, "advise", "--format", "json", cap], capture_output=True, text=True)
    aj = json.loads(adv.stdout)["advise"][0] if adv.returncode == 0 else {}
    pr = (aj.get("processes") or [{}])[0]
    E.check((pr.get("warmup"), pr.get("counted")) == (0, 10) and len(aj.get("findings", [])) > 0,
            "advise: %s %s" % (pr, [f["rule"] for f in aj.get("findings", [])]))
E.finish()
