#!/bin/sh
# No trace file for a process that never used CUDA (issue 21): OpenMPI's
# orted started by Lightning and torch.compile's compile workers each left a
# trace with only its process record beside the real one.  They call cuInit
# (the driver then runs our InitializeInjection) and ask for the devices, and
# nothing else; the trace is made by the first record worth one.  Also: a
# fork child of a traced process that never uses CUDA, even when CUPTI hands
# it the parent's half-full buffer at its exit; an exec'd child that is not
# a CUDA program; and DEVICE records that come before the first call are
# kept for the trace when one comes.
. "$(dirname "$0")/lib.sh"
check_none() { # LABEL: no trace file in $T/$1
  set -- "$T/$1"/*.gpuprof
  [ -e "$1" ] && fail "$LABEL: trace file(s) left: $*"
}
run_in() { # DIR ARGS...: the workload traced into $T/DIR, the periodic CUPTI flush on
  dir=$1; shift
  mkdir -p "$T/$dir"
  GPUPROF_FLUSH_MS=100 FAKE_CUPTI_FLUSH_PERIOD=1 GPUPROF_QUIET=1 GPUPROF_OUTPUT="$T/$dir/t-%p.gpuprof" \
    GPUPROF_CUPTI=$FAKE_CUPTI LD_PRELOAD=$SHIM timeout 60 "$@" >"$T/$dir.out" 2>"$T/$dir.err"
}

# 1. cuInit + cudaGetDeviceCount only (as injected by the driver: plain and
# under `gpuprof run`, whose summary then says no trace)
run_in init "$WORKLOAD" initonly; rc=$?
[ $rc -eq 0 ] && grep -q '^devices=1$' "$T/init.out" || fail "initonly: exit $rc, $(cat "$T/init.out")"
LABEL="cuInit only" check_none init
[ "$(foreign_lines "$T/init.err")" -eq 0 ] && [ ! -s "$T/init.err" ] || fail "initonly stderr: $(cat "$T/init.err")"
mkdir -p "$T/run"
GPUPROF_LIB=$SHIM GPUPROF_CUPTI=$FAKE_CUPTI "$B/bin/gpuprof" run -o "$T/run/t-%p.gpuprof" -- "$WORKLOAD" initonly \
  >/dev/null 2>"$T/run.err"
LABEL="gpuprof run, cuInit only" check_none run
grep -q "^gpuprof: no trace written" "$T/run.err" || fail "gpuprof run initonly: $(cat "$T/run.err")"

# 1b. the same with windowed GPU activity (and the flight recorder, which
# also toggles kinds): the final flush must not toggle kinds after
# libcupti's own exit teardown (the fake aborts then; orted crashed so on the
# H200 under --gpu-window)
for opt in GPUPROF_GPU_WINDOW=50ms/200ms GPUPROF_FLIGHT_RECORDER=30s GPUPROF_CAPTURE_RANGE=cudaProfilerApi; do
  (export "$opt"; run_in win "$WORKLOAD" initonly); rc=$?
  [ $rc -eq 0 ] && ! grep -q "after the library's exit teardown" "$T/win.err" ||
    fail "initonly with $opt: exit $rc, $(cat "$T/win.err")"
done

# 2. an exec'd child that is no CUDA program, and one that only runs cuInit,
# from a traced parent: only the parent's trace
run_in exec sh -c "\"$WORKLOAD\" loop 50 >/dev/null && \"$WORKLOAD\" initonly >/dev/null && env >/dev/null"; rc=$?
[ $rc -eq 0 ] || fail "exec chain exit $rc: $(cat "$T/exec.err")"
set -- "$T"/exec/*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "exec chain: want the one trace of 'loop', got: $*"

# 3. a fork child of a traced process that never uses CUDA, CUPTI handing it
# the parent's buffer (FAKE_CUPTI_FORK_KEEPS_BUFFER) or not
for keep in 0 1; do
  FAKE_CUPTI_FORK_KEEPS_BUFFER=$keep run_in "fork$keep" "$WORKLOAD" forkidle; rc=$?
  [ $rc -eq 0 ] && grep -q '^forkidle 0$' "$T/fork$keep.out" || fail "forkidle($keep): exit $rc, $(cat "$T/fork$keep.out")"
  set -- "$T/fork$keep"/*.gpuprof
  [ $# -eq 1 ] && [ -e "$1" ] || { fail "forkidle($keep): want only the parent's trace, got: $*"; continue; }
  n=$("$B/bin/gpuprof" dump --type kernel "$1" | grep -c .)
  [ "$n" -eq 10 ] || fail "forkidle($keep): the parent's trace has $n kernels, want 10"
done

# 4. DEVICE records handed over before the first recorded call: kept, then
# written once into the trace the launches make
run_in late "$WORKLOAD" initlate; rc=$?
[ $rc -eq 0 ] || fail "initlate exit $rc"
set -- "$T"/late/*.gpuprof
if [ $# -eq 1 ] && [ -e "$1" ]; then
  d=$("$B/bin/gpuprof" dump --type device "$1" | grep -c .)
  k=$("$B/bin/gpuprof" dump --type kernel "$1" | grep -c .)
  [ "$d" -eq 1 ] && [ "$k" -eq 3 ] || fail "initlate: $d device record(s), $k kernels; want 1 and 3"
else
  fail "initlate: want one trace, got: $*"
fi
finish
