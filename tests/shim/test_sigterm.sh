#!/bin/sh
# SIGTERM mid-run: the process dies of SIGTERM (status 143 in sh), and the
# trace is complete up to the signal: activity flushed, open NVTX range
# reported, index/footer written.
. "$(dirname "$0")/lib.sh"
GPUPROF_QUIET=1 GPUPROF_OUTPUT=$T/trace-%p.gpuprof GPUPROF_CUPTI=$FAKE_CUPTI LD_PRELOAD=$SHIM \
  "$WORKLOAD" sleep "$T/ready" >"$T/o" 2>"$T/e" &
pid=$!
i=0
while [ ! -e "$T/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
[ -e "$T/ready" ] || { fail "workload never got ready"; kill -9 $pid; }
sleep 0.2
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 143 ] || fail "exit status $rc, want 143 (SIGTERM)"
[ "$(foreign_lines "$T/e")" -eq 0 ] || { fail "stderr:"; cat "$T/e"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "want one trace, got: $*"
[ -e "$1" ] && { "$CHECK" sigterm "$1" || fail "trace after SIGTERM"; }
finish
