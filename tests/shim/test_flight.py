"""The flight recorder's control channel and history on the fake CUPTI
(docs/FLIGHT.md).  The workload's `steps` mode launches two kernels per step
whose grid names the step, so a capture's steps can be read off its kernels.

A. Happy path: an armed job (1 s history) is triggered from another process
   with --steps 3 --wait: the trigger prints accepted and done with the file;
   the capture file holds exactly the kernels and memsets of 3 consecutive
   whole steps, all launched inside its one window; API records and step
   ranges from about 1 s before the trigger (not from earlier: steps older
   than the history are not there); the capture's mark and counters say why;
   the status file and `gpuprof top` show the state and the capture; the
   job's exit, stdout and stderr are untouched; nothing is left in the
   control directory.
B. A pid that is gone, a stale registration, a process without a control
   channel: one line each from gpuprof trigger, exit 2, stale files removed.
C. One job receives, in turn: a request owned by another uid (chown), a
   garbage request, a malformed request with an id (its answer says why),
   then two triggers at once: one line in the job's stderr for each refused
   request, exactly one capture, one trigger succeeds and the other is told
   a capture is under way; the job runs on.
D. --all over two jobs: both capture 2 steps from the same step number.
E. A process without steps: --seconds captures by time; without --wait
   the answer file is removed by the trigger and no final answer is left.
F. Bad settings: one line each, no flight recorder.
G. GPUPROF_CONTROL=0: no registration, gpuprof trigger cannot reach the job,
   the flight recorder still works (a rule's capture is written)."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import SEC, Env, Facts, Job, run_job  # noqa: E402

E = Env(sys.argv[1])
FLIGHT = {"GPUPROF_FLIGHT_RECORDER": "1s"}


def wait_file(path, timeout=10):
    end = time.time() + timeout
    while time.time() < end and not os.path.exists(path):
        time.sleep(0.01)
    return os.path.exists(path)


# ---------------------------------------------------------------- A
j = Job(E, "a", ["steps", 800, 5], dict(FLIGHT, WL_READY="250:" + os.path.join(E.tmp, "a-ready"),
                                        GPUPROF_STATUS=os.path.join(E.tmp, "a-status.json")))
E.check(j.registered() is not None, "A: no registration")
E.check(wait_file(os.path.join(E.tmp, "a-ready")), "A: the job did not reach step 250")
st = {}
try:
    import json
    st = json.load(open(os.path.join(E.tmp, "a-status.json")))
except (OSError, ValueError) as e:
    E.fail("A: status file: %s" % e)
E.check(st.get("capture_state") == "armed" and st.get("captures") == 0 and st.get("step", -1) >= 100 and
        3.0 <= st.get("step_ms_median", 0) <= 30.0 and st.get("steps_per_s", 0) > 20 and st.get("trace") == "",
        "A: status before: %s" % st)
top = subprocess.run([E.gpuprof, "top", "--once", os.path.join(E.tmp, "a-status.json")], capture_output=True,
                     text=True)
E.check(top.returncode == 0 and "\n  capture state: armed, 0 captures\n" in top.stdout, "A: top before: %r" % top.stdout)
t0 = time.time()
r = j.trigger(j.pid, "--steps", 3, "--wait")
E.check(r.returncode == 0, "A: trigger exit %d: %s %s" % (r.returncode, r.stdout, r.stderr))
lines = r.stdout.splitlines()
E.check(len(lines) == 2 and lines[0].startswith("pid %d: accepted: capture 1: 3 whole steps" % j.pid)
        and lines[1].startswith("pid %d: done: capture 1 (trigger" % j.pid), "A: trigger said %r" % r.stdout)
cap = lines[-1].split(" -> ")[-1] if lines else ""
E.check(time.time() - t0 < 5, "A: the capture took %.1f s" % (time.time() - t0))
time.sleep(1.2)  # a status write after the capture
try:
    st = json.load(open(os.path.join(E.tmp, "a-status.json")))
except (OSError, ValueError) as e:
    st = {}
E.check(st.get("captures") == 1 and st.get("last_capture_file") == cap and
        st.get("last_capture_why", "").startswith("trigger"), "A: status after: %s" % st)
top = subprocess.run([E.gpuprof, "top", "--once", os.path.join(E.tmp, "a-status.json")], capture_output=True,
                     text=True)
E.check("capture state: armed, 1 capture; last capture: trigger (request " in top.stdout and
        (" -> " + cap + "\n") in top.stdout, "A: top after: %r" % top.stdout)
j.wait()
j.check_ran(E, 800)
E.check(j.captures() == [cap], "A: capture files %s, the trigger said %s" % (j.captures(), cap))
E.check(j.traces() == j.captures(), "A: other trace files: %s" % j.traces())
E.check(os.listdir(j.ctl) == [], "A: left in the control directory: %s" % os.listdir(j.ctl))
if os.path.exists(cap):
    f = Facts(E, cap)
    steps = sorted(f.kernel_steps)
    E.check(len(steps) == 3 and steps == list(range(steps[0], steps[0] + 3)) and
            all(f.kernel_steps[s] == 2 for s in steps), "A: kernels of steps %s" % dict(f.kernel_steps))
    E.check(steps and steps[0] > 250, "A: captured steps %s, triggered after step 250" % steps)
    E.check(len(f.memsets) == 3, "A: %d memsets" % len(f.memsets))
    E.check(len(f.windows) == 1, "A: windows %s" % f.windows)
    E.check(not f.launches_in_windows(), "A: GPU records launched outside the window")
    if steps and len(f.windows) == 1:
        ws, we = f.windows[0]
        for s in steps:
            rs = f.step_ranges.get(s)
            E.check(rs and ws <= rs[0] and rs[1] <= we, "A: step %d range %s not inside the window %s" %
                    (s, rs, f.windows[0]))
        # history: about the last second before the capture, nothing older
        hist = (ws - f.first_api()) / SEC
        E.check(0.75 <= hist <= 1.4, "A: API history %.3f s before the capture, want ~1 s" % hist)
        old = [s for s, (a, b) in f.step_ranges.items() if b < ws - 1.4 * SEC]
        E.check(not old, "A: steps older than the history: %s" % old[:5])
        E.check(steps[0] - 100 in f.step_ranges, "A: step %d (0.5 s before) missing" % (steps[0] - 100))
        E.check(0 not in f.step_ranges, "A: step 0 (older than the history) is in the capture")
    E.check(len(f.marks) == 1 and f.marks[0].startswith("gpuprof capture 1: trigger (request ") and
            f.marks[0].endswith("; 3 steps from step %d" % (steps[0] if steps else -1)), "A: marks %s" % f.marks)
    E.check(f.counters["gpuprof.capture"] == [1] and f.counters["gpuprof.capture.reason"] == [1] and
            f.counters["gpuprof.capture.steps"] == [3], "A: counters %s" % dict(f.counters))
    info = subprocess.run([E.gpuprof, "info", cap], capture_output=True, text=True)
    E.check(info.returncode == 0 and "flight_recorder=1000000000ns" in info.stdout and
            "footer present" in info.stdout, "A: gpuprof info: %s" % info.stdout[-400:])

# ---------------------------------------------------------------- B
ctl = os.path.join(E.tmp, "b-ctl")
os.makedirs(ctl, mode=0o700)
dead = subprocess.Popen(["true"])
dead.wait()
e = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROF_")}
e["GPUPROF_CONTROL_DIR"] = ctl


def trig(*args):
    return subprocess.run([E.gpuprof, "trigger"] + [str(a) for a in args], env=e, capture_output=True, text=True,
                          timeout=30)


r = trig(dead.pid)
E.check(r.returncode == 2 and r.stderr.strip() == "gpuprof trigger: pid %d: not running" % dead.pid and
        not r.stdout, "B: gone pid: %d %r %r" % (r.returncode, r.stdout, r.stderr))
for suffix in ("proc", "req", "reply.7"):
    open(os.path.join(ctl, "%d.%s" % (dead.pid, suffix)), "w").write("gpuprof-proc 1\nstep=3\n")
r = trig(dead.pid)
E.check(r.returncode == 2 and "not running" in r.stderr and os.listdir(ctl) == [],
        "B: stale files: %d %r, left %s" % (r.returncode, r.stderr, os.listdir(ctl)))
r = trig(os.getpid())
E.check(r.returncode == 2 and "not traced with a control channel" in r.stderr and r.stderr.count("\n") == 1,
        "B: untraced pid: %r" % r.stderr)
r = trig("--all")
E.check(r.returncode == 2 and "no running process with a control channel" in r.stderr, "B: --all: %r" % r.stderr)
for bad in (["abc"], ["--steps", "0", "1"], ["--seconds", "2x", "1"], [], ["--all", "5"], ["--job", "5", "5"]):
    r = trig(*bad)
    E.check(r.returncode == 1 and r.stderr.startswith("gpuprof trigger: "), "B: usage %s: %d %r" %
            (bad, r.returncode, r.stderr))
os.chmod(ctl, 0o755)
r = trig(1)
E.check(r.returncode == 2 and "group/other accessible" in r.stderr, "B: open control dir: %r" % r.stderr)

# ---------------------------------------------------------------- C
j = Job(E, "c", ["steps", 1000, 5], FLIGHT)
E.check(j.registered(min_step=20) is not None, "C: no registration")
req = os.path.join(j.ctl, "%d.req" % j.pid)


def plant(text, uid=None):
    with open(req + ".tmp", "wb") as f:
        f.write(text)
    if uid is not None:
        os.chown(req + ".tmp", uid, uid)
    os.rename(req + ".tmp", req)
    end = time.time() + 5
    while time.time() < end and os.path.exists(req):
        time.sleep(0.01)
    return not os.path.exists(req)


if os.geteuid() == 0:
    E.check(plant(b"gpuprof-request 1\nid=11\nsteps=2\n", uid=12345), "C: foreign request not taken")
E.check(plant(b"\x00\xffgarbage\n" * 50), "C: garbage not taken")
E.check(plant(b"gpuprof-request 1\nid=12\nsteps=2\nbogus=1\n"), "C: malformed request not taken")
reply = os.path.join(j.ctl, "%d.reply.12" % j.pid)
E.check(wait_file(reply, 2) and "status=refused" in open(reply).read() and "unknown key 'bogus'" in open(reply).read(),
        "C: no refusal answer for the malformed request")
p1 = subprocess.Popen([E.gpuprof, "trigger", "--steps", "2", "--wait", str(j.pid)], env=dict(e, GPUPROF_CONTROL_DIR=j.ctl),
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
p2 = subprocess.Popen([E.gpuprof, "trigger", "--steps", "2", "--wait", str(j.pid)], env=dict(e, GPUPROF_CONTROL_DIR=j.ctl),
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
res = [p.communicate(timeout=30) + (p.returncode,) for p in (p1, p2)]
ok = [x for x in res if x[2] == 0]
ko = [x for x in res if x[2] != 0]
E.check(len(ok) == 1 and len(ko) == 1, "C: two triggers at once: %s" % res)
if len(ko) == 1:
    E.check(ko[0][2] == 2 and ko[0][1].count("\n") == 1 and "refused: capture 1 is" in ko[0][1],
            "C: the second trigger: %r" % (ko[0][1],))
j.wait()
j.check_ran(E, 1000)
E.check(len(j.captures()) == 1, "C: captures %s" % j.captures())
gp = j.gp_lines()
want = ["refused: malformed", "refused: malformed", "refused: capture 1 is"]
if os.geteuid() == 0:
    want.insert(0, "trigger request from uid 12345 refused")
E.check(len([l for l in gp if "refused" in l]) == len(want) and all(any(w in l for l in gp) for w in want),
        "C: job stderr %s" % gp)
if j.captures():
    f = Facts(E, j.captures()[0])
    E.check(len(f.kernel_steps) == 2 and len(f.marks) == 1, "C: capture: steps %s marks %s" %
            (dict(f.kernel_steps), f.marks))

# ---------------------------------------------------------------- D
ctl = os.path.join(E.tmp, "d-ctl")
os.makedirs(ctl, mode=0o700)
jobs = [Job(E, "d%d" % i, ["steps", 900, 5], dict(FLIGHT, GPUPROF_CONTROL_DIR=ctl)) for i in range(2)]
for jj in jobs:
    jj.ctl = ctl
    E.check(jj.registered(min_step=30) is not None, "D: %s not registered" % jj.name)
time.sleep(0.6)  # registrations with step rates
r = jobs[0].trigger("--all", "--steps", 2, "--wait")
E.check(r.returncode == 0 and r.stdout.startswith("start step ") and r.stdout.count(": done: ") == 2,
        "D: --all: %d %r %r" % (r.returncode, r.stdout, r.stderr))
start = int(r.stdout.split()[2]) if r.stdout.startswith("start step ") else -1
for jj in jobs:
    jj.wait()
    jj.check_ran(E, 900)
    caps = jj.captures()
    E.check(len(caps) == 1, "D: %s captures %s" % (jj.name, caps))
    if caps:
        f = Facts(E, caps[0])
        E.check(sorted(f.kernel_steps) == [start, start + 1], "D: %s captured steps %s, start step %d" %
                (jj.name, sorted(f.kernel_steps), start))

# ---------------------------------------------------------------- E
j = Job(E, "e", ["loop", 2500], FLIGHT)
E.check(j.registered() is not None, "E: no registration")
time.sleep(0.3)
r = j.trigger(j.pid, "--seconds", "0.3")
E.check(r.returncode == 0 and "capture 1: 0.300 s (no steps seen)" in r.stdout, "E: %r %r" % (r.stdout, r.stderr))
j.wait()
E.check(j.p.returncode == 0 and j.out.startswith("loop ") and not j.foreign(), "E: job %s %r" % (j.p.returncode, j.err))
E.check(os.listdir(j.ctl) == [], "E: left in the control directory: %s" % os.listdir(j.ctl))
if len(j.captures()) == 1:
    f = Facts(E, j.captures()[0])
    span = (f.windows[0][1] - f.windows[0][0]) / SEC if len(f.windows) == 1 else 0
    E.check(0.29 <= span <= 0.6, "E: window of %.3f s, want 0.3" % span)
    E.check(len(f.kernels) >= 30 and not f.launches_in_windows(), "E: %d kernels" % len(f.kernels))
else:
    E.fail("E: captures %s" % j.captures())

# ---------------------------------------------------------------- F
for extra, want in (({"GPUPROF_FLIGHT_RECORDER": "soon"}, "GPUPROF_FLIGHT_RECORDER=soon not understood"),
                    (dict(FLIGHT, GPUPROF_GPU_WINDOW="1/2"), "cannot be combined with GPUPROF_GPU_WINDOW"),
                    ({"GPUPROF_TRIGGER": "step>3x"}, "GPUPROF_TRIGGER needs GPUPROF_FLIGHT_RECORDER"),
                    (dict(FLIGHT, GPUPROF_TRIGGER="steps>3"), "GPUPROF_TRIGGER=steps>3 not understood: 'steps>3'")):
    j = run_job(E, "f%d" % len(os.listdir(E.tmp)), 30, extra, ms=1)
    E.check(len([l for l in j.gp_lines() if want in l]) == 1 and len(j.gp_lines()) <= 3,
            "F: %s: %s" % (extra, j.gp_lines()))
# ---------------------------------------------------------------- G
j = Job(E, "g", ["steps", 300, 5], dict(FLIGHT, GPUPROF_CONTROL="0", GPUPROF_TRIGGER="cuda-error", WL_ERROR_AT="200",
                                        WL_READY="50:" + os.path.join(E.tmp, "g-ready")))
E.check(wait_file(os.path.join(E.tmp, "g-ready")), "G: the job did not reach step 50")
r = j.trigger(j.pid)
E.check(r.returncode == 2 and "not traced with a control channel" in r.stderr, "G: trigger: %r" % r.stderr)
j.wait()
j.check_ran(E, 300)
E.check(len(j.captures()) == 1 and os.listdir(j.ctl) == [], "G: captures %s, control dir %s" %
        (j.captures(), os.listdir(j.ctl)))
E.finish()
