#!/bin/sh
# scripts/outputs-ab.sh: a build against itself on a trace gives "0 differ"
# and exit 0; against a build whose `stats --format json` prints one byte
# more it names that command (and only outputs that differ), says how many
# and exits 1.  Run with the build directory (its bin/gpuprof).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
G=$B/bin/gpuprof
[ -x "$G" ] || { echo "skip: no $G"; exit 77; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
TR=$ROOT/examples/vector_add-h200.gpuprof
out=$(OUTDIR=$T/a bash "$ROOT/scripts/outputs-ab.sh" "$G" "$G" "$TR" 2>&1) || no "a build against itself failed: $out"
echo "$out" | grep -q '^30 outputs, 0 differ$' || no "the count of outputs: $out"
printf '#!/bin/sh\n"%s" "$@"; rc=$?\n[ "$1 $2 $3" = "stats --format json" ] && echo x\nexit $rc\n' "$G" >"$T/other"
chmod +x "$T/other"
out=$(OUTDIR=$T/b bash "$ROOT/scripts/outputs-ab.sh" "$G" "$T/other" "$TR" 2>&1) && no "a differing build passed: $out"
[ "$(echo "$out" | grep -c '^DIFFER')" = 1 ] || no "one DIFFER line: $out"
echo "$out" | grep -q '^DIFFER: stats --format json ' || no "names the command: $out"
echo "$out" | grep -q '^30 outputs, 1 differ' || no "the count: $out"
ls "$T/b"/*stats_--format_json.ref >/dev/null 2>&1 || no "the reference's output kept"
[ $fail -eq 0 ] && echo "ok: outputs-ab"
exit $fail
