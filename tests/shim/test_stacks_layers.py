"""The class of `self` in Python forward frames (the layer of a launch,
docs/STACKS.md "Layers"), read by the shim from a real CPython frame without
the GIL: the job (stacks_py_layers.py) launches through the fake libcudart
from forward methods of a small class hierarchy.

- Linear.forward on a Linear: "py\\tFILE\\tLINE\\tLinear.forward\\tLinear";
- the same code on a MyLinear (inherited forward): class MyLinear;
- a forward whose self is captured by a closure (a cell): class Captured;
- Block.forward and every frame that is not a forward method with a first
  argument `self` (Module.__call__, a first argument `this`, a staticmethod,
  a plain function named forward, <module>): no class field;
- torch's call path (_wrapped_call_impl -> _call_impl -> forward): the
  _call_impl frame carries the class of self; a module whose forward is an
  instance attribute (torch.compile's OptimizedModule: dynamo's _fn) is a
  layer from that frame, and a module with its own forward frame counts once;
- `gpuprof stats --report layers` of the trace: Block > Linear,
  Block > MyLinear, Block > Captured, Compiled > Conv, and the rest "(not in
  a forward)";
- sampled stacks (stacks_py_sampled_layers.py, GPT-2's LayerNorms: all with
  the same innermost Python frames): the final LayerNorm's launches stay
  under Model, the blocks' under Model > Block (a site whose key was the four
  innermost frames put 5 of GPT-2's 8 final ones under GPT2Block on the H200);
  a first launch from a function with a name over 16 bytes leaves classes on;
  the same with process_vm_readv refused (tests/fake/libnoreadv.so: the
  checked reads go through a pipe) from four threads at once.
GPUPROF_TEST_PYTHON picks the interpreter; skips unless CPython 3.11-3.13."""
import json
import os
import subprocess
import sys

from stackslib import Env, Trace, cpython_or_skip, marker_lines

E = Env(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "stacks_py_layers.py")
py, major, minor = cpython_or_skip()
line = marker_lines(JOB, "LAYER")

for mode in ("all", "1"):
    rc, out, err, trace = E.run([py, JOB, E.cudart], {"GPUPROF_STACKS": mode}, "layers-" + mode)
    E.check(rc == 0 and out == "layers done\n", "job: exit %d, stdout %r, stderr %r" % (rc, out, err))
    E.check("python frames" not in err, "python frames complaint: %r" % err)
    t = Trace(E, trace)
    launches = [a for a in t.apis if a["name"] == "cudaLaunchKernel"]
    if not E.check(len(launches) == 8 and all(a.get("stack") in t.stacks for a in launches),
                   "want 8 launches with stacks, got %d" % len(launches)):
        continue
    frames = []
    for a in launches:
        fr = []
        for s in t.symbolic(a["stack"]):
            w = (s or "").split("\t")
            if w[0] == "py":
                fr.append((int(w[2]), w[3], w[4] if len(w) > 4 else None))
                E.check(len(w) in (4, 5), "frame %r: 4 or 5 fields" % s)
        frames.append(fr)
    L = line
    want = [
        [(L["LAUNCH"], "launch", None), (L["LINEAR"], "Linear.forward", "Linear"), (L["CALL"], "Module.__call__", None),
         (L["BLOCK-A"], "Block.forward", "Block")],
        [(L["LAUNCH"], "launch", None), (L["LINEAR"], "Linear.forward", "MyLinear"),
         (L["CALL"], "Module.__call__", None), (L["BLOCK-B"], "Block.forward", "Block")],
        [(L["LAUNCH"], "launch", None), (L["CAPTURED"], "Captured.forward", "Captured"),
         (L["CALL"], "Module.__call__", None), (L["BLOCK-C"], "Block.forward", "Block")],
        [(L["LAUNCH"], "launch", None), (L["THIS"], "NotSelf.forward", None), (L["NOTSELF"], "<module>", None)],
        [(L["LAUNCH"], "launch", None), (L["STATIC"], "NotSelf.helper", None)],
        [(L["LAUNCH"], "launch", None), (L["FUNC"], "forward", None)],
        # torch's call path: _call_impl carries the class; _fn (a forward
        # that is not a method) none
        [(L["LAUNCH"], "launch", None), (L["FN"], "Compiled.__init__.<locals>._fn", None),
         (L["CALLIMPL"], "TorchModule._call_impl", "Compiled"), (L["WRAPPED"], "TorchModule._wrapped_call_impl", None),
         (L["COMPILED"], "<module>", None)],
        [(L["LAUNCH"], "launch", None), (L["CONV"], "Conv.forward", "Conv"),
         (L["CALLIMPL"], "TorchModule._call_impl", "Conv"), (L["WRAPPED"], "TorchModule._wrapped_call_impl", None),
         (L["FN-INNER"], "Compiled.__init__.<locals>._fn", None),
         (L["CALLIMPL"], "TorchModule._call_impl", "Compiled")],
    ]
    for k, w in enumerate(want):
        got = frames[k][:len(w)]
        E.check(got == w, "%s launch %d: frames %s, want %s" % (mode, k, got, w))
    # the module frame under Block.forward: <module>, no class
    E.check(frames[0][4:] == [(L["CALL"], "Module.__call__", None), (L["MODULE"], "<module>", None)],
            "%s: %s" % (mode, frames[0][4:]))
    p = subprocess.run([E.gpuprof, "stats", "--report", "layers", "--format", "json", trace], capture_output=True,
                       text=True)
    rows = [(r["depth"], r["layer"], r["kernels"]) for r in json.loads(p.stdout)["layers"]] if p.returncode == 0 else []
    want_rows = [(0, "(not in a forward)", 3), (1, "stacks_py_layers.py:%d launch" % L["LAUNCH"], 3), (0, "Block", 3),
                 (1, "Captured", 1), (1, "Linear", 1), (1, "MyLinear", 1),
                 # a module without a forward frame is a layer from its
                 # _call_impl frame; Conv's _call_impl and forward, once
                 (0, "Compiled", 2), (1, "Conv", 1)]
    E.check(sorted(rows) == sorted(want_rows), "%s: layers %s, want %s" % (mode, rows, want_rows))

SJOB = os.path.join(HERE, "stacks_py_sampled_layers.py")
ln_launch = [i for i, t in enumerate(open(SJOB), 1) if "lib.cudaLaunchKernel" in t][0]
STEPS = 40  # past the first 16 captures of a site: later launches reuse a sampled stack
# (mode, threads, extra environment): the last with process_vm_readv refused
# (EPERM), so every checked read goes through the pipe, from four threads
noreadv = os.path.join(E.build, "tests/fake/libnoreadv.so")
for mode, nthr, extra in (("sampled", 1, {}), ("all", 4, {"LD_PRELOAD": E.shim + ":" + noreadv})):
    name = "layers-%s-%d%s" % (mode, nthr, "-noreadv" if extra else "")
    rc, out, err, trace = E.run([py, SJOB, E.cudart, str(STEPS), str(nthr)], dict({"GPUPROF_STACKS": mode}, **extra),
                                name)
    E.check(rc == 0 and out == "sampled layers done\n", "%s: exit %d, stdout %r, stderr %r" % (name, rc, out, err))
    E.check("python frames" not in err, "%s: python frames complaint: %r" % (name, err))
    p = subprocess.run([E.gpuprof, "stats", "--report", "layers", "--format", "json", trace], capture_output=True,
                       text=True)
    rows = [(r["depth"], r["layer"], r["kernels"]) for r in json.loads(p.stdout)["layers"]] if p.returncode == 0 else []
    n = STEPS * nthr
    want_rows = [(0, "Model", 5 * n), (1, "Block", 4 * n), (2, "LayerNorm", 4 * n), (1, "LayerNorm", n),
                 (0, "(not in a forward)", 1), (1, "stacks_py_sampled_layers.py:%d layer_norm" % ln_launch, 1)]
    E.check(sorted(rows) == sorted(want_rows), "%s: layers %s, want %s" % (name, rows, want_rows))
print("python %s.%s: forward frames carry the class of self" % (major, minor))
E.finish()
