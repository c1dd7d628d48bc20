#!/usr/bin/env python3
"""runone.py — run one benchmark job and append one CSV row.

  runone.py --csv results.csv --dir RUNDIR --rep 1 --workload mnist \
            --config gpuprof [--tolerate-rc] [--count-events] -- CMD...

Runs CMD (stdout/stderr to RUNDIR/stdout, RUNDIR/stderr) under a timeout,
measures wall time and max RSS (/usr/bin/time -f %M when it exists, else
getrusage(RUSAGE_CHILDREN) — the largest RSS of the job or any descendant it
waited for), parses the job's RESULT line, sizes the trace files the job left
in RUNDIR (*.gpuprof*, torch chrome trace, nsys output) and, with
--count-events, counts their events (gpuprof dump --json lines, traceEvents).
The in-process A/B fields of a toggled run (TOGGLE_PAIRS: ab_pairs, ab_on_us
or ab_on_ms, ...) go to the columns ab_pairs, ab_on, ab_off, ab_ratio,
ab_delta, in the metric's unit (empty for a plain run).
A row is ok when a RESULT line was printed and the exit status was 0 (or
--tolerate-rc: nsys may fail to write its report after the job finished).
"""
import argparse
import csv
import glob
import json
import os
import resource
import subprocess
import sys
import time

# gpuprof dump --json lines start with {"type":"NAME"; these are events
# (same set as tests/gpu/gptrace.py EVENT_TYPES).
EVENT_TYPES = {"api", "kernel", "memcpy", "memset", "nvtx_range", "nvtx_mark", "sync", "memory",
               "counter", "dropped"}
FIELDS = ["rep", "workload", "config", "ok", "rc", "metric_name", "metric", "step_ms_median",
          "step_ms_mean", "total_s", "loss", "wall_s", "maxrss_kb", "trace_bytes", "events", "note",
          "ab_pairs", "ab_on", "ab_off", "ab_ratio", "ab_delta"]


def ab_fields(res):
    """RESULT's ab_* fields -> the CSV's unit-free ab_* columns."""
    out = {}
    for col in ("ab_pairs", "ab_on", "ab_off", "ab_ratio", "ab_delta"):
        out[col] = next((res[k] for k in (col, col + "_us", col + "_ms") if k in res), "")
    return out


def parse_result(path):
    res = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("RESULT "):
                    res = dict(t.split("=", 1) for t in line.split()[1:] if "=" in t)
    except OSError:
        pass
    return res


def trace_files(d):
    out = []
    for pat in ("*.gpuprof*", "torch*.json", "*.nsys-rep", "*.qdstrm", "*.sqlite"):
        out += [p for p in glob.glob(os.path.join(d, pat)) if os.path.isfile(p)]
    return sorted(set(out))


def count_events(files, gpuprof, timeout):
    n, notes = 0, []
    for p in files:
        if ".gpuprof" in p and gpuprof:
            try:
                r = subprocess.Popen([gpuprof, "dump", "--json", p], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
                for line in r.stdout:  # timed records only, not metadata
                    if line[9:line.find(b'"', 9)].decode() in EVENT_TYPES:
                        n += 1
                if r.wait(timeout=timeout) != 0:
                    notes.append(f"dump exit {r.returncode}")
            except (OSError, subprocess.TimeoutExpired) as e:
                notes.append(f"dump failed: {e}")
        elif p.endswith(".json"):
            if os.path.getsize(p) > 300 << 20:  # json.load of it would eat the time budget
                return None, "torch trace > 300 MiB: events not counted"
            try:
                with open(p) as f:
                    n += len(json.load(f).get("traceEvents", []))
            except (OSError, ValueError) as e:
                notes.append(f"torch trace unreadable: {e}")
        else:
            return None, "events not counted for " + os.path.basename(p)
    return n, "; ".join(notes)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--csv", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--rep", type=int, required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--tolerate-rc", action="store_true")
    p.add_argument("--count-events", action="store_true")
    p.add_argument("--keep-traces", action="store_true")
    p.add_argument("--gpuprof")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    os.makedirs(a.dir, exist_ok=True)
    rssf = os.path.join(a.dir, "maxrss")
    use_time = os.access("/usr/bin/time", os.X_OK)
    full = (["/usr/bin/time", "-f", "%M", "-o", rssf] if use_time else []) + cmd
    note = []
    t0 = time.perf_counter()
    with open(os.path.join(a.dir, "stdout"), "w") as so, open(os.path.join(a.dir, "stderr"), "w") as se:
        try:
            proc = subprocess.Popen(full, stdout=so, stderr=se, start_new_session=True)
            rc = proc.wait(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            rc = 124
            note.append(f"timed out after {a.timeout:.0f} s")
        except OSError as e:
            rc = 127
            note.append(f"cannot run: {e}")
    wall = time.perf_counter() - t0
    maxrss = ""
    if use_time:
        try:
            with open(rssf) as f:
                maxrss = int(f.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            note.append("no /usr/bin/time output")
    else:
        maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    res = parse_result(os.path.join(a.dir, "stdout"))
    ok = bool(res) and (rc == 0 or a.tolerate_rc)
    if res and rc != 0:
        note.append(f"exit {rc} after RESULT" + (" (tolerated)" if a.tolerate_rc else ""))
    if not res:
        note.append("no RESULT line")
    files = trace_files(a.dir)
    tbytes = sum(os.path.getsize(f) for f in files) if files else ""
    events = ""
    if files and a.count_events:
        events, n = count_events(files, a.gpuprof, a.timeout)
        events = "" if events is None else events
        if n:
            note.append(n)
    if not a.keep_traces:  # $OUT is small: keep sizes, not traces
        for f in files:
            os.unlink(f)
    metric_name = "us_per_launch" if "us_per_launch" in res else "step_ms_mean"
    row = {"rep": a.rep, "workload": a.workload, "config": a.config, "ok": int(ok), "rc": rc,
           "metric_name": metric_name, "metric": res.get(metric_name, ""),
           "step_ms_median": res.get("step_ms_median", ""), "step_ms_mean": res.get("step_ms_mean", ""),
           "total_s": res.get("total_s", ""), "loss": res.get("loss", ""), "wall_s": f"{wall:.2f}",
           "maxrss_kb": maxrss, "trace_bytes": tbytes, "events": events, "note": "; ".join(note),
           **ab_fields(res)}
    new = not os.path.exists(a.csv)
    with open(a.csv, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        w.writerow(row)
    print(f"  rep {a.rep} {a.workload:12s} {a.config:16s} {'ok ' if ok else 'BAD'} "
          f"{metric_name}={row['metric'] or '-'} wall={wall:.1f}s rss={maxrss}KiB "
          f"trace={tbytes or '-'}B events={events or '-'}"
          + (f" ab_ratio={row['ab_ratio']}" if row["ab_ratio"] else "") + f" {row['note']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
