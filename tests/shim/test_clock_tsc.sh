#!/bin/sh
# GPUPROF_CLOCK=tsc (gps_clock.c): once calibrated, timestamps are read
# through the TSC.  The trace says so (counter gpuprof.clock_tsc_updates),
# every record lies inside the process's lifetime on CLOCK_MONOTONIC, and no
# thread's API calls overlap or run backwards (a clock that stepped back
# would make them).  GPUPROF_CLOCK=monotonic: no such counter.
. "$(dirname "$0")/lib.sh"
GPUPROF=$B/bin/gpuprof
[ -x "$GPUPROF" ] || { echo "missing $GPUPROF (build first)"; exit 1; }
if ! grep -q -m1 -w nonstop_tsc /proc/cpuinfo; then
  echo "skip: this CPU has no invariant TSC (nonstop_tsc in /proc/cpuinfo)"; exit 77
fi
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
t0=$(mono)
GPUPROF_CLOCK=tsc GPUPROF_FLUSH_MS=50 run_traced "$T/o" "$T/e" loop 900; rc=$?
t1=$(mono)
loop_run_ok "GPUPROF_CLOCK=tsc run" $rc "$T/o" "$T/e"
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] || fail "want 1 trace, got $#"
"$GPUPROF" dump --json --abs-time "$1" > "$T/tsc.jsonl" || fail "dump failed"
python3 - "$T/tsc.jsonl" "$t0" "$t1" <<'PY' || FAILED=1
import json, sys
path, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recs = [json.loads(l) for l in open(path)]
bad = []
updates = [r["value"] for r in recs if r.get("type") == "counter" and r.get("name") == "gpuprof.clock_tsc_updates"]
if not updates or updates[0] < 2:
    bad.append(f"gpuprof.clock_tsc_updates {updates}: the TSC was not switched on and retuned")
timed = [r for r in recs if "start" in r and r.get("type") in ("api", "kernel", "memset", "memcpy", "range")]
if len(timed) < 500:
    bad.append(f"only {len(timed)} timed records")
for r in timed:
    end = r.get("end", r["start"])
    if not (t0 <= r["start"] <= end <= t1):
        bad.append(f"{r['type']} {r.get('name')} [{r['start']}, {end}] outside the run [{t0}, {t1}]")
        break
api = sorted((r for r in recs if r.get("type") == "api" and r.get("domain") == "runtime"),
             key=lambda r: (r["tid"], r["corr"]))
for a, b in zip(api, api[1:]):
    if a["tid"] == b["tid"] and b["start"] < a["end"]:
        bad.append(f"calls {a['corr']} and {b['corr']} on thread {a['tid']} overlap: {a['end']} > {b['start']}")
        break
for b in bad:
    print("FAIL:", b)
print(f"clock tsc: {len(timed)} timed records, {len(api)} runtime calls, updates {updates}")
sys.exit(1 if bad else 0)
PY
rm -f "$T"/trace-*.gpuprof
GPUPROF_CLOCK=monotonic GPUPROF_FLUSH_MS=50 run_traced "$T/o2" "$T/e2" loop 400 || fail "monotonic run failed"
"$GPUPROF" dump --json --abs-time "$T"/trace-*.gpuprof > "$T/mono.jsonl" || fail "dump of the monotonic run failed"
grep -q '"type":"api"' "$T/mono.jsonl" || fail "monotonic run: no API records"
grep -q 'clock_tsc_updates' "$T/mono.jsonl" && fail "GPUPROF_CLOCK=monotonic still used the TSC"
finish
