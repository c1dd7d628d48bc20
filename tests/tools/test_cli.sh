#!/bin/sh
# CLI manners: --help everywhere (stdout, exit 0), usage errors exit 1 with a
# message on stderr and nothing on stdout.
B=${1:-build}
G=$B/bin/gpuprof
fail=0
bad() { echo "FAIL: $*"; fail=1; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT

out=$("$G" --help) || bad "gpuprof --help exit"
for c in run info dump stats export merge; do
	echo "$out" | grep -q "^  $c " || bad "gpuprof --help lists $c"
	h=$("$G" $c --help 2>"$d/err") || bad "gpuprof $c --help exit"
	echo "$h" | grep -q "^usage: gpuprof $c" || bad "gpuprof $c --help text"
	[ -s "$d/err" ] && bad "gpuprof $c --help wrote to stderr"
done
"$G" help --full stats | grep -q "api, kernels\|  api " || bad "stats --help lists reports"
for r in api kernels memops memsize nvtx util; do
	"$G" help --full stats | grep -q "^  $r " || bad "stats --help lists report $r"
done
"$G" --version | grep -q "^gpuprof " || bad "--version"

usage() { # expect exit 1, empty stdout, a message on stderr
	"$G" "$@" >"$d/out" 2>"$d/err"; rc=$?
	[ $rc -eq 1 ] || bad "gpuprof $* exit $rc (want 1)"
	[ -s "$d/out" ] && bad "gpuprof $* wrote to stdout"
	[ -s "$d/err" ] || bad "gpuprof $* gave no message"
}
usage
usage frobnicate
usage info
usage info a b
usage info --bogus x
usage dump
usage stats
usage export x
usage export --format perfetto x
usage export --format xml x -o y
usage export --format sqlite x -o -
usage merge x
usage merge -o y
"$G" frobnicate 2>&1 | grep -q "unknown command 'frobnicate'" || bad "unknown command message"

# --- issue 21: CLI manners
GEN=$(cd "$(dirname "$G")/../tests/tools" && pwd)/gen_trace
"$GEN" "$d/t.gpuprof" || bad "gen_trace"
# getopt's own messages name the command as ours do
for c in info dump stats export merge top run; do
	"$G" $c --bogus x >/dev/null 2>"$d/err"
	head -n 1 "$d/err" | grep -q "^gpuprof $c: unrecognized option '--bogus'" || bad "$c getopt message: $(head -n 1 "$d/err")"
done
"$G" stats --report >/dev/null 2>"$d/err"
grep -q "^gpuprof stats: option '--report' requires an argument" "$d/err" || bad "missing argument message: $(head -n 1 "$d/err")"
# an empty time range, an empty report list: usage errors that say so
usage stats --since 5s --until 1s "$d/t.gpuprof"
grep -q "since (5.000 s) must be before --until (1.000 s)" "$d/err" || bad "since>until message: $(cat "$d/err")"
usage stats --since 1s --until 1s "$d/t.gpuprof"
usage stats --report= "$d/t.gpuprof"
grep -q "empty --report" "$d/err" || bad "--report= message: $(cat "$d/err")"
usage stats --report api,,kernels "$d/t.gpuprof"
usage stats --report api, "$d/t.gpuprof"
# stdin as the trace: the same output as the file
for args in "stats --format json" "info --json" "dump --json"; do
	$G $args "$d/t.gpuprof" >"$d/f.out" 2>&1
	$G $args - <"$d/t.gpuprof" >"$d/s.out" 2>&1 || bad "$args - exit $?"
	sed 's|"file":"[^"]*"|"file":X|' "$d/f.out" >"$d/f2.out"; sed 's|"file":"[^"]*"|"file":X|' "$d/s.out" >"$d/s2.out"
	cmp -s "$d/f2.out" "$d/s2.out" || bad "$args: stdin differs from the file"
done
"$G" export --format perfetto - -o "$d/p.json" <"$d/t.gpuprof" || bad "export from stdin"
"$G" export --format perfetto "$d/t.gpuprof" -o "$d/q.json"
cmp -s "$d/p.json" "$d/q.json" || bad "export from stdin differs"
"$G" merge - "$d/t.gpuprof" -o "$d/m.gpuprof" <"$d/t.gpuprof" 2>"$d/err" || bad "merge from stdin: $(cat "$d/err")"
"$G" stats - </dev/null >/dev/null 2>"$d/err"; rc=$?
[ $rc -eq 2 ] && grep -q "^gpuprof stats: cannot read -: " "$d/err" || bad "empty stdin: exit $rc, $(cat "$d/err")"
# the main help lists every stats report, from the same list as stats --help
names=$("$G" help --full stats | sed -n 's/^  \([a-z_]*\)  *[^-].*/\1/p' | grep -v '^$')
main=$("$G" --help | tr '\n' ' ' | sed 's/  */ /g')
for r in $names windows launch_sites comm comm_steps sync memory; do
	echo "$main" | grep -q "[ :]$r[, ]" || bad "gpuprof --help lacks report $r"
done
# documented: --version, the chrome/json aliases, folded and top in the synopsis
DOC=$(dirname "$0")/../../docs/CLI.md
sed -n '/^```$/,/^```$/p' "$DOC" | head -12 >"$d/syn"
for w in folded "gpuprof top" "gpuprof --version"; do grep -q -- "$w" "$d/syn" || bad "docs/CLI.md synopsis lacks $w"; done
grep -q -- '`--format chrome` and `--format json`' "$DOC" || bad "docs/CLI.md: export aliases"
"$G" help --full export | grep -q "chrome and --format json" || bad "export --help: aliases"
# the export formats are one list (export/registry.c): each one export --help
# describes is in its usage line, in gpuprof --help and in the messages
fmts=$("$G" help --full export | sed -n 's/^  --format \([a-z]*\)  .*/\1/p')
[ "$(echo $fmts)" = "perfetto sqlite parquet csv folded" ] || bad "export --help: formats '$(echo $fmts)'"
"$G" export x -o y >/dev/null 2>"$d/err"
"$G" export --format xml x -o y >/dev/null 2>>"$d/err"
for f in $fmts; do
	"$G" help --full export | head -n 1 | grep -q "[ |]$f[| ]" || bad "export usage line lacks $f"
	echo "$main" | grep -qi "export .*convert to.*$f" || bad "gpuprof --help: export lacks $f"
	[ "$(grep -c "$f" "$d/err")" = 2 ] || bad "export's messages lack $f: $(cat "$d/err")"
done
[ $fail -eq 0 ] && echo ok
exit $fail
