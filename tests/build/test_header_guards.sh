#!/bin/sh
# scripts/check-header-guards.sh: on a small fake tree it fails naming the
# header, the line, the guard and the one wanted (an old-style guard, a
# guard whose #define differs, a header without one), passes once they are
# the path's; and the repository passes.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
mkdir -p "$T/tools/analysis/steps" "$T/tools/common"
printf '/* steps.h */\n#ifndef GPUPROF_ANALYSIS_STEPS_H\n#define GPUPROF_ANALYSIS_STEPS_H\n#endif\n' >"$T/tools/analysis/steps/steps.h"
printf '#ifndef GPUPROF_COMMON_UTIL_H\n#define GPUPROF_COMMON_UTL_H\n#endif\n' >"$T/tools/common/util.h"
printf '#pragma once\n' >"$T/tools/common/tool.h"
out=$(sh "$ROOT/scripts/check-header-guards.sh" "$T" 2>&1) && no "wrong guards passed"
echo "$out"
want() { printf '%s\n' "$out" | grep -qF "$1" || no "missing: $1"; }
want 'tools/analysis/steps/steps.h:2: guard GPUPROF_ANALYSIS_STEPS_H, want GPUPROF_ANALYSIS_STEPS_STEPS_H'
want 'tools/common/util.h:1: guard GPUPROF_COMMON_UTIL_H (no #define after it), want GPUPROF_COMMON_UTIL_H'
want 'tools/common/tool.h:0: guard (none), want GPUPROF_COMMON_TOOL_H'
want 'check-header-guards: 3 problem(s)'
sed -i 's/GPUPROF_ANALYSIS_STEPS_H/GPUPROF_ANALYSIS_STEPS_STEPS_H/' "$T/tools/analysis/steps/steps.h"
sed -i 's/UTL_H/UTIL_H/' "$T/tools/common/util.h"
printf '#ifndef GPUPROF_COMMON_TOOL_H\n#define GPUPROF_COMMON_TOOL_H\n#endif\n' >"$T/tools/common/tool.h"
sh "$ROOT/scripts/check-header-guards.sh" "$T" || no "the fixed tree failed"
sh "$ROOT/scripts/check-header-guards.sh" "$ROOT" || no "the repository's headers"
[ $fail -eq 0 ] && echo "ok: check-header-guards"
exit $fail
