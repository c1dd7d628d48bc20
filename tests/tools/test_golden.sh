#!/bin/sh
# Golden-output test: info, dump and every stats report (table and csv, plus
# json) of the deterministic trace from gen_trace are compared with the
# committed files in tests/tools/golden/.  The numbers in those files are
# checked against hand computations in test_stats.py; this test pins the
# exact layout.  Regenerate after an intended change with
#   GPUPROF_UPDATE_GOLDEN=1 sh tests/tools/test_golden.sh build
# and review the diff.
B=${1:-build}
unset COLUMNS  # tables are cut to $COLUMNS
G=$(cd "$B/bin" && pwd)/gpuprof
GEN=$(cd "$B/tests/tools" && pwd)/gen_trace
GOLD=$(cd "$(dirname "$0")/golden" && pwd)
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
"$GEN" t.gpuprof || { echo "gen_trace failed"; exit 1; }

fail=0
# run NAME ARGS...: stdout + exit status into NAME.out; frame counts depend on
# libprof's chunking, not on the tool, so they are normalised.
run() {
	name=$1; shift
	"$G" "$@" >"$name.out" 2>"$name.err"
	echo "exit $?" >>"$name.out"
	sed -E -i 's/[0-9]+ (frames|chunks)/N \1/g; s/"frames_ok":[0-9]+/"frames_ok":N/' "$name.out"
	if [ -n "$GPUPROF_UPDATE_GOLDEN" ]; then
		cp "$name.out" "$GOLD/$name.out"
	elif ! cmp -s "$name.out" "$GOLD/$name.out"; then
		echo "MISMATCH: gpuprof $* (golden/$name.out)"
		diff -u "$GOLD/$name.out" "$name.out" | head -30
		fail=1
	fi
	if [ -s "$name.err" ]; then
		echo "unexpected stderr from gpuprof $*:"; cat "$name.err"; fail=1
	fi
}

run info info t.gpuprof
run info_json info --json t.gpuprof
run dump dump t.gpuprof
run dump_json dump --json t.gpuprof
run dump_type dump --json --type kernel,api t.gpuprof
for r in api kernels memops memsize nvtx util; do
	run "stats_${r}_table" stats --report "$r" t.gpuprof
	run "stats_${r}_csv" stats --report "$r" --format csv t.gpuprof
done
run stats_all_table stats t.gpuprof
run stats_all_json stats --format json t.gpuprof
# a windowed trace (--gpu-window): the windows report and util inside them
"$GEN" --windows w.gpuprof || { echo "gen_trace --windows failed"; exit 1; }
run stats_windows_table stats --report windows,util w.gpuprof
run stats_windows_csv stats --report windows --format csv w.gpuprof
run info_windows info w.gpuprof

[ -n "$GPUPROF_UPDATE_GOLDEN" ] && echo "golden files updated in $GOLD"
exit $fail
