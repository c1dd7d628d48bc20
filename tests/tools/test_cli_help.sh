#!/bin/sh
# issue #40: the help of each command, the man pages made from the same
# table, exit codes and messages a user meets first.
B=${1:-build}
G=$B/bin/gpuprof
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
fail=0
bad() { echo "FAIL: $*"; fail=1; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT

# --- per-command help: its own usage, short, the same from `help CMD`
cmds=$("$G" help --words) || bad "help --words"
[ "$(echo $cmds)" = "run info dump stats export merge steps memory report diff advise top trigger" ] ||
	bad "commands: $(echo $cmds)"
for c in $cmds; do
	"$G" $c --help >"$d/h" 2>"$d/err"; rc=$?
	[ $rc -eq 0 ] || bad "$c --help exit $rc"
	[ -s "$d/err" ] && bad "$c --help wrote to stderr"
	head -n 1 "$d/h" | grep -q "^usage: gpuprof $c " || bad "$c --help starts '$(head -n 1 "$d/h")'"
	n=$(wc -l <"$d/h")
	[ "$n" -le 40 ] || bad "$c --help: $n lines (short: <= 40)"
	[ "$(sed -n '/^main options:/,$p' "$d/h" | grep -c '^  -')" -ge 1 ] || bad "$c --help: no main options"
	grep -q "gpuprof help --full \|man gpuprof-" "$d/h" || bad "$c --help: no pointer to the long form"
	awk 'length > 100 { exit 1 }' "$d/h" || bad "$c --help: lines over 100 columns"
	"$G" help $c >"$d/h2" || bad "help $c exit"
	cmp -s "$d/h" "$d/h2" || bad "help $c differs from $c --help"
	# the long form: every option the completion offers is described there
	"$G" help --full $c >"$d/full" || bad "help --full $c exit"
	awk 'length > 100 { exit 1 }' "$d/full" || bad "help --full $c: lines over 100 columns"
	for o in $("$G" help --words $c); do
		grep -q -- "$o" "$d/full" || bad "help --full $c lacks $o"
	done
done
# the key options are lines of the reference: steps shows stats' --method
"$G" steps --help | grep -q "^  --method M  " || bad "steps --help: --method"
"$G" stats -h | grep -q "^  --report LIST " || bad "stats -h: --report"
"$G" help --full stats | grep -q "^  step_rows " || bad "help --full stats: the reports"
# --help anywhere before --; run's job keeps its own -h
"$G" stats --format json --help | head -n 1 | grep -q "^usage: gpuprof stats" || bad "stats ... --help"
"$G" help nosuch >/dev/null 2>"$d/err" && bad "help nosuch exit 0"
grep -q "unknown command 'nosuch'" "$d/err" || bad "help nosuch: $(cat "$d/err")"
"$G" help | grep -q "^usage: gpuprof <command>" || bad "gpuprof help"

# --- man pages: one per command and gpuprof(1), made at build time, render
# without warnings, and carry the reference's options
M=$B/man
[ -f "$M/gpuprof.1" ] || bad "no $M/gpuprof.1"
for c in $cmds; do
	p=$M/gpuprof-$c.1
	[ -f "$p" ] || { bad "no $p"; continue; }
	groff -man -ww -z "$p" 2>"$d/w"
	[ -s "$d/w" ] && bad "$p: groff warns: $(head -n 2 "$d/w")"
	MANWIDTH=100 man -l "$p" >"$d/man" 2>"$d/err" || bad "man -l $p exit"
	grep -q "^NAME" "$d/man" && grep -q "gpuprof-$c  *-  *[a-z]" "$d/man" || bad "man -l $p: NAME"
	grep -q "^SYNOPSIS" "$d/man" || bad "man -l $p: SYNOPSIS"
	for o in $("$G" help --words $c); do
		grep -q -- "$o" "$d/man" || bad "man gpuprof-$c lacks $o"
	done
	grep -q 'gpuprof\\-'"$c"'\\fR(1)' "$M/gpuprof.1" || bad "gpuprof(1) lacks gpuprof-$c(1)"
done
MANWIDTH=100 man -l "$M/gpuprof.1" | grep -q "^EXIT STATUS" || bad "gpuprof(1): EXIT STATUS"
MANWIDTH=100 man -l "$M/gpuprof-stats.1" | grep -q "step_outliers" || bad "gpuprof-stats(1): the reports"

# --- exit codes and messages
"$B/tests/tools/gen_trace" "$d/t.gpuprof" || bad "gen_trace"
# a selection that names nothing in the trace is a usage error (1), not
# damaged input (2)
MN=$ROOT/examples/mnist-h200.gpuprof
for args in "stats --steps 100:200" "dump --steps 100:200" "stats --range nosuch"; do
	"$G" $args "$MN" >/dev/null 2>"$d/err"; rc=$?
	[ $rc -eq 1 ] || bad "$args on the 55-step trace: exit $rc, want 1 ($(cat "$d/err"))"
done
grep -q "no NVTX range named 'nosuch'" "$d/err" || bad "--range nosuch: $(cat "$d/err")"
"$G" export --format perfetto --steps 100:200 "$MN" -o "$d/x.json" 2>/dev/null; rc=$?
[ $rc -eq 1 ] || bad "export --steps 100:200: exit $rc, want 1"
# zero or two files: one line that says what to do, no page of usage
for n in 0 2; do
	set --; [ $n -eq 2 ] && set -- "$d/t.gpuprof" "$d/t.gpuprof"
	for c in stats steps info dump; do
		"$G" $c "$@" >"$d/out" 2>"$d/err"; rc=$?
		[ $rc -eq 1 ] || bad "$c with $n files: exit $rc"
		[ -s "$d/out" ] && bad "$c with $n files wrote to stdout"
		[ "$(wc -l <"$d/err")" -eq 1 ] || bad "$c with $n files: $(wc -l <"$d/err") lines on stderr"
	done
done
"$G" stats "$d/t.gpuprof" "$d/t.gpuprof" 2>&1 >/dev/null | grep -q "^gpuprof stats: expected one trace file, got 2: run 'gpuprof stats FILE' once per file" ||
	bad "stats with two files: $("$G" stats "$d/t.gpuprof" "$d/t.gpuprof" 2>&1)"
# long tables: the first N rows and how many more (--rows); all with --rows
# all and in CSV.  The MNIST trace's kernels table has 41 rows.
if [ -f "$MN" ]; then
	all=$("$G" stats --report kernels --rows all "$MN" | grep -c '^ *[0-9.]*  *[0-9,]*  *[0-9,]* ')
	csv=$("$G" stats --report kernels --format csv --rows 2 "$MN" | tail -n +2 | grep -c .)
	[ "$all" -eq "$csv" ] && [ "$all" -gt 10 ] || bad "--rows all: $all rows, CSV $csv"
	"$G" stats --report kernels --rows 10 "$MN" >"$d/k"
	[ "$(grep -c '^ *[0-9.]*  *[0-9,]*  *[0-9,]* ' "$d/k")" -eq 10 ] || bad "--rows 10: $(cat "$d/k")"
	grep -qx " ... $((all - 10)) more rows (--rows all)" "$d/k" || bad "--rows 10: no 'more rows' line"
	"$G" stats --report kernels --rows 0 "$MN" >/dev/null 2>&1; [ $? -eq 1 ] || bad "--rows 0: not a usage error"
fi
# make demo's headline (scripts/demo-headline.sh): the steps, the findings,
# then the files, and no full stats tables (it printed 439 lines of them)
if [ -f "$MN" ]; then
	sh "$ROOT/scripts/demo-headline.sh" "$G" "$MN" "$d" >"$d/demo" 2>"$d/err" || bad "demo-headline: $(cat "$d/err")"
	[ "$(grep '^== ' "$d/demo" | cut -c1-9 | tr '\n' ' ')" = "== steps: == findin == files " ] ||
		bad "demo order: $(grep '^== ' "$d/demo" | tr '\n' ' ')"
	grep -q "^ 1  high      launch-bound" "$d/demo" || bad "demo: no findings table"
	grep -q "(cuda_gpu_kern_sum)\|(kernels):" "$d/demo" && bad "demo: the full stats tables"
	[ -s "$d/demo-report.html" ] && [ -s "$d/demo-perfetto.json" ] || bad "demo: the report or the Perfetto file"
	grep -q "^demo: wrote $d/demo-report.html" "$d/demo" || bad "demo: where the report is"
fi
# a usage error: its message and a pointer to --help, not the whole help
for c in $cmds; do
	"$G" $c --bogus >/dev/null 2>"$d/err"; rc=$?
	[ $rc -eq 1 ] || bad "$c --bogus: exit $rc"
	[ "$(wc -l <"$d/err")" -le 2 ] || bad "$c --bogus: $(wc -l <"$d/err") lines on stderr"
	tail -n 1 "$d/err" | grep -q "see 'gpuprof $c --help'" || bad "$c --bogus: $(tail -n 1 "$d/err")"
done
[ $fail -eq 0 ] && echo ok
exit $fail
