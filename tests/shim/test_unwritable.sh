#!/bin/sh
# Output directory missing/unwritable: one line, the job runs unchanged
# (the fork child that uses CUDA does not repeat the complaint).
. "$(dirname "$0")/lib.sh"
run_plain "$T/plain.out" "$T/plain.err"; prc=$?
GPUPROF_OUTPUT=$T/no/such/dir/t-%p.gpuprof run_traced "$T/o" "$T/e"; rc=$?
[ $rc -eq $prc ] || fail "exit $rc, untraced $prc"
cmp -s "$T/plain.out" "$T/o" || fail "stdout differs"
n=$(grep -c 'cannot create trace file' "$T/e")
[ "$n" -eq 1 ] || { fail "want one 'cannot create' line, got $n:"; cat "$T/e"; }
[ "$(foreign_lines "$T/e")" -eq 0 ] || { fail "foreign stderr:"; cat "$T/e"; }
finish
