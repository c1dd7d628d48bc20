#!/bin/sh
# SIGKILL mid-run (nothing of ours runs): the periodic CUPTI flush (the
# "gpuprof-flush" thread, GPUPROF_FLUSH_MS) and the writer must already have
# put the GPU and API records of everything older than about one interval
# into the file.  The fake CUPTI, like the real one, hands partially filled
# buffers back only on cuptiActivityFlushAll: without the ticker the trace
# holds no kernel of the launch loop.  Truncated (no footer) is fine.
. "$(dirname "$0")/lib.sh"
GPUPROF_FLUSH_MS=200 GPUPROF_QUIET=1 GPUPROF_OUTPUT=$T/trace-%p.gpuprof GPUPROF_CUPTI=$FAKE_CUPTI \
  LD_PRELOAD=$SHIM "$WORKLOAD" sleep "$T/ready" >"$T/o" 2>"$T/e" &
pid=$!
i=0
while [ ! -e "$T/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
[ -e "$T/ready" ] || fail "workload never got ready"
sleep 1.5
# the flush thread exists, is named, and blocks every signal
found=0
for task in /proc/$pid/task/*; do
  [ "$(cat "$task/comm" 2>/dev/null)" = gpuprof-flush ] || continue
  found=1
  blk=$(awk '/^SigBlk:/ {print $2}' "$task/status")
  # signals 1..31 except SIGKILL/SIGSTOP (which cannot be blocked)
  [ $(( 0x$blk & 0x7ffbfeff )) -eq $(( 0x7ffbfeff )) ] || fail "gpuprof-flush blocks only $blk"
done
[ $found -eq 1 ] || fail "no gpuprof-flush thread in the traced process"
t=$("$CHECK" now -)
kill -KILL $pid
wait $pid; rc=$?
[ $rc -eq 137 ] || fail "exit status $rc, want 137 (SIGKILL)"
set -- "$T"/trace-*.gpuprof
[ $# -eq 1 ] && [ -e "$1" ] || fail "want one trace, got: $*"
[ -e "$1" ] && { "$CHECK" sigkill "$1" "$t" || fail "trace after SIGKILL"; }
finish
