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


def pool(paths, workload="mnist"):
    """{config: {"bare": [ratios], "floor": [ratios]}} over every call's repetitions"""
    ratios = defaultdict(lambda: {"bare": [], "floor": []})
    for n, path in enumerate(paths):
        reps = defaultdict(dict)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["workload"] != workload or row["ok"] != "1" or not row["metric"]:
                    continue
                # a repetition is local to its call: key it by the file too
                reps[(n, row["rep"])][row["config"]] = float(row["metric"])
        for by_config in reps.values():
            bare, floor = by_config.get("bare"), by_config.get("floor")
            for config, v in by_config.items():
                if bare and config != "bare":
                    ratios[config]["bare"].append(v / bare)
                if floor and config not in ("bare", "floor"):
                    ratios[config]["floor"].append(v / floor)
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
