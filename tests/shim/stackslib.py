"""stackslib.py — helpers for the call-stack tests (tests/shim/test_stacks*.py):
run the fake-CUDA workload (or a Python job) under the shim, read the trace
back with `gpuprof dump --json`, and resolve native frames to symbols with
the module records plus `readelf -lW` / `nm` of the module file (offline,
the way docs/FORMAT.md says tools should)."""
import bisect
import json
import os
import subprocess
import sys
import tempfile

SYMBOLIC = 1 << 63


class Env:
    def __init__(self, build):
        root = os.getcwd()
        self.build = build if os.path.isabs(build) else os.path.join(root, build)
        self.shim = os.path.join(self.build, "lib/libgpuprof.so")
        self.cupti = os.path.join(self.build, "tests/fake/libcupti.so.13")
        self.cudart = os.path.join(self.build, "tests/fake/libcudart.so.13")
        self.workload = os.path.join(self.build, "tests/fake/workload")
        self.gpuprof = os.path.join(self.build, "bin/gpuprof")
        for f in (self.shim, self.cupti, self.cudart, self.workload, self.gpuprof):
            if not os.path.exists(f):
                print("missing %s (build first)" % f)
                sys.exit(1)
        self.tmp = tempfile.mkdtemp(prefix="gpuprof-stacks.")
        self.failed = 0

    def fail(self, msg):
        print("FAIL: " + msg)
        self.failed = 1

    def check(self, cond, msg):
        if not cond:
            self.fail(msg)
        return cond

    def env(self, extra, trace):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("GPUPROF_") and k not in
             ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")}
        e.update(GPUPROF_OUTPUT=trace, GPUPROF_CUPTI=self.cupti, LD_PRELOAD=self.shim)
        e.update(extra)
        return e

    def run(self, argv, extra, name):
        """Runs argv traced into <tmp>/<name>.gpuprof; returns (rc, out, err, trace)."""
        trace = os.path.join(self.tmp, name + ".gpuprof")
        p = subprocess.run(argv, env=self.env(extra, trace), capture_output=True, text=True,
                           timeout=120)
        return p.returncode, p.stdout, p.stderr, trace

    def finish(self):
        subprocess.run(["rm", "-rf", self.tmp])
        if not self.failed:
            print("ok")
        sys.exit(self.failed)


def marker_lines(path, tag):
    """{name: line number} of the lines of path marked `# TAG-name`."""
    out = {}
    for i, text in enumerate(open(path), 1):
        if "# %s-" % tag in text:
            out[text.split("# %s-" % tag)[1].strip()] = i
    return out


def cpython_or_skip():
    """(interpreter, major, minor) of GPUPROF_TEST_PYTHON (default: this one);
    exits 77 (skip), saying why, unless it is CPython 3.11 to 3.13."""
    py = os.environ.get("GPUPROF_TEST_PYTHON", sys.executable)
    ver = subprocess.run([py, "-c", "import sys,platform;print(platform.python_implementation(),"
                          "sys.version_info[0],sys.version_info[1])"], capture_output=True, text=True).stdout.split()
    if len(ver) != 3 or ver[0] != "CPython" or (ver[1], ver[2]) not in (("3", "11"), ("3", "12"), ("3", "13")):
        print("skip: %s is %s, Python frames are read for CPython 3.11 to 3.13 only" % (py, " ".join(ver) or "?"))
        sys.exit(77)
    return py, ver[1], ver[2]


class Trace:
    """Records of one trace from `gpuprof dump --json`."""

    def __init__(self, env, path):
        out = subprocess.run([env.gpuprof, "dump", "--json", path], capture_output=True, text=True,
                             check=True).stdout
        self.recs = [json.loads(line) for line in out.splitlines() if line.strip()]
        self.stacks = {r["stack"]: r for r in self.recs if r["type"] == "stack"}
        self.modules = sorted((r for r in self.recs if r["type"] == "module"), key=lambda m: m["base"])
        self.apis = [r for r in self.recs if r["type"] == "api"]
        self.counters = {r["name"]: r["value"] for r in self.recs if r["type"] == "counter"}

    def module_of(self, addr):
        for m in self.modules:
            if m["base"] <= addr < m["base"] + m["size"]:
                return m
        return None

    def native(self, stack_id):
        """[(lookup address, module or None)] of the native frames (frames >= 1
        are return addresses: minus 1)."""
        out = []
        for i, f in enumerate(self.stacks[stack_id]["frames"]):
            if f & SYMBOLIC:
                continue
            a = f - 1 if i else f
            out.append((a, self.module_of(a)))
        return out

    def symbolic(self, stack_id):
        """Texts of the symbolic frames, in order."""
        s = self.stacks[stack_id]
        names = s.get("frame_strings") or []
        return [names[i] if i < len(names) else None
                for i, f in enumerate(s["frames"]) if f & SYMBOLIC]


class Symbols:
    """Function symbols of one ELF file, looked up by file offset."""
    _cache = {}

    @classmethod
    def of(cls, path):
        if path not in cls._cache:
            cls._cache[path] = cls(path)
        return cls._cache[path]

    def __init__(self, path):
        self.loads = []  # (offset, filesz, vaddr)
        for line in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout.splitlines():
            w = line.split()
            if w and w[0] == "LOAD":
                self.loads.append((int(w[1], 16), int(w[4], 16), int(w[2], 16)))
        syms = []
        for flag in ([], ["-D"]):
            out = subprocess.run(["nm", "-S", "--defined-only"] + flag + [path], capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                w = line.split()
                if len(w) == 4 and w[2] in "tTwW":
                    syms.append((int(w[0], 16), int(w[1], 16), w[3]))
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def at_offset(self, off):
        for o, sz, va in self.loads:
            if o <= off < o + sz:
                v = off - o + va
                i = bisect.bisect_right(self.addrs, v) - 1
                if i >= 0 and self.syms[i][0] <= v < self.syms[i][0] + max(self.syms[i][1], 1):
                    return self.syms[i][2]
                return None
        return None


def symbolize(trace, addr, module):
    if module is None:
        return None
    return Symbols.of(module["path"]).at_offset(addr - module["base"] + module["file_offset"])
