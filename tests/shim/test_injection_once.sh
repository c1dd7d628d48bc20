#!/bin/sh
# CUDA_INJECTION64_PATH: alone it traces everything (NVTX included, as NVTX
# reads NVTX_INJECTION64_PATH lazily); together with LD_PRELOAD it traces
# once (one CUPTI subscription per process, no doubled records).
. "$(dirname "$0")/lib.sh"
# both
GPUPROF_QUIET=1 FAKE_CUPTI_LOG=$T/both.log CUDA_INJECTION64_PATH=$SHIM run_traced "$T/o" "$T/e" || fail "exit status (both)"
ppid=$(sed -n 's/^\([0-9]*\) subscribe$/\1/p' "$T/both.log" | sort | uniq -c | sort -rn | head -1)
n=$(echo "$ppid" | awk '{print $1}')
[ "$n" = 1 ] || { fail "subscriptions per process: '$ppid'"; cat "$T/both.log"; }
grep -q refused "$T/both.log" && fail "a second subscribe was attempted"
p=$(ls -t "$T"/trace-*.gpuprof | tail -1)
for f in "$T"/trace-*.gpuprof; do
  "$CHECK" info "$f" | grep -q "^pid=$(echo "$ppid" | awk '{print $2}') " && p=$f
done
"$CHECK" parent "$p" || fail "LD_PRELOAD + CUDA_INJECTION64_PATH trace"
rm -f "$T"/trace-*
# injection only (LD_PRELOAD stripped, e.g. by a launcher)
# (GPUPROF_ACTIVITY=all: the settings reach the injection-only start too)
GPUPROF_ACTIVITY=all GPUPROF_QUIET=1 GPUPROF_OUTPUT=$T/inj-%p.gpuprof GPUPROF_CUPTI=$FAKE_CUPTI CUDA_INJECTION64_PATH=$SHIM \
  timeout 60 "$WORKLOAD" >"$T/o2" 2>"$T/e2" || fail "exit status (injection only)"
[ "$(count_lines "$T/e2")" -eq 0 ] || { fail "stderr:"; cat "$T/e2"; }
ok=0
for f in "$T"/inj-*.gpuprof; do "$CHECK" parent-all "$f" 2>/dev/null && ok=1; done
[ $ok -eq 1 ] || { fail "no injection-only trace passes the parent-all check"; for f in "$T"/inj-*.gpuprof; do "$CHECK" parent-all "$f"; done; }
finish
