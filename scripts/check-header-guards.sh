#!/bin/sh
# check-header-guards.sh [ROOT] — every header under tools/ is guarded by
# GPUPROF_<its path below tools/, '/' and '.' as '_', upper case>
# (tools/analysis/steps/steps.h: GPUPROF_ANALYSIS_STEPS_STEPS_H), as its
# first #ifndef and the #define right after it: one style, and a moved
# header shows by its guard whether it was renamed with it.  Fails naming
# file:line, the guard found and the one wanted.
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2
find tools -type f -name '*.h' | sort | awk '
function want(p) { sub(/^tools\//, "", p); gsub(/[\/.]/, "_", p); return "GPUPROF_" toupper(p) }
{
	f = $0; w = want(f); got = ""; line = 0; n = 0; ok = 0
	while ((getline l < f) > 0) {
		n++
		if (got == "" && l ~ /^#ifndef /) { got = l; sub(/^#ifndef[ \t]+/, "", got); line = n; continue }
		if (got != "") { ok = (l == "#define " got); break }
	}
	close(f)
	if (got != w || !ok) {
		printf "%s:%d: guard %s%s, want %s\n", f, line, got == "" ? "(none)" : got, got == "" || ok ? "" : " (no #define after it)", w
		bad++
	}
	files++
}
END {
	if (bad) { printf "check-header-guards: %d problem(s)\n", bad; exit 1 }
	printf "check-header-guards: ok (%d headers)\n", files
}'
