#!/usr/bin/env python3
"""util_table.py — utilisation figures per top-level NVTX range, side by side.

For every top-level push/pop NVTX range (depth 0) of a trace, on one device:

  NVML (%)       mean of the nvml.gpu_util samples (GPUPROF_GPU_METRICS) whose
                 timestamp lies in the range; NVML itself averages over its own
                 sample period (1/6 s to 1 s), so the first samples of a range
                 still see the time before it
  Busy (%)       union of the kernel intervals, clipped to the range / range length
                 ("some kernel is running": what NVML's figure approximates)
  Est SM (%)     sum of clipped kernel time x min(1, blocks / SMs) / range length,
                 capped at 100: the SM-coverage estimate of `gpuprof stats
                 --report util` (SM-Wtd) and of the occupancy report (Est SM Act),
                 from launch shapes, an upper bound
  PM SM act (%), PM occ (%), PM tensor (%), PM DRAM (%)
                 means of the pm.* samples (GPUPROF_PM_SAMPLING, CUPTI PM
                 sampling; DCGM's SMACT, SMOCC, TENSO, DRAMA) that start in the range
'-' where the trace has no such samples.  --merge-numbered pools ranges whose
names differ only in their numbers ("step 0", "step 1", ... -> "step #"):
lengths and kernel time add up, sample means are over every pooled sample.

Input: a trace (runs `gpuprof dump --json`), or --from-dump FILE with that
command's output ('-' = stdin).  Output: a markdown table, or --json (one
object per row).  Python 3 standard library only.

  scripts/util_table.py build/util.gpuprof
  scripts/util_table.py --merge-numbered --device 0 mnist.gpuprof
"""
import argparse
import bisect
import json
import os
import re
import subprocess
import sys

PM = [("pm_sm_active_pct", "pm.sm_active_pct", "PM SM act (%)"),
      ("pm_sm_occupancy_pct", "pm.sm_occupancy_pct", "PM occ (%)"),
      ("pm_tensor_active_pct", "pm.tensor_active_pct", "PM tensor (%)"),
      ("pm_dram_throughput_pct", "pm.dram_throughput_pct", "PM DRAM (%)")]
TYPES = "kernel,device,nvtx_range,counter"


def die(msg):
    print("util_table: " + msg, file=sys.stderr)
    sys.exit(2)


def parse(lines):
    """Yields the records of `gpuprof dump --json` lines (a stream: a
    microbenchmark trace has millions of kernels)."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            die("line %d is not JSON (want `gpuprof dump --json` output)" % n)
        if not isinstance(r, dict) or "type" not in r:
            die("line %d is not a gpuprof dump record" % n)
        yield r


def load(args, device, merge):
    if args.from_dump is not None:
        try:
            f = sys.stdin if args.from_dump == "-" else open(args.from_dump)
        except OSError as e:
            die("cannot read %s: %s" % (args.from_dump, e.strerror))
        return rows(parse(f), device, merge)
    exe = args.gpuprof or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin",
                                       "gpuprof")
    try:
        p = subprocess.Popen([exe, "dump", "--json", "--type", TYPES, args.trace], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    except OSError as e:
        die("cannot run %s: %s (--gpuprof PATH)" % (exe, e.strerror))
    out = rows(parse(p.stdout), device, merge)
    err = p.stderr.read()
    if p.wait() != 0:
        die("gpuprof dump failed: " + err.strip())
    return out


def union_len(ivs):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(ivs):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def rows(recs, device, merge):
    sms, ranges = {}, []
    # per pid: kernels (start, end, blocks) sorted by start; counters per name (ts, value) sorted
    kern, ctr = {}, {}
    for r in recs:
        t = r["type"]
        if t == "nvtx_range":
            if r.get("depth") == 0 and r.get("kind") == "pushpop" and r["end"] > r["start"]:
                ranges.append(r)
        elif r.get("device") != device:
            continue
        elif t == "kernel":
            g = r["grid"]
            kern.setdefault(r["pid"], []).append((r["start"], r["end"], g[0] * g[1] * g[2]))
        elif t == "counter":
            ctr.setdefault((r["pid"], r["name"]), []).append((r["ts"], r["value"]))
        elif t == "device":
            sms[r.get("pid")] = r.get("sm_count", 0)
    kstarts, kmaxdur = {}, {}
    for pid, ks in kern.items():
        ks.sort()
        kstarts[pid] = [k[0] for k in ks]
        kmaxdur[pid] = max(k[1] - k[0] for k in ks)
    cts = {}
    for key, cs in ctr.items():
        cs.sort()
        cts[key] = [c[0] for c in cs]
    groups, order = {}, []
    for rg in sorted(ranges, key=lambda r: r["start"]):
        name, pid = rg.get("message", ""), rg["pid"]
        key = (pid, re.sub(r"\d+", "#", name)) if merge else (pid, name, rg["start"])
        if key not in groups:
            groups[key] = {"range": re.sub(r"\d+", "#", name) if merge else name, "pid": pid,
                           "count": 0, "len": 0, "kernels": 0, "busy": 0, "est": 0.0, "est_known": True,
                           "samples": {}}
            order.append(key)
        g = groups[key]
        s, e = rg["start"], rg["end"]
        g["count"] += 1
        g["len"] += e - s
        ivs = []
        sm = sms.get(pid, 0)
        ks = kern.get(pid, [])
        if ks:
            lo = bisect.bisect_left(kstarts[pid], s - kmaxdur[pid])
            hi = bisect.bisect_left(kstarts[pid], e)
            for ks_, ke, blocks in ks[lo:hi]:
                a, b = max(ks_, s), min(ke, e)
                if b <= a:
                    continue
                ivs.append((a, b))
                g["kernels"] += 1
                if sm:
                    g["est"] += (b - a) * min(1.0, blocks / sm)
                else:
                    g["est_known"] = False
        g["busy"] += union_len(ivs)
        for (cpid, cname), cs in ctr.items():
            if cpid != pid:
                continue
            lo = bisect.bisect_left(cts[(cpid, cname)], s)
            hi = bisect.bisect_left(cts[(cpid, cname)], e)
            if hi > lo:
                g["samples"].setdefault(cname, []).extend(v for _, v in cs[lo:hi])
    out = []
    for key in order:
        g = groups[key]
        mean = lambda n: (sum(g["samples"][n]) / len(g["samples"][n])) if g["samples"].get(n) else None
        row = {"range": g["range"], "pid": g["pid"], "device": device, "ranges": g["count"],
               "length_s": g["len"] / 1e9, "kernels": g["kernels"],
               "nvml_gpu_util_pct": mean("nvml.gpu_util"),
               "busy_pct": 100.0 * g["busy"] / g["len"],
               "est_sm_pct": min(100.0, 100.0 * g["est"] / g["len"]) if g["est_known"] else None}
        for col, name, _ in PM:
            row[col] = mean(name)
        out.append(row)
    return out


def fmt(v, digits=1):
    return "-" if v is None else "%.*f" % (digits, v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace", nargs="?", help="a .gpuprof trace")
    ap.add_argument("--from-dump", metavar="FILE", help="`gpuprof dump --json` output instead ('-' stdin)")
    ap.add_argument("--gpuprof", metavar="PATH", help="the gpuprof binary (default: ../build/bin/gpuprof)")
    ap.add_argument("--device", type=int, default=0, help="CUDA device id (default 0)")
    ap.add_argument("--merge-numbered", action="store_true",
                    help="pool ranges whose names differ only in numbers ('step 1', 'step 2' -> 'step #')")
    ap.add_argument("--json", action="store_true", help="JSON lines instead of a markdown table")
    args = ap.parse_args()
    if (args.trace is None) == (args.from_dump is None):
        die("give a trace file or --from-dump FILE (one of them)")
    if args.device < 0:
        die("--device must be >= 0")
    table = load(args, args.device, args.merge_numbered)
    if args.json:
        for r in table:
            print(json.dumps(r))
        return 0
    if not table:
        print("util_table: no top-level push/pop NVTX range in the trace", file=sys.stderr)
        return 1
    cols = ["Range", "N", "Length (s)", "Kernels", "NVML (%)", "Busy (%)", "Est SM (%)"] + [c[2] for c in PM]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in table:
        cells = [r["range"], str(r["ranges"]), "%.3f" % r["length_s"], str(r["kernels"]),
                 fmt(r["nvml_gpu_util_pct"]), fmt(r["busy_pct"]), fmt(r["est_sm_pct"])]
        cells += [fmt(r[c[0]]) for c in PM]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
