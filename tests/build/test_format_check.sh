#!/bin/sh
# scripts/format-check.sh: on a small fake tree it fails naming the file
# that .clang-format would change (and not the one it leaves alone), --fix
# rewrites exactly that file, after which it passes, and a file can be named
# instead of a folder; the folders the Makefile holds to the format
# (FORMAT_DIRS, passed by tests/build/build.mk) pass.  Skipped (77) without
# clang-format 14.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CF=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$CF" ] || ! "$CF" --version | grep -q 'version 14\.'; then
	echo "SKIP: clang-format 14 not installed (scripts/setup-deps.sh)"
	exit 77
fi
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

mkdir -p "$T/scripts" "$T/libprof/sub"
cp "$ROOT/scripts/format-check.sh" "$T/scripts/"
cp "$ROOT/.clang-format" "$T/"
# formatted already: kernel-like, short if on one line, braces per style
printf 'static int good(int a)\n{\n\tif (a) return 1;\n\treturn 0;\n}\n' > "$T/libprof/good.c"
# not formatted: two statements on a line, brace after the function
printf 'static int bad(int a) {\n\tint b = a; b++;\n\treturn b;\n}\n' > "$T/libprof/sub/bad.h"
cp "$T/libprof/good.c" "$T/good.orig"

out=$(sh "$T/scripts/format-check.sh" libprof); rc=$?
echo "$out"
[ $rc -eq 1 ] || no "unformatted tree: exit $rc, want 1"
printf '%s\n' "$out" | grep -q '^libprof/sub/bad.h: not formatted' || no "bad.h not named"
printf '%s\n' "$out" | grep -q 'good.c' && no "good.c named"
printf '%s\n' "$out" | grep -q '^format-check: 1 of 2 files not formatted' || no "summary line"

out=$(sh "$T/scripts/format-check.sh" --fix libprof); rc=$?
[ $rc -eq 0 ] || no "--fix: exit $rc"
[ "$out" = "formatted libprof/sub/bad.h" ] || no "--fix said: $out"
cmp -s "$T/libprof/good.c" "$T/good.orig" || no "--fix touched good.c"
want=$(printf 'static int bad(int a)\n{\n\tint b = a;\n\tb++;\n\treturn b;\n}')
[ "$(cat "$T/libprof/sub/bad.h")" = "$want" ] || { no "bad.h after --fix:"; cat "$T/libprof/sub/bad.h"; }
sh "$T/scripts/format-check.sh" libprof || no "formatted tree fails"
sh "$T/scripts/format-check.sh" libprof/sub/bad.h || no "a file as the argument"

# the folders held to the format in the repository
dirs=${FORMAT_DIRS:-libprof tests/libprof}
# shellcheck disable=SC2086  # a folder list
sh "$ROOT/scripts/format-check.sh" $dirs || no "the repository's FORMAT_DIRS ($dirs)"
[ $fail -eq 0 ] && echo ok
exit $fail
