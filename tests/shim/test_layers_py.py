"""gpuprof run --layers and its Python module (shim/python/sitecustomize.py,
docs/STACKS.md "Backward kernels without emit_nvtx"), without torch:

- `gpuprof run --layers` (or GPUPROF_LAYERS on, by the settings' rule)
  puts build/lib/gpuprof-python first on PYTHONPATH and sets
  GPUPROF_LAYERS=1; without it (or GPUPROF_LAYERS=0/off), neither; a library
  without the module next to it is a usage error (exit 1);
- the module imports the sitecustomize it shadows (once, and that one is
  sys.modules["sitecustomize"]); an error in it is reported in site.py's
  words and the job runs on (exit 0, its output intact);
- in a job that never imports torch it only leaves a finder on
  sys.meta_path (none with GPUPROF_LAYERS off);
- a "torch" without torch.nn or without NVTX: one `gpuprof: --layers:` line,
  the import and the job go on;
- a fake torch (tests/shim/fake_torch/: the hook registries of
  torch.nn.modules.module, torch._C._nvtx recording pushes and pops,
  autograd nodes with metadata, next_functions, register_prehook and
  register_hook): module calls as nn.Module._call_impl makes them, then
  the nodes run as the autograd engine runs them.  Checked: each node's
  range names the innermost module whose forward made it (Outer > Inner
  for the inner module's nodes, Outer for Outer's own op behind an inner
  in-place ReLU's node and for Outer's ops that feed only Inner); the inputs' nodes (made before the model) and a
  parameter's AccumulateGrad get no range; an earlier sibling's node is
  not taken by a later one; nothing is marked with grad mode off, while
  compiling, or after a hook failed (one line); the module's output is
  returned untouched (the hooks return None)."""
import os
import subprocess
import sys
import tempfile

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
GPUPROF = os.path.join(B, "bin", "gpuprof")
PYDIR = os.path.join(B, "lib", "gpuprof-python")
HERE = os.path.dirname(os.path.abspath(__file__))
failed = 0


def check(cond, msg):
    global failed
    if not cond:
        print("FAIL: " + msg)
        failed = 1
    return cond


def job(code, *run_opts, env_extra=None, pythonpath=None, direct=False):
    """python3 -c code, under gpuprof run (run_opts) or directly with PYDIR
    first on PYTHONPATH (direct)"""
    env = dict(os.environ)
    for k in ("PYTHONPATH", "GPUPROF_LAYERS", "GPUPROF_QUIET"):
        env.pop(k, None)
    env["GPUPROF_ENABLE"] = "0"  # the shim stays out of the way: no CUDA here
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    if env_extra:
        env.update(env_extra)
    if direct:
        env["PYTHONPATH"] = PYDIR + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-c", code]
    else:
        cmd = [GPUPROF, "run", *run_opts, "--", sys.executable, "-c", code]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    # gpuprof run's own summary (the shim is off here) is not the job's
    p.stderr = "".join(line for line in p.stderr.splitlines(True) if not line.startswith("gpuprof: no trace written"))
    return p


tmp = tempfile.mkdtemp(prefix="gpuprof-layers-py.")
PRINT_ENV = "import os; print(os.environ.get('PYTHONPATH', '')); print(os.environ.get('GPUPROF_LAYERS', ''))"

# ---- gpuprof run --layers: PYTHONPATH and GPUPROF_LAYERS
p = job(PRINT_ENV, "--layers", pythonpath="/some/where")
lines = p.stdout.splitlines()
check(p.returncode == 0 and lines == [PYDIR + ":/some/where", "1"],
      f"--layers: PYTHONPATH first and GPUPROF_LAYERS=1: {p.returncode} {lines} {p.stderr}")
p = job(PRINT_ENV)
check(p.stdout.splitlines() == ["", ""], f"without --layers: neither: {p.stdout!r}")
p = job(PRINT_ENV, env_extra={"GPUPROF_LAYERS": "1"})
check(p.stdout.splitlines() == [PYDIR, "1"], f"GPUPROF_LAYERS=1 alone: the same as --layers: {p.stdout!r}")
for off in ("0", "off"):
    p = job(PRINT_ENV, env_extra={"GPUPROF_LAYERS": off})
    check(p.stdout.splitlines() == ["", off], f"GPUPROF_LAYERS={off}: no PYTHONPATH: {p.stdout!r}")
# a library without the module next to it
lonely = os.path.join(tmp, "lonely")
os.makedirs(lonely)
os.symlink(os.path.join(B, "lib", "libgpuprof.so"), os.path.join(lonely, "libgpuprof.so"))
os.symlink(os.path.join(B, "lib", "libgpuprof.so"), os.path.join(lonely, "libgpuprof-copy.so"))
p = job(PRINT_ENV, "--layers", env_extra={"GPUPROF_LIB": os.path.join(lonely, "libgpuprof-copy.so")})
# GPUPROF_LIB resolves links: the module is found next to the real library
check(p.returncode == 0, f"GPUPROF_LIB through a link: the real library's module: {p.returncode} {p.stderr}")
nolib = os.path.join(tmp, "nolib")
os.makedirs(nolib)
with open(os.path.join(B, "lib", "libgpuprof.so"), "rb") as f, open(os.path.join(nolib, "libgpuprof.so"), "wb") as g:
    g.write(f.read())
p = job(PRINT_ENV, "--layers", env_extra={"GPUPROF_LIB": os.path.join(nolib, "libgpuprof.so")})
check(p.returncode == 1 and "gpuprof-python/sitecustomize.py" in p.stderr,
      f"--layers without the module: usage error naming it: {p.returncode} {p.stderr}")

# ---- chaining to the sitecustomize it shadows
other = os.path.join(tmp, "other")
os.makedirs(other)
with open(os.path.join(other, "sitecustomize.py"), "w") as f:
    f.write("import sys\nsys.stdout.write('OTHER\\n')\nMARK = 42\n")
code = "import sitecustomize; print(getattr(sitecustomize, 'MARK', None)); print('JOB')"
p = job(code, "--layers", pythonpath=other)
check(p.returncode == 0 and p.stdout.splitlines() == ["OTHER", "42", "JOB"],
      f"chained: the other sitecustomize ran once and is the module: {p.stdout!r} {p.stderr!r}")
with open(os.path.join(other, "sitecustomize.py"), "w") as f:
    f.write("raise ValueError('boom')\n")
p = job("print('JOB')", "--layers", pythonpath=other)
check(p.returncode == 0 and p.stdout == "JOB\n" and
      "Error in sitecustomize; set PYTHONVERBOSE for traceback:\nValueError: boom" in p.stderr,
      f"an error in the chained sitecustomize: site.py's words, the job runs: {p.returncode} {p.stdout!r} {p.stderr!r}")
# the same without gpuprof: what site.py itself says (the reference)
env = dict(os.environ, PYTHONPATH=other)
ref = subprocess.run([sys.executable, "-c", "print('JOB')"], env=env, capture_output=True, text=True)
check(ref.stderr == p.stderr, f"the same message as site.py's: {ref.stderr!r} vs {p.stderr!r}")

# ---- no torch: only a finder waits
code = ("import sys, json; print(sum(type(f).__name__ == '_TorchWatch' for f in sys.meta_path))")
p = job(code, "--layers")
check(p.returncode == 0 and p.stdout == "1\n" and not p.stderr, f"no torch: one finder waits: {p.stdout!r} {p.stderr!r}")
p = job(code, direct=True)
check(p.stdout == "0\n", f"GPUPROF_LAYERS off: no finder: {p.stdout!r}")

# ---- a torch without nn / without NVTX: one line, the job goes on
broken = os.path.join(tmp, "broken")
os.makedirs(os.path.join(broken, "torch"))
with open(os.path.join(broken, "torch", "__init__.py"), "w") as f:
    f.write("VALUE = 7\n")
p = job("import torch; print(torch.VALUE); import sys; "
        "print(sum(type(f).__name__ == '_TorchWatch' for f in sys.meta_path))", "--layers", pythonpath=broken)
check(p.returncode == 0 and p.stdout == "7\n0\n", f"a torch without NVTX: the job goes on, the finder left: {p.stdout!r}")
check(p.stderr.count("gpuprof: --layers:") == 1,
      f"a torch without NVTX: one gpuprof line: {p.stderr!r}")
p = job("import torch; print(torch.VALUE)", "-q", "--layers", pythonpath=broken)
check(p.stdout == "7\n" and p.stderr.count("gpuprof: --layers:") == 1,
      f"gpuprof run -q: the line still (a warning, as the shim's): {p.stderr!r}")

# ---- the marking, on a fake torch
FAKE = os.path.join(HERE, "fake_torch")
SCENARIO = r'''
import torch
from torch.nn.modules import module as M
from torch.autograd_fake import Node, AccumulateGrad, run_backward
from torch._C import _nvtx

class Module:
    pass
class Outer(Module): pass
class Inner(Module): pass
class ReLU(Module): pass
class Sib(Module): pass

def call(mod, args, body, kwargs=None):
    """nn.Module._call_impl with global hooks: pre-hooks, forward, hooks"""
    for h in M.PRE:
        assert h(mod, args) is None
    out = body()
    for h, with_kwargs in M.POST:
        r = h(mod, args, kwargs or {}, out) if with_kwargs else h(mod, args, out)
        assert r is None, "a hook returned something"
    return out

T = torch.Tensor
x = T(Node("x_in"))                 # made before the model: not the model's
w = AccumulateGrad("w")             # a parameter
outer, inner, relu, sib = Outer(), Inner(), ReLU(), Sib()

def outer_body():
    xp = T(Node("o_pre", Node("o_pre0", x.grad_fn)))  # Outer's own ops, feeding Inner only
    def inner_body():
        return T(Node("i2", Node("i1", xp.grad_fn, w)))
    h = call(inner, (xp,), inner_body)
    s = call(sib, (h,), lambda: T(Node("s1", h.grad_fn)))
    own = T(Node("o_add", s.grad_fn, h.grad_fn))     # Outer's own op
    def relu_body():                                 # in place on its input
        own.grad_fn = Node("r_inplace", own.grad_fn)
        return own
    r = call(relu, (own,), relu_body)
    # a later sibling must not take Sib's node
    return {"loss": T(Node("loss", r.grad_fn)), "extra": [3, "x"]}

out = call(outer, (x,), outer_body)
assert isinstance(out, dict) and out["extra"] == [3, "x"]
order = run_backward(out["loss"].grad_fn)
print("ORDER", " ".join(order))
for ev in _nvtx.LOG:
    print("NVTX", *ev)
# grad mode off / compiling / a module never seen: nothing marked
torch.GRAD[0] = False
_nvtx.LOG.clear()
o2 = call(outer, (x,), lambda: T(Node("nograd", x.grad_fn)))
run_backward(o2.grad_fn)
torch.GRAD[0] = True
torch.compiler.COMPILING[0] = True
o3 = call(outer, (x,), lambda: T(Node("compiled", x.grad_fn)))
torch.compiler.COMPILING[0] = False
run_backward(o3.grad_fn)
print("OFF", len(_nvtx.LOG))
# a node whose metadata breaks: one line, marking off, the job goes on
class Bad(Node):
    @property
    def metadata(self):
        raise KeyError("no metadata here")
    @metadata.setter
    def metadata(self, v):
        pass
o4 = call(outer, (x,), lambda: T(Bad("bad", x.grad_fn)))
o5 = call(outer, (x,), lambda: T(Node("after", x.grad_fn)))
run_backward(o5.grad_fn)
print("AFTER", len(_nvtx.LOG))
'''
p = job(SCENARIO, "--layers", pythonpath=FAKE)
out = p.stdout.splitlines()
nv = [line.split(" ", 1)[1] for line in out if line.startswith("NVTX ")]
order = next((line.split()[1:] for line in out if line.startswith("ORDER")), [])
want = []
for node in order:   # each node's range, in the order the nodes ran
    path = {"loss": "Outer", "r_inplace": "Outer > ReLU", "o_add": "Outer", "s1": "Outer > Sib",
            "i2": "Outer > Inner", "i1": "Outer > Inner", "o_pre": "Outer", "o_pre0": "Outer"}.get(node)
    if path:
        want += ["push gpuprof.backward " + path, "pop"]
check(p.returncode == 0, f"fake torch: the job ran: {p.returncode} {p.stderr}")
check(set(order) >= {"loss", "r_inplace", "o_add", "s1", "i2", "i1", "o_pre", "o_pre0", "x_in", "w"},
      f"fake torch: every node ran: {order}")
check(nv == want, f"fake torch: each node's range names the module that made it:\n got  {nv}\n want {want}")
check("OFF 0" in out, f"fake torch: grad mode off or compiling: nothing marked: {out}")
check("AFTER 0" in out and p.stderr.count("gpuprof: --layers:") == 1 and "no metadata here" in p.stderr,
      f"fake torch: a failing node: one line, marking off: {out} {p.stderr!r}")
# without --layers the same job marks nothing (and the fake torch imports fine)
p = job(SCENARIO.replace('print("ORDER"', 'print("ORDER_"'), pythonpath=FAKE)
check(p.returncode == 0 and not [line for line in p.stdout.splitlines() if line.startswith("NVTX ")],
      f"fake torch without --layers: no ranges: {p.stdout!r} {p.stderr!r}")

print("ok" if not failed else "FAILED")
sys.exit(failed)
