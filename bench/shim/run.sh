#!/bin/sh
# bench/shim/run.sh — ns per cudaLaunchKernel on the fake CUDA stack, per shim
# mode; medians of REPS interleaved repetitions.  The fake CUPTI costs next to
# nothing, so "shim cost" = mode - floor isolates our handler + record path.
# stacks-*: GPUPROF_STACKS (one call site, a 6-frame native stack):
# stacks-all - default = the cost of one capture (unwind + intern),
# stacks-sampled - default = what the rate limit leaves per launch.
#   bench/shim/run.sh [BUILD_DIR] [N] [REPS]
# SHIM=/path/libgpuprof.so compares another build of the shim (e.g. before a
# change) against the same fake stack.  ONLY="floor default-tsc ..." runs
# just those modes.  default-tsc/default-mono: GPUPROF_CLOCK=tsc/monotonic
# (the TSC takes over 0.2 s into the run: use N of a few million).
set -eu
B=${1:-build/bench-shim}; N=${2:-1000000}; REPS=${3:-5}
make -s B="$B" bench-shim >/dev/null
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
BENCH=$B/bench/shim/bench_launch
CUPTI=$B/tests/fake/libcupti.so.13
SHIM=${SHIM:-$B/lib/libgpuprof.so}
T=$(mktemp -d /tmp/gpuprof-benchshim.XXXXXX)
trap 'rm -rf "$T"' EXIT
# name|environment (word-split by env)
MODES='bare|
floor|LD_PRELOAD=CUPTI
act-only|LD_PRELOAD=SHIM GPUPROF_API=none
cb-only|LD_PRELOAD=SHIM GPUPROF_ACTIVITY=none
cb-only-nodrv|LD_PRELOAD=SHIM GPUPROF_ACTIVITY=none GPUPROF_API_DRIVER=0
default|LD_PRELOAD=SHIM
default-nodrv|LD_PRELOAD=SHIM GPUPROF_API_DRIVER=0
default-tsc|LD_PRELOAD=SHIM GPUPROF_CLOCK=tsc
default-mono|LD_PRELOAD=SHIM GPUPROF_CLOCK=monotonic
api-activity|LD_PRELOAD=SHIM GPUPROF_API_MODE=activity
api-activity-nodrv|LD_PRELOAD=SHIM GPUPROF_API_MODE=activity GPUPROF_API_DRIVER=0
stacks-sampled|LD_PRELOAD=SHIM GPUPROF_STACKS=1
stacks-all|LD_PRELOAD=SHIM GPUPROF_STACKS=all
stacks-all-glibc|LD_PRELOAD=SHIM GPUPROF_STACKS=all GPUPROF_UNWIND=glibc'
for r in $(seq 1 "$REPS"); do
  echo "$MODES" | while IFS='|' read -r name envs; do
    case " ${ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
    envs=$(echo "$envs" | sed "s#SHIM#$SHIM#g; s#CUPTI#$CUPTI#g")
    rm -f "$T"/trace-*
    v=$(env $envs GPUPROF_QUIET=1 GPUPROF_CUPTI="$CUPTI" GPUPROF_OUTPUT="$T/trace-%p.gpuprof" \
        "$BENCH" "$N" | awk '{print $2}')
    echo "$name $v" >>"$T/results"
  done
done
awk '{v[$1]=v[$1] " " $2; if (!($1 in o)) {o[$1]=++n; name[n]=$1}}
  END {
    for (i = 1; i <= n; i++) {
      k = split(v[name[i]], a, " "); for (x = 1; x <= k; x++) for (y = x + 1; y <= k; y++) if (a[y] < a[x]) {t = a[x]; a[x] = a[y]; a[y] = t}
      med[name[i]] = (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    printf "%-20s %10s %12s\n", "mode", "ns/launch", "- floor"
    for (i = 1; i <= n; i++) printf "%-20s %10.1f %12.1f\n", name[i], med[name[i]], med[name[i]] - med["floor"]
  }' "$T/results"
