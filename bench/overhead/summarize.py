#!/usr/bin/env python3
"""summarize.py — results.csv (runone.py rows) -> markdown tables.

  summarize.py results.csv [-o summary.md]

One table per workload, one row per config:
  metric      median over repetitions (empty_kernel: µs per launch; the
              python workloads: ms per step = wall time of the timed loop /
              steps, one sync at the end), with the min–max spread
  x bare      median over repetitions of metric / the SAME repetition's bare
              run (interleaving makes drift hit both alike)
  x floor     same against the CUPTI floor (bench/overhead/cupti_floor.c)
  Δ bare, Δ floor   median per-repetition difference, in the metric's unit
  ev-median   median step time from CUDA events (the job's step_ms_median)
  max RSS     median over reps (MiB), and its median per-rep delta to bare
  trace       trace bytes and bytes/event (repetitions where events were counted)
Failed runs are listed under the table with their note, never averaged in.

Toggled runs (TOGGLE_PAIRS: the job alternates capture on/off blocks in
ABBA order inside one process, runone.py's ab_* columns) get a second table
per workload, "in-process A/B (capture on vs off in the same process)", one
row per config with ok runs that carry ab_ratio:
  reps             runs with A/B fields
  on, off          median over reps of the job's median on/off block time
  ratio, min–max   median and spread over reps of the job's median on/off
  Δ on−off         median over reps of the job's median on−off
  Δ over floor     median over reps of (ab_delta − the SAME rep's floor ab_delta)
  ratio over floor median over reps of (ab_ratio / the same rep's floor ab_ratio)
A bare run's ratio (profiler calls are no-ops there) is the method's own bias.
"""
import argparse
import collections
import csv
import statistics
import sys

CONFIG_ORDER = ["bare", "floor", "gpuprof", "gpuprof-api-all", "gpuprof-apionly", "torchprof", "nsys"]
UNITS = {"us_per_launch": "µs/launch", "step_ms_mean": "ms/step"}


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=3, suffix=""):
    if x is None:
        return "–"
    if abs(x) >= 1000:
        return f"{x:,.0f}{suffix}"
    return f"{x:.{nd}f}{suffix}"


def per_rep_values(rows_by_rep, ref_by_rep, key, op):
    """key of each repetition's row against the SAME repetition's reference
    row (op "ratio" or "diff"), one value per repetition that has both"""
    out = []
    for rep, v in rows_by_rep.items():
        r = ref_by_rep.get(rep)
        a, b = num(v.get(key)), num(r.get(key)) if r else None
        if a is not None and b is not None and (op != "ratio" or b > 0):
            out.append(a / b if op == "ratio" else a - b)
    return out


def per_rep_vs(rows_by_rep, ref_by_rep, key, op):
    return med(per_rep_values(rows_by_rep, ref_by_rep, key, op))


def ab_table(rs, cfgs, unit):
    """The in-process A/B table of one workload's rows (module docstring);
    [] when no ok row carries ab_ratio."""
    ok = [r for r in rs if r.get("ok") == "1" and num(r.get("ab_ratio")) is not None]
    if not ok:
        return []
    per = {c: {int(r["rep"]): r for r in ok if r["config"] == c} for c in cfgs}
    floor = per.get("floor", {})
    pairs = sorted({int(num(r["ab_pairs"])) for r in ok if num(r.get("ab_pairs")) is not None})
    lines = [f"In-process A/B (capture on vs off in the same process; {unit}; "
             f"pairs per run: {', '.join(map(str, pairs)) or '?'}):", "",
             f"| config | reps | on {unit} | off {unit} | ratio on/off | min–max | Δ on−off | "
             f"Δ over floor | ratio over floor |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in cfgs:
        reps = per[c]
        if not reps:
            continue
        ratios = [num(r["ab_ratio"]) for r in reps.values()]
        not_floor = c != "floor"
        lines.append("| " + " | ".join([
            c, str(len(reps)),
            fmt(med([num(r.get("ab_on")) for r in reps.values()])),
            fmt(med([num(r.get("ab_off")) for r in reps.values()])),
            fmt(med(ratios), 4), f"{fmt(min(ratios), 4)}–{fmt(max(ratios), 4)}",
            fmt(med([num(r.get("ab_delta")) for r in reps.values()])),
            fmt(per_rep_vs(reps, floor, "ab_delta", "diff")) if not_floor else "–",
            fmt(per_rep_vs(reps, floor, "ab_ratio", "ratio"), 4) if not_floor else "–",
        ]) + " |")
    lines.append("")
    return lines


def summarize(rows):
    lines = []
    by_wl = collections.OrderedDict()
    for r in rows:
        by_wl.setdefault(r["workload"], []).append(r)
    for wl, rs in by_wl.items():
        ok = [r for r in rs if r.get("ok") == "1"]
        bad = [r for r in rs if r.get("ok") != "1"]
        metric = next((r["metric_name"] for r in ok if r.get("metric_name")), "step_ms_mean")
        unit = UNITS.get(metric, metric)
        cfgs = sorted({r["config"] for r in rs},
                      key=lambda c: CONFIG_ORDER.index(c) if c in CONFIG_ORDER else 99)
        per = {c: {int(r["rep"]): r for r in ok if r["config"] == c} for c in cfgs}
        bare, floor = per.get("bare", {}), per.get("floor", {})
        lines.append(f"### {wl} ({unit}; {len({r['rep'] for r in rs})} repetitions)")
        lines.append("")
        lines.append(f"| config | ok/runs | {unit} median | min–max | × bare | × floor | Δ bare | "
                     f"Δ floor | ev-median ms | max RSS MiB | ΔRSS MiB | trace MiB | bytes/event |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for c in cfgs:
            reps = per[c]
            vals = [num(r["metric"]) for r in reps.values()]
            vals = [v for v in vals if v is not None]
            runs = sum(1 for r in rs if r["config"] == c)
            m = med(vals)
            spread = f"{fmt(min(vals))}–{fmt(max(vals))}" if vals else "–"
            rss = med([num(r["maxrss_kb"]) for r in reps.values()])
            drss = per_rep_vs(reps, bare, "maxrss_kb", "diff") if c != "bare" else None
            tb = med([num(r["trace_bytes"]) for r in reps.values()])
            bpe = med([num(r["trace_bytes"]) / num(r["events"]) for r in reps.values()
                       if num(r["trace_bytes"]) and num(r["events"])])
            lines.append("| " + " | ".join([
                c, f"{len(reps)}/{runs}", fmt(m), spread,
                fmt(per_rep_vs(reps, bare, "metric", "ratio")) if c != "bare" else "1",
                fmt(per_rep_vs(reps, floor, "metric", "ratio")) if c not in ("bare", "floor") else "–",
                fmt(per_rep_vs(reps, bare, "metric", "diff")) if c != "bare" else "–",
                fmt(per_rep_vs(reps, floor, "metric", "diff")) if c not in ("bare", "floor") else "–",
                fmt(med([num(r["step_ms_median"]) for r in reps.values()])),
                fmt(rss / 1024 if rss is not None else None, 1),
                fmt(drss / 1024 if drss is not None else None, 1),
                fmt(tb / 2**20 if tb else None, 2),
                fmt(bpe, 1),
            ]) + " |")
        if bad:
            lines.append("")
            for r in bad:
                lines.append(f"- failed: rep {r['rep']} {r['config']}: exit {r['rc']}, {r['note']}")
        lines.append("")
        lines += ab_table(rs, cfgs, unit)
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("-o", "--output")
    a = p.parse_args(argv)
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"summarize: {a.csv} has no rows", file=sys.stderr)
        return 1
    text = summarize(rows)
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
