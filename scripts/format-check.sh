#!/bin/sh
# format-check.sh [--fix] [PATH...] — C files held to .clang-format.
# PATHs are files or folders (their *.c and *.h, recursively) from the
# repository root; without any, every C file under libprof/ shim/ tools/
# tests/ bench/ examples/.  Lists the files that differ, each with the start
# of its diff, and exits 1; --fix rewrites them instead.  `make
# format-check` and `make format` pass the folders formatted so far
# (FORMAT_DIRS in the Makefile).  clang-format 14 exactly (another version
# formats differently): CLANG_FORMAT names it, else clang-format-14, else
# clang-format; exit 2 when there is none.
set -eu
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = --fix ] && { fix=1; shift; }
[ $# -gt 0 ] || set -- libprof shim tools tests bench examples
CF=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$CF" ]; then
	echo "format-check: clang-format 14 not found (scripts/setup-deps.sh installs clang-format-14)" >&2
	exit 2
fi
ver=$("$CF" --version | sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p')
if [ "$ver" != 14 ]; then
	echo "format-check: $CF is version ${ver:-unknown}; .clang-format is for 14 (set CLANG_FORMAT)" >&2
	exit 2
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bad=0 n=0
for f in $(find "$@" -type f \( -name '*.c' -o -name '*.h' \) | sort); do
	n=$((n + 1))
	"$CF" --style=file "$f" > "$out"
	cmp -s "$f" "$out" && continue
	if [ $fix -eq 1 ]; then
		cp "$out" "$f"
		echo "formatted $f"
	else
		echo "$f: not formatted (scripts/format-check.sh --fix $f):"
		diff -u "$f" "$out" | sed -n '3,12p'
		bad=$((bad + 1))
	fi
done
[ $bad -eq 0 ] || { echo "format-check: $bad of $n files not formatted"; exit 1; }
[ $fix -eq 1 ] || echo "format-check: ok ($n files)"
