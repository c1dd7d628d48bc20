#!/bin/sh
# Fork while other threads create/release the trace and emit: nothing may
# hang (lock order between the shim's atfork handler and libprof's), every
# child exits 0, and every process that used CUDA has a readable trace.
. "$(dirname "$0")/lib.sh"
ROUNDS=12
for rep in 1 2 3; do
  rm -f "$T"/trace-*
  GPUPROF_QUIET=1 run_traced "$T/o" "$T/e" forkstress $ROUNDS; rc=$?
  [ $rc -eq 124 ] && { fail "round $rep: hung (killed by timeout)"; break; }
  [ $rc -eq 0 ] || fail "round $rep: exit $rc: $(cat "$T/o")"
  grep -qx "forkstress ok $ROUNDS" "$T/o" || fail "round $rep: $(cat "$T/o")"
  [ "$(foreign_lines "$T/e")" -eq 0 ] || { fail "stderr:"; cat "$T/e"; }
  set -- "$T"/trace-*.gpuprof
  [ $# -eq $((ROUNDS + 1)) ] || fail "round $rep: $# traces, want $((ROUNDS + 1)) (parent + children)"
  for f in "$@"; do
    "$CHECK" summary "$f" >"$T/s" 2>&1 || { fail "unreadable $f: $(cat "$T/s")"; continue; }
    grep -q '^kernel ' "$T/s" || fail "$f has no kernel records"
  done
done
finish
