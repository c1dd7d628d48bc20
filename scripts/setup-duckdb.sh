#!/bin/sh
# Installs DuckDB for Node.js (npm package @duckdb/node-api, this exact
# version; npm picks its native binding, e.g. @duckdb/node-bindings-linux-x64)
# into $B/npm, the independent reader that tests/tools/test_parquet.py and
# scripts/duckdb-sql.js run SQL with over `gpuprof export --format parquet`.
# Run by `make deps` and .ci/run; idempotent; offline once done.  Never
# fails the caller: without npm or registry access it says so, and
# test_parquet skips.
#   scripts/setup-duckdb.sh [BUILD_DIR]      (default build)
B=${1:-build}
VERSION=1.5.6-r.1
DIR=$B/npm/node_modules/@duckdb/node-api
ok() {
  grep -q "\"version\": *\"$VERSION\"" "$DIR/package.json" 2>/dev/null || return 1
  (cd "$B/npm" && node -e 'require("@duckdb/node-api")') >/dev/null 2>&1
}
ok && exit 0
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "gpuprof setup: node/npm missing; test_parquet will skip (apt-get install npm, then make deps)" >&2
  exit 0
fi
mkdir -p "$B/npm"
# A saved install (in $B/npm/package.json) drops packages installed with
# --no-save, as scripts/setup-uplot.sh installs uPlot: put it back after.
had_uplot=$([ -d "$B/npm/node_modules/uplot" ] && echo 1)
if ! timeout 300 npm install --no-audit --no-fund --save-exact --prefix "$B/npm" "@duckdb/node-api@$VERSION" >&2; then
  echo "gpuprof setup: npm install @duckdb/node-api@$VERSION failed (registry unreachable?); test_parquet will skip" >&2
  exit 0
fi
[ -n "$had_uplot" ] && "$(dirname "$0")/setup-uplot.sh" "$B"
if ok; then
  echo "gpuprof setup: DuckDB (@duckdb/node-api $VERSION) installed in $B/npm" >&2
else
  echo "gpuprof setup: @duckdb/node-api $VERSION in $B/npm does not load; test_parquet will skip" >&2
fi
exit 0
