"""bench/shim/stacks.py — what GPUPROF_STACKS costs per launch on the fake CUDA
stack, in CPU time of the whole traced process (user + sys from wait4, so
other load on the machine does not count): the C launch loop of
bench_launch (a 6-frame native stack) and a Python loop DEPTH frames deep
(stacks_py.py, ctypes).  Medians of REPS interleaved runs.

  python3 bench/shim/stacks.py [BUILD_DIR] [N] [REPS] [DEPTH]

off = tracing without stacks; all - off = one capture per launch (unwind,
Python walk, intern); 1 - off = the sampled mode's average cost per launch;
all-glibc = capture through glibc's backtrace() instead of libunwind."""
import os
import statistics
import subprocess
import sys
import tempfile

B = sys.argv[1] if len(sys.argv) > 1 else "build/bench-shim"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
DEPTH = int(sys.argv[4]) if len(sys.argv) > 4 else 30
PY = os.environ.get("PYTHON", sys.executable)
subprocess.run(["make", "-s", "B=" + B, "bench-shim"], check=True, stdout=subprocess.DEVNULL)
B = os.path.abspath(B)
tmp = tempfile.mkdtemp(prefix="gpuprof-benchstk.")
MODES = [("off", {"GPUPROF_STACKS": "0"}), ("1", {"GPUPROF_STACKS": "1"}),
         ("all", {"GPUPROF_STACKS": "all"}),
         ("all-glibc", {"GPUPROF_STACKS": "all", "GPUPROF_UNWIND": "glibc"})]
LOOPS = [("c", [os.path.join(B, "bench/shim/bench_launch"), str(N)], N),
         ("py%d" % DEPTH, [PY, os.path.join(os.path.dirname(__file__), "stacks_py.py"),
                           os.path.join(B, "tests/fake/libcudart.so.13"), str(N // 4), str(DEPTH)], N // 4)]


def cpu_ns(argv, env):
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit("%s failed: %d" % (argv, status))
    return (ru.ru_utime + ru.ru_stime) * 1e9


res = {}
for _ in range(REPS):
    for mname, menv in MODES:
        for lname, argv, n in LOOPS:
            env = dict(os.environ, LD_PRELOAD=os.path.join(B, "lib/libgpuprof.so"), GPUPROF_QUIET="1",
                       GPUPROF_CUPTI=os.path.join(B, "tests/fake/libcupti.so.13"),
                       GPUPROF_OUTPUT=os.path.join(tmp, "t-%p.gpuprof"), **menv)
            res.setdefault((lname, mname), []).append(cpu_ns(argv, env) / n)
            for f in os.listdir(tmp):
                os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
print("%-14s %14s %10s" % ("loop stacks", "cpu ns/launch", "- off"))
for lname, _, _ in LOOPS:
    off = statistics.median(res[(lname, "off")])
    for mname, _ in MODES:
        v = statistics.median(res[(lname, mname)])
        print("%-14s %14.0f %10.0f" % (lname + " " + mname, v, v - off))
