#!/bin/sh
# Runs each test given (an executable or a script).  Exit status 0 = pass,
# 77 = skip (the test prints why), anything else = fail.  Ends with the line
# CI reads: 'N passed, N failed, N skipped'.
# The tools keep no steps' index between the tests' runs unless the caller
# names a directory (GPUPROF_CACHE_DIR=DIR make test: every window and
# advise after a run that found the steps takes them from there); a test
# that wants one names its own (test_step_index.py).
: "${GPUPROF_CACHE_DIR:=off}"; export GPUPROF_CACHE_DIR
pass=0; fail=0; skip=0; failed=""
for t in "$@"; do
  out=$(mktemp); start=$(date +%s)
  "$t" >"$out" 2>&1; rc=$?
  dur=$(( $(date +%s) - start ))
  case $rc in
    0)  pass=$((pass+1)); echo "PASS $t (${dur}s)";;
    77) skip=$((skip+1)); echo "SKIP $t: $(grep -i skip "$out" | tail -n 1)";;
    *)  fail=$((fail+1)); failed="$failed $t"; echo "FAIL $t (exit $rc)"; sed 's/^/    /' "$out" | tail -n 40;;
  esac
  rm -f "$out"
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
