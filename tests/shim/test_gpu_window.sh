#!/bin/sh
# GPUPROF_GPU_WINDOW=ON/PERIOD: a job launching continuously for ~1 s gets
# GPU records (kernels, memsets) only from launches inside the GP_REC_WINDOW
# spans the trace holds, API records throughout, about one window per
# period, and the fake CUPTI saw the kinds switched off and on at the edges.
# A bad value: one gpuprof: line, the job runs, a normal (always-on) trace.
. "$(dirname "$0")/lib.sh"
run_plain "$T/plain.out" "$T/plain.err" loop 1000 || fail "untraced loop failed"
GPUPROF_GPU_WINDOW=100ms/300ms GPUPROF_FLUSH_MS=100 FAKE_CUPTI_LOG=$T/cupti.log \
  run_traced "$T/w.out" "$T/w.err" loop 1000; rc=$?
loop_run_ok "windowed run" $rc "$T/w.out" "$T/w.err"
grep -q 'GPU_WINDOW' "$T/w.err" && { fail "valid GPUPROF_GPU_WINDOW reported:"; cat "$T/w.err"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "want one trace, got: $*"
[ -e "$1" ] && { "$CHECK" window "$1" 300000000 || fail "windowed trace"; }
# the kernel kind went off and on again: at least 2 edges each way in ~1 s
off=$(grep -c ' activity-disable 10$' "$T/cupti.log")
on=$(grep -c ' activity-enable 10$' "$T/cupti.log")
[ "$off" -ge 2 ] && [ "$on" -ge 3 ] || { fail "kernel kind disabled $off / enabled $on times"; }
rm -f "$T"/trace-*.gpuprof

# CUDA's atexit teardown runs before the tool's final flush while the ticker
# still reaches edges: toggling kinds then crashed real jobs (H200, exit 139).
# Edges every 5 ms during a 150 ms teardown: none may toggle after it began.
GPUPROF_GPU_WINDOW=5ms/10ms FAKE_CUDA_TEARDOWN_MS=150 FAKE_CUPTI_LOG=$T/td.log \
  run_traced "$T/td.out" "$T/td.err" loop 200; rc=$?
[ $rc -eq 0 ] || fail "windowed run with slow teardown: exit $rc"
grep -q '^context-destroy' "$T/td.log" || grep -q ' context-destroy' "$T/td.log" || fail "fake CUDA reported no teardown"
n=$(grep -c 'after-destroy' "$T/td.log")
[ "$n" -eq 0 ] || { fail "$n activity toggles after the context teardown began"; grep 'after-destroy' "$T/td.log" | head -3; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "slow teardown: want one trace, got: $*"
rm -f "$T"/trace-*.gpuprof

# bad values: one line each, the job runs, GPU activity recorded all the time
for bad in 2 300ms/100ms 0/10 1x/10 /10 1/ 5/5; do
  GPUPROF_GPU_WINDOW=$bad run_traced "$T/b.out" "$T/b.err" loop 200; rc=$?
  [ $rc -eq 0 ] || fail "GPUPROF_GPU_WINDOW=$bad: exit $rc"
  n=$(grep -c 'GPUPROF_GPU_WINDOW' "$T/b.err")
  [ "$n" -eq 1 ] || { fail "GPUPROF_GPU_WINDOW=$bad: $n lines about it"; cat "$T/b.err"; }
  [ "$(foreign_lines "$T/b.err")" -eq 0 ] || { fail "non-gpuprof stderr"; cat "$T/b.err"; }
  set -- "$T"/trace-*.gpuprof
  [ $# -eq 1 ] && [ -e "$1" ] && { "$CHECK" nowindow "$1" || fail "GPUPROF_GPU_WINDOW=$bad: trace"; }
  rm -f "$T"/trace-*.gpuprof
done
finish
