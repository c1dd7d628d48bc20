#!/bin/sh
# bench/shim/callgrind.sh — instructions per launch executed on the
# launching thread inside libgpuprof.so (our handler + libprof's gp_emit)
# and in clock_gettime, counted by valgrind --tool=callgrind: stable where
# wall-clock timing on a shared machine is not.
#   bench/shim/callgrind.sh [BUILD_DIR] [N]      (SHIM=... as in run.sh)
set -eu
B=${1:-build/bench-shim}; N=${2:-100000}
make -s B="$B" bench-shim >/dev/null
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
SHIM=${SHIM:-$B/lib/libgpuprof.so}
CUPTI=$B/tests/fake/libcupti.so.13
T=$(mktemp -d /tmp/gpuprof-cgshim.XXXXXX)
trap 'rm -rf "$T"' EXIT
launches=$((N + 20000)) # bench_launch warms up with 20000
for mode in "cb-only|GPUPROF_ACTIVITY=none" "cb-only-nodrv|GPUPROF_ACTIVITY=none GPUPROF_API_DRIVER=0" \
            "default|GPUPROF_API_MODE=callback"; do
  name=${mode%%|*}; envs=${mode#*|}
  env $envs GPUPROF_QUIET=1 GPUPROF_CUPTI="$CUPTI" GPUPROF_OUTPUT="$T/t-%p.gpuprof" LD_PRELOAD="$SHIM" \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$T/cg" \
    "$B/bench/shim/bench_launch" "$N" >/dev/null 2>&1
  # thread 1 = the launching thread
  callgrind_annotate --inclusive=no --threshold=100 "$T/cg-01" 2>/dev/null |
    awk -v n="$launches" -v name="$name" '
      /libgpuprof\.so\]/ { gsub(",", "", $1); if ($0 ~ /libprof\//) lp += $1; else sh += $1 }
      /clock_gettime|\[vdso\]/ { gsub(",", "", $1); clk += $1 }
      END { printf "%-14s shim %6.1f  libprof %6.1f  clock_gettime %6.1f  instructions/launch\n", name, sh / n, lp / n, clk / n }'
  rm -f "$T"/cg* "$T"/t-*
done
