#!/usr/bin/env python3
"""flamegraph.py — a static SVG flame graph from folded stacks (the output of
`gpuprof export --format folded`), for the docs.  Python 3 standard library
only; flamegraph.pl's layout (root at the bottom, children side by side in
name order, width proportional to weight, frames narrower than 0.1 px left
out) without its JavaScript.

    scripts/flamegraph.py FOLDED OUT.svg [--title T] [--unit ns] [--width PX]

Colours: Python frames ("func (file:line)") green, native frames warm,
"[thread ...]" and "(no stack)"-style frames grey.  Each frame has a
<title> tooltip: its name, weight and share of the total."""
import argparse
import hashlib
import sys
from xml.sax.saxutils import escape

FRAME_H = 16
FONT = 11
CHAR_W = FONT * 0.59  # average glyph width of the monospace-ish font used
MIN_PX = 0.1
PAD_TOP = 44
PAD_BOTTOM = 8
PAD_SIDE = 10


class Node:
    __slots__ = ("name", "value", "children")

    def __init__(self, name):
        self.name = name
        self.value = 0
        self.children = {}


def parse(path):
    root = Node("all")
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, sep, w = line.rpartition(" ")
            if not sep or not w.isdigit() or not stack:
                sys.exit(f"flamegraph.py: {path}:{n}: not 'frame;frame;... WEIGHT': {line[:80]!r}")
            weight = int(w)
            root.value += weight
            node = root
            for frame in stack.split(";"):
                child = node.children.get(frame)
                if child is None:
                    child = node.children[frame] = Node(frame)
                child.value += weight
                node = child
    return root


def colour(name):
    h = int.from_bytes(hashlib.md5(name.encode()).digest()[:2], "little") / 65535.0
    if name.startswith("[") or name.startswith("("):
        v = int(190 + 30 * h)
        return f"rgb({v},{v},{v})"
    if ".py:" in name or name.endswith(".py)"):
        return f"rgb({int(80 + 60 * h)},{int(180 + 50 * h)},{int(80 + 40 * h)})"
    return f"rgb({int(220 + 35 * h)},{int(90 + 110 * h)},{int(40 + 40 * h)})"


def depth(node):
    return 1 + max((depth(c) for c in node.children.values()), default=0)


def render(root, title, unit, width):
    levels = depth(root)
    height = PAD_TOP + levels * FRAME_H + PAD_BOTTOM
    scale = (width - 2 * PAD_SIDE) / root.value if root.value else 0
    out = [
        f'<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Verdana, sans-serif" font-size="{FONT}">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fafafa"/>',
        f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" font-size="15">{escape(title)}</text>',
        f'<text x="{width / 2:.1f}" y="36" text-anchor="middle" fill="#555">total {root.value:,} {escape(unit)}; '
        f'width = share of the total; hover a frame for its weight</text>',
    ]
    stack = [(root, PAD_SIDE, 0)]
    while stack:
        node, x, d = stack.pop()
        w = node.value * scale
        if w < MIN_PX:
            continue
        y = height - PAD_BOTTOM - (d + 1) * FRAME_H
        pct = 100.0 * node.value / root.value
        label = node.name
        fit = int((w - 6) / CHAR_W)
        if fit < 3:
            label = ""
        elif len(label) > fit:
            label = label[:fit - 2] + ".."
        out.append(f'<g><title>{escape(node.name)} ({node.value:,} {escape(unit)}, {pct:.2f}%)</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{FRAME_H - 1}" rx="2" '
                   f'fill="{colour(node.name) if d else "rgb(200,200,200)"}"/>'
                   + (f'<text x="{x + 3:.2f}" y="{y + FRAME_H - 4}">{escape(label)}</text>' if label else "")
                   + "</g>")
        cx = x
        for name in sorted(node.children):
            child = node.children[name]
            stack.append((child, cx, d + 1))
            cx += child.value * scale
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="SVG flame graph from folded stacks")
    ap.add_argument("folded")
    ap.add_argument("out")
    ap.add_argument("--title", default="Flame graph")
    ap.add_argument("--unit", default="ns", help="what a weight counts (default ns)")
    ap.add_argument("--width", type=int, default=1200)
    a = ap.parse_args()
    if a.width < 100:
        sys.exit("flamegraph.py: --width must be at least 100")
    try:
        root = parse(a.folded)
    except OSError as e:
        sys.exit(f"flamegraph.py: cannot read {a.folded}: {e.strerror}")
    if not root.value:
        sys.exit(f"flamegraph.py: {a.folded}: no stacks with weight")
    svg = render(root, a.title, a.unit, a.width)
    try:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(svg)
    except OSError as e:
        sys.exit(f"flamegraph.py: cannot write {a.out}: {e.strerror}")


if __name__ == "__main__":
    main()
