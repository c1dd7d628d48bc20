#!/usr/bin/env node
// duckdb-sql.js — runs SQL with DuckDB over a `gpuprof export --format
// parquet` or `--format csv` directory: each DIR/TABLE.parquet or
// DIR/TABLE.csv is a view named TABLE, so the queries written for the SQLite
// export run as they are (a CSV file's column types are DuckDB's guess from
// its values; "" is the empty string, an empty field NULL).
//
//   node scripts/duckdb-sql.js [--build B] [--json] [--time] DIR SQL...
//
// Prints each query's rows tab-separated under a header line (NULL as
// empty); --json: one JSON object per query instead, {"columns", "types",
// "rows"} with 64-bit integers as strings (exact); --time: each query's
// wall time on stderr.  DuckDB comes from $B/npm (scripts/setup-duckdb.sh,
// default build dir: build beside this script's folder).
'use strict';
const fs = require('fs');
const path = require('path');

function usage(msg) {
  if (msg) process.stderr.write(`duckdb-sql: ${msg}\n`);
  process.stderr.write('usage: node scripts/duckdb-sql.js [--build B] [--json] [--time] DIR SQL...\n');
  process.exit(2);
}

const args = process.argv.slice(2);
let build = path.join(__dirname, '..', 'build'), json = false, time = false;
while (args.length && args[0].startsWith('--')) {
  const a = args.shift();
  if (a === '--build') build = args.shift() || usage('--build needs a directory');
  else if (a === '--json') json = true;
  else if (a === '--time') time = true;
  else usage(`unknown option ${a}`);
}
if (args.length < 2) usage();
const dir = args.shift();

let duckdb;
try {
  duckdb = require(path.resolve(build, 'npm', 'node_modules', '@duckdb', 'node-api'));
} catch (e) {
  process.stderr.write(`duckdb-sql: DuckDB not installed in ${build}/npm (scripts/setup-duckdb.sh ${build}): ${e.message}\n`);
  process.exit(3);
}

const quote = (s) => '"' + s.replace(/"/g, '""') + '"';
const lit = (s) => "'" + s.replace(/'/g, "''") + "'";

(async () => {
  const db = await duckdb.DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const files = fs.readdirSync(dir).filter((f) => /\.(parquet|csv)$/.test(f)).sort();
  if (!files.length) usage(`no .parquet or .csv files in ${dir}`);
  for (const f of files) {
    const csv = f.endsWith('.csv'), file = lit(path.join(dir, f));
    await con.run(`CREATE VIEW ${quote(f.replace(/\.(parquet|csv)$/, ''))} AS SELECT * FROM ` +
                  (csv ? `read_csv(${file}, header = true, allow_quoted_nulls = false)` : `read_parquet(${file})`));
  }
  for (const sql of args) {
    const t0 = process.hrtime.bigint();
    const r = await con.runAndReadAll(sql);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (time) process.stderr.write(`${ms.toFixed(1)} ms: ${sql}\n`);
    const columns = r.columnNames(), types = r.columnTypes().map(String), rows = r.getRowsJson();
    if (json) {
      process.stdout.write(JSON.stringify({ columns, types, rows }) + '\n');
    } else {
      process.stdout.write(columns.join('\t') + '\n');
      for (const row of rows) process.stdout.write(row.map((v) => (v === null ? '' : String(v))).join('\t') + '\n');
    }
  }
})().catch((e) => {
  process.stderr.write(`duckdb-sql: ${e.message}\n`);
  process.exit(1);
});
