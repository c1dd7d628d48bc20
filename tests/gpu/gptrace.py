"""gptrace.py — load `gpuprof dump --json` output and attribute GPU work to
NVTX ranges; run a job and say how it went; the emit_nvtx wrapper.  Shared by
check_trace.py, crosscheck.py, sites_check.py and layers_check.py (stdlib only).

Attribution rule (the same one the fidelity cross-check applies to Kineto):
a kernel/memcpy/memset belongs to a range when the API call that launched it
(same pid, same correlation id) started inside the range's time span.  Any
thread of the process counts by default, because PyTorch launches the
backward pass from its autograd worker thread while the thread that pushed
"step N" waits; same_thread=True restricts to the range's own thread.
"""
import bisect
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

GPU_TYPES = ("kernel", "memcpy", "memset")
# What counts as an "event" for bytes/event: timed records, not metadata
# (strings, sources, devices, clock pairs...).
EVENT_TYPES = ("api", "kernel", "memcpy", "memset", "nvtx_range", "nvtx_mark", "sync",
               "memory", "counter", "dropped")


# A job run under torch.autograd.profiler.emit_nvtx without changing it:
# `python3 WRAPPER JOB ARGS...` (the truth of the layers' backward join).
EMIT_NVTX_WRAPPER = r'''
import runpy, sys
import torch
job = sys.argv[1]
sys.argv = [job] + sys.argv[2:]
with torch.autograd.profiler.emit_nvtx():
    try:
        runpy.run_path(job, run_name="__main__")
    except SystemExit:
        pass
    torch.cuda.synchronize()
'''


def run_job(cmd, cwd, env=None, timeout=300, width=160, tail=8, said=False):
    """Run cmd in cwd, print one line (the command cut to width, its exit
    status and time), the last `tail` lines of its output when it failed,
    and with said=True its gpuprof: lines other than the file written."""
    import time
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)
    print("  $ %s  (exit %d, %.0f s)" % (" ".join(cmd)[:width], p.returncode, time.time() - t))
    if p.returncode:
        print("    " + "\n    ".join((p.stderr or p.stdout).strip().splitlines()[-tail:]))
    if said:
        for ln in (p.stderr or "").splitlines():
            if ln.startswith("gpuprof:") and "wrote" not in ln:
                print("    said: " + ln)
    return p


class DumpError(Exception):
    pass


def find_gpuprof(explicit=None):
    """The gpuprof binary: explicit path, $GPUPROF, else build/bin/gpuprof."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cand = explicit or os.environ.get("GPUPROF") or os.path.join(root, "build", "bin", "gpuprof")
    if not (os.path.isfile(cand) and os.access(cand, os.X_OK)):
        raise DumpError(f"gpuprof CLI not found at {cand} (build it with `make`, or set GPUPROF=)")
    return cand


def iter_dump(gpuprof, path, timeout=300):
    """Yields (dict) per JSON line of `gpuprof dump --json path`.  Raises
    DumpError on a non-JSON line; the exit status is checked by the caller
    through the returned holder (truncated traces may exit non-zero)."""
    errf = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: no deadlock
    proc = subprocess.Popen([gpuprof, "dump", "--json", path], stdout=subprocess.PIPE,
                            stderr=errf, text=True)
    try:
        for ln, line in enumerate(proc.stdout, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                proc.kill()
                raise DumpError(f"{path}: line {ln} of dump is not JSON ({e}): {line[:200]}")
        rc = proc.wait(timeout=timeout)
        errf.seek(0)
        err = errf.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        errf.close()
    if rc != 0:
        raise DumpError(f"`gpuprof dump --json {path}` exited {rc}: {err.strip()[-500:]}")


def iter_json_lines(path):
    f = sys.stdin if path == "-" else open(path)
    with f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if line:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise DumpError(f"{path}: line {ln} is not JSON ({e})")


_VER = re.compile(r"_v\d+$")
_SUFFIX = re.compile(r"_(ptsz|ptds)$")


def norm_api(name):
    """cudaLaunchKernel_v7000 / cudaMemcpy_ptds / __cudaLaunchKernel ->
    cudaLaunchKernel / cudaMemcpy / cudaLaunchKernel (CUDA 13's <<<>>> may
    report the internal __cudaLaunchKernel entry point)."""
    if not name:
        return ""
    n = _VER.sub("", name.lstrip("_"))
    n = _SUFFIX.sub("", n)
    return _VER.sub("", n)


def norm_kernel(name):
    """Whitespace-normalised demangled name (what Kineto shows)."""
    return re.sub(r"\s+", " ", (name or "").strip()).replace(" ,", ",")


def kernel_base(name):
    """Plain function name: 'void ns::vecAdd<float>(const float*, ...)' -> 'vecAdd'."""
    n = (name or "").strip()
    depth, cut = 0, len(n)
    for i, ch in enumerate(n):  # first '(' outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    n = n[:cut]
    n = re.sub(r"<.*>$", "", n)  # trailing template args
    n = n.split(" ")[-1]
    return n.split("::")[-1]


def kname(k):
    return k.get("demangled") or k.get("name") or "?"


class Trace:
    """All records of one or more trace files, indexed for attribution."""

    def __init__(self):
        self.by_type = collections.defaultdict(list)
        self.lines = 0
        self.file_bytes = 0
        self.files = []
        self.errors = []
        self._api_index = None

    def add(self, rec):
        self.lines += 1
        self.by_type[rec.get("type", "?")].append(rec)
        self._api_index = None

    # ---- views
    @property
    def apis(self):
        return self.by_type["api"]

    @property
    def kernels(self):
        return self.by_type["kernel"]

    def ranges(self, pattern=None, kind=None):
        out = []
        rx = re.compile(pattern) if pattern else None
        for r in self.by_type["nvtx_range"]:
            if kind and r.get("kind") != kind:
                continue
            if rx and not rx.search(r.get("message") or ""):
                continue
            out.append(r)
        return out

    def events(self):
        return sum(len(self.by_type[t]) for t in EVENT_TYPES)

    def dropped_total(self):
        return sum(int(d.get("count", 0)) for d in self.by_type["dropped"])

    def api_by_corr(self):
        """(pid, corr) -> api record.  A kernel's corr matches the API that
        launched it (runtime or driver, whichever CUPTI correlated)."""
        idx = {}
        for a in self.apis:
            c = a.get("corr")
            if c:
                idx[(a.get("pid"), c)] = a
        return idx

    def _index(self):
        if self._api_index is None:
            per_pid = collections.defaultdict(list)
            for a in self.apis:
                per_pid[a.get("pid")].append((a.get("start", 0), a.get("tid"), a.get("corr")))
            for v in per_pid.values():
                v.sort(key=lambda t: t[0])
            self._api_index = {p: ([t[0] for t in v], v) for p, v in per_pid.items()}
        return self._api_index

    def gpu_by_corr(self, types=GPU_TYPES):
        m = collections.defaultdict(list)
        for t in types:
            for rec in self.by_type[t]:
                c = rec.get("corr")
                if c:
                    m[(rec.get("pid"), c)].append(rec)
        return m

    def attribute(self, ranges, types=GPU_TYPES, same_thread=False):
        """For each range (in order given) the list of GPU records whose
        launching API call started inside it."""
        idx = self._index()
        gpu = self.gpu_by_corr(types)
        out = []
        for r in ranges:
            pid = r.get("pid")
            starts, rows = idx.get(pid, ([], []))
            lo = bisect.bisect_left(starts, r.get("start", 0))
            hi = bisect.bisect_left(starts, r.get("end", 0))  # a call at `end` is after it
            items, seen = [], set()
            for _, tid, corr in rows[lo:hi]:
                # A runtime call and the driver call it makes can share one
                # correlation id: count its GPU work once.
                if corr in seen or (same_thread and tid != r.get("tid")):
                    continue
                seen.add(corr)
                items.extend(gpu.get((pid, corr), ()))
            out.append(items)
        return out


def load(paths, gpuprof=None, json_input=None, timeout=300, tolerate_errors=False):
    """Reads the traces (through gpuprof dump) or a pre-dumped JSON-lines file."""
    t = Trace()
    if json_input:
        for rec in iter_json_lines(json_input):
            t.add(rec)
        t.files.append(json_input)
        if json_input != "-":
            t.file_bytes += os.path.getsize(json_input)
        return t
    exe = find_gpuprof(gpuprof)
    for p in paths:
        t.files.append(p)
        t.file_bytes += os.path.getsize(p)
        try:
            for rec in iter_dump(exe, p, timeout):
                t.add(rec)
        except DumpError as e:
            if not tolerate_errors:
                raise
            t.errors.append(str(e))
    return t


def union_ns(intervals):
    """Total length covered by [start, end) intervals."""
    tot, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                tot += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        tot += cur_e - cur_s
    return tot


STEP_RX = re.compile(r"^step (\d+)$")


def step_ranges(trace, pid=None):
    """{step index: range} for NVTX ranges named 'step <i>' (push/pop)."""
    out = {}
    dup = []
    for r in trace.ranges(pattern=STEP_RX.pattern):
        if pid is not None and r.get("pid") != pid:
            continue
        if r.get("unterminated"):  # end is the flush time, not the pop
            continue
        i = int(STEP_RX.match(r["message"]).group(1))
        if i in out:
            dup.append(i)
        out[i] = r
    return out, dup
