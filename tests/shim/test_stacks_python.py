"""GPUPROF_STACKS in a Python process (CPython 3.11 to 3.13, read without the
GIL): a job (stacks_py_job.py) launches through the fake libcudart with
ctypes, which releases the GIL like PyTorch's bindings.

- main thread: the launch's stack ends with the Python frames launch
  (file:line of the call), Model.forward (co_qualname), train_step, <module>
  — innermost first, each at its marked line — after the native frames;
- a threading.Thread: thread_body at its line, then threading's own frames;
- a native pthread that never ran Python: no Python frames of its own, a
  "ctx\\t<tid>" marker naming the main thread (the latest launch with Python
  frames) and then exactly that launch's Python frames;
- GPUPROF_STACKS=1, one kernel from two Python lines alternately
  (stacks_py_sites.py): every launch carries the stack of its own line, with
  far fewer captures than launches;
- a library dlopen'ed after stacks started (a copy of the fake libcudart):
  its launch's native frames lie in module records for it, as do all others.
GPUPROF_TEST_PYTHON picks the interpreter (default: this one); skips, saying
why, when it is not CPython 3.11, 3.12 or 3.13."""
import os
import subprocess
import sys

from stackslib import Env, Trace, cpython_or_skip, marker_lines

E = Env(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "stacks_py_job.py")
py, major, minor = cpython_or_skip()

lines = marker_lines(JOB, "LAUNCH")

late_lib = os.path.join(E.tmp, "libcudart-late.so")
subprocess.run(["cp", E.cudart, late_lib], check=True)
rc, out, err, trace = E.run([py, JOB, E.cudart, late_lib], {"GPUPROF_STACKS": "all"}, "py")
E.check(rc == 0 and out == "job done\n", "job: exit %d, stdout %r, stderr %r" % (rc, out, err))
E.check(all(l.startswith("gpuprof: ") for l in err.splitlines() if l), "job: foreign stderr %r" % err)
E.check("python frames" not in err, "python frames complaint: %r" % err)
t = Trace(E, trace)
launches = [a for a in t.apis if a["name"] == "cudaLaunchKernel"]
if not E.check(len(launches) == 5 and all(a.get("stack") for a in launches),
               "want 5 launches with stacks, got %s" % [(a["tid"], a.get("stack")) for a in launches]):
    E.finish()


def py_frames(sid):
    """[(file, line, func)] of the stack's Python frames, up to a ctx marker;
    and the marker's tid and the frames after it."""
    own, ctx_tid, ctx = [], None, []
    for s in t.symbolic(sid):
        if s is None:
            E.fail("stack %d: a symbolic frame without text" % sid)
            continue
        w = s.split("\t")
        if w[0] == "ctx":
            ctx_tid = int(w[1])
        elif w[0] == "py":
            (ctx if ctx_tid is not None else own).append((w[1], int(w[2]), w[3]))
        else:
            E.fail("stack %d: unknown symbolic frame %r" % (sid, s))
    return own, ctx_tid, ctx


def native_count(sid):
    return sum(1 for _ in t.native(sid))


main_tid = launches[0]["tid"]
first, thread, before, native, late = launches
# 1. main thread, through a method: innermost first, after the native frames
own, ctx_tid, _ = py_frames(first["stack"])
want = [(JOB, lines["CALL"], "launch"), (JOB, lines["FORWARD"], "Model.forward"),
        (JOB, lines["STEP"], "train_step"), (JOB, lines["MODULE"], "<module>")]
E.check(own == want, "main thread: python frames %s, want %s" % (own, want))
E.check(ctx_tid is None, "main thread: unexpected ctx marker")
fr = t.stacks[first["stack"]]["frames"]
npy = sum(1 for f in fr if f >> 63)
E.check(native_count(first["stack"]) > 0 and all(not (f >> 63) for f in fr[:len(fr) - npy]),
        "main thread: native frames must come first")
# 2. threading.Thread
own, ctx_tid, _ = py_frames(thread["stack"])
E.check(thread["tid"] != main_tid, "thread launch on the main thread?")
E.check(own[:2] == [(JOB, lines["CALL"], "launch"), (JOB, lines["THREAD"], "thread_body")] and
        any(f[2] == "Thread.run" and f[0].endswith("threading.py") for f in own[2:]),
        "thread: python frames %s" % own)
E.check(ctx_tid is None, "thread: unexpected ctx marker")
# 3. native thread: ctx = the main thread's launch just before it
b_own, _, _ = py_frames(before["stack"])
E.check(b_own and b_own[-1] == (JOB, lines["BEFORE-NATIVE"], "<module>"), "before-native: %s" % b_own)
own, ctx_tid, ctx = py_frames(native["stack"])
E.check(native["tid"] not in (main_tid, thread["tid"]), "native launch not on its own thread")
E.check(not own, "native thread: python frames of its own: %s" % own)
E.check(ctx_tid == main_tid and ctx == b_own,
        "native thread: ctx tid %s frames %s, want tid %d frames %s" % (ctx_tid, ctx, main_tid, b_own))
# 4. the late library: covered by a module record, like every native frame
paths = [m["path"] for _, m in t.native(late["stack"]) if m]
E.check(late_lib in paths, "late library: no frame in %s (modules of its stack: %s)" % (late_lib, paths))
own, _, _ = py_frames(late["stack"])
E.check(own[:1] == [(JOB, lines["LATE"], "<module>")], "late library: python frames %s" % own)
for sid in t.stacks:
    miss = [hex(a) for a, m in t.native(sid) if m is None]
    E.check(not miss, "stack %d: native frames outside every module record: %s" % (sid, miss))
# 5. the rate limit tells Python call sites apart
SITES = os.path.join(HERE, "stacks_py_sites.py")
site_line = marker_lines(SITES, "SITE")
N = 2000
rc, out, err, trace = E.run([py, SITES, E.cudart, str(N)], {"GPUPROF_STACKS": "1"}, "sites")
E.check(rc == 0 and out == "sites done\n", "sites: exit %d, stdout %r, stderr %r" % (rc, out, err))
t = Trace(E, trace)
launches = [a for a in t.apis if a["name"] == "cudaLaunchKernel"]
lines_seen = []
for a in launches:
    own = py_frames(a["stack"])[0] if a.get("stack") in t.stacks else []
    lines_seen.append(own[1][1] if len(own) > 1 else None)
want_lines = [site_line["A"], site_line["B"]] * N
wrong = sum(1 for x, y in zip(lines_seen, want_lines) if x != y)
E.check(len(launches) == 2 * N and wrong == 0,
        "sites: %d launches, %d carry the other line's stack" % (len(launches), wrong))
cap = t.counters.get("gpuprof.stacks_captured", 0)
E.check(0 < cap < N, "sites: %d captures for %d launches (rate limit)" % (cap, 2 * N))
print("sites: %d launches from 2 lines, %d captures, every stack at its own line" % (2 * N, cap))
print("python %s.%s: main, threading.Thread and native-thread (ctx) stacks as expected" % (major, minor))
E.finish()
