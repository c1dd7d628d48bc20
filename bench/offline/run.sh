#!/bin/sh
# bench/offline/run.sh — the offline tool on generated traces: wall time and
# peak RSS of every command, per trace size.  Prints a Markdown table
# (docs/PERFORMANCE.md "Offline tool" has the figures of one run).
#
#   bench/offline/run.sh [-t THREADS] [-q] [EVENTS...]    (default: 1e6 1e7)
#
#   -t THREADS   passed as --threads to every command (default: the tool's
#                default, the online cores)
#   -q           quick: stats (all), info, dump and the exports only, not
#                each stats report alone
#   -r THREADS   also the reader's own rate (bench_read) on the largest
#                trace with these thread counts, e.g. -r "1 2" (default: none)
# Environment: GPUPROF (default build/bin/gpuprof), GEN (build/bench/
# gen_bigtrace), DIR (where traces and outputs go; default
# /tmp/gpuprof-bench), SEED (1).  Traces are generated once per size and
# kept in DIR (1e8 events: about 0.65 GB; outputs of the exports are
# deleted after being measured).  Needs GNU time (/usr/bin/time).
set -eu
GPUPROF=${GPUPROF:-build/bin/gpuprof}
GEN=${GEN:-build/bench/gen_bigtrace}
DIR=${DIR:-/tmp/gpuprof-bench}
SEED=${SEED:-1}
THREADS=""
QUICK=0
READ=""
BENCH_READ=${BENCH_READ:-build/bench/bench_read}
while [ $# -gt 0 ]; do
  case $1 in
    -t) THREADS="--threads $2"; shift 2;;
    -q) QUICK=1; shift;;
    -r) READ=$2; shift 2;;
    *) break;;
  esac
done
[ $# -gt 0 ] || set -- 1e6 1e7
[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }
[ -x "$GPUPROF" ] && [ -x "$GEN" ] || { echo "run.sh: build first (make -j2 all)" >&2; exit 1; }
mkdir -p "$DIR"

# The stats reports, from the tool itself (an unknown name lists them).
REPORTS=$("$GPUPROF" stats --report '?' /dev/null 2>&1 | sed -n 's/.*(reports: \(.*\))$/\1/p' | tr -d ',')

mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
size_mb() { [ -f "$1" ] && awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1e6 }' || echo "-"; }

# measure LABEL OUTFILE CMD...: one table row (wall s, peak RSS MiB, output MB)
measure() {
  label=$1; outf=$2; shift 2
  tf="$DIR/time.$$"
  if /usr/bin/time -f "%e %M" -o "$tf" "$@" >"$DIR/stdout.$$" 2>"$DIR/stderr.$$"; then st=ok; else st="exit $?"; fi
  read -r wall rss <"$tf"
  [ "$outf" = "-" ] && outf="$DIR/stdout.$$"
  printf "| %s | %s | %s | %s | %s | %s |\n" "$EV" "$label" "$wall" "$(mib "$rss")" "$(size_mb "$outf")" "$st"
  [ "$st" = ok ] || sed 's/^/    /' "$DIR/stderr.$$" | tail -n 3 >&2
  rm -f "$tf" "$DIR/stdout.$$" "$DIR/stderr.$$"
}

echo "gpuprof offline bench: $(nproc) cores online, ${THREADS:-default threads}, $(uname -m), $(date -u +%Y-%m-%d)"
echo
echo "| events | command | wall (s) | peak RSS (MiB) | output (MB) | status |"
echo "|---:|---|---:|---:|---:|---|"
for n in "$@"; do
  trace="$DIR/big-$n-s$SEED.gpuprof"
  [ -f "$trace" ] || "$GEN" --seed "$SEED" "$n" "$trace" 2>"$DIR/gen.log" || { cat "$DIR/gen.log" >&2; exit 1; }
  EV="$n ($(size_mb "$trace") MB)"
  # shellcheck disable=SC2086
  measure "info" - "$GPUPROF" info $THREADS "$trace"
  measure "stats (all reports)" - "$GPUPROF" stats $THREADS "$trace"
  if [ $QUICK = 0 ]; then
    for rep in $REPORTS; do
      measure "stats --report $rep" - "$GPUPROF" stats $THREADS --report "$rep" "$trace"
    done
  fi
  measure "dump" - "$GPUPROF" dump $THREADS "$trace"
  measure "export perfetto" "$DIR/out.json" "$GPUPROF" export $THREADS --format perfetto -o "$DIR/out.json" "$trace"
  rm -f "$DIR/out.json"
  if "$GPUPROF" export --help 2>&1 | grep -q -- --summary; then
    measure "export perfetto --summary -o .json.gz" "$DIR/out.json.gz" \
      "$GPUPROF" export $THREADS --format perfetto --summary -o "$DIR/out.json.gz" "$trace"
    rm -f "$DIR/out.json.gz"
  fi
  measure "export sqlite" "$DIR/out.sqlite" "$GPUPROF" export $THREADS --format sqlite -o "$DIR/out.sqlite" "$trace"
  rm -f "$DIR/out.sqlite"
done

# The reader alone on the largest trace, and a late window of it.
if [ -n "$READ" ]; then
  echo
  # shellcheck disable=SC2086
  "$BENCH_READ" "$trace" $READ
  echo
  "$BENCH_READ" -w 500000000 "$trace"
fi
