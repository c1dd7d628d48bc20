#!/bin/sh
# bench/offline/engine.sh — the commands that consume the analysis engine
# (stats, steps, advise, report) on one generated trace: wall time, peak
# RSS, how many times each reads the trace, and their time against the same
# run's `stats` (all reports).  Issue #41's bars: advise/stats and
# report/stats within 2x; report reading each trace once.
#
#   bench/offline/engine.sh [-t THREADS] [EVENTS]     (default: 1e7)
#
# Reads: the bytes the command pread from the trace over its size (strace;
# "-" without it; every pread64 of every thread, also one strace prints as
# "unfinished" then "resumed").  A slice's lead-in and the prefetch of a
# reader stopped early make it a little off a whole number.
# Environment: GPUPROF (default build/bin/gpuprof), GEN (build/bench/
# gen_bigtrace), DIR (default /tmp/gpuprof-bench), SEED (7), GEN_FLAGS (the
# generator's options, such as --no-nvtx: a job with no hint, steps by the
# trace method).  Wall time and
# peak RSS from GNU time, or python3 where /usr/bin/time is missing.
set -eu
GPUPROF=${GPUPROF:-build/bin/gpuprof}
GEN=${GEN:-build/bench/gen_bigtrace}
DIR=${DIR:-/tmp/gpuprof-bench}
SEED=${SEED:-7}
GEN_FLAGS=${GEN_FLAGS:-}
THREADS=""
if [ "${1:-}" = -t ]; then THREADS="--threads $2"; shift 2; fi
N=${1:-1e7}
# "WALL RSS_KIB" of a command into $DIR/engine.time
meas() {
  if [ -x /usr/bin/time ]; then /usr/bin/time -f "%e %M" -o "$DIR/engine.time" "$@"; return; fi
  python3 - "$DIR/engine.time" "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time(); rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(f"{time.time() - t:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n")
sys.exit(rc)
PY
}
[ -x "$GPUPROF" ] && [ -x "$GEN" ] || { echo "engine.sh: build first (make -j2 all)" >&2; exit 1; }
mkdir -p "$DIR"
T=$DIR/bench-$N-s$SEED$(echo "$GEN_FLAGS" | tr -d ' ').gpuprof
# shellcheck disable=SC2086
[ -f "$T" ] || "$GEN" --seed "$SEED" $GEN_FLAGS "$N" "$T" >/dev/null
SIZE=$(stat -c %s "$T")
echo "# $GPUPROF on $T ($N events, seed $SEED${GEN_FLAGS:+, $GEN_FLAGS}), $(nproc) cores${THREADS:+, $THREADS}"
echo "| command | wall s | peak RSS MiB | reads | / stats |"
echo "| --- | ---: | ---: | ---: | ---: |"
STATS=""
for c in stats steps advise report; do
  case $c in report) args="-o $DIR/engine-report.html";; *) args="";; esac
  # shellcheck disable=SC2086
  meas "$GPUPROF" $c $THREADS $args "$T" >/dev/null 2>"$DIR/engine.err" ||
    { echo "engine.sh: gpuprof $c failed:" >&2; cat "$DIR/engine.err" >&2; exit 1; }
  read -r wall rss <"$DIR/engine.time"
  reads=-
  if command -v strace >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    strace -f -e trace=pread64 -o "$DIR/engine.strace" "$GPUPROF" $c $THREADS $args "$T" >/dev/null 2>&1
    reads=$(awk -v sz="$SIZE" '/pread64/ { n = $NF; if (n ~ /^[0-9]+$/) s += n } END { printf "%.1f", s / sz }' \
      "$DIR/engine.strace")
  fi
  [ -n "$STATS" ] || STATS=$wall
  ratio=$(awk -v a="$wall" -v b="$STATS" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  echo "| $c | $wall | $((rss / 1024)) | $reads | $ratio |"
done
rm -f "$DIR/engine.time" "$DIR/engine.err" "$DIR/engine.strace" "$DIR/engine-report.html"
