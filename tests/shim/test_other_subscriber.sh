#!/bin/sh
# Another CUPTI tool already subscribed (the fake answers MULTIPLE_SUBSCRIBERS):
# one line, tracing off (no file), the job runs on unchanged.
. "$(dirname "$0")/lib.sh"
run_plain "$T/plain.out" "$T/plain.err"; prc=$?
FAKE_CUPTI_BUSY=1 run_traced "$T/o" "$T/e"; rc=$?
[ $rc -eq $prc ] || fail "exit $rc, untraced $prc"
cmp -s "$T/plain.out" "$T/o" || fail "stdout differs"
[ "$(count_lines "$T/e")" -eq 1 ] || { fail "want one stderr line:"; cat "$T/e"; }
grep -q '^gpuprof: another CUPTI tool' "$T/e" || { fail "line does not say another tool:"; cat "$T/e"; }
ls "$T"/trace-* >/dev/null 2>&1 && fail "a trace was written while switched off"
finish
