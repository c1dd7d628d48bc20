"""test_parquet.py — `gpuprof export --format parquet` against `--format
sqlite`: the same queries, each format read by an independent reader —
Python's sqlite3 for the database, DuckDB (Node.js, scripts/duckdb-sql.js;
installed by scripts/setup-duckdb.sh) for the Parquet files — must give the
same results: every table's columns, types and rows, row counts, sums of
durations, a GROUP BY of the top kernels, NULLs, strings with odd
characters and bytes that are not UTF-8 (U+FFFD in Parquet, by the rule in
docs/CLI.md), 64-bit values, a table whose later rows replace earlier ones.
Traces: tests/tools/gen_trace, gen_edge (edge values), gen_stacks (call
chains), and a 200,000-event bench trace written in row groups of 10,000
rows (several row groups and pages; their min/max statistics checked
against the rows).  Also: the selection options, --threads (the same
bytes), an empty trace, a window with no records, a corrupt trace (exit 2,
the intact part exported as SQLite exports it), byte flips and cuts at 12
offsets (the same exit as the SQLite export, never a crash, every table's
row count the same), bad output paths.

The checks that need no reader run always; without DuckDB the test then
exits 77 (skip), saying why."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import tt

B = os.path.abspath(tt.B)
SCRIPT = os.path.join(tt.HERE, "..", "..", "scripts", "duckdb-sql.js")
GEN_EDGE = os.path.join(B, "tests", "tools", "gen_edge")
GEN_STACKS = os.path.join(B, "tests", "tools", "gen_stacks")
GEN_BIG = os.path.join(B, "bench", "gen_bigtrace")


def duckdb_missing():
    if not shutil.which("node"):
        return "node not installed"
    p = subprocess.run(["node", SCRIPT, "--build", B, "/nonexistent", "SELECT 1"], capture_output=True, text=True)
    if p.returncode == 3:
        return f"DuckDB not installed in {B}/npm (scripts/setup-duckdb.sh {tt.B}, or make deps)"
    return None


MISSING = duckdb_missing()


def export(fmt, trace, out, *opts, code=0):
    p = tt.gp("export", "--format", fmt, *opts, trace, "-o", out, check=False)
    tt.eq(p.returncode, code, f"export {fmt} {' '.join(opts)} {os.path.basename(trace)}: exit ({p.stderr.strip()})")
    return p


def sq(db, *sqls):
    """Each query's rows from the SQLite database (text as Parquet must
    hold it)."""
    con = sqlite3.connect(db)
    con.text_factory = bytes
    res = []
    for sql in sqls:
        rows = con.execute(sql).fetchall()
        res.append([tuple(tt.utf8_fixed(v) if isinstance(v, bytes) else v for v in r) for r in rows])
    con.close()
    return res


INT_TYPES = ("BIGINT", "HUGEINT", "INTEGER", "UBIGINT", "SMALLINT", "TINYINT", "UINTEGER")


def dk(d, *sqls):
    """Each query's rows from the Parquet directory, read by DuckDB."""
    p = subprocess.run(["node", SCRIPT, "--build", B, "--json", d, *sqls], capture_output=True, text=True)
    if p.returncode != 0:
        tt.fail(f"duckdb-sql on {d}: exit {p.returncode}: {p.stderr.strip()}")
        return [[] for _ in sqls]
    res = []
    for line in p.stdout.splitlines():
        o = json.loads(line)
        conv = [(lambda v: int(v)) if t in INT_TYPES else (lambda v: float(v)) if t == "DOUBLE" else (lambda v: v)
                for t in o["types"]]
        res.append([tuple(None if v is None else c(v) for c, v in zip(conv, r)) for r in o["rows"]])
    return res


def tables(db):
    return [r[0] for r in sq(db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY rowid")[0]]


def srt(rows):
    return sorted(rows, key=lambda r: [(v is None, v if v is not None else 0) for v in r])


def same_tables(db, d, what):
    """Every table: the same columns with matching types, the same rows
    (sorted), and the same row count."""
    names = tables(db)
    files = sorted(f[:-8] for f in os.listdir(d) if f.endswith(".parquet"))
    tt.eq(files, sorted(names), f"{what}: one file per table")
    tt.expect(not [f for f in os.listdir(d) if f.endswith(".tmp")], f"{what}: no temporary file left")
    sql = [f'SELECT * FROM "{t}"' for t in names]
    info = [f"PRAGMA table_info(\"{t}\")" for t in names]
    schema = [f"SELECT name, type, repetition_type, converted_type FROM parquet_schema('{d}/{t}.parquet') "
              "WHERE name <> 'schema'" for t in names]
    want, cols = sq(db, *sql), sq(db, *info)
    got = dk(d, *sql, *schema)
    ptype = {"INTEGER": ("INT64", None), "REAL": ("DOUBLE", None), "TEXT": ("BYTE_ARRAY", "UTF8")}
    for i, t in enumerate(names):
        exp = [(c[1], *ptype[c[2].split()[0]], "REQUIRED" if c[3] or c[2] == "INTEGER" and c[5] else "OPTIONAL")
               for c in cols[i]]
        tt.eq([(s[0], s[1], s[3], s[2]) for s in got[len(names) + i]], exp, f"{what}: {t} columns and types")
        tt.eq(len(got[i]), len(want[i]), f"{what}: {t} row count")
        tt.eq(srt(got[i]), srt(want[i]), f"{what}: {t} rows")
    return dict(zip(names, want))


QUERIES = [
    # row counts
    "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL), (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME),"
    " (SELECT count(*) FROM NVTX_EVENTS), (SELECT count(*) FROM StringIds), (SELECT count(*) FROM COUNTERS)",
    # sums of durations
    'SELECT sum("end" - start), min("end" - start), max("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL',
    'SELECT sum("end" - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME',
    'SELECT sum("end" - start), count("end") FROM NVTX_EVENTS',
    # the top kernels by total time
    'SELECT s.value AS name, count(*) AS n, sum(k."end" - k.start) AS ns, max(k."end" - k.start) AS longest'
    " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
    " GROUP BY s.value ORDER BY ns DESC, name LIMIT 10",
    # kernels with the runtime call that launched them
    "SELECT count(*), sum(k.start - r.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
    " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId",
    # NULLs
    'SELECT count(*) FILTER (WHERE "end" IS NULL), count(*) FILTER (WHERE endGlobalTid IS NULL) FROM NVTX_EVENTS',
    "SELECT count(*) FILTER (WHERE value IS NULL), count(value) FROM COUNTERS",
    # strings
    "SELECT text, eventType FROM NVTX_EVENTS ORDER BY start, eventType",
    "SELECT value FROM StringIds WHERE value LIKE '%,%' OR value LIKE '%''%' ORDER BY id",
    # per stream and device
    'SELECT deviceId, streamId, count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL'
    " GROUP BY deviceId, streamId ORDER BY deviceId, streamId",
]


def same_queries(db, d, what, queries=QUERIES):
    want, got = sq(db, *queries), dk(d, *queries)
    for q, w, g in zip(queries, want, got):
        tt.eq(g, w, f"{what}: {q[:70]}")
    return want


with tt.tmpdir() as tmp:
    def path(name):
        return os.path.join(tmp, name)

    a = tt.gen(path("a.gpuprof"))
    subprocess.run([GEN_EDGE, path("e.gpuprof")], check=True)
    subprocess.run([GEN_EDGE, "--empty", path("empty.gpuprof")], check=True)
    subprocess.run([GEN_STACKS, path("s.gpuprof")], check=True, capture_output=True)
    subprocess.run([GEN_BIG, "200000", path("big.gpuprof")], check=True, capture_output=True)

    # ---- what needs no reader: usage, output paths, exit codes, files
    p = tt.gp("export", "--format", "parquet", a, "-o", "-", check=False)
    tt.eq(p.returncode, 1, "parquet -o -: usage error")
    tt.expect("directory" in p.stderr, f"parquet -o -: says why: {p.stderr.strip()!r}")
    for bad in ("0", "-5", "x", "2000000000"):
        p = tt.gp("export", "--format", "parquet", "--row-group", bad, a, "-o", path("x"), check=False)
        tt.eq(p.returncode, 1, f"--row-group {bad}: usage error")
    p = tt.gp("export", "--format", "sqlite", "--row-group", "10", a, "-o", path("x.db"), check=False)
    tt.eq(p.returncode, 1, "--row-group with sqlite: usage error")
    open(path("afile"), "w").write("x")
    p = tt.gp("export", "--format", "parquet", a, "-o", path("afile"), check=False)
    tt.eq(p.returncode, 2, "-o names a file: exit 2")
    tt.expect("cannot create directory" in p.stderr, f"-o names a file: message {p.stderr.strip()!r}")
    p = tt.gp("export", "--format", "parquet", a, "-o", path("no/such/dir"), check=False)
    tt.eq(p.returncode, 2, "-o in a missing directory: exit 2")
    # an existing directory: its tables replaced, nothing else touched
    os.makedirs(path("pa"))
    open(path("pa/StringIds.parquet"), "w").write("stale")
    open(path("pa/notes.txt"), "w").write("mine")
    export("parquet", a, path("pa"))
    export("sqlite", a, path("a.db"))
    tt.expect(open(path("pa/StringIds.parquet"), "rb").read(4) == b"PAR1", "stale table file replaced")
    tt.eq(open(path("pa/notes.txt")).read(), "mine", "other files left alone")
    for f in os.listdir(path("pa")):
        if f.endswith(".parquet"):
            b = open(path("pa/" + f), "rb").read()
            tt.expect(b[:4] == b"PAR1" and b[-4:] == b"PAR1", f"{f}: Parquet magic at both ends")
    # --threads: the same bytes
    export("parquet", path("big.gpuprof"), path("t1"), "--threads", "1", "--row-group", "10000")
    export("parquet", path("big.gpuprof"), path("t3"), "--threads", "3", "--row-group", "10000")
    for f in sorted(os.listdir(path("t1"))):
        tt.expect(open(path("t1/" + f), "rb").read() == open(path("t3/" + f), "rb").read(),
                  f"--threads 1 and 3: {f} byte-identical")
    # a corrupt trace: exit 2 naming the damage, the intact part written
    data = bytearray(open(path("big.gpuprof"), "rb").read())
    for i in range(len(data) // 2, len(data) // 2 + 16):
        data[i] ^= 0x5A
    open(path("corrupt.gpuprof"), "wb").write(bytes(data))
    for fmt, out in (("sqlite", path("c.db")), ("parquet", path("pc"))):
        p = export(fmt, path("corrupt.gpuprof"), out, code=2)
        tt.expect("corrupt" in p.stderr and "intact" in p.stderr, f"corrupt, {fmt}: message {p.stderr.strip()!r}")
    # byte flips and cuts: exit 0 or 2, never a crash; the files read back below
    good = open(a, "rb").read()
    damaged = []
    for i, off in enumerate(range(0, len(good), max(1, len(good) // 12))):
        for kind, content in (("flip", good[:off] + bytes([good[off] ^ 0xFF]) + good[off + 1:]), ("cut", good[:off])):
            t = path(f"{kind}{i}.gpuprof")
            open(t, "wb").write(content)
            ps = tt.gp("export", "--format", "sqlite", t, "-o", t + ".db", check=False)
            pp = tt.gp("export", "--format", "parquet", t, "-o", t + ".pq", check=False)
            tt.expect(pp.returncode in (0, 2), f"{kind} at {off}: parquet exit {pp.returncode}: {pp.stderr[-200:]}")
            tt.eq(pp.returncode, ps.returncode, f"{kind} at {off}: parquet exits as sqlite")
            if ps.returncode in (0, 2) and os.path.isfile(t + ".db") and os.path.isdir(t + ".pq"):
                damaged.append(t)
    # an empty trace and a window with no record
    export("sqlite", path("empty.gpuprof"), path("empty.db"))
    export("parquet", path("empty.gpuprof"), path("pempty"))
    export("sqlite", a, path("none.db"), "--since", "10s", "--until", "20s")
    export("parquet", a, path("pnone"), "--since", "10s", "--until", "20s")

    if MISSING:
        print(f"skip: {MISSING}")
        sys.exit(77)

    # ---- gen_trace: every table, then the queries
    rows = same_tables(path("a.db"), path("pa"), "gen_trace")
    want = same_queries(path("a.db"), path("pa"), "gen_trace")
    tt.eq(want[1], [(49000, 5000, 20000)], "gen_trace: kernel time (by hand: test_sqlite.py)")
    tt.eq(want[4], [("my_plain_kernel", 2, 25000, 20000), ("vecAdd", 3, 24000, 10000)], "gen_trace: top kernels")
    tt.eq(want[6], [(2, 2)], "gen_trace: the marks' NULL end and end thread")
    tt.expect(("odd \"quoted\"\ttab\x01 ctl \ufffd bad utf8 \xe9", 34) in want[8],
              f"gen_trace: the odd mark's text, 0xff as U+FFFD: {want[8]}")

    # ---- gen_edge: 64-bit values, odd strings, NaN, a replaced row
    for opts, name in (((), "pe"), (("--abs-time",), "pe_abs")):
        export("sqlite", path("e.gpuprof"), path(name + ".db"), *opts)
        export("parquet", path("e.gpuprof"), path(name), *opts)
        rows = same_tables(path(name + ".db"), path(name), "gen_edge " + " ".join(opts))
        same_queries(path(name + ".db"), path(name), "gen_edge " + " ".join(opts))
    got = dk(path("pe"), "SELECT address, bytes, correlationId FROM CUDA_GPU_MEMORY_USAGE_EVENTS",
             "SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start",
             "SELECT int64Value, rangeId FROM NVTX_EVENTS WHERE eventType <> 34 ORDER BY start",
             "SELECT value FROM COUNTERS ORDER BY start",
             "SELECT pid, name FROM PROCESSES",
             "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
             "SELECT text FROM NVTX_EVENTS WHERE eventType = 34 ORDER BY start")
    tt.eq(got[0], [(-65536, -(1 << 63) + 5, 7), (-(1 << 63), -1, -1), (-65536, -(1 << 63) + 5, 9)],
          "edge: 64-bit addresses, bytes and ids as signed 64-bit")
    tt.eq(got[1], [(1,), (-1,), (-(1 << 63) + 1,), (4,), (5,)], "edge: correlation ids")
    tt.eq(got[2], [(-(1 << 63), 0), ((1 << 63) - 1, 0), (0, -1), (-1, 0)],
          "edge: NVTX payloads and the start/end range id")
    inf = float("inf")
    tt.eq(got[3], [(None,), (inf,), (-inf,), (0.0,), (5e-324,), (1.7976931348623157e308,), (0.1,),
                   (-9.223372036854775808e18,), (9007199254740992.0,)], "edge: counters (NaN is NULL)")
    tt.eq(got[4], [(10, "helper"), (9000, "python train.py (restarted)")],
          "edge: PROCESSES by key, the later row of pid 9000 kept")
    tt.eq(got[5], [(-700,)], "edge: a call before the trace start")
    tt.eq(got[6], [("semi;colon|pipe%percent_under",), ("",),
                   ("bad \ufffd stray, \ufffd\ufffd cut, \ufffd\ufffd\ufffd surrogate",)], "edge: marks' texts")
    starts = dk(path("pe_abs"), "SELECT min(start), max(start) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0]
    tt.eq(starts, [((1 << 62) + 123 + 1000, (1 << 62) + 123 + 14000)], "edge --abs-time: 63-bit times")

    # ---- gen_stacks: the call chains
    export("sqlite", path("s.gpuprof"), path("s.db"))
    export("parquet", path("s.gpuprof"), path("ps"))
    rows = same_tables(path("s.db"), path("ps"), "gen_stacks")
    tt.expect(len(rows["CUDA_CALLCHAINS"]) > 0 and len(rows["CALLCHAIN_SITES"]) > 0, "gen_stacks: call chains")

    # ---- 200,000 events in row groups of 10,000: queries, and each row
    # group's min/max statistics against its rows
    export("sqlite", path("big.gpuprof"), path("big.db"))
    want = same_queries(path("big.db"), path("t1"), "bigtrace")
    nk = want[0][0][0]
    tt.expect(nk > 30000, f"bigtrace: {nk} kernels, several row groups")
    meta = dk(path("t1"), "SELECT row_group_id, row_group_num_rows, stats_min_value, stats_max_value, stats_null_count"
              " FROM parquet_metadata('%s/CUPTI_ACTIVITY_KIND_KERNEL.parquet') WHERE path_in_schema = 'start'"
              " ORDER BY row_group_id" % path("t1"))[0]
    starts = [r[0] for r in sq(path("big.db"), "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid")[0]]
    groups = [starts[i:i + 10000] for i in range(0, len(starts), 10000)]
    tt.eq([(m[1], int(m[2]), int(m[3]), m[4]) for m in meta], [(len(g), min(g), max(g), 0) for g in groups],
          "bigtrace: row groups of 10,000 rows, each with its min/max start")
    # a filter on start: DuckDB may skip row groups by those statistics
    lo, hi = starts[len(starts) // 3], starts[len(starts) // 3 + 5000]
    q = [f'SELECT count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start >= {lo} AND start < {hi}']
    tt.eq(dk(path("t1"), *q), sq(path("big.db"), *q), "bigtrace: a time filter")
    # the default row group: the same answers
    export("parquet", path("big.gpuprof"), path("tdef"))
    same_queries(path("big.db"), path("tdef"), "bigtrace, default row group")

    # ---- selections: the same records in both
    for sel in (("--since", "50us", "--until", "200us"), ("--range", "forward"), ("--steps", "1"),
                ("--since", "10s", "--until", "20s")):
        export("sqlite", a, path("sel.db"), *sel)
        if os.path.isdir(path("psel")):
            shutil.rmtree(path("psel"))
        export("parquet", a, path("psel"), *sel)
        same_tables(path("sel.db"), path("psel"), "gen_trace " + " ".join(sel))
    k = dk(path("pnone"), "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", "SELECT count(*) FROM NVTX_EVENTS")
    tt.eq(k, [[(0,)], [(0,)]], "a window with no record: empty tables")

    # ---- the damaged copies: every table's rows counted both ways
    names = tables(path("a.db"))
    q = [f"SELECT count(*) FROM read_parquet('{t}.pq/{n}.parquet')" for t in damaged for n in names]
    got = dk(path("pa"), *q)
    want = [sq(t + ".db", *[f'SELECT count(*) FROM "{n}"' for n in names]) for t in damaged]
    tt.eq(got, [c for w in want for c in w], f"{len(damaged)} damaged traces: row counts")
    tt.expect(len(damaged) >= 12, f"damaged traces exported: {len(damaged)}")

    # ---- an empty trace; a corrupt one
    rows = same_tables(path("empty.db"), path("pempty"), "empty trace")
    tt.eq(sum(len(v) for t, v in rows.items() if t not in ("META_DATA", "ENUM_NSYS_EVENT_TYPE",
                                                            "ENUM_CUDA_MEMCPY_OPER")), 0, "empty trace: no rows")
    want = same_queries(path("c.db"), path("pc"), "corrupt trace")
    full = sq(path("big.db"), QUERIES[0])[0]
    # the damaged chunk's records are lost (which table they were in depends
    # on the chunk the flipped bytes fall in), the other chunks' are there
    tt.expect(all(w <= f for w, f in zip(want[0][0], full[0])) and 0 < sum(want[0][0][:3]) < sum(full[0][:3]),
              f"corrupt trace: rows of the intact chunks ({want[0]} of {full})")
    counts = [f'SELECT count(*) FROM "{t}"' for t in tables(path("c.db"))]
    tt.eq(dk(path("pc"), *counts), sq(path("c.db"), *counts), "corrupt trace: every table's row count")
tt.finish()
