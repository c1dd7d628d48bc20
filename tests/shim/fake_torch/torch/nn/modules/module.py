"""The global module hook registries, as torch.nn.modules.module has them."""
PRE = []   # hooks
POST = []  # (hook, with_kwargs)


def register_module_forward_pre_hook(hook):
    PRE.append(hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    POST.append((hook, with_kwargs))
