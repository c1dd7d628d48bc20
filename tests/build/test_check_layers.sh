#!/bin/sh
# scripts/check-layers.sh: on a small fake tree with wrong includes it
# fails and names each file:line and the rule broken (a layer using one it
# may not, a folder without a rule line, libprof using tools, shim using
# tools, tools using shim); with the includes fixed it passes; an allowed
# DIR/* covers the folders below DIR only; a component
# without layers.txt has no rules but the top rule still holds; and the
# real tree passes.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHECK=$ROOT/scripts/check-layers.sh
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

mkdir -p "$T/libprof/common" "$T/libprof/write" "$T/libprof/read" "$T/shim" "$T/tools/cmd" "$T/tools/common"
cat > "$T/libprof/layers.txt" <<'R'
# test rules
libprof/common:
libprof/write: libprof/common
R
echo '#define A 1' > "$T/libprof/common/a.h"
echo '#define W 1' > "$T/libprof/write/w.h"
echo '#define U 1' > "$T/tools/common/util.h"
echo '#define S 1' > "$T/shim/s.h"
# wrong: common (bottom) uses write
printf '#include <stdio.h>\n#include "a.h"\n#include "../write/w.h"\n' > "$T/libprof/common/a.c"
# right: write uses common
printf '#include "common/a.h"\n#include "w.h"\n' > "$T/libprof/write/w.c"
# wrong: read has no rule line
printf '#include "common/a.h"\n' > "$T/libprof/read/r.c"
# wrong: libprof uses tools (found through the -I root "tools")
printf '#include "common/util.h"\n' > "$T/libprof/write/x.c"
# wrong: shim uses tools; tools uses shim (tools has no layers.txt)
printf '#include "s.h"\n#include "../tools/common/util.h"\n' > "$T/shim/s.c"
printf '#  include   "s.h"\n#include "common/util.h"\n' > "$T/tools/cmd/t.c"

out=$(sh "$CHECK" "$T"); rc=$?
echo "$out"
[ $rc -eq 1 ] || no "wrong tree: exit $rc, want 1"
want() { printf '%s\n' "$out" | grep -qF "$1" || no "missing: $1"; }
want 'libprof/common/a.c:3: #include "../write/w.h" (libprof/write): libprof/common may use only itself (libprof/layers.txt:2)'
want 'libprof/read/r.c:1: #include "common/a.h" (libprof/common): libprof/read has no line in libprof/layers.txt'
want 'libprof/write/x.c:1: #include "common/util.h" (tools/common): libprof includes nothing from shim/ or tools/'
want 'shim/s.c:2: #include "../tools/common/util.h" (tools/common): shim and tools never include each other'
want 'tools/cmd/t.c:1: #include "s.h" (shim): shim and tools never include each other'
want 'check-layers: 5 problem(s)'
[ "$(printf '%s\n' "$out" | grep -c ': #')" -eq 5 ] || no "want exactly 5 findings"

# fixed: drop the wrong includes, give read its line
printf '#include <stdio.h>\n#include "a.h"\n' > "$T/libprof/common/a.c"
echo 'libprof/read: libprof/common' >> "$T/libprof/layers.txt"
printf '#include "w.h"\n' > "$T/libprof/write/x.c"
printf '#include "s.h"\n' > "$T/shim/s.c"
printf '#include "common/util.h"\n' > "$T/tools/cmd/t.c"
out=$(sh "$CHECK" "$T"); rc=$?
echo "$out"
[ $rc -eq 0 ] || no "fixed tree: exit $rc, want 0"
printf '%s\n' "$out" | grep -q '^check-layers: ok' || no "fixed tree: no ok line"

# DIR/* allows every folder below DIR, and not a sibling whose name starts
# the same
mkdir -p "$T/libprof/deep/a" "$T/libprof/deeper"
echo '#define D 1' > "$T/libprof/deep/a/d.h"
echo '#define E 1' > "$T/libprof/deeper/e.h"
sed -i 's|^libprof/write: libprof/common$|libprof/write: libprof/common libprof/deep/*|' "$T/libprof/layers.txt"
printf 'libprof/deep/a:\nlibprof/deeper:\n' >> "$T/libprof/layers.txt"
printf '#include "deep/a/d.h"\n#include "deeper/e.h"\n' > "$T/libprof/write/y.c"
out=$(sh "$CHECK" "$T"); rc=$?
echo "$out"
[ $rc -eq 1 ] || no "DIR/* tree: exit $rc, want 1"
want 'libprof/write/y.c:2: #include "deeper/e.h" (libprof/deeper): libprof/write may use only libprof/common libprof/deep/* (libprof/layers.txt:3)'
[ "$(printf '%s\n' "$out" | grep -c ': #')" -eq 1 ] || no "DIR/* tree: want exactly 1 finding"

# the real tree
out=$(sh "$CHECK" "$ROOT"); rc=$?
echo "$out"
[ $rc -eq 0 ] || no "the repository: exit $rc"
[ $fail -eq 0 ] && echo ok
exit $fail
