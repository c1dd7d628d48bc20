#!/bin/sh
# Installs uPlot, the charting library `gpuprof report` embeds, from the npm
# registry into $B/npm (the version and file hashes pinned in
# scripts/uplot.pin), so the next build embeds it (scripts/
# embed-report-assets.sh).  Run by `make deps`; idempotent; offline once done.
# Never fails the caller: without npm or registry access it says so, and
# `gpuprof report` writes pages with tables but no charts.
#   scripts/setup-uplot.sh [BUILD_DIR]      (default build)
B=${1:-build}
PIN=$(dirname "$0")/uplot.pin
VERSION=$(sed -n 's/^version=//p' "$PIN")
DIR=$B/npm/node_modules/uplot
# --save-exact: in $B/npm/package.json, so that a later install there
# (test_speedscope's speedscope) keeps it instead of pruning it
ok() {
  [ -f "$DIR/package.json" ] || return 1
  grep -q "\"version\": *\"$VERSION\"" "$DIR/package.json" || return 1
  for k in js css; do
    set -- $(sed -n "s/^$k=//p" "$PIN")
    [ "$(sha256sum "$DIR/$1" 2>/dev/null | cut -d' ' -f1)" = "$2" ] || return 1
  done
}
ok && exit 0
if ! command -v npm >/dev/null 2>&1; then
  echo "gpuprof setup: npm missing; gpuprof report will have no charts (apt-get install npm, then make deps)" >&2
  exit 0
fi
mkdir -p "$B/npm"
rm -rf "$DIR" # another version, or files that differ from the pin: fetch it again
if ! timeout 300 npm install --no-audit --no-fund --save-exact --prefix "$B/npm" "uplot@$VERSION" >&2; then
  echo "gpuprof setup: npm install uplot@$VERSION failed (registry unreachable?); gpuprof report will have no charts" >&2
  exit 0
fi
if ok; then
  echo "gpuprof setup: uplot $VERSION installed in $DIR; rebuild (make) to embed it in gpuprof report" >&2
else
  echo "gpuprof setup: uplot $VERSION in $DIR does not match scripts/uplot.pin; not embedded" >&2
fi
exit 0
