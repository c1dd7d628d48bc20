"""flightlib.py — helpers for the flight-recorder tests (tests/shim/test_flight*.py):
start the fake-CUDA workload's `steps` mode under the shim with a private
control directory, trigger it with `gpuprof trigger`, find its capture
files, and read the facts of a trace the tests assert on (which steps'
kernels it holds, its windows, the capture marks and counters, how far back
its API records go)."""
import collections
import glob
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stackslib import Env  # noqa: E402,F401

SEC = 1_000_000_000


class Job:
    """One traced workload run in the background."""

    def __init__(self, env, name, argv, extra):
        self.env_ = env
        self.name = name
        self.dir = os.path.join(env.tmp, name)
        self.ctl = os.path.join(self.dir, "ctl")
        os.makedirs(self.ctl, mode=0o700)
        os.chmod(self.ctl, 0o700)
        self.out_pat = os.path.join(self.dir, "trace-%p.gpuprof")
        e = env.env({"GPUPROF_CONTROL_DIR": self.ctl, "GPUPROF_FLUSH_MS": "100"}, self.out_pat)
        e.update({k: str(v) for k, v in extra.items()})
        self.environ = e
        self.p = subprocess.Popen([env.workload] + [str(a) for a in argv], env=e, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.pid = self.p.pid
        self.out = self.err = None

    def registered(self, timeout=10, min_step=-1):
        """Waits until the job's registration exists (and shows step >= min_step)."""
        path = os.path.join(self.ctl, "%d.proc" % self.pid)
        end = time.time() + timeout
        while time.time() < end and self.p.poll() is None:
            try:
                kv = dict(l.split("=", 1) for l in open(path).read().splitlines()[1:] if "=" in l)
                if int(kv.get("step", "-1")) >= min_step:
                    return kv
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        return None

    def wait(self, timeout=60):
        self.out, self.err = self.p.communicate(timeout=timeout)
        return self.p.returncode

    def gp_lines(self):
        return [l for l in self.err.splitlines() if l.startswith("gpuprof: ")]

    def foreign(self):
        return [l for l in self.err.splitlines() if l and not l.startswith("gpuprof: ")]

    def captures(self):
        return sorted(glob.glob(os.path.join(self.dir, "trace-*-cap*.gpuprof")))

    def traces(self):
        return sorted(glob.glob(os.path.join(self.dir, "trace-*.gpuprof")))

    def trigger(self, *args, ctl=None, timeout=60):
        e = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROF_")}
        e["GPUPROF_CONTROL_DIR"] = ctl or self.ctl
        return subprocess.run([self.env_.gpuprof, "trigger"] + [str(a) for a in args], env=e,
                              capture_output=True, text=True, timeout=timeout)

    def check_ran(self, E, steps):
        """The job was not harmed: exit 0, its stdout, only gpuprof: lines on stderr."""
        E.check(self.p.returncode == 0, "%s: exit %s: %s" % (self.name, self.p.returncode, self.err))
        E.check(self.out == "steps %d\n" % steps, "%s: stdout %r" % (self.name, self.out))
        E.check(not self.foreign(), "%s: foreign stderr %r" % (self.name, self.foreign()))


def run_job(E, name, steps, extra, ms=5):
    """The workload's `steps` mode (STEPS steps of MS ms) under the shim to
    its end, checked unharmed (Job.check_ran)."""
    j = Job(E, name, ["steps", steps, ms], extra)
    j.wait()
    j.check_ran(E, steps)
    return j


class Facts:
    """What a trace holds, for the assertions."""

    def __init__(self, env, path):
        out = subprocess.run([env.gpuprof, "dump", "--json", path], capture_output=True, text=True,
                             check=True).stdout
        self.recs = [json.loads(l) for l in out.splitlines() if l.strip()]
        kern = [r for r in self.recs if r["type"] == "kernel"]
        self.kernels = kern
        # a kernel's grid is its step + 1 (tests/fake/workload.c, steps mode)
        self.kernel_steps = collections.Counter(r["grid"][0] - 1 for r in kern)
        self.windows = sorted((r["start"], r["end"]) for r in self.recs if r["type"] == "window")
        self.marks = [r["message"] for r in self.recs if r["type"] == "nvtx_mark" and r.get("domain") == "gpuprof"]
        self.counters = collections.defaultdict(list)
        for r in self.recs:
            if r["type"] == "counter":
                self.counters[r["name"]].append(r["value"])
        self.apis = [r for r in self.recs if r["type"] == "api"]
        self.memsets = [r for r in self.recs if r["type"] == "memset"]
        self.step_ranges = {}
        for r in self.recs:
            if r["type"] == "nvtx_range" and r.get("message", "").startswith("step ") and r["message"][5:].isdigit():
                self.step_ranges[int(r["message"][5:])] = (r["start"], r["end"])

    def own_steps(self):
        """Steps of the kernels launched in this capture's own window (the
        one starting at its mark; a capture's history may hold an earlier
        capture's kernels)."""
        marks = [r["ts"] for r in self.recs if r["type"] == "nvtx_mark" and r.get("domain") == "gpuprof"]
        wins = [w for w in self.windows if marks and w[0] == max(marks)] or self.windows[-1:]
        launch = {a["corr"]: a["start"] for a in self.apis}
        return sorted({k["grid"][0] - 1 for k in self.kernels
                       if any(s <= launch.get(k["corr"], -1) <= e for s, e in wins)})

    def launches(self):
        """How many cudaLaunchKernel records the trace holds."""
        return sum(a["name"] == "cudaLaunchKernel" for a in self.apis)

    def apis_outside_windows(self):
        """The API records that lie in no window."""
        return [a for a in self.apis if not any(s <= a["start"] <= e for s, e in self.windows)]

    def first_api(self):
        return min(a["start"] for a in self.apis) if self.apis else None

    def check_sampled(self, E, what, want):
        """Step sampling: kernels (the fake job's two a step) in exactly the
        steps `want`, one GPU-activity window each, every launch in one."""
        E.check(sorted(self.kernel_steps) == want and all(n == 2 for n in self.kernel_steps.values()),
                "%s: kernels of steps %s" % (what, dict(self.kernel_steps)))
        E.check(len(self.windows) == len(want) and not self.launches_in_windows(),
                "%s: %d windows" % (what, len(self.windows)))

    def launches_in_windows(self):
        """Every GPU record's launch (same correlation id) is in the trace and
        overlaps a window: a call in flight when the window opened began
        before it (what the recorder switched on meanwhile records its
        operation).  Returns the records that fail."""
        launch = {a["corr"]: (a["start"], a["end"]) for a in self.apis}
        bad = []
        for r in self.kernels + self.memsets:
            t = launch.get(r["corr"])
            if t is None or not any(s <= t[1] and t[0] <= e for s, e in self.windows):
                bad.append(r)
        return bad
