#!/bin/sh
# scripts/check-doc-paths.sh: on a small fake tree it fails naming the doc,
# the line and the path of a file that moved, passes once the doc names the
# new path, leaves `git log -- old/path` alone; and the repository passes.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
mkdir -p "$T/docs" "$T/tools/cmd"
: >"$T/tools/cmd/cmd_dump.c"
printf '# x\n\nThe dumper (`tools/cmd_dump.c`) prints.\nSee `git log -- tools/cmd_old.c`.\nresults.csv in bench/results.csv\n' >"$T/docs/A.md"
out=$(sh "$ROOT/scripts/check-doc-paths.sh" "$T" 2>&1) && no "a moved file passed"
echo "$out" | grep -q 'docs/A.md:3: tools/cmd_dump.c does not exist' || no "the message names doc:line and path: $out"
echo "$out" | grep -q cmd_old && no "a git log path was checked: $out"
echo "$out" | grep -q results && no "bench/results.csv read as a .c path: $out"
sed -i 's#tools/cmd_dump.c#tools/cmd/cmd_dump.c#' "$T/docs/A.md"
sh "$ROOT/scripts/check-doc-paths.sh" "$T" || no "the fixed doc failed"
sh "$ROOT/scripts/check-doc-paths.sh" "$ROOT" || no "the repository's docs name paths that do not exist"
[ $fail -eq 0 ] && echo "ok: check-doc-paths"
exit $fail
