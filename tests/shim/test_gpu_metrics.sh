#!/bin/sh
# GPUPROF_GPU_METRICS=HZ with the scripted fake NVML (tests/fake/fake_nvml.c,
# GPUPROF_NVML names it): a ~0.5 s job at 50 Hz gets nvml.* counter records
# for both fake devices, each series with non-decreasing timestamps, about
# duration x rate samples (+-50 %) and exactly the scripted values in order
# (a lost or duplicated sample shifts them); the metric NVML device 1 answers
# NOT_SUPPORTED for is asked once and never recorded; nvmlInit/nvmlShutdown
# are called once.  Device ids are CUDA's: the fake CUDA's devices take the
# fake GPUs' UUIDs in another order than NVML's (FAKE_CUDA_UUID_ORDER, as
# CUDA_VISIBLE_DEVICES=1,0 would), and each series must carry the CUDA id of
# the GPU whose scripted values it holds -- with the mapping learned while
# the job runs (GPUPROF_FLUSH_MS=50) or only at the final flush (the samples
# wait), and `gpuprof stats --report util` puts each GPU's own NVML mean next
# to CUDA device 0.  An NVML GPU CUDA does not see is not recorded; no UUID
# from NVML, or DEVICE records not traced: NVML's GPUs under 1000 + index.  A fork child that never uses CUDA has no sampler (no
# NVML call from its pid).  No NVML, a failing nvmlInit, bad rates: one
# gpuprof: line, the job runs, a trace without nvml counters.
. "$(dirname "$0")/lib.sh"
unset GPUPROF_GPU_METRICS GPUPROF_NVML FAKE_NVML_LOG FAKE_NVML_DEVICES FAKE_NVML_INIT_FAIL 2>/dev/null
FAKE_NVML=$B/tests/fake/libnvidia-ml.so.1
GPUPROF=$B/bin/gpuprof
for f in "$FAKE_NVML" "$GPUPROF"; do [ -e "$f" ] || { echo "missing $f (build first)"; exit 1; }; done

# check_counters TRACE MODE [LOG [MAP]]: MODE "full" = the scripted series; "none" = no
# nvml.* counter.  MAP "trace-device:nvml-index,...": which fake GPU each device id must
# hold (default 0:1,1:0, FAKE_CUDA_UUID_ORDER=1,0's)
check_counters() {
  "$GPUPROF" dump --json --type counter,process,clock "$1" > "$T/dump.json" || { fail "dump $1"; return 1; }
  python3 - "$T/dump.json" "$2" "${3:-}" "${4:-0:1,1:0}" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mode, log = sys.argv[2], sys.argv[3]
nvml_of = {int(a): int(b) for a, b in (x.split(":") for x in sys.argv[4].split(","))}
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
        "nvml.gpu_util": lambda d, k: (10 * (k % 3) + 30 * d) % 100,
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
    want = {(n, c) for n in script for c in nvml_of if not (n == "nvml.pcie_tx_kbps" and nvml_of[c] == 1)}
    if set(series) != want:
        bad.append("series %s, want %s" % (sorted(series), sorted(want)))
    expect = dur * 50
    for (n, c), rs in sorted(series.items()):
        if c not in nvml_of:
            continue
        d = nvml_of[c]
        ts = [r["ts"] for r in rs]
        if ts != sorted(ts):
            bad.append("%s dev %d: timestamps not monotonic" % (n, c))
        if not (0.5 * expect <= len(rs) <= 1.5 * expect + 1):
            bad.append("%s dev %d: %d samples in %.3f s at 50 Hz" % (n, c, len(rs), dur))
        vals = [r["value"] for r in rs]
        exp = [script[n](d, k) for k in range(len(rs))]
        if vals != exp:
            bad.append("%s dev %d (NVML %d): values %s, scripted %s" % (n, c, d, vals[:8], exp[:8]))
        if not all(start <= t <= end for t in ts):
            bad.append("%s dev %d: sample outside the trace" % (n, c))
    calls = [l.split() for l in open(log)] if log else []
    for fn, n in (("nvmlInit_v2", 1), ("nvmlShutdown", 1), ("nvmlDeviceGetPcieThroughput-tx 1", 1)):
        c = sum(1 for x in calls if " ".join(x[1:]).startswith(fn) and (fn != "nvmlDeviceGetPcieThroughput-tx 1" or x[2] == "1"))
        if log and c != n:
            bad.append("%s called %d times, want %d" % (fn, c, n))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

# 1. the scripted run, CUDA's devices in the other order than NVML's: the
# mapping learned while the job runs (flush every 50 ms), or only at the
# final flush (10 s: no buffer is delivered before the ~0.5 s job ends)
for flush in 50 10000; do
  GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_NVML FAKE_NVML_LOG=$T/nvml.log GPUPROF_FLUSH_MS=$flush \
    FAKE_CUDA_UUID_ORDER=1,0 run_traced "$T/m.out" "$T/m.err" loop 500; rc=$?
  loop_run_ok "flush $flush: metrics run" $rc "$T/m.out" "$T/m.err"
  grep -q 'GPU_METRICS\|NVML' "$T/m.err" && { fail "flush $flush: complaint in a good run:"; cat "$T/m.err"; }
  set -- "$T"/trace-*.gpuprof
  [ $# -eq 1 ] && [ -e "$1" ] || fail "flush $flush: want one trace, got: $*"
  if [ -e "$1" ]; then
    check_counters "$1" full "$T/nvml.log" 0:1,1:0 || fail "flush $flush: metrics trace"
    "$GPUPROF" dump --type thread "$1" | grep -q 'name=gpuprof-nvml' || fail "no gpuprof-nvml thread"
    # the util report: CUDA device 0 (the kernels') is NVML's GPU 1, whose
    # gpu_util cycles 30, 40, 50 (GPU 0's: 0, 10, 20)
    "$GPUPROF" stats --report util --format csv "$1" > "$T/util.csv" || fail "flush $flush: stats util"
    nv=$(awk -F, '$2 == "0" && $3 == "all" { print $10 }' "$T/util.csv")
    awk -v v="$nv" 'BEGIN { exit !(v != "" && v + 0 >= 30 && v + 0 <= 50) }' ||
      { fail "flush $flush: device 0's NVML mean '$nv', want GPU 1's (30-50)"; cat "$T/util.csv"; }
  fi
  rm -f "$T"/trace-*.gpuprof "$T/nvml.log"
done

# 1a. CUDA device 1's DEVICE record comes 250 ms after device 0's (flush
# every 50 ms): GPU 0's samples taken before its record keep waiting for it
# and are written then, none lost (they were dropped once device 0 mapped)
GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_NVML GPUPROF_FLUSH_MS=50 FAKE_CUDA_LATE_DEVICE_MS=250 \
  FAKE_CUDA_UUID_ORDER=1,0 run_traced "$T/m.out" "$T/m.err" loop 600; rc=$?
[ $rc -eq 0 ] || fail "late device record: exit $rc"
[ "$(foreign_lines "$T/m.err")" -eq 0 ] || { fail "late device record: non-gpuprof stderr"; cat "$T/m.err"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] && { check_counters "$1" full "" 0:1,1:0 || fail "late device record: trace"; }
rm -f "$T"/trace-*.gpuprof

# 1b. three NVML GPUs, CUDA sees 2 and 0 (CUDA_VISIBLE_DEVICES=2,0): GPU 1 is
# not the job's and has no series
GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_NVML FAKE_NVML_DEVICES=3 GPUPROF_FLUSH_MS=50 \
  FAKE_CUDA_UUID_ORDER=2,0 run_traced "$T/m.out" "$T/m.err" loop 500; rc=$?
[ $rc -eq 0 ] || fail "3 GPUs: exit $rc"
[ "$(foreign_lines "$T/m.err")" -eq 0 ] || { fail "3 GPUs: non-gpuprof stderr"; cat "$T/m.err"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] && { check_counters "$1" full "" 0:2,1:0 || fail "3 GPUs: trace"; }
rm -f "$T"/trace-*.gpuprof

# 1c. no mapping to be had: NVML gives no UUID, or DEVICE records are not
# traced: every NVML GPU under 1000 + its NVML index, no line
for how in FAKE_NVML_NO_UUID=1 GPUPROF_ACTIVITY=kernel,memcpy,memset,sync; do
  (export "$how"; GPUPROF_GPU_METRICS=50 GPUPROF_NVML=$FAKE_NVML FAKE_CUDA_UUID_ORDER=1,0 \
    FAKE_NVML_LOG=$T/nvml.log run_traced "$T/m.out" "$T/m.err" loop 500); rc=$?
  [ $rc -eq 0 ] || fail "$how: exit $rc"
  [ "$(foreign_lines "$T/m.err")" -eq 0 ] || { fail "$how: non-gpuprof stderr"; cat "$T/m.err"; }
  grep -q 'GPU_METRICS\|NVML' "$T/m.err" && { fail "$how: a line:"; cat "$T/m.err"; }
  set -- "$T"/trace-*.gpuprof
  [ $# -eq 1 ] && [ -e "$1" ] && { check_counters "$1" full "$T/nvml.log" 1000:0,1001:1 || fail "$how: trace"; }
  rm -f "$T"/trace-*.gpuprof "$T/nvml.log"
done

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
