#!/bin/sh
# No usable CUPTI: one clear "gpuprof:" line, the job runs with its own
# stdout and exit status.  (The search would find the real libcupti in
# ld.so.cache on some machines, so this names a missing file explicitly.)
. "$(dirname "$0")/lib.sh"
run_plain "$T/plain.out" "$T/plain.err"; prc=$?
GPUPROF_QUIET=1 GPUPROF_CUPTI=/nonexistent/libcupti.so.13 run_traced "$T/o" "$T/e"; rc=$?
[ $rc -eq $prc ] || fail "exit $rc, untraced $prc"
cmp -s "$T/plain.out" "$T/o" || fail "stdout differs"
[ "$(count_lines "$T/e")" -eq 1 ] || { fail "want exactly one stderr line:"; cat "$T/e"; }
grep -q '^gpuprof: .*CUPTI' "$T/e" || { fail "the line does not name CUPTI:"; cat "$T/e"; }
# a directory that is not a CUPTI at all
GPUPROF_QUIET=1 GPUPROF_CUPTI=/etc/passwd run_traced "$T/o2" "$T/e2"; rc=$?
[ $rc -eq $prc ] || fail "exit $rc with a bogus CUPTI"
[ "$(count_lines "$T/e2")" -eq 1 ] || { fail "bogus CUPTI: want one line:"; cat "$T/e2"; }
finish
