#!/bin/sh
# carry-build.sh — the build for the GPU machine (scripts/gpu-session.sh), made
# here (glibc 2.36 binaries run there; it has no libunwind, no package
# install, no network): .carry/build with libunwind beside the shim and the
# report's uPlot embedded from this checkout's `make deps` (build/npm).
#   scripts/carry-build.sh        then carry ".carry" to the GPU machine
set -eu
UPLOT=${UPLOT_PKG:-build/npm/node_modules/uplot}
[ -d "$UPLOT" ] || echo "carry-build: no $UPLOT (make deps first): the report will have no charts" >&2
rm -rf .carry/build
make -j"${JOBS:-2}" B=.carry/build UPLOT_PKG="$UPLOT" all >/dev/null
sh scripts/carry-libunwind.sh .carry/build/lib >/dev/null
# the build's name for the GPU machine's tables: its copy of the tree may
# carry a stale .git (the matrix of 2026-12-03 printed the session's first
# commit), so the commit travels with the build
{ git rev-parse --short HEAD; git diff --quiet HEAD || echo "+uncommitted"; } 2>/dev/null | paste -sd '' > .carry/build/BUILD
du -sh .carry
