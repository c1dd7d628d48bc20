#!/bin/sh
# check-layers.sh [ROOT] — fails when a C file includes a header from a
# folder its folder may not use (`make check-layers`; docs/ARCHITECTURE.md).
#
# Rules, one file per component: COMPONENT/layers.txt, lines
#     FOLDER: ALLOWED_FOLDER ...
# (paths from the repository root; '#' starts a comment).  A file may
# include headers of its own folder and of the folders its folder's line
# allows (an allowed `DIR/*` stands for every folder below DIR); in a
# component that has a layers.txt, a folder without a line is
# an error; a component without one has no rules yet.  Above those, always:
# libprof includes nothing from shim/ or tools/, and shim and tools never
# include each other.  `#include "x"` is looked up as the compiler does:
# next to the including file, then in each -I root of the build
# (INCLUDE_DIRS); a header found in neither is outside the tree (system,
# generated) and not checked.
set -eu
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"
COMPONENTS=${COMPONENTS:-libprof shim tools}
INCLUDE_DIRS=${INCLUDE_DIRS:-libprof shim tools}
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for c in $COMPONENTS; do
	[ -d "$c" ] && find "$c" -type f \( -name '*.c' -o -name '*.h' \)
done | sort > "$list"
rules=
for c in $COMPONENTS; do
	[ -f "$c/layers.txt" ] && rules="$rules $c/layers.txt"
done
# shellcheck disable=SC2086  # $rules and the file list are word lists
awk -v list="$list" -v incdirs="$INCLUDE_DIRS" '
function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
function comp(p) { sub(/\/.*/, "", p); return p }
function norm(p,   n, i, k, s, out) {   # a/b/../c/./d -> a/c/d
	n = split(p, s, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (s[i] == "" || s[i] == ".") continue
		if (s[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
		out[++k] = s[i]
	}
	p = ""
	for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
	return p
}
function allows(r, d) {   # does rule r (" A B DIR/* ") allow folder d?
	if (index(r, " " d " ")) return 1
	while (sub(/\/[^\/]*$/, "", d)) if (index(r, " " d "/* ")) return 1
	return 0
}
function bad(why) {
	printf "%s:%d: #include \"%s\" (%s): %s\n", FILENAME, FNR, inc, hdir, why
	nbad++
}
BEGIN { ninc = split(incdirs, incdir, " ") }
FILENAME == list { known[$0] = 1; nfiles++; next }
FILENAME ~ /layers\.txt$/ {
	line = $0; sub(/#.*/, "", line)
	if (line !~ /[^ \t]/) next
	if (line !~ /:/) { printf "%s:%d: not FOLDER: ALLOWED...\n", FILENAME, FNR; nbad++; next }
	folder = line; sub(/:.*/, "", folder); gsub(/[ \t]/, "", folder)
	allowed = line; sub(/^[^:]*:/, "", allowed)
	ruled[comp(FILENAME)] = 1
	rule[folder] = " " allowed " "; gsub(/[ \t]+/, " ", rule[folder])
	where[folder] = FILENAME ":" FNR
	next
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	hdr = norm(dir(FILENAME) "/" inc)
	for (i = 1; i <= ninc && !(hdr in known); i++) hdr = norm(incdir[i] "/" inc)
	if (!(hdr in known)) next
	nchecked++
	fdir = dir(FILENAME); hdir = dir(hdr); fc = comp(FILENAME); hc = comp(hdr)
	if (fc == "libprof" && (hc == "shim" || hc == "tools")) { bad("libprof includes nothing from shim/ or tools/"); next }
	if ((fc == "shim" && hc == "tools") || (fc == "tools" && hc == "shim")) { bad("shim and tools never include each other"); next }
	if (hdir == fdir || !(fc in ruled)) next
	if (!(fdir in rule)) { bad(fdir " has no line in " fc "/layers.txt"); next }
	if (!allows(rule[fdir], hdir)) {
		allowed = rule[fdir]; gsub(/^ | $/, "", allowed)
		bad(fdir " may use only " (allowed == "" ? "itself" : allowed) " (" where[fdir] ")")
	}
}
END {
	if (nbad) { printf "check-layers: %d problem(s)\n", nbad; exit 1 }
	printf "check-layers: ok (%d files, %d includes within the tree)\n", nfiles, nchecked
}
' "$list" $rules $(cat "$list")
