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
"$G" stats --help | grep -q "api, kernels\|  api " || bad "stats --help lists reports"
for r in api kernels memops memsize nvtx util; do
	"$G" stats --help | grep -q "^  $r " || bad "stats --help lists report $r"
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
[ $fail -eq 0 ] && echo ok
exit $fail
