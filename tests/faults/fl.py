"""fl.py — shared set-up for the fault tests (python3 stdlib only).

sys.argv[1] is the build dir.  Provides the paths of the shim, the fake
CUPTI, the fault workload, fault_check and gpuprof; a clean environment
(nothing GPUPROF_*/LD_PRELOAD inherited); run helpers that return the exact
wait status (exit code, signal, core flag); and check()/finish() that print
one line per failed assertion and exit 0/1 (77 = skip)."""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.getcwd()
B = sys.argv[1] if len(sys.argv) > 1 else "build"
if not os.path.isabs(B):
    B = os.path.join(ROOT, B)
SHIM = os.path.join(B, "lib", "libgpuprof.so")
FAKE_CUPTI = os.path.join(B, "tests", "fake", "libcupti.so.13")
WORKLOAD = os.path.join(B, "tests", "faults", "fault_workload")
CHECK = os.path.join(B, "tests", "faults", "fault_check")
GPUPROF = os.path.join(B, "bin", "gpuprof")
# set by `make shim-asan-test` / `shim-tsan-test`: timeouts grow, and
# sanitizer chatter on stderr is not the shim's
SANITIZER = os.environ.get("GPUPROF_FAULT_SANITIZER", "")
SLOW = 4 if SANITIZER else 1

for f in (SHIM, FAKE_CUPTI, WORKLOAD, CHECK):
    if not os.path.exists(f):
        print(f"missing {f} (build first)")
        sys.exit(1)

_failed = []


def check(cond, msg):
    if not cond:
        _failed.append(msg)
        print("FAIL:", msg, flush=True)
    return cond


def info(msg):
    print("INFO:", msg, flush=True)


def finish():
    if _failed:
        print(f"{len(_failed)} check(s) failed")
        sys.exit(1)
    print("ok")
    sys.exit(0)


def skip(why):
    print("skip:", why)
    sys.exit(77)


def base_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUPROF_") and not k.startswith("FAKE_CUPTI")
           and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")}
    return env


def traced_env(output, **extra):
    env = base_env()
    env.update(GPUPROF_OUTPUT=output, GPUPROF_CUPTI=FAKE_CUPTI, LD_PRELOAD=SHIM)
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Result:
    def __init__(self, status, out, err, timed_out):
        self.status = status
        self.out = out
        self.err = err
        self.timed_out = timed_out
        self.exited = os.WIFEXITED(status)
        self.code = os.WEXITSTATUS(status) if self.exited else None
        self.sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        self.core = os.WIFSIGNALED(status) and os.WCOREDUMP(status)

    def shell_status(self):
        """what $? would be in sh: the exit code, or 128+signal"""
        return self.code if self.exited else 128 + (self.sig or 0)

    def desc(self):
        if self.timed_out:
            return "timed out (killed)"
        if self.exited:
            return f"exit {self.code}"
        return f"signal {self.sig}{' (core)' if self.core else ''}"

    def gp_lines(self):
        return [l for l in self.err.splitlines() if l.startswith("gpuprof: ")]

    def foreign_lines(self):
        """stderr lines that are neither the shim's nor a sanitizer's"""
        return [l for l in self.err.splitlines()
                if l.strip() and not l.startswith("gpuprof: ")]


def spawn(args, env, cwd=None, rlimits=None, stdout=None, stderr=None):
    """Popen with resource limits set in the child (setrlimit between fork
    and exec: the 'wrapper')."""
    def pre():
        for res, val in (rlimits or {}).items():
            resource.setrlimit(res, val)
        # a test runner that ignores SIGPIPE/SIGXFSZ must not pass that on
        for s in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
    return subprocess.Popen(args, env=env, cwd=cwd, preexec_fn=pre,
                            stdout=stdout, stderr=stderr)


def wait_status(p, timeout):
    """waits for p; returns (raw wait status, timed_out).  Uses os.waitpid so
    the core-dump flag survives (Popen.returncode drops it)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, st = os.waitpid(p.pid, os.WNOHANG)
        if pid == p.pid:
            p.returncode = 0  # keep Popen from waiting again
            return st, False
        if time.monotonic() > deadline:
            p.kill()
            _, st = os.waitpid(p.pid, 0)
            p.returncode = 0
            return st, True
        time.sleep(0.01)


def run(args, env, timeout=60, cwd=None, rlimits=None):
    """runs to completion; stdout/stderr captured through files (no pipes:
    the job must not block on a full pipe while we poll)."""
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        p = spawn(args, env, cwd=cwd, rlimits=rlimits, stdout=o, stderr=e)
        st, to = wait_status(p, timeout * SLOW)
        o.seek(0)
        e.seek(0)
        return Result(st, o.read().decode("utf-8", "replace"), e.read().decode("utf-8", "replace"), to)


def facts(trace):
    """fault_check's lines, parsed: dict with 'open', 'integrity', 'api'
    {(name, tid): (count, max_end)}, 'types' {name: n}, 'kernels' {name: n},
    'dropped' [(where, source, n)], 'sources' {id: (kind, tid)},
    'threads' {tid: name}."""
    p = subprocess.run([CHECK, trace], capture_output=True, text=True, errors="replace", timeout=120 * SLOW)
    f = {"rc": p.returncode, "open": None, "integrity": {}, "api": {}, "types": {}, "kernels": {},
         "dropped": [], "sources": {}, "threads": {}, "raw": p.stdout}
    for line in p.stdout.splitlines():
        w = line.split(" ")
        if w[0] == "open":
            f["open"] = " ".join(w[1:])
        elif w[0] == "integrity":
            f["integrity"] = {k: int(v) for k, v in (x.split("=") for x in w[1:])}
        elif w[0] == "api":
            f["api"][(w[1], int(w[2]))] = (int(w[3]), int(w[4]))
        elif w[0] == "type":
            f["types"][w[1]] = int(w[2])
        elif w[0] == "kernel":
            f["kernels"][w[1]] = int(w[2])
        elif w[0] == "dropped":
            f["dropped"].append((int(w[1]), int(w[2]), int(w[3])))
        elif w[0] == "source":
            f["sources"][int(w[1])] = (int(w[2]), int(w[3]))
        elif w[0] == "thread":
            f["threads"][int(w[1])] = w[2]
    return f


def api_count(f, name, tid=None):
    return sum(n for (nm, t), (n, _) in f["api"].items() if nm == name and (tid is None or t == tid))


def api_max_end(f, name):
    return max([m for (nm, _), (_, m) in f["api"].items() if nm == name] or [0])


def dropped_total(f):
    return sum(n for _, _, n in f["dropped"])


def traces(d):
    return sorted(os.path.join(d, x) for x in os.listdir(d) if x.endswith(".gpuprof"))


class TmpDir:
    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="gpuprof-faults.")
        return self.path

    def __exit__(self, *a):
        shutil.rmtree(self.path, ignore_errors=True)
