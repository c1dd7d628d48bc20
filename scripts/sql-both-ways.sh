#!/bin/sh
# sql-both-ways.sh — one trace exported to SQLite and to Parquet (wall time,
# peak RSS, output bytes of each export), then the same queries run on both:
# sqlite3 on the database, DuckDB (scripts/duckdb-sql.js) on the Parquet
# directory; prints each query's time both ways and checks that the two
# answers are the same text.  Prints Markdown table rows (docs/PERFORMANCE.md
# "Offline tool" has the figures of one run).  The answers are kept in
# OUTDIR/qN.sqlite.txt and qN.duckdb.txt (rows, tab-separated).
#
#   scripts/sql-both-ways.sh TRACE [OUTDIR]      (default OUTDIR: /tmp/gpuprof-sql)
#
# The queries: the top 10 kernels by total time, and the kernel time of
# steps 1001..1010 (the outermost NVTX range "train_step", as `make
# bigtrace` writes them; a range join).  Environment: GPUPROF (default
# build/bin/gpuprof), B (build dir holding npm/, default build).  Needs GNU
# time, sqlite3, node and DuckDB (scripts/setup-duckdb.sh).
set -eu
[ $# -ge 1 ] || { echo "usage: scripts/sql-both-ways.sh TRACE [OUTDIR]" >&2; exit 1; }
TRACE=$1
OUT=${2:-/tmp/gpuprof-sql}
GPUPROF=${GPUPROF:-build/bin/gpuprof}
B=${B:-build}
HERE=$(dirname "$0")
mkdir -p "$OUT"
DB=$OUT/trace.db
PQ=$OUT/trace.parquet

mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
# timed LABEL CMD...: runs CMD, stdout to $OUT/out.txt; sets WALL (s) and RSS (MiB)
timed() {
  label=$1; shift
  /usr/bin/time -f "%e %M" -o "$OUT/time" "$@" >"$OUT/out.txt" || { echo "$label failed" >&2; exit 1; }
  read -r WALL rss <"$OUT/time"
  RSS=$(mib "$rss")
}

echo "| export | wall (s) | peak RSS (MiB) | output (bytes) |"
echo "|---|---:|---:|---:|"
timed sqlite "$GPUPROF" export --format sqlite "$TRACE" -o "$DB"
echo "| --format sqlite | $WALL | $RSS | $(stat -c %s "$DB") |"
rm -rf "$PQ"
timed parquet "$GPUPROF" export --format parquet "$TRACE" -o "$PQ"
echo "| --format parquet | $WALL | $RSS | $(du -sb "$PQ" | cut -f1) |"

Q1='SELECT s.value AS kernel, count(*) AS launches, sum(k."end" - k.start) AS total_ns
FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
GROUP BY s.value ORDER BY total_ns DESC LIMIT 10'
Q2='WITH steps AS (SELECT row_number() OVER (ORDER BY start) AS step, start, "end" FROM NVTX_EVENTS
                WHERE text = '"'train_step'"' AND eventType = 59)
SELECT s.step, count(*) AS kernels, sum(k."end" - k.start) AS kernel_ns, s."end" - s.start AS step_ns
FROM steps s JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.start >= s.start AND k.start < s."end"
WHERE s.step BETWEEN 1001 AND 1010 GROUP BY s.step, s.start, s."end" ORDER BY s.step'

echo
echo "| query | sqlite3 (s, MiB) | DuckDB (s, MiB; query alone) | same answer |"
echo "|---|---:|---:|---|"
n=0
for q in "$Q1" "$Q2"; do
  n=$((n + 1))
  timed sqlite3 sqlite3 -separator '	' "$DB" "$q"
  mv "$OUT/out.txt" "$OUT/q$n.sqlite.txt"
  s_wall=$WALL s_rss=$RSS
  timed duckdb sh -c 'node "$1" --build "$2" --time "$3" "$4" 2>"$5"' sh "$HERE/duckdb-sql.js" "$B" "$PQ" "$q" "$OUT/q$n.ms"
  tail -n +2 "$OUT/out.txt" >"$OUT/q$n.duckdb.txt" # its header line
  ms=$(sed -n 's/^\([0-9.]*\) ms:.*/\1/p' "$OUT/q$n.ms")
  same=$(cmp -s "$OUT/q$n.sqlite.txt" "$OUT/q$n.duckdb.txt" && echo yes || echo "NO: diff $OUT/q$n.*.txt")
  echo "| Q$n | $s_wall, $s_rss | $WALL, $RSS ($ms ms) | $same |"
done
echo
echo "Q1: $Q1" | tr '\n' ' '
echo
echo "Q2: $Q2" | tr '\n' ' '
echo
