#!/bin/sh
# Installs what tests/tools/test_speedscope.py needs to load the folded export
# in speedscope: Debian's chromium (headless) and the speedscope npm package
# (pinned) in $B/npm.  Idempotent.  Never fails the caller: without root, apt
# or registry access it says what is missing and the test skips, saying why.
#   scripts/setup-speedscope.sh [BUILD_DIR]      (default build)
B=${1:-build}
VERSION=1.25.0
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "gpuprof setup: installing chromium (speedscope check of the folded export)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) >&2 ||
      echo "gpuprof setup: could not install chromium; test_speedscope will skip" >&2
  else
    echo "gpuprof setup: chromium missing; as root: apt-get install chromium (else test_speedscope skips)" >&2
  fi
fi
if [ ! -f "$B/npm/node_modules/speedscope/dist/release/index.html" ]; then
  if command -v npm >/dev/null 2>&1; then
    mkdir -p "$B/npm"
    timeout 300 npm install --no-audit --no-fund --prefix "$B/npm" "speedscope@$VERSION" >&2 ||
      echo "gpuprof setup: npm install speedscope failed (registry unreachable?); test_speedscope will skip" >&2
  else
    echo "gpuprof setup: npm missing; test_speedscope will skip" >&2
  fi
fi
exit 0
