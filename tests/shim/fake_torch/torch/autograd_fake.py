"""Autograd nodes as torch.autograd.graph.Node shows them to Python, and an
engine that runs a graph from its root: every node once, after all the
nodes that feed it, each with its prehooks before and its hooks after."""


class Node:
    def __init__(self, name, *inputs):
        self.label = name
        self.next_functions = tuple((n, 0) for n in inputs)
        self.metadata = {}
        self.prehooks = []
        self.hooks = []

    def name(self):
        return self.label

    def register_prehook(self, fn):
        self.prehooks.append(fn)

    def register_hook(self, fn):
        self.hooks.append(fn)


class AccumulateGrad(Node):
    pass


def run_backward(root):
    """Runs the graph below root; returns the node names in the order run."""
    users, seen, todo = {}, set(), [root]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for m, _ in n.next_functions:
            users[id(m)] = users.get(id(m), 0) + 1
            todo.append(m)
    order, ready = [], [root]
    while ready:
        n = ready.pop(0)
        for h in n.prehooks:
            assert h(()) is None
        order.append(n.label)
        for h in n.hooks:
            assert h((), ()) is None
        for m, _ in n.next_functions:
            users[id(m)] -= 1
            if not users[id(m)]:
                ready.append(m)
    return order
