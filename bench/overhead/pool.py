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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="mnist")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    ratios = defaultdict(lambda: {"bare": [], "floor": []})
    for n, path in enumerate(a.csv):
        reps = defaultdict(dict)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["workload"] != a.workload or row["ok"] != "1" or not row["metric"]:
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
    if not ratios:
        sys.exit("pool.py: no ok runs of workload '%s' with a bare run in %s" % (a.workload, ", ".join(a.csv)))

    def cell(v):
        if not v:
            return "–"
        return "%.3f (%.3f–%.3f; %d)" % (statistics.median(v), min(v), max(v), len(v))

    print("| config | × bare: median (min–max; n) | × floor: median (min–max; n) |")
    print("|---|---|---|")
    for config in sorted(ratios):
        print("| %s | %s | %s |" % (config, cell(ratios[config]["bare"]), cell(ratios[config]["floor"])))


if __name__ == "__main__":
    main()
