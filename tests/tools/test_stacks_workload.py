"""test_stacks_workload.py — call stacks end to end: the fake-CUDA workload
(`workload stacks 3`: main -> stk_level_a -> stk_level_b -> stk_level_c ->
cudaLaunchKernel, and main -> stk_memset -> cudaMemset) recorded by the real
shim with GPUPROF_STACKS=all, then read by the tools: the folded export has
the known chain with the GPU time of the kernels (summed from `dump`),
`launch_sites` names stk_level_c and stk_memset, the Perfetto export puts the
chain on the launch slices, and the tracer's own frames (libgpuprof,
libcupti) are nowhere.  tests/shim/test_stacks.py checks the raw frames; this
checks what the tools make of them.  test_speedscope.py loads the same
folded export in speedscope.

Then a Python job (tests/shim/stacks_py_job.py, CPython 3.11-3.13 only: the
shim reads no other) launching through ctypes: the display stacks hold its
Python frames as "func (file:line)" at the marked lines, none of the
interpreter's C frames, and a native thread's launch borrows the main
thread's Python context behind a "[thread TID NAME]" frame; the site of
every launch is the user's innermost frame."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, eq, expect, finish, gp, tmpdir  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.path.join(ROOT, B) if not os.path.isabs(B) else B
CHAIN = ["main", "stk_level_a", "stk_level_b", "stk_level_c", "cudaLaunchKernel"]
MEMSET = ["main", "stk_memset", "cudaMemset"]


def traced_env(trace):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUPROF_") and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH",
                                                          "NVTX_INJECTION64_PATH")}
    env.update(GPUPROF_OUTPUT=trace, GPUPROF_STACKS="all", GPUPROF_QUIET="1",
               GPUPROF_CUPTI=os.path.join(BUILD, "tests/fake/libcupti.so.13"),
               LD_PRELOAD=os.path.join(BUILD, "lib/libgpuprof.so"))
    return env


def record_workload(trace, n=3):
    """The fake workload's stacks mode under the shim; returns the trace path."""
    p = subprocess.run([os.path.join(BUILD, "tests/fake/workload"), "stacks", str(n)], env=traced_env(trace),
                       capture_output=True, text=True, timeout=120)
    eq(p.returncode, 0, f"workload exit ({p.stderr.strip()})")
    eq(p.stdout, f"stacks {n}\n", "workload stdout unchanged")
    return trace


if __name__ == "__main__":
    d = tmpdir()
    t = record_workload(os.path.join(d.name, "w.gpuprof"))
    recs = [json.loads(x) for x in gp("dump", "--json", "--type", "api,kernel,memset", t).stdout.splitlines()]
    launch_corr = {r["corr"] for r in recs if r["type"] == "api" and r["name"] == "cudaLaunchKernel"}
    memset_corr = {r["corr"] for r in recs if r["type"] == "api" and r["name"] == "cudaMemset"}
    kernel_ns = sum(r["dur"] for r in recs if r["type"] == "kernel" and r["corr"] in launch_corr)
    memset_ns = sum(r["dur"] for r in recs if r["type"] == "memset" and r["corr"] in memset_corr)
    eq(len(launch_corr), 3, "three launch calls")
    expect(kernel_ns > 0 and memset_ns > 0, f"GPU time recorded: kernels {kernel_ns}, memsets {memset_ns}")

    lines = {}
    for line in gp("export", "--format", "folded", t, "-o", "-").stdout.splitlines():
        stack, _, w = line.rpartition(" ")
        lines[stack] = int(w)
    chain = [s for s in lines if s.split(";")[-len(CHAIN):] == CHAIN]
    eq(len(chain), 1, f"one folded line ends with {';'.join(CHAIN)}: {list(lines)}")
    if chain:
        eq(lines[chain[0]], kernel_ns, "chain weight = the launches' kernel ns")
    ms = [s for s in lines if s.split(";")[-len(MEMSET):] == MEMSET]
    eq(len(ms), 1, f"one folded line ends with {';'.join(MEMSET)}")
    if ms:
        eq(lines[ms[0]], memset_ns, "memset line weight = the memsets' ns")
    eq(sum(lines.values()), kernel_ns + memset_ns, "folded total = all GPU time (nothing unattributed)")
    expect(not any("libgpuprof" in s or "libcupti" in s for s in lines), "no tracer frames in the stacks")
    launches = {}
    for line in gp("export", "--format", "folded", "--weight", "launches", t, "-o", "-").stdout.splitlines():
        stack, _, w = line.rpartition(" ")
        launches[stack] = int(w)
    if chain and ms:
        eq((launches.get(chain[0]), launches.get(ms[0])), (3, 3), "launches weight: 3 and 3")

    sites = json.loads(gp("stats", "--report", "launch_sites", "--format", "json", t).stdout)["launch_sites"]
    eq([(r["site"], r["kernels"], r["launches"], r["kernel_ns"], r["memops"], r["innermost"]) for r in sites],
       [("stk_level_c", 3, 3, kernel_ns, 0, "cudaLaunchKernel"), ("stk_memset", 0, 3, 0, 3, "cudaMemset")],
       "launch_sites rows")

    pj = json.loads(gp("export", "--format", "perfetto", t, "-o", "-").stdout)
    st = [e["args"].get("stack") for e in pj["traceEvents"]
          if e.get("cat") == "cuda_api" and e["name"] == "cudaLaunchKernel"]
    eq(len(st), 3, "three launch slices")
    expect(all(s and s[-len(CHAIN):] == CHAIN for s in st), f"Perfetto launch slices carry the chain: {st[:1]}")

    # ---- a Python job
    job = os.path.join(ROOT, "tests", "shim", "stacks_py_job.py")
    py = os.environ.get("GPUPROF_TEST_PYTHON", sys.executable)
    ver = subprocess.run([py, "-c", "import sys,platform;print(platform.python_implementation(),"
                          "sys.version_info[0],sys.version_info[1])"], capture_output=True, text=True).stdout.split()
    if ver[:1] != ["CPython"] or tuple(ver[1:]) not in (("3", "11"), ("3", "12"), ("3", "13")):
        print(f"Python part not run: {py} is {' '.join(ver) or '?'}, the shim reads CPython 3.11-3.13 frames only")
        finish()
    at = {}
    for i, text in enumerate(open(job), 1):
        if "# LAUNCH-" in text:
            at[text.split("# LAUNCH-")[1].strip()] = i
    cudart = os.path.join(BUILD, "tests/fake/libcudart.so.13")
    late = os.path.join(d.name, "libcudart-late.so")
    shutil.copy(cudart, late)
    pt = os.path.join(d.name, "py.gpuprof")
    p = subprocess.run([py, job, cudart, late], env=traced_env(pt), capture_output=True, text=True, timeout=120)
    eq((p.returncode, p.stdout), (0, "job done\n"), f"python job ({p.stderr.strip()})")
    base = os.path.basename(job)
    lines = {}
    for line in gp("export", "--format", "folded", pt, "-o", "-").stdout.splitlines():
        stack, _, w = line.rpartition(" ")
        lines[stack] = int(w)
    fr = lambda fn, key: f"{fn} ({base}:{at[key]})"  # noqa: E731
    model = [fr("train_step", "STEP"), fr("Model.forward", "FORWARD"), fr("launch", "CALL")]
    want_py = {  # Python part of each launch's display stack, root first
        "module": [fr("<module>", "MODULE")] + model,
        "before-native": [fr("<module>", "BEFORE-NATIVE")] + model,
        "thread": ["Thread._bootstrap", "Thread._bootstrap_inner", "Thread.run", fr("thread_body", "THREAD"),
                   fr("launch", "CALL")],
        "late": [fr("<module>", "LATE")],
    }
    py_of = {}
    for stack in lines:
        frames = stack.split(";")
        n = 0
        while n < len(frames) and frames[n].endswith(")") and ".py:" in frames[n]:
            n += 1
        py_of[stack] = frames[:n]
        expect(frames[-1] == "cudaLaunchKernel", f"python job: leaf is the launch call: {stack}")
        expect(not any(f.startswith("_PyEval") or f.startswith("PyEval") or "python3" in f.split(" ")[0]
                       for f in frames[n:] if not f.startswith("[thread")),
               f"python job: interpreter frames dropped: {stack}")
    def shown(f):  # threading.py's own lines depend on the Python version: compare names only
        return f.split(" (")[0] if " (threading.py:" in f else f
    own = {s: [shown(f) for f in pyf] for s, pyf in py_of.items() if "[thread " not in s}
    for what, want in want_py.items():
        got = [s for s, pyf in own.items() if pyf == want]
        eq(len(got), 1, f"python job: one stack with the Python frames of '{what}' {want}: {list(own.values())}")
    # the native thread: the main thread's context, then the thread frame, then native code
    nat = [s for s in lines if "[thread " in s]
    if eq(len(nat), 1, "python job: one launch borrowing a Python context"):
        frames = nat[0].split(";")
        i = next(k for k, f in enumerate(frames) if f.startswith("[thread "))
        eq(frames[:i], [fr("<module>", "BEFORE-NATIVE")] + model, "borrowed context = the latest Python launch")
        expect("native_launcher" in frames[i + 1:], f"native thread's own frames follow: {frames[i:]}")
    sites = json.loads(gp("stats", "--report", "launch_sites", "--format", "json", pt).stdout)["launch_sites"]
    eq([(r["site"], r["kernels"], r["launches"]) for r in sites],
       [(f"{base}:{at['CALL']} launch", 4, 4), (f"{base}:{at['LATE']} <module>", 1, 1)], "python job: launch sites")
    finish()
