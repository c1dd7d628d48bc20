#!/usr/bin/env bash
# outputs-ab.sh — every trace-reading command's output of one gpuprof build
# against another's, byte for byte: what a change that should not change
# any output (a refactor) is checked with.  Text, CSV and JSON of info,
# stats, steps, memory, advise, dump and the exports, at one and several
# threads, a --steps window, report's HTML (each build writing x.html in a
# directory of its own: the page holds its command line) and diff of the
# first two traces.  Prints a DIFFER line per differing output and
# "N outputs, M differ"; exit 1 when any differs.  The two outputs of each
# differing command are kept in OUTDIR (NAME.new, NAME.ref).
#
#   scripts/outputs-ab.sh NEW REF [TRACE...]
#
# NEW, REF: two gpuprof binaries (e.g. build/bin/gpuprof and a build of
# main made with `make B=/tmp/ref all`).  Without traces: generated ones
# (build/bench/gen_bigtrace seeds 7, 8 and 9 at 1e6 events, the second with
# numbered steps, memory records and late GPU records, the third with no
# NVTX; gen_steps's hint-free ones: steps by the trace method) and
# examples/*.gpuprof.
# Both builds need uPlot alike (make deps) or report differs.  Environment:
# OUTDIR (default /tmp/gpuprof-ab).  ~4 min on 2 cores with the default traces.
set -u
[ $# -ge 2 ] || { echo "usage: scripts/outputs-ab.sh NEW REF [TRACE...]" >&2; exit 2; }
NEW=$(realpath "$1") REF=$(realpath "$2"); shift 2
D=${OUTDIR:-/tmp/gpuprof-ab}; rm -rf "$D"; mkdir -p "$D/t" "$D/n" "$D/r"
if [ $# -eq 0 ]; then
  G=build/bench/gen_bigtrace S=build/tests/tools/gen_steps
  if [ ! -x $G ] || [ ! -x $S ]; then echo "outputs-ab: make all build/tests/tools/gen_steps first" >&2; exit 2; fi
  $G --seed 7 1e6 "$D/t/g7.gpuprof" >/dev/null && $G --seed 8 --numbered --memory --late 1e6 "$D/t/g8.gpuprof" >/dev/null
  $G --seed 9 --no-nvtx 1e6 "$D/t/g9-nonvtx.gpuprof" >/dev/null || exit 2
  $S --steady --no-nvtx "$D/t/steady-nonvtx.gpuprof" && $S --workload cnn "$D/t/cnn.gpuprof" || exit 2
  set -- "$D/t/g7.gpuprof" "$D/t/g8.gpuprof" "$D/t/g9-nonvtx.gpuprof" "$D/t/steady-nonvtx.gpuprof" "$D/t/cnn.gpuprof" \
    examples/*.gpuprof
fi
CMDS=("info" "info --json" "stats" "stats --format json" "stats --format csv" "stats --threads 4 --format json"
      "stats --per-step --format json" "stats --report launch_sites,layers,memory_steps" "stats --steps 5:9 --format json"
      "steps" "steps --format json" "steps --threads 3" "steps --method trace --format json" "memory" "memory --format json"
      "advise" "advise --all --format json" "advise --threads 4 --all" "advise --format csv" "advise --method trace --all"
      "dump --json" "export --format perfetto -o -" "export --format perfetto --summary -o -" "export --format folded -o -"
      "export --format csv --table CUPTI_ACTIVITY_KIND_KERNEL -o -" "export --format perfetto --steps 10:12 -o -"
      "export --format perfetto --steps 500:502 --threads 4 -o -" "dump --steps 3:4 --threads 3 --json")
tot=0 bad=0
differ() { bad=$((bad + 1)); echo "DIFFER: $1"; }
for t in "$@"; do
  t=$(realpath "$t")
  for c in "${CMDS[@]}"; do
    tot=$((tot + 1)); f=$D/$(basename "$t")-$(echo "$c" | tr ' /' '__')
    # shellcheck disable=SC2086
    timeout 300 "$NEW" $c "$t" >"$f.new" 2>&1
    # shellcheck disable=SC2086
    timeout 300 "$REF" $c "$t" >"$f.ref" 2>&1
    if cmp -s "$f.new" "$f.ref"; then rm -f "$f.new" "$f.ref"; else differ "$c $t"; fi
  done
  for th in 1 4; do
    tot=$((tot + 1))
    (cd "$D/n" && timeout 300 "$NEW" report --threads $th -o x.html "$t" >/dev/null 2>&1)
    (cd "$D/r" && timeout 300 "$REF" report --threads $th -o x.html "$t" >/dev/null 2>&1)
    cmp -s "$D/n/x.html" "$D/r/x.html" || { differ "report --threads $th $t"; cp "$D/n/x.html" "$D/$(basename "$t").report$th.new.html"; }
  done
done
if [ $# -ge 2 ]; then
  for o in "" "--format json" "--threads 2 --format json"; do
    tot=$((tot + 1))
    # shellcheck disable=SC2086
    cmp -s <("$NEW" diff $o "$1" "$2" 2>&1) <("$REF" diff $o "$1" "$2" 2>&1) || differ "diff $o $1 $2"
  done
fi
rm -rf "$D/n" "$D/r" "$D/t"
if [ "$bad" -eq 0 ]; then echo "$tot outputs, 0 differ"; else echo "$tot outputs, $bad differ (kept in $D)"; fi
[ "$bad" -eq 0 ]
