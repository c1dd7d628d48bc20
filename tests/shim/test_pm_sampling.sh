#!/bin/sh
# GPUPROF_PM_SAMPLING=INTERVAL against the fake CUPTI's PM sampling API
# (tests/fake/fake_cupti.c, FAKE_CUPTI_PM): a ~0.6 s job at 10 ms gets
# pm.* counter records of device 0: about duration / interval samples
# (+-50 %), timestamps strictly increasing by exactly the interval (the fake
# samples on CLOCK_REALTIME; the shim must move them onto the trace clock, so
# they also have to lie inside the trace), and the scripted values of every
# sample in order (a lost or repeated sample shifts them): SM active n % 100,
# occupancy derived from the two unused-warp-slot metrics = 60 - n % 5
# (the fake chip has no sm__warps_active), tensor 0.5 * (n % 10), DRAM 42;
# pm.interval_ns = 10,000,000, pm.setup_ns, pm.formula.* the fake chip's
# formula indices; enable/start/stop once each and never disable
# (disabling at exit crashed a job on the H200); `gpuprof stats --report
# counters` lists the pm.* rows.  A slow set-up holds the job's first launch
# back, for 3 s at most.  A listed metric the host refuses: re-picked per
# figure.  The forking workload under PM sampling:
# same stdout as untraced, exit 0, the parent's trace has the pm.* series.  Not supported, insufficient
# privileges, a CUPTI without the API, bad values: one gpuprof: line naming
# the cause, the job runs and prints the same, no pm.* counters.  Off by
# default: the PM API is never called.
. "$(dirname "$0")/lib.sh"
unset GPUPROF_PM_SAMPLING FAKE_CUPTI_PM 2>/dev/null
GPUPROF=$B/bin/gpuprof
NOPM=$B/tests/fake/nopm/libcupti.so.13
for f in "$GPUPROF" "$NOPM"; do [ -e "$f" ] || { echo "missing $f (build first)"; exit 1; }; done

# check_pm TRACE MODE: "full" = the scripted series; "none" = no pm.* counter
check_pm() {
  "$GPUPROF" dump --json --type counter,process,clock "$1" > "$T/dump.json" || { fail "dump $1"; return 1; }
  python3 - "$T/dump.json" "$2" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mode = sys.argv[2]
pm = [r for r in recs if r["type"] == "counter" and r["name"].startswith("pm.")]
bad = []
if mode == "none":
    if pm:
        bad.append("%d pm counters in a trace that should have none" % len(pm))
else:
    start = [r["start"] for r in recs if r["type"] == "process"][0]
    end = max(r["trace_ns"] for r in recs if r["type"] == "clock")
    dur = (end - start) / 1e9
    series = {}
    for r in pm:
        series.setdefault(r["name"], []).append(r)
    iv = series.get("pm.interval_ns", [])
    if [r["value"] for r in iv] != [10000000] or any(r["device"] != 0 for r in iv):
        bad.append("pm.interval_ns %s, want one 10000000 on device 0" % [r["value"] for r in iv])
    clk = [r["value"] for r in series.get("pm.clock", [])]
    if len(clk) != 1 or clk[0] not in (2, 3):  # the fake's samples: CLOCK_REALTIME = cuptiGetTimestamp
        bad.append("pm.clock %s, want one of 2 (realtime) or 3 (CUPTI)" % clk)
    script = {
        "pm.sm_active_pct": lambda n: float(n % 100),
        "pm.sm_occupancy_pct": lambda n: 60.0 - n % 5,
        "pm.tensor_active_pct": lambda n: 0.5 * (n % 10),
        "pm.dram_throughput_pct": lambda n: 42.0,
    }
    want = set(script) | {"pm.interval_ns", "pm.clock", "pm.setup_ns"} | \
        {"pm.formula." + n[3:] for n in script}
    formula = {r["name"]: r["value"] for r in pm if r["name"].startswith("pm.formula.")}
    # the fake chip: sm__cycles_active (0), the derived occupancy (1), the
    # realtime tensor metric (0), dram__throughput (0)
    if formula != {"pm.formula.sm_active_pct": 0, "pm.formula.sm_occupancy_pct": 1,
                   "pm.formula.tensor_active_pct": 0, "pm.formula.dram_throughput_pct": 0}:
        bad.append("formula indices %s" % formula)
    st = [r["value"] for r in series.get("pm.setup_ns", [])]
    if len(st) != 1 or not (0 < st[0] < 5e9):
        bad.append("pm.setup_ns %s" % st)
    if set(series) != want:
        bad.append("series %s, want %s" % (sorted(series), sorted(want)))
    expect = dur / 0.010
    for n, f in sorted(script.items()):
        rs = series.get(n, [])
        if any(r["device"] != 0 for r in rs):
            bad.append("%s: a device other than 0" % n)
        if not (0.5 * expect <= len(rs) <= 1.5 * expect + 1):
            bad.append("%s: %d samples in %.3f s at 10 ms" % (n, len(rs), dur))
        ts = [r["ts"] for r in rs]
        steps = {b - a for a, b in zip(ts, ts[1:])}
        if steps and steps != {10000000}:
            bad.append("%s: timestamp steps %s, want exactly 10 ms" % (n, sorted(steps)[:5]))
        if not all(start <= t <= end for t in ts):
            bad.append("%s: sample outside the trace [%d, %d]: %s" % (n, start, end, ts[:3]))
        vals = [r["value"] for r in rs]
        exp = [f(k) for k in range(len(rs))]
        if vals != exp:
            bad.append("%s: values %s, scripted %s" % (n, vals[:8], exp[:8]))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

# 1. the scripted run
GPUPROF_PM_SAMPLING=10ms FAKE_CUPTI_PM=ok FAKE_CUPTI_LOG=$T/cupti.log \
  run_traced "$T/p.out" "$T/p.err" loop 600; rc=$?
loop_run_ok "PM run" $rc "$T/p.out" "$T/p.err"
grep -qi 'PM sampling' "$T/p.err" && { fail "complaint in a good run:"; cat "$T/p.err"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "want one trace, got: $*"
if [ -e "$1" ]; then
  check_pm "$1" full || fail "PM trace"
  "$GPUPROF" dump --type thread "$1" | grep -q 'name=gpuprof-pm' || fail "no gpuprof-pm thread"
  "$GPUPROF" stats --report counters "$1" > "$T/stats.txt" || fail "stats --report counters"
  for n in pm.sm_active_pct pm.sm_occupancy_pct pm.tensor_active_pct pm.dram_throughput_pct; do
    grep -q " $n\$" "$T/stats.txt" || { fail "stats counters lacks $n"; cat "$T/stats.txt"; }
  done
fi
for call in pm-enable pm-start pm-stop; do
  n=$(grep -c " $call\$" "$T/cupti.log")
  [ "$n" -eq 1 ] || fail "$call called $n times, want 1"
done
grep -q ' pm-disable$' "$T/cupti.log" && fail "PM sampling disabled at exit"
rm -f "$T"/trace-*.gpuprof "$T/cupti.log"

# 1s. a slow set-up (Enable takes 400 ms): the job's first kernel launch
# comes after Start (the context's callback waits for the set-up); one that
# outlasts the bound (3.5 s > 3 s): the job goes on before Start, no hang
GPUPROF_PM_SAMPLING=10ms FAKE_CUPTI_PM=ok FAKE_CUPTI_PM_DELAY_MS=400 FAKE_CUPTI_LOG=$T/slow.log \
  run_traced "$T/s.out" "$T/s.err" loop 100; rc=$?
[ $rc -eq 0 ] || fail "slow set-up: exit $rc"
order=$(grep -E ' (pm-start|first-launch)$' "$T/slow.log" | awk '{print $2}' | tr '\n' ' ')
[ "$order" = "pm-start first-launch " ] || fail "slow set-up: order '$order', want pm-start before first-launch"
rm -f "$T"/trace-*.gpuprof
t0=$(date +%s)
GPUPROF_PM_SAMPLING=10ms FAKE_CUPTI_PM=ok FAKE_CUPTI_PM_DELAY_MS=3500 FAKE_CUPTI_LOG=$T/slower.log \
  run_traced "$T/s.out" "$T/s.err" loop 100; rc=$?
t1=$(date +%s)
[ $rc -eq 0 ] || fail "set-up past the bound: exit $rc"
order=$(grep -E ' (pm-start|first-launch)$' "$T/slower.log" | awk '{print $2}' | tr '\n' ' ')
case $order in "first-launch "*) ;; *) fail "set-up past the bound: order '$order', want first-launch first" ;; esac
[ $((t1 - t0)) -le 12 ] || fail "set-up past the bound: the job took $((t1 - t0)) s"
grep -q '^loop [0-9]*$' "$T/s.out" || fail "set-up past the bound: stdout $(cat "$T/s.out")"
rm -f "$T"/trace-*.gpuprof

# 1a. the default workload (forks: child 1 without CUDA, child 2 with)
# (TSan cannot run a process that forks and starts threads in the child:
# left to the plain and ASan runs, like test_workload)
if [ "${GPUPROF_FAULT_SANITIZER:-}" = tsan ]; then
  echo "fork part skipped under TSan"
else
run_plain "$T/plain.out" "$T/plain.err"; rc=$?
[ $rc -eq 0 ] || fail "plain workload exit $rc"
# 1ms: the forking workload runs for about 10 ms, and the fake has a sample
# only once a whole interval has passed since Start
GPUPROF_PM_SAMPLING=1ms FAKE_CUPTI_PM=ok run_traced "$T/f.out" "$T/f.err"; rc=$?
[ $rc -eq 0 ] || fail "forking workload under PM sampling: exit $rc"
cmp -s "$T/plain.out" "$T/f.out" || fail "stdout differs under PM sampling"
[ "$(foreign_lines "$T/f.err")" -eq 0 ] || { fail "forking workload: non-gpuprof stderr"; cat "$T/f.err"; }
found=0
for t in "$T"/trace-*.gpuprof; do
  [ -e "$t" ] || continue
  "$GPUPROF" dump --type counter "$t" | grep -q 'pm.sm_active_pct' && found=1
done
[ $found -eq 1 ] || fail "forking workload: no trace with pm.sm_active_pct"
rm -f "$T"/trace-*.gpuprof
fi

# 1b. a chip without DRAM metrics: one line saying which figure is left out,
# the other three series as scripted
GPUPROF_PM_SAMPLING=10ms FAKE_CUPTI_PM=ok-nodram run_traced "$T/n.out" "$T/n.err" loop 300; rc=$?
[ $rc -eq 0 ] || fail "no-DRAM run exit $rc"
n=$(grep -ci 'PM sampling' "$T/n.err")
[ "$n" -eq 1 ] && grep -q 'without pm.dram_throughput_pct (no metric)' "$T/n.err" || { fail "no-DRAM: want one line naming pm.dram_throughput_pct:"; cat "$T/n.err"; }
set -- "$T"/trace-*.gpuprof
if [ -e "$1" ]; then
  "$GPUPROF" dump --json --type counter "$1" | python3 -c '
import json, sys
names = {json.loads(l)["name"] for l in sys.stdin if l.strip()}
pm = sorted(n for n in names if n.startswith("pm."))
want = ["pm.clock", "pm.formula.sm_active_pct", "pm.formula.sm_occupancy_pct", "pm.formula.tensor_active_pct",
        "pm.interval_ns", "pm.setup_ns", "pm.sm_active_pct", "pm.sm_occupancy_pct", "pm.tensor_active_pct"]
sys.exit(0 if pm == want else print("pm series", pm) or 1)' || fail "no-DRAM: pm series"
fi
rm -f "$T"/trace-*.gpuprof

# 1c. a listed metric the host refuses when added: the set is re-picked
# metric by metric, tensor activity from the next formula (the fake's hmma
# metric, 7 %), no line (every figure has a formula)
GPUPROF_PM_SAMPLING=10ms FAKE_CUPTI_PM=ok-refuse-tensor run_traced "$T/r.out" "$T/r.err" loop 300; rc=$?
[ $rc -eq 0 ] || fail "refused metric: exit $rc"
grep -qi 'PM sampling' "$T/r.err" && { fail "refused metric: a line:"; cat "$T/r.err"; }
set -- "$T"/trace-*.gpuprof
if [ -e "$1" ]; then
  "$GPUPROF" dump --json --type counter "$1" | python3 -c '
import json, sys
rs = [json.loads(l) for l in sys.stdin if l.strip()]
t = [r["value"] for r in rs if r["name"] == "pm.tensor_active_pct"]
a = [r["value"] for r in rs if r["name"] == "pm.sm_active_pct"]
f = [r["value"] for r in rs if r["name"] == "pm.formula.tensor_active_pct"]
ok = t and set(t) == {7.0} and a == [float(n % 100) for n in range(len(a))] and len(a) == len(t) and f == [1]
sys.exit(0 if ok else print("tensor", t[:5], "active", a[:5]) or 1)' || fail "refused metric: series"
fi
rm -f "$T"/trace-*.gpuprof

# 2. off (unset, 0, off): the PM API is never used, no line, no pm counters
for v in "" 0 off; do
  GPUPROF_PM_SAMPLING=$v FAKE_CUPTI_PM=ok FAKE_CUPTI_LOG=$T/cupti.log \
    run_traced "$T/o.out" "$T/o.err" loop 100; rc=$?
  [ $rc -eq 0 ] || fail "GPUPROF_PM_SAMPLING='$v': exit $rc"
  grep -q ' pm-' "$T/cupti.log" && fail "GPUPROF_PM_SAMPLING='$v': PM sampling was enabled"
  grep -qi 'PM_SAMPLING\|PM sampling' "$T/o.err" && { fail "GPUPROF_PM_SAMPLING='$v': a line:"; cat "$T/o.err"; }
  set -- "$T"/trace-*.gpuprof
  [ $# -eq 1 ] && [ -e "$1" ] && { check_pm "$1" none || fail "GPUPROF_PM_SAMPLING='$v': trace"; }
  rm -f "$T"/trace-*.gpuprof "$T/cupti.log"
done

# 3. failures: exactly one line naming the cause (PATTERN), same stdout, no pm counters
one_line() { # NAME PATTERN
  n=$(grep -ci 'PM sampling\|PM_SAMPLING' "$T/b.err")
  [ "$n" -eq 1 ] || { fail "$1: $n lines about it"; cat "$T/b.err"; }
  grep -qi "$2" "$T/b.err" || { fail "$1: the line does not say '$2':"; cat "$T/b.err"; }
  [ "$(foreign_lines "$T/b.err")" -eq 0 ] || { fail "$1: non-gpuprof stderr"; cat "$T/b.err"; }
  grep -q '^loop [0-9]*$' "$T/b.out" || fail "$1: stdout $(cat "$T/b.out")"
  set -- "$1" "$T"/trace-*.gpuprof
  [ $# -eq 2 ] && [ -e "$2" ] || fail "$1: want one trace"
  [ -e "$2" ] && { check_pm "$2" none || fail "$1: trace"; }
  rm -f "$T"/trace-*.gpuprof
}
GPUPROF_PM_SAMPLING=10ms run_traced "$T/b.out" "$T/b.err" loop 200; rc=$?
[ $rc -eq 0 ] || fail "not supported: exit $rc"
one_line "not supported" "not supported"
GPUPROF_PM_SAMPLING=10ms FAKE_CUPTI_PM=privileges run_traced "$T/b.out" "$T/b.err" loop 200; rc=$?
[ $rc -eq 0 ] || fail "privileges: exit $rc"
one_line "privileges" "insufficient privileges"
GPUPROF_PM_SAMPLING=10ms FAKE_CUPTI_PM=ok GPUPROF_CUPTI=$NOPM run_traced "$T/b.out" "$T/b.err" loop 200; rc=$?
[ $rc -eq 0 ] || fail "old CUPTI: exit $rc"
one_line "old CUPTI" "no PM sampling API"
for bad in abc 10 -5ms 10hz 50us 11s "10 ms"; do
  GPUPROF_PM_SAMPLING=$bad FAKE_CUPTI_PM=ok FAKE_CUPTI_LOG=$T/cupti.log \
    run_traced "$T/b.out" "$T/b.err" loop 100; rc=$?
  [ $rc -eq 0 ] || fail "GPUPROF_PM_SAMPLING=$bad: exit $rc"
  grep -q ' pm-' "$T/cupti.log" && fail "GPUPROF_PM_SAMPLING=$bad: PM sampling was enabled"
  rm -f "$T/cupti.log"
  one_line "GPUPROF_PM_SAMPLING=$bad" "not understood"
done
finish
