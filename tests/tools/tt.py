"""tt.py — helpers for the gpuprof tool tests (stdlib only).

Every test script takes the build dir as argv[1] (default build) and finds
$B/bin/gpuprof and $B/tests/tools/gen_trace there."""
import os
import subprocess
import sys
import tempfile

B = sys.argv[1] if len(sys.argv) > 1 else "build"
GPUPROF = os.path.abspath(os.path.join(B, "bin", "gpuprof"))
GEN = os.path.abspath(os.path.join(B, "tests", "tools", "gen_trace"))
HERE = os.path.dirname(os.path.abspath(__file__))

_failures = []


def tmpdir():
    d = tempfile.TemporaryDirectory(prefix="gpuprof-test-")
    return d


def gen(path, variant=None, ranges_first=False, windows=False):
    args = [GEN] + (["--b"] if variant == "b" else []) + (["--ranges-first"] if ranges_first else []) + \
        (["--windows"] if windows else []) + [path]
    subprocess.run(args, check=True)
    return path


def gp(*args, check=True, **kw):
    """Runs gpuprof; returns CompletedProcess (text).  check: exit 0 required."""
    p = subprocess.run([GPUPROF] + [str(a) for a in args], capture_output=True, text=True,
                       errors="replace", **kw)
    if check and p.returncode != 0:
        fail(f"gpuprof {' '.join(map(str, args))} exited {p.returncode}: {p.stderr.strip()}")
    return p


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


def union(iv):
    """The union of intervals (s, e) as a sorted list of disjoint [s, e]
    (touching ones merged), computed here, not by the tool."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def fail(msg):
    _failures.append(msg)
    print("FAIL:", msg)


def finish():
    if _failures:
        print(f"{len(_failures)} check(s) failed")
        sys.exit(1)
    print("ok")
    sys.exit(0)
