"""GPUPROF_STACKS on the fake-CUDA workload (native frames, no Python).

1. `workload stacks 3` launches from main -> stk_level_a -> stk_level_b ->
   stk_level_c -> cudaLaunchKernel: with GPUPROF_STACKS=all the launch's stack,
   resolved offline through the trace's module records, holds exactly
   stk_level_c, stk_level_b, stk_level_a, main in the workload (then only
   _start), below the fake libcudart's cudaLaunchKernel; every frame lies in
   a module record; one STACK record per distinct site (interning).  The
   same through CUDA 13's launch callback, __cudaLaunchKernel.  main's
   cudaMalloc has its stack (allocation calls: libprof's gp_alloc), its
   cudaFree none.
2. Sampling: 10000 launches from one site with GPUPROF_STACKS=1: every API
   record has the one stack id, the captures (gpuprof.stacks_captured) are
   16 + about 1/32 of the rest per site.
3. No libunwind (GPUPROF_UNWIND=glibc, or a path that does not exist): the
   same frames through glibc's backtrace(), the missing library named on one
   gpuprof: line.
4. GPUPROF_API_MODE=activity still gets stacks (callbacks forced);
   a bad GPUPROF_STACKS value is one line and no stacks; stdout unchanged.
5. The full workload (4 threads launching at once, a fork child that uses
   CUDA) with GPUPROF_STACKS=all: stdout unchanged, and in the parent's and
   the child's trace every launch/copy/set record has a stack of that trace
   whose native frames all lie in that trace's module records."""
import ctypes
import glob
import os
import subprocess
import sys

from stackslib import Env, Trace, symbolize

E = Env(sys.argv[1])
CHAIN = ["stk_level_c", "stk_level_b", "stk_level_a", "main"]


def foreign(err):
    return [l for l in err.splitlines() if l and not l.startswith("gpuprof: ")]


def run_stacks(n, extra, name):
    rc, out, err, trace = E.run([E.workload, "stacks", str(n)], extra, name)
    E.check(rc == 0, "%s: exit %d: %s" % (name, rc, err))
    E.check(out == "stacks %d\n" % n, "%s: stdout changed: %r" % (name, out))
    E.check(not foreign(err), "%s: foreign stderr: %r" % (name, foreign(err)))
    return Trace(E, trace), err


def api_stacks(t, name):
    return [a.get("stack", 0) for a in t.apis if a["name"] == name]


def check_chain(t, what):
    launches = api_stacks(t, "cudaLaunchKernel")
    if not E.check(launches and all(launches) and len(set(launches)) == 1,
                   "%s: launch stack ids %s (want one id, all set)" % (what, launches)):
        return
    sid = launches[0]
    frames = t.native(sid)
    E.check(all(m is not None for _, m in frames),
            "%s: frames outside every module record: %s" % (what, [hex(a) for a, m in frames if m is None]))
    wl = [symbolize(t, a, m) for a, m in frames if m and m["path"] == E.workload]
    E.check(wl[:4] == CHAIN and all(s == "_start" for s in wl[4:]),
            "%s: workload frames %s, want %s (then _start)" % (what, wl, CHAIN))
    # just above the chain: the fake runtime's cudaLaunchKernel
    first = next((i for i, (a, m) in enumerate(frames) if m and m["path"] == E.workload), None)
    if E.check(first is not None and first > 0, "%s: no frame above the workload" % what):
        a, m = frames[first - 1]
        E.check(m["path"] == E.cudart and symbolize(t, a, m) == "cudaLaunchKernel",
                "%s: frame above stk_level_c is %s in %s" % (what, symbolize(t, a, m), m["path"]))
    mem = api_stacks(t, "cudaMemset")
    if E.check(mem and all(mem) and len(set(mem)) == 1, "%s: memset stack ids %s" % (what, mem)):
        wl = [symbolize(t, a, m) for a, m in t.native(mem[0]) if m and m["path"] == E.workload]
        E.check(wl[:1] == ["stk_memset"] and "main" in wl, "%s: memset frames %s" % (what, wl))
    # an allocation call takes its stack (libprof's gp_alloc, every call), a free none
    mal = api_stacks(t, "cudaMalloc")
    if E.check(len(mal) == 1 and all(mal), "%s: cudaMalloc stack ids %s" % (what, mal)):
        wl = [symbolize(t, a, m) for a, m in t.native(mal[0]) if m and m["path"] == E.workload]
        E.check(wl[:1] == ["main"], "%s: cudaMalloc frames %s" % (what, wl))
    free = api_stacks(t, "cudaFree")
    E.check(free and not any(free), "%s: cudaFree got stacks %s" % (what, free))


# 1. the known chain, every call captured
t, err = run_stacks(3, {"GPUPROF_STACKS": "all"}, "all")
check_chain(t, "all")
E.check(len(t.stacks) == 3, "all: %d STACK records, want 3 (launch, memset and cudaMalloc sites)" % len(t.stacks))
E.check(t.counters.get("gpuprof.stacks_captured") == 7 and t.counters.get("gpuprof.stacks_distinct") == 3,
        "all: counters %s" % t.counters)

# 1b. CUDA 13's runtime gives a <<<>>> launch its own callback,
# __cudaLaunchKernel: a launch call (libprof's gp_launch), so it has the
# same stack (the shim's own name list had left it out)
t, err = run_stacks(3, {"GPUPROF_STACKS": "all", "FAKE_CUDA_LAUNCH13": "1"}, "cuda13")
l13 = api_stacks(t, "__cudaLaunchKernel")
if E.check(len(l13) == 3 and all(l13) and len(set(l13)) == 1, "cuda13: __cudaLaunchKernel stack ids %s" % l13):
    wl = [symbolize(t, a, m) for a, m in t.native(l13[0]) if m and m["path"] == E.workload]
    E.check(wl[:4] == CHAIN, "cuda13: workload frames %s, want %s" % (wl, CHAIN))
try:
    ctypes.CDLL("libunwind.so.8")
    E.check("libunwind" not in err, "all: libunwind complaint with libunwind present: %r" % err)
except OSError:  # no libunwind here: the fallback line is right (part 3 checks it)
    print("libunwind.so.8 not loadable here: the default run used glibc's backtrace()")

# 2. sampling: one site, 10000 launches (and 10000 memsets: a second site)
N = 10000
t, _ = run_stacks(N, {"GPUPROF_STACKS": "1"}, "sampled")
launches = api_stacks(t, "cudaLaunchKernel")
E.check(len(launches) == N and all(launches) and len(set(launches)) == 1,
        "sampled: %d launches, %d without a stack, ids %s" % (len(launches), launches.count(0), set(launches)))
E.check(len(t.stacks) == 3, "sampled: %d STACK records, want 3 (with the cudaMalloc's)" % len(t.stacks))
cap = t.counters.get("gpuprof.stacks_captured", -1)
# per site 16 + Binomial(N - 16, 1/32): mean 312, sd 17.4; +-6 sd for both
# sites; and the one cudaMalloc (allocations: every call)
lo, hi = 2 * 16 + 2 * 312 - 150 + 1, 2 * 16 + 2 * 312 + 150 + 1
E.check(lo <= cap <= hi, "sampled: %d captures for 2 x %d calls, want %d..%d" % (cap, N, lo, hi))
print("sampled: %d calls from 2 sites -> %d captures, %d stacks" % (2 * N, cap, len(t.stacks)))

# 3. without libunwind
t, err = run_stacks(3, {"GPUPROF_STACKS": "all", "GPUPROF_UNWIND": "glibc"}, "glibc")
check_chain(t, "glibc")
E.check(not err.strip() or "libunwind" not in err, "glibc: forced glibc still mentions libunwind: %r" % err)
bogus = "/nonexistent/libunwind.so.8"
t, err = run_stacks(3, {"GPUPROF_STACKS": "all", "GPUPROF_UNWIND": bogus, "GPUPROF_QUIET": "1"}, "nolib")
check_chain(t, "no libunwind")
lines = [l for l in err.splitlines() if "libunwind" in l]
E.check(len(lines) == 1 and bogus in lines[0] and "glibc backtrace()" in lines[0],
        "no libunwind: want one line naming %s and the fallback, got %r" % (bogus, err))

# 4. activity mode: callbacks forced, stacks recorded
t, _ = run_stacks(3, {"GPUPROF_STACKS": "all", "GPUPROF_API_MODE": "activity"}, "activity")
check_chain(t, "api mode activity")
# no API records, no stacks: said once
t, err = run_stacks(3, {"GPUPROF_STACKS": "all", "GPUPROF_API": "none"}, "apinone")
E.check(sum("GPUPROF_API=none" in l for l in err.splitlines()) == 1 and not t.stacks,
        "api none: want one line and no stacks, got %r, %d stacks" % (err, len(t.stacks)))
# bad value: one line, no stacks, job unharmed
t, err = run_stacks(3, {"GPUPROF_STACKS": "everything"}, "bad")
E.check(sum("GPUPROF_STACKS=everything" in l for l in err.splitlines()) == 1,
        "bad value: want one line, got %r" % err)
E.check(not t.stacks and not any(a.get("stack") for a in t.apis), "bad value: stacks recorded anyway")
# 5. threads and a fork child
plain = subprocess.run([E.workload], capture_output=True, text=True, timeout=60).stdout
trace = os.path.join(E.tmp, "full-%p.gpuprof")
p = subprocess.run([E.workload], env=E.env({"GPUPROF_STACKS": "all"}, trace), capture_output=True, text=True,
                   timeout=60)
E.check(p.returncode == 0 and p.stdout == plain, "full workload: exit %d, stdout %r vs %r" %
        (p.returncode, p.stdout, plain))
files = glob.glob(os.path.join(E.tmp, "full-*.gpuprof"))
E.check(len(files) == 2, "full workload: %d traces, want parent + child" % len(files))
for f in files:
    t = Trace(E, f)
    want = [a for a in t.apis if a["name"] in ("cudaLaunchKernel", "cudaMemcpy", "cudaMemset")]
    E.check(want and all(a.get("stack") in t.stacks for a in want),
            "%s: %d of %d launch/copy/set records without a stack of this trace" %
            (os.path.basename(f), sum(a.get("stack") not in t.stacks for a in want), len(want)))
    for sid in t.stacks:
        E.check(all(m is not None for _, m in t.native(sid)), "%s: stack %d outside the modules" %
                (os.path.basename(f), sid))
E.finish()
