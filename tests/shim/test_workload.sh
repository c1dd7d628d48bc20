#!/bin/sh
# The scripted workload traced through the fake CUPTI: stdout and exit status
# unchanged, the parent's trace holds exactly the workload, the fork child that
# used CUDA has its own exact trace, the one that did not has none, and
# GPUPROF_SUMMARY gets one line per traced process.
. "$(dirname "$0")/lib.sh"
run_plain "$T/plain.out" "$T/plain.err"; prc=$?
GPUPROF_SUMMARY=$T/summary run_traced "$T/traced.out" "$T/traced.err"; trc=$?
[ $prc -eq 0 ] || fail "untraced workload exit $prc"
[ $trc -eq $prc ] || fail "traced exit $trc, untraced $prc"
cmp -s "$T/plain.out" "$T/traced.out" || fail "stdout differs when traced"
[ "$(foreign_lines "$T/traced.err")" -eq 0 ] || { fail "non-gpuprof stderr"; cat "$T/traced.err"; }
set -- "$T"/trace-*.gpuprof
[ $# -eq 2 ] || fail "want 2 trace files (parent + CUDA-using child), got $#: $*"
parent=""; child=""
for f in "$@"; do
  pid=$("$CHECK" info "$f" | sed 's/pid=\([0-9]*\).*/\1/')
  for g in "$@"; do
    [ "$g" = "$f" ] && continue
    "$CHECK" info "$g" | grep -q "ppid=$pid " && { parent=$f; child=$g; }
  done
done
[ -n "$parent" ] || fail "no parent/child pair among the traces"
if [ -n "$parent" ]; then
  "$CHECK" parent "$parent" || fail "parent trace"
  "$CHECK" child "$child" || fail "child trace"
  # the process record names the settings (format 1.2): the default kinds
  "$B/bin/gpuprof" info "$parent" > "$T/info.txt" || fail "gpuprof info $parent"
  grep -q '^    settings: activity=kernel,memcpy,memset,peer,device api=default api_mode=callback api_driver=1 stacks=off clock=auto$' "$T/info.txt" ||
    { fail "info settings line (default):"; cat "$T/info.txt"; }
fi
# GPUPROF_ACTIVITY=all adds the opt-in kinds: sync and memory records too
mkdir "$T/all"
GPUPROF_ACTIVITY=all GPUPROF_QUIET=1 GPUPROF_OUTPUT=$T/all/trace-%p.gpuprof run_traced "$T/all.out" "$T/all.err" ||
  fail "GPUPROF_ACTIVITY=all: exit $?"
ok=0
for f in "$T"/all/trace-*.gpuprof; do "$CHECK" parent-all "$f" >/dev/null 2>&1 && ok=1; done
[ $ok -eq 1 ] || { fail "GPUPROF_ACTIVITY=all: no trace passes parent-all"; for f in "$T"/all/trace-*.gpuprof; do "$CHECK" parent-all "$f"; done; }
allparent=""
for f in "$T"/all/trace-*.gpuprof; do
  "$B/bin/gpuprof" info --json "$f" | grep -q '"settings":"activity=kernel,memcpy,memset,peer,sync,memory,device api=default ' && allparent=$f
done
[ -n "$allparent" ] || fail "GPUPROF_ACTIVITY=all: no info --json with the settings"
# merge keeps each process's own settings string (its string id remapped)
if [ -n "$parent" ] && [ -n "$allparent" ]; then
  "$B/bin/gpuprof" merge -o "$T/merged.gpuprof" "$parent" "$allparent" 2>/dev/null || fail "merge"
  "$B/bin/gpuprof" info "$T/merged.gpuprof" > "$T/minfo.txt"
  grep -q '^    settings: activity=kernel,memcpy,memset,peer,device api=' "$T/minfo.txt" &&
    grep -q '^    settings: activity=kernel,memcpy,memset,peer,sync,memory,device api=' "$T/minfo.txt" ||
    { fail "merged trace lacks one of the two settings lines:"; cat "$T/minfo.txt"; }
fi
# per traced process: a line when its file is made, one at its final flush
n=$(grep -c '^pid=[0-9]* events=' "$T/summary" 2>/dev/null || echo 0)
[ "$n" -eq 2 ] || fail "summary final lines: $n, want 2"
n=$(grep -c '^pid=[0-9]* file=' "$T/summary" 2>/dev/null || echo 0)
[ "$n" -eq 2 ] || fail "summary file-made lines: $n, want 2"
grep -q "file=$parent\$" "$T/summary" || fail "summary does not name $parent"
grep "file=$parent\$" "$T/summary" | grep -q ' dropped=0 ' || fail "summary dropped != 0"
# under `gpuprof run` (GPUPROF_SUMMARY set) the tool prints the summary: the
# shim's informational start and exit lines would be a second one
grep -q 'tracing CUDA via\| events, ' "$T/traced.err" && { fail "GPUPROF_SUMMARY set, yet the shim printed:"; cat "$T/traced.err"; }
# plain LD_PRELOAD: both lines, once per traced process (parent + child)
rm -f "$T"/trace-*.gpuprof
run_traced "$T/p.out" "$T/p.err"
[ "$(grep -c '^gpuprof: tracing CUDA via ' "$T/p.err")" -ge 1 ] || { fail "no start line without GPUPROF_SUMMARY"; cat "$T/p.err"; }
[ "$(grep -c '^gpuprof: [0-9]* events, 0 dropped -> .* (at exit)$' "$T/p.err")" -eq 2 ] || { fail "want 2 exit lines without GPUPROF_SUMMARY"; cat "$T/p.err"; }
# quiet: nothing at all on stderr
rm -f "$T"/trace-*.gpuprof
GPUPROF_QUIET=1 run_traced "$T/q.out" "$T/q.err"
[ "$(count_lines "$T/q.err")" -eq 0 ] || { fail "GPUPROF_QUIET=1 still printed"; cat "$T/q.err"; }
finish
