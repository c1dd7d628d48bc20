#!/bin/sh
# GPUPROF_GPU_METRICS=HZ with the scripted fake NVML (tests/fake/fake_nvml.c,
# GPUPROF_NVML names it): a ~0.5 s job at 50 Hz gets nvml.* counter records
# for both fake devices, each series with non-decreasing timestamps, about
# duration x rate samples (+-50 %) and exactly the scripted values in order
# (a lost or duplicated sample shifts them); the metric device 1 answers
# NOT_SUPPORTED for is asked once and never recorded; nvmlInit/nvmlShutdown
# are called once.  A fork child that never uses CUDA has no sampler (no
# NVML call from its pid).  No NVML, a failing nvmlInit, bad rates: one
# gpuprof: line, the job runs, a trace without nvml counters.
. "$(dirname "$0")/lib.sh"
unset GPUPROF_GPU_METRICS GPUPROF_NVML FAKE_NVML_LOG FAKE_NVML_DEVICES FAKE_NVML_INIT_FAIL 2>/dev/null
FAKE_NVML=$B/tests/fake/libnvidia-ml.so.1
GPUPROF=$B/bin/gpuprof
for f in "$FAKE_NVML" "$GPUPROF"; do [ -e "$f" ] || { echo "missing $f (build first)"; exit 1; }; done

# check_counters TRACE MODE [LOG]: MODE "full" = the scripted series; "none" = no nvml.* counter
check_counters() {
  "$GPUPROF" dump --json --type counter,process,clock "$1" > "$T/dump.json" || { fail "dump $1"; return 1; }
  python3 - "$T/dump.json" "$2" "${3:-}" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mode, log = sys.argv[2], sys.argv[3]
ctr = [r for r in recs if r["type"] == "counter" and r["name"].startswith("nvml.")]
bad = []
if mode == "none":
    if ctr:
        bad.append("%d nvml counters in a trace that should have none" % len(ctr))
else:
    start = [r["start"] for r in recs if r["type"] == "process"][0]
    end = max(r["trace_ns"] for r in recs if r["type"] == "clock")
    dur = (end - start) / 1e9
    MiB = 1 << 20
    script = {
        "nvml.gpu_util": lambda d, k: (10 * k) % 100,
        "nvml.mem_util": lambda d, k: (5 * k + 3) % 100,
        "nvml.mem_used_bytes": lambda d, k: (k + 1) * MiB + d,
        "nvml.power_mw": lambda d, k: 100000 + 10 * d + k,
        "nvml.sm_clock_mhz": lambda d, k: 1000 + 100 * d + k,
        "nvml.temp_c": lambda d, k: 40 + d,
        "nvml.pcie_tx_kbps": lambda d, k: 2 * k,
        "nvml.pcie_rx_kbps": lambda d, k: 3 * k,
    }
    series = {}
    for r in ctr:
        series.setdefault((r["name"], r["device"]), []).append(r)
    want = {(n, d) for n in script for d in (0, 1)} - {("nvml.pcie_tx_kbps", 1)}
    if set(series) != want:
        bad.append("series %s, want %s" % (sorted(series), sorted(want)))
    expect = dur * 50
    for (n, d), rs in sorted(series.items()):
        ts = [r["ts"] for r in rs]
        if ts != sorted(ts):
            bad.append("%s dev %d: timestamps not monotonic" % (n, d))
        if not (0.5 * expect <= len(rs) <= 1.5 * expect + 1):
            bad.append("%s dev %d: %d samples in %.3f s at 50 Hz" % (n, d, len(rs), dur))
        vals = [r["value"] for r in rs]
        exp = [script[n](d, k) for k in range(len(rs))]
        if vals != exp:
            bad.append("%s dev %d: values %s, scripted %s" % (n, d, vals[:8], exp[:8]))
        if not all(start <= t <= end for t in ts):
            bad.append("%s dev %d: sample outside the trace" % (n, d))
    calls = [l.split() for l in open(log)]
    for fn, n in (("nvmlInit_v2", 1), ("nvmlShutdown", 1), ("nvmlDeviceGetPcieThroughput-tx 1", 1)):
        c = sum(1 for x in calls if " ".join(x[1:]).startswith(fn) and (fn != "nvmlDeviceGetPcieThroughput-tx 1" or x[2] == "1"))
        if c != n:
            bad.append("%s called %d times, want %d" % (fn, c, n))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

# 1. the scripted run
t0=$(date +%s%N)
GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_NVML FAKE_NVML_LOG=$T/nvml.log \
  run_traced "$T/m.out" "$T/m.err" loop 500; rc=$?
[ $rc -eq 0 ] || fail "metrics run exit $rc"
grep -q '^loop [0-9]*$' "$T/m.out" || fail "stdout: $(cat "$T/m.out")"
[ "$(foreign_lines "$T/m.err")" -eq 0 ] || { fail "non-gpuprof stderr"; cat "$T/m.err"; }
grep -q 'GPU_METRICS\|NVML' "$T/m.err" && { fail "complaint in a good run:"; cat "$T/m.err"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "want one trace, got: $*"
[ -e "$1" ] && { check_counters "$1" full "$T/nvml.log" || fail "metrics trace"; }
"$GPUPROF" dump --type thread "$1" | grep -q 'name=gpuprof-nvml' || fail "no gpuprof-nvml thread"
rm -f "$T"/trace-*.gpuprof "$T/nvml.log"

# 2. fork: the full workload (fork child 1 never uses CUDA: no trace, no
# sampler; child 2 does: its own trace, maybe its own sampler)
# (TSan cannot run a process that forks and starts threads in the child:
# this part is left to the plain and ASan runs, like test_workload)
if [ "${GPUPROF_FAULT_SANITIZER:-}" = tsan ]; then
  echo "fork part skipped under TSan"
else
  GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_NVML FAKE_NVML_LOG=$T/nvml.log \
    run_traced "$T/f.out" "$T/f.err"; rc=$?
  [ $rc -eq 0 ] || fail "fork run exit $rc"
  [ "$(foreign_lines "$T/f.err")" -eq 0 ] || { fail "non-gpuprof stderr"; cat "$T/f.err"; }
  for p in $(awk '{print $1}' "$T/nvml.log" | sort -u); do
    [ -e "$T/trace-$p.gpuprof" ] || fail "pid $p called NVML but has no trace"
    i=$(grep -c "^$p nvmlInit_v2" "$T/nvml.log"); s=$(grep -c "^$p nvmlShutdown" "$T/nvml.log")
    [ "$i" -eq 1 ] && [ "$s" -eq 1 ] || fail "pid $p: nvmlInit $i, nvmlShutdown $s"
  done
  [ "$(awk '{print $1}' "$T/nvml.log" | sort -u | grep -c .)" -ge 1 ] || fail "no NVML calls at all"
  rm -f "$T"/trace-*.gpuprof "$T/nvml.log"
fi

# 3. off (unset, 0): NVML never loaded, no line, no counters
for v in "" 0; do
  GPUPROF_GPU_METRICS=$v GPUPROF_NVML=$FAKE_NVML FAKE_NVML_LOG=$T/nvml.log \
    run_traced "$T/o.out" "$T/o.err" loop 100; rc=$?
  [ $rc -eq 0 ] || fail "GPUPROF_GPU_METRICS='$v': exit $rc"
  [ -s "$T/nvml.log" ] && fail "GPUPROF_GPU_METRICS='$v': NVML was called"
  grep -q 'GPU_METRICS\|NVML' "$T/o.err" && { fail "GPUPROF_GPU_METRICS='$v': a line:"; cat "$T/o.err"; }
  set -- "$T"/trace-*.gpuprof
  [ $# -eq 1 ] && [ -e "$1" ] && { check_counters "$1" none || fail "GPUPROF_GPU_METRICS='$v': trace"; }
  rm -f "$T"/trace-*.gpuprof "$T/nvml.log"
done

# 4. no NVML / nvmlInit failing / bad values: one line, the job runs, no counters
one_line() { # NAME VALUE-DESC: exactly one line naming GPU_METRICS, nothing foreign
  n=$(grep -c 'GPU_METRICS' "$T/b.err")
  [ "$n" -eq 1 ] || { fail "$1: $n lines about it"; cat "$T/b.err"; }
  [ "$(foreign_lines "$T/b.err")" -eq 0 ] || { fail "$1: non-gpuprof stderr"; cat "$T/b.err"; }
  set -- "$1" "$T"/trace-*.gpuprof
  [ $# -eq 2 ] && [ -e "$2" ] || fail "$1: want one trace"
  [ -e "$2" ] && { check_counters "$2" none || fail "$1: trace"; }
  rm -f "$T"/trace-*.gpuprof
}
GPUPROF_GPU_METRICS=50 GPUPROF_NVML=/nonexistent/libnvidia-ml.so.1 run_traced "$T/b.out" "$T/b.err" loop 200; rc=$?
[ $rc -eq 0 ] || fail "no NVML: exit $rc"
grep -q '^loop [0-9]*$' "$T/b.out" || fail "no NVML: stdout $(cat "$T/b.out")"
one_line "no NVML"
GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_CUPTI run_traced "$T/b.out" "$T/b.err" loop 200; rc=$?
[ $rc -eq 0 ] || fail "not an NVML: exit $rc"
one_line "not an NVML"
GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_NVML FAKE_NVML_INIT_FAIL=1 run_traced "$T/b.out" "$T/b.err" loop 200; rc=$?
[ $rc -eq 0 ] || fail "nvmlInit failing: exit $rc"
one_line "nvmlInit failing"
for bad in abc -5 1.5 5000 "10 " 10hz; do
  GPUPROF_GPU_METRICS=$bad GPUPROF_NVML=$FAKE_NVML FAKE_NVML_LOG=$T/nvml.log \
    run_traced "$T/b.out" "$T/b.err" loop 100; rc=$?
  [ $rc -eq 0 ] || fail "GPUPROF_GPU_METRICS=$bad: exit $rc"
  [ -s "$T/nvml.log" ] && fail "GPUPROF_GPU_METRICS=$bad: NVML was called"
  rm -f "$T/nvml.log"
  one_line "GPUPROF_GPU_METRICS=$bad"
done
finish
