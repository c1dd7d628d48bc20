"""gpuprof's sitecustomize: backward kernels per model layer, on unmodified code.

`gpuprof run --layers` (GPUPROF_LAYERS=1) puts the folder of this file first
on PYTHONPATH; Python's site module imports it at start-up.  It does three
things (docs/STACKS.md "Backward kernels without emit_nvtx"):

1. it imports the sitecustomize it shadows (the next one on sys.path), as
   Python would have, an error in it reported as site.py reports one;
2. with GPUPROF_LAYERS on, it waits for torch: nothing else happens in a job
   that never imports torch (a finder on sys.meta_path that only looks at
   the name "torch", and leaves once torch is found);
3. once torch is imported, global module forward hooks mark, after a
   module's forward with grad mode on, the autograd nodes that forward made
   and no module inside it claimed.  From its outputs' grad_fn and the
   inputs' grad_fn of the module calls made inside it (a module's own ops
   that feed a child, such as timm's `x += shortcut` before an in-place
   ReLU, are reached only through the child's claimed nodes otherwise),
   through next_functions, a node is
     - the boundary, not entered: one of its own inputs' grad_fn (taken
       before the forward: an in-place op on an input makes a new node,
       which is the module's), a parameter's AccumulateGrad, or a node
       already claimed (a key in the node's metadata dict: by a module
       inside it, or by an earlier one);
     - else claimed.
   So every node is claimed once, by the innermost module call whose
   forward made it, and looked at a few times at most.
   A claimed node gets a prehook and a hook that open and close an NVTX
   push/pop range "gpuprof.backward PATH" around its backward, on the
   thread that runs it (the autograd thread for CUDA work).  PATH is the
   classes of the modules whose forwards are running, outermost first: the
   layer path gpuprof's stacks give forward launches
   (tools/analysis/layers/layer_ranges.h reads the ranges).

The hooks only mark: no tensor is made, changed or kept, the outputs are
returned as they are (no module backward hooks: they wrap outputs in a
BackwardHookFunction, which breaks in-place ops on views).  Skipped while
torch.compile/dynamo traces (the compiled code's nodes are marked by the
module that runs it) and under torch.jit tracing.  Never raises into the
job: a failure prints one `gpuprof:` line on stderr and the marking stops.
"""
import os
import sys

_PREFIX = "gpuprof.backward "
_SEP = " > "
_KEY = "gpuprof_layer"  # in a node's metadata dict: the node is claimed (the value: its layer path)
_MAX_DEPTH = 4          # nesting of tuples/lists/dicts searched for tensors
_OFF_WORDS = ("0", "no", "off", "false")


def _enabled(name):
    """A GPUPROF_* switch by the settings' rule (libprof/gp_settings.c):
    set and not 0, no, off or false."""
    v = os.environ.get(name)
    return v is not None and v.lower() not in _OFF_WORDS


def _warn(what):
    """One line, as the shim's warnings (printed with GPUPROF_QUIET too)."""
    try:
        sys.stderr.write("gpuprof: --layers: %s; backward layer ranges off\n" % what)
    except Exception:
        pass


def _chain():
    """Imports the sitecustomize this one shadows, as site.py would have."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import importlib.machinery
        import importlib.util
        path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    except Exception:
        return
    if spec is None or spec.loader is None:
        return
    mine = sys.modules.get("sitecustomize")
    try:
        mod = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = mod
        spec.loader.exec_module(mod)
    except Exception as err:
        # site.py's own words for an error in sitecustomize
        if mine is not None:
            sys.modules["sitecustomize"] = mine
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                             "%s: %s\n" % (err.__class__.__name__, err))


class _Marker:
    """The module hooks and the node hooks of one process."""

    def __init__(self, torch, push, pop):
        import threading
        self.torch = torch
        self.tensor = torch.Tensor
        self.push = push
        self.pop = pop
        self.tls = threading.local()
        self.on = True
        self.prehooks = {}  # message -> the node prehook that pushes it
        self.compiling = _compiling_test(torch)

    def fail(self, err):
        if self.on:
            self.on = False
            _warn("%s: %s" % (err.__class__.__name__, err))

    def tensors(self, obj, out, depth=0):
        """The tensors with a grad_fn in obj (tuples, lists, dicts, nested)."""
        if isinstance(obj, self.tensor):
            if obj.grad_fn is not None:
                out.append(obj)
        elif depth < _MAX_DEPTH:
            if isinstance(obj, (tuple, list)):
                for o in obj:
                    self.tensors(o, out, depth + 1)
            elif isinstance(obj, dict):
                for o in obj.values():
                    self.tensors(o, out, depth + 1)
        return out

    def forward_pre(self, module, args):
        """Global forward pre-hook: the module enters the stack, with its
        inputs' grad_fn as they are before the forward."""
        if not self.on:
            return None
        try:
            if self.compiling():
                return None
            st = getattr(self.tls, "stack", None)
            if st is None:
                st = self.tls.stack = []
            stop = [t.grad_fn for t in self.tensors(args, [])]
            st.append((module, type(module).__name__, stop, []))  # [3]: the inputs of the calls inside it
        except Exception as err:
            self.fail(err)
        return None

    def forward_post(self, module, args, *more):
        """Global forward hook (with kwargs: module, args, kwargs, output;
        without, or as always_call after an exception: module, args,
        output): the module leaves the stack; its new nodes are marked."""
        if not self.on:
            return None
        try:
            kwargs, output = more if len(more) == 2 else (None, more[0])
            st = getattr(self.tls, "stack", None)
            if not st:
                return None
            i = len(st) - 1
            while i >= 0 and st[i][0] is not module:
                i -= 1
            if i < 0:
                return None
            path = _SEP.join(e[1] for e in st[:i + 1])
            stop, inner = st[i][2], st[i][3]
            del st[i:]  # and any entry a forward that raised left above it
            if self.compiling() or not self.torch.is_grad_enabled():
                return None
            kw = [t.grad_fn for t in self.tensors(kwargs, [])] if kwargs else []
            self.mark(output, stop + kw, inner, path)
            if i:  # this call's inputs may be its caller's own ops
                st[i - 1][3].extend(stop + kw + inner)
        except Exception as err:
            self.fail(err)
        return None

    def mark(self, output, stop, inner, path):
        """Claims the nodes reachable from output's grad_fn and from inner
        (the inputs' nodes of the calls made inside this one), short of
        stop (this call's inputs' nodes) and of claimed nodes."""
        todo = [t.grad_fn for t in self.tensors(output, [])]
        if not todo:
            return
        todo += inner
        keep = {}  # id -> node: the nodes seen (kept alive so an id is not reused)
        for n in stop:
            keep[id(n)] = n
        msg = _PREFIX + path
        pre = self.prehooks.get(msg)
        if pre is None:
            pre = self.prehooks[msg] = self.node_prehook(msg)
        while todo:
            n = todo.pop()
            if n is None or id(n) in keep:
                continue
            keep[id(n)] = n
            if type(n).__name__ == "AccumulateGrad":
                continue  # a parameter's: it outlives the step (no hooks piling up)
            try:
                md = n.metadata
                if _KEY in md:
                    continue  # an inner module's, or an earlier one's
                md[_KEY] = path
                n.register_prehook(pre)
                n.register_hook(self.node_hook)
            except (AttributeError, RuntimeError, TypeError):
                pass  # a node that takes no hooks: left unmarked, its inputs are looked at
            todo.extend(f for f, _ in n.next_functions)

    def node_prehook(self, msg):
        push = self.push

        def prehook(grad_outputs):
            try:
                push(msg)
            except Exception:
                pass
            return None
        return prehook

    def node_hook(self, grad_inputs, grad_outputs):
        try:
            self.pop()
        except Exception:
            pass
        return None


def _compiling_test(torch):
    """A function telling whether torch.compile/dynamo or torch.jit is
    tracing now (torch.compiler.is_compiling covers dynamo; torch._dynamo
    itself is not touched: torch imports it lazily, and it is heavy)."""
    tests = []
    for mod, name in (("compiler", "is_compiling"), ("jit", "is_tracing")):
        try:
            f = getattr(getattr(torch, mod), name)
            if callable(f):
                tests.append(f)
        except Exception:
            pass

    def compiling():
        for f in tests:
            if f():
                return True
        return False
    return compiling


def _install(torch):
    """The hooks, once torch is imported; never raises."""
    try:
        try:
            from torch._C import _nvtx
            push, pop = _nvtx.rangePushA, _nvtx.rangePop
        except Exception:
            raise RuntimeError("this torch has no NVTX (torch._C._nvtx)")
        from torch.nn.modules import module as nn_module
        marker = _Marker(torch, push, pop)
        nn_module.register_module_forward_pre_hook(marker.forward_pre)
        try:
            nn_module.register_module_forward_hook(marker.forward_post, with_kwargs=True, always_call=True)
        except TypeError:  # torch before 2.0
            nn_module.register_module_forward_hook(marker.forward_post)
    except Exception as err:
        _warn("%s: %s" % (err.__class__.__name__, err))


class _TorchWatch:
    """On sys.meta_path: finds nothing itself.  At the first import of torch
    it asks the finders after it for torch's spec and has its loader run
    _install once torch/__init__.py has run; then it leaves."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if find is not None:
                    spec = find(name, path, target)
                    if spec is not None:
                        break
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            loader = spec.loader
            run = loader.exec_module

            def exec_module(module):
                try:
                    del loader.exec_module  # the loader's own again
                except Exception:
                    pass
                run(module)  # torch's own errors are the job's
                if getattr(module, "__name__", None) == "torch":
                    _install(module)
            loader.exec_module = exec_module
            return spec
        except Exception as err:
            _warn("%s: %s" % (err.__class__.__name__, err))
            return None


def _start():
    try:
        if _enabled("GPUPROF_LAYERS") and "torch" not in sys.modules:
            sys.meta_path.insert(0, _TorchWatch())
        elif _enabled("GPUPROF_LAYERS"):
            _install(sys.modules["torch"])
    except Exception as err:
        _warn("%s: %s" % (err.__class__.__name__, err))


_start()
_chain()
