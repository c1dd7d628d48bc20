"""tt.py — helpers for the gpuprof tool tests (stdlib only).

Every test script takes the build dir as argv[1] (default build) and finds
$B/bin/gpuprof and $B/tests/tools/gen_trace there."""
import os
import shutil
import subprocess
import sys
import tempfile

B = sys.argv[1] if len(sys.argv) > 1 else "build"
GPUPROF = os.path.abspath(os.path.join(B, "bin", "gpuprof"))
GEN = os.path.abspath(os.path.join(B, "tests", "tools", "gen_trace"))
HERE = os.path.dirname(os.path.abspath(__file__))

_failures = []
# tables are cut to $COLUMNS (gpuprof stats): the tests choose the width
os.environ.pop("COLUMNS", None)


def tmpdir():
    d = tempfile.TemporaryDirectory(prefix="gpuprof-test-")
    return d


def gen(path, variant=None, ranges_first=False, windows=False):
    args = [GEN] + (["--b"] if variant == "b" else []) + (["--ranges-first"] if ranges_first else []) + \
        (["--windows"] if windows else []) + [path]
    subprocess.run(args, check=True)
    return path


def run_workload(d, *args, **env):
    """Runs the fake-CUDA workload (tests/fake/workload.c) traced by the real
    shim into d/w-PID.gpuprof, with the extra environment `env`; returns the
    trace paths, largest (the parent's) first."""
    b = os.path.abspath(B)
    e = dict(os.environ, GPUPROF_OUTPUT=os.path.join(d, "w-%p.gpuprof"), GPUPROF_QUIET="1",
             GPUPROF_CUPTI=os.path.join(b, "tests", "fake", "libcupti.so.13"),
             LD_PRELOAD=os.path.join(b, "lib", "libgpuprof.so"), **env)
    for k in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GPUPROF_ROOT_PID"):
        e.pop(k, None)
    subprocess.run([os.path.join(b, "tests", "fake", "workload"), *args], env=e, check=True, capture_output=True)
    return sorted((os.path.join(d, f) for f in os.listdir(d) if f.startswith("w-")), key=os.path.getsize,
                  reverse=True)


def gp(*args, check=True, **kw):
    """Runs gpuprof; returns CompletedProcess (text).  check: exit 0 required."""
    p = subprocess.run([GPUPROF] + [str(a) for a in args], capture_output=True, text=True,
                       errors="replace", **kw)
    if check and p.returncode != 0:
        fail(f"gpuprof {' '.join(map(str, args))} exited {p.returncode}: {p.stderr.strip()}")
    return p


def union(iv):
    """The union of intervals (s, e), as sorted disjoint [s, e] lists
    (touching ones merged), computed here, not by the tool."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def chromium():
    """A headless-capable Chromium on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def golden(name, *args, cwd=None):
    """Runs gpuprof with args (any exit status) and compares its stdout plus
    an "exit N" line with golden/NAME.out; GPUPROF_UPDATE_GOLDEN=1 rewrites
    the file instead (review the diff)."""
    p = gp(*args, check=False, cwd=cwd)
    out = p.stdout + f"exit {p.returncode}\n"
    path = os.path.join(HERE, "golden", name + ".out")
    if os.environ.get("GPUPROF_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(out)
        return
    with open(path) as f:
        want = f.read()
    if out != want:
        fail(f"golden/{name}.out differs from gpuprof {' '.join(map(str, args))}")
        print(out)


def utf8_fixed(b):
    """The Parquet and CSV exports' rule for text that is not UTF-8 (bytes
    b): each byte that does not begin a valid sequence becomes U+FFFD
    (written here from the rule, not from the tool)."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                ch = b[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1:
                out.append(ch)
                i += n
                break
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def expect(cond, what):
    if not cond:
        fail(what)
    return cond


def eq(got, want, what):
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


def approx(got, want, what, tol=0.051):
    if got is None or abs(float(got) - float(want)) > tol:
        fail(f"{what}: got {got!r}, want {want!r}")


def fail(msg):
    _failures.append(msg)
    print("FAIL:", msg)


def finish():
    if _failures:
        print(f"{len(_failures)} check(s) failed")
        sys.exit(1)
    print("ok")
    sys.exit(0)
