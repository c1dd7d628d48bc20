#!/bin/sh
# GPUPROF_ENABLE=0: no trace, no output, CUPTI never touched.
. "$(dirname "$0")/lib.sh"
run_plain "$T/plain.out" "$T/plain.err"; prc=$?
GPUPROF_ENABLE=0 FAKE_CUPTI_LOG=$T/cupti.log run_traced "$T/o" "$T/e"; rc=$?
[ $rc -eq $prc ] || fail "exit $rc, untraced $prc"
cmp -s "$T/plain.out" "$T/o" || fail "stdout differs"
[ "$(count_lines "$T/e")" -eq 0 ] || { fail "stderr not empty:"; cat "$T/e"; }
ls "$T"/trace-* >/dev/null 2>&1 && fail "trace file written"
[ -s "$T/cupti.log" ] && { fail "CUPTI was used:"; cat "$T/cupti.log"; }
finish
