#!/usr/bin/env python3
"""Pool several bench/overhead/run.sh calls: for every repetition that has a
bare run, each config's ratio to that bare run (and to the floor of the same
repetition), then the median and range over all calls.

usage: pool.py [--workload mnist] results.csv [results.csv ...]
(results.csv is RESULTS_DIR/bench/results.csv of one call)"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

from summarize import per_rep_values  # the bench's own per-repetition ratio


def pool(paths, workload="mnist"):
    """{config: {"bare": [ratios], "floor": [ratios]}} over every call's repetitions"""
    per = defaultdict(dict)  # config -> {(call, rep): row}
    for n, path in enumerate(paths):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["workload"] == workload and row["ok"] == "1":
                    # a repetition is local to its call: key it by the file too
                    per[row["config"]][(n, row["rep"])] = row
    bare, floor = per.get("bare", {}), per.get("floor", {})
    ratios = {}
    for config, rows in per.items():
        vs_bare = per_rep_values(rows, bare, "metric", "ratio") if config != "bare" else []
        vs_floor = per_rep_values(rows, floor, "metric", "ratio") if config not in ("bare", "floor") else []
        if vs_bare or vs_floor:
            ratios[config] = {"bare": vs_bare, "floor": vs_floor}
    return ratios


def table(ratios):
    def cell(v):
        if not v:
            return "–"
        return "%.3f (%.3f–%.3f; %d)" % (statistics.median(v), min(v), max(v), len(v))

    lines = ["| config | × bare: median (min–max; n) | × floor: median (min–max; n) |", "|---|---|---|"]
    for config in sorted(ratios):
        lines.append("| %s | %s | %s |" % (config, cell(ratios[config]["bare"]), cell(ratios[config]["floor"])))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="mnist")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    ratios = pool(a.csv, a.workload)
    if not ratios:
        sys.exit("pool.py: no ok runs of workload '%s' with a bare or floor run in %s" % (a.workload, ", ".join(a.csv)))
    print(table(ratios))


if __name__ == "__main__":
    main()
