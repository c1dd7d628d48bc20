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
# armed: GPUPROF_FLIGHT_RECORDER=30s as `gpuprof run --flight-recorder` sets
# it (GPU activity off, records kept in memory; its control directory a
# private one here); window-outside: GPUPROF_GPU_WINDOW with its first
# window long closed (what the windowed mode costs outside its windows).
# PER_STEP=K: the launches grouped into NVTX steps of K launches like
# examples/train_mnist.py's ("step <i>" around forward/backward/optimizer;
# bench_launch.c), so per-step costs (step detection, the flight recorder's
# step hooks) show, spread over the launches; NVTX reaches the shim in every
# mode that preloads it.  CALL=malloc: a cudaMalloc + cudaFree pair per
# "launch" instead (bench_launch.c's BENCH_CALL); armed-table vs armed-notable
# (both armed, every API call kept) is then what the live table costs a pair
# (docs/MEMORY.md "Live at the failure").  Columns: ns per launch, minus the floor, and the
# CPU ns per launch the process's other threads (writer, flush thread) used.
set -eu
B=${1:-build/bench-shim}; N=${2:-1000000}; REPS=${3:-5}
make -s B="$B" bench-shim >/dev/null
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
BENCH=$B/bench/shim/bench_launch
CUPTI=$B/tests/fake/libcupti.so.13
SHIM=${SHIM:-$B/lib/libgpuprof.so}
T=$(mktemp -d /tmp/gpuprof-benchshim.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -m 700 "$T/ctl"
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
armed|LD_PRELOAD=SHIM GPUPROF_FLIGHT_RECORDER=30s
armed-table|LD_PRELOAD=SHIM GPUPROF_FLIGHT_RECORDER=30s GPUPROF_FLIGHT_API=always
armed-notable|LD_PRELOAD=SHIM GPUPROF_FLIGHT_RECORDER=30s GPUPROF_FLIGHT_API=always GPUPROF_TRIGGER=step>100x
window-outside|LD_PRELOAD=SHIM GPUPROF_GPU_WINDOW=1ms/1000s
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
    case $envs in *LD_PRELOAD=$SHIM*) envs="$envs NVTX_INJECTION64_PATH=$SHIM" ;; esac
    v=$(env $envs BENCH_CALL="${CALL:-launch}" GPUPROF_QUIET=1 GPUPROF_CUPTI="$CUPTI" GPUPROF_OUTPUT="$T/trace-%p.gpuprof" \
        GPUPROF_CONTROL_DIR="$T/ctl" "$BENCH" "$N" "${PER_STEP:-0}" |
        awk '{for (i = 1; i < NF; i += 2) f[$i] = $(i + 1); print f["ns_per_launch"], f["bg_cpu_ns_per_launch"]}')
    echo "$name $v" >>"$T/results"
  done
done
awk 'function median(s,   a, k, x, y, t) {
      k = split(s, a, " "); for (x = 1; x <= k; x++) for (y = x + 1; y <= k; y++) if (a[y] < a[x]) {t = a[x]; a[x] = a[y]; a[y] = t}
      return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
  {v[$1] = v[$1] " " $2; bg[$1] = bg[$1] " " $3; if (!($1 in o)) {o[$1] = ++n; name[n] = $1}}
  END {
    for (i = 1; i <= n; i++) {med[name[i]] = median(v[name[i]]); mbg[name[i]] = median(bg[name[i]])}
    printf "%-20s %10s %12s %12s\n", "mode", "ns/launch", "- floor", "bg cpu ns"
    for (i = 1; i <= n; i++) printf "%-20s %10.1f %12.1f %12.1f\n", name[i], med[name[i]], med[name[i]] - med["floor"], mbg[name[i]]
  }' "$T/results"
