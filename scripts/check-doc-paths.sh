#!/bin/sh
# check-doc-paths.sh [ROOT] — every source path a doc names exists: the
# Markdown under docs/, README.md and each component's README.md, read for
# `libprof/ shim/ tools/ tests/ scripts/ bench/ examples/` paths of source
# files (.c .h .py .sh .cu .md .txt).  Fails naming doc:line and the path
# (a file moved without its docs).  A path inside a `git log -- ...` command
# is history and is left alone.
ROOT=${1:-.}
cd "$ROOT" || exit 2
bad=0
for doc in docs/*.md README.md */README.md; do
	[ -f "$doc" ] || continue
	grep -noE '(libprof|shim|tools|tests|scripts|bench|examples)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(c|h|py|sh|cu|md|txt)([^A-Za-z0-9]|$)' "$doc" |
		grep -v 'git log' |
		while IFS= read -r hit; do
			line=${hit%%:*}
			path=$(echo "${hit#*:}" | sed -E 's/[^A-Za-z0-9]$//')
			sed -n "${line}p" "$doc" | grep -q "git log" && continue
			[ -e "$path" ] || echo "$doc:$line: $path does not exist"
		done
done | tee /tmp/check-doc-paths.$$ >&2
[ -s /tmp/check-doc-paths.$$ ] && bad=1
rm -f /tmp/check-doc-paths.$$
exit $bad
