"""synth.py — synthetic `gpuprof dump --json` records for the CPU self-tests
of the GPU scripts (tests/gpu/test_scripts.py).  They follow the dump
contract (type, pid, tid, start/end/dur ns, corr, ...)."""


class Synth:
    def __init__(self, pid=100, tid=100):
        self.pid, self.tid = pid, tid
        self.recs = []
        self.corr = 0
        self.t = 1_000_000
        self.gpu_t = {}  # stream -> time the stream is busy until
        self.depth = 0
        self.stack = []
        self.recs.append({"type": "device", "pid": pid, "device": 0, "name": "Fake GPU"})

    def api(self, name, dur=2000, tid=None, domain="runtime"):
        self.corr += 1
        a = {"type": "api", "pid": self.pid, "tid": tid or self.tid, "start": self.t,
             "end": self.t + dur, "dur": dur, "domain": domain, "cbid": 1, "name": name,
             "corr": self.corr}
        self.recs.append(a)
        self.t += dur + 500
        return a

    def _gpu(self, a, stream, dur):
        s = max(a["start"] + 3000, self.gpu_t.get(stream, 0))
        self.gpu_t[stream] = s + dur
        return s, s + dur

    def kernel(self, demangled, stream=7, dur=5000, tid=None, api="cudaLaunchKernel_v7000",
               graph_id=0):
        a = self.api(api, tid=tid)
        s, e = self._gpu(a, stream, dur)
        base = demangled.split("(")[0]
        k = {"type": "kernel", "pid": self.pid, "start": s, "end": e, "dur": dur, "device": 0,
             "stream": stream, "corr": a["corr"], "name": f"_Z{len(base)}{base}v",
             "demangled": demangled, "grid": [1, 1, 1], "block": [32, 1, 1], "graph_id": graph_id}
        self.recs.append(k)
        return k

    def memcpy(self, kind, nbytes, stream=7, dur=3000, api="cudaMemcpy_v3020"):
        a = self.api(api)
        s, e = self._gpu(a, stream, dur)
        self.recs.append({"type": "memcpy", "pid": self.pid, "start": s, "end": e, "dur": dur,
                          "stream": stream, "corr": a["corr"], "bytes": nbytes, "kind": kind})

    def memset(self, nbytes, stream=7, dur=2000):
        a = self.api("cudaMemset_v3020")
        s, e = self._gpu(a, stream, dur)
        self.recs.append({"type": "memset", "pid": self.pid, "start": s, "end": e, "dur": dur,
                          "stream": stream, "corr": a["corr"], "bytes": nbytes})

    def push(self, msg):
        self.stack.append((msg, self.t, len(self.stack)))
        self.t += 100

    def pop(self):
        msg, s, d = self.stack.pop()
        self.t += 100
        r = {"type": "nvtx_range", "pid": self.pid, "tid": self.tid, "start": s, "end": self.t,
             "dur": self.t - s, "domain": "", "message": msg, "kind": "pushpop", "depth": d}
        self.recs.append(r)
        self.t += 100
        return r

    def startend(self, msg, s, e):
        self.recs.append({"type": "nvtx_range", "pid": self.pid, "tid": self.tid, "start": s,
                          "end": e, "dur": e - s, "domain": "", "message": msg,
                          "kind": "startend", "depth": 0})

    def mark(self, msg):
        self.recs.append({"type": "nvtx_mark", "pid": self.pid, "tid": self.tid, "ts": self.t,
                          "message": msg, "domain": ""})
        self.t += 100


def vector_add(iters=3, graph_launches=2, empties=2):
    """What a correct trace of `vector_add iters graph_launches empties` holds,
    plus the EXPECT lines the program prints (same formulas as vector_add.cu)."""
    s = Synth()
    n = 1 << 20
    nb = n * 4
    small = nb // 4
    s.push("vector_add")
    s.memcpy("HtoD", nb)
    s.memcpy("HtoD", nb)
    s.memcpy("HtoD", small, stream=9, api="cudaMemcpyAsync_v3020")
    s.memset(nb)
    s.memset(small, stream=9)
    s.push("launch_loop")
    for _ in range(iters):
        s.kernel("vecAdd(const float*, const float*, float*, int)", stream=8)
        s.kernel("scale(float*, float, int)", stream=9)
    s.pop()
    s.mark("before_graph")
    g0 = s.t
    s.api("cudaLaunchKernel_v7000")  # the two launches made while capturing
    s.api("cudaLaunchKernel_v7000")
    for _ in range(graph_launches):
        a = s.api("cudaGraphLaunch_v10000")
        for nm in ("vecAdd(const float*, const float*, float*, int)", "scale(float*, float, int)"):
            st, en = s._gpu(a, 8, 4000)
            s.recs.append({"type": "kernel", "pid": s.pid, "start": st, "end": en, "dur": 4000,
                           "device": 0, "stream": 8, "corr": a["corr"], "name": "_Z" + nm[:3],
                           "demangled": nm, "grid": [1, 1, 1], "block": [1, 1, 1], "graph_id": 5})
    s.startend("graph", g0, s.t)
    for _ in range(empties):
        s.kernel("emptyKernel()", stream=0)
    s.memcpy("DtoH", nb)
    s.memcpy("DtoH", nb)
    s.pop()
    gk = 2 * graph_launches
    expect = [
        f"EXPECT kernels.vecAdd={iters + graph_launches} kernels.scale={iters + graph_launches} "
        f"kernels.emptyKernel={empties} kernels.total={2 * iters + gk + empties} kernels.graph={gk}",
        f"EXPECT memcpy.HtoD.count=3 memcpy.HtoD.bytes={2 * nb + small} memcpy.DtoH.count=2 "
        f"memcpy.DtoH.bytes={2 * nb} memset.count=2 memset.bytes={nb + small}",
        "EXPECT nvtx.pushpop=2 nvtx.startend=1 nvtx.mark=1 nvtx.maxdepth=1 "
        "nvtx.range.vector_add=1 nvtx.range.launch_loop=1 nvtx.range.graph=1 nvtx.mark.before_graph=1",
        f"EXPECT range_kernels.launch_loop={2 * iters} range_kernels.graph={gk} "
        f"range_kernels.vector_add={2 * iters + gk + empties} streams.min=3",
        f"EXPECT api.cudaLaunchKernel={2 * iters + 2 + empties} api.cudaGraphLaunch={graph_launches} "
        "api.cudaMemcpy=4",
    ]
    return s.recs, expect


def training(steps=6, first_extra=True, backward_tid=101, kdur=None):
    """A training-like trace: per step 'step i' with nested forward/backward/
    optimizer, 2 HtoD copies, forward kernels from the main thread, backward
    kernels from another thread (as PyTorch's autograd engine does).  Step 0
    has one extra kernel (optimizer state init).  kdur(step, name) -> ns."""
    s = Synth()
    kdur = kdur or (lambda i, n: 5000)
    for i in range(steps):
        s.push(f"step {i}")
        s.memcpy("HtoD", 64 * 784 * 4, api="cudaMemcpyAsync_v3020")
        s.memcpy("HtoD", 64 * 8, api="cudaMemcpyAsync_v3020")
        s.push("forward")
        for nm in ("conv_fwd(float*)", "relu(float*)", "gemm_fwd(float*)"):
            s.kernel(nm, dur=kdur(i, nm))
        s.pop()
        s.push("backward")
        for nm in ("gemm_bwd(float*)", "conv_bwd(float*)"):
            s.kernel(nm, tid=backward_tid, dur=kdur(i, nm))
        s.pop()
        s.push("optimizer")
        if i == 0 and first_extra:
            s.kernel("zero_state(float*)")
        s.kernel("adadelta(float*)", dur=kdur(i, "adadelta(float*)"))
        s.pop()
        s.pop()
    return s.recs


def to_kineto(recs, pid=4242):
    """The same run as torch.profiler would export it: user_annotation per
    range, cuda_runtime per API call, kernel/gpu_memcpy/gpu_memset per GPU op,
    times in µs floats, correlation ids in args."""
    us = lambda ns: ns / 1000.0  # noqa: E731
    ev = []
    for r in recs:
        t = r["type"]
        if t == "nvtx_range":
            ev.append({"ph": "X", "cat": "user_annotation", "name": r["message"], "pid": pid,
                       "tid": r["tid"], "ts": us(r["start"]), "dur": us(r["end"] - r["start"])})
        elif t == "api":
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": r["name"].split("_v")[0],
                       "pid": pid, "tid": r["tid"], "ts": us(r["start"]),
                       "dur": us(r["end"] - r["start"]), "args": {"correlation": r["corr"]}})
        elif t == "kernel":
            ev.append({"ph": "X", "cat": "kernel", "name": r["demangled"], "pid": 0,
                       "tid": r["stream"], "ts": us(r["start"]), "dur": us(r["end"] - r["start"]),
                       "args": {"correlation": r["corr"], "stream": r["stream"]}})
        elif t == "memcpy":
            ev.append({"ph": "X", "cat": "gpu_memcpy", "pid": 0, "tid": r["stream"],
                       "name": f"Memcpy {r['kind']} (Pinned -> Device)", "ts": us(r["start"]),
                       "dur": us(r["end"] - r["start"]),
                       "args": {"correlation": r["corr"], "bytes": r["bytes"]}})
        elif t == "memset":
            ev.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0,
                       "tid": r["stream"], "ts": us(r["start"]), "dur": us(r["end"] - r["start"]),
                       "args": {"correlation": r["corr"], "bytes": r["bytes"]}})
    ev.append({"ph": "i", "name": "marker", "pid": pid, "ts": 0})
    return {"schemaVersion": 1, "traceEvents": ev}
