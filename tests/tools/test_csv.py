"""test_csv.py — `gpuprof export --format csv` against `--format sqlite`:
every table of the database, read by Python's sqlite3, has its CSV file,
read by Python's csv module and by a strict RFC 4180 reader written here
(which tells an empty field, NULL, from "", the empty string): the same
columns in the same order, the same row count, and the same value in every
cell (INTEGER columns as integers, REAL as the same double, TEXT with
U+FFFD for each byte that begins no valid UTF-8 sequence, the rule of
docs/CLI.md); the rows in the database's order where a table has no
INTEGER PRIMARY KEY.  Traces: the committed examples (a real MNIST and
vector_add trace recorded on an H200), gen_edge (quotes, commas, line
breaks, bytes that are not UTF-8, 64-bit values, NaN, +-inf, -0.0, a
process written twice), gen_stacks (call chains), a selection and a cut
trace (the same exit and rows as the SQLite export), and any trace named
after the build dir (`test_csv.py BUILD TRACE...`: a real one on the GPU
machine, scripts/gpu-session.sh csv).  --table NAME to a
file and to stdout (the bytes of DIR/NAME.csv).  Bad output: -o naming a
file, a directory that cannot be written, -o - without --table, --table
with another format, an unknown table: the message, a non-zero exit, no
file left behind.  With DuckDB installed (make deps), the queries below run
on the CSV directory through scripts/duckdb-sql.js and give the database's
answers."""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import tt

B = os.path.abspath(tt.B)
ROOT = os.path.join(tt.HERE, "..", "..")
GEN_EDGE = os.path.join(B, "tests", "tools", "gen_edge")
GEN_STACKS = os.path.join(B, "tests", "tools", "gen_stacks")
SCRIPT = os.path.join(ROOT, "scripts", "duckdb-sql.js")


def export(fmt, trace, out, *opts, code=0):
    p = tt.gp("export", "--format", fmt, *opts, trace, "-o", out, check=False)
    tt.eq(p.returncode, code, f"export {fmt} {' '.join(opts)} {os.path.basename(trace)}: exit ({p.stderr.strip()})")
    return p


def rfc4180(data):
    """The records of CSV text, by RFC 4180 alone: a field is quoted ("",
    the quote doubled; it may hold commas and line breaks) or not (no quote
    in it); records end in LF here.  An unquoted empty field is None."""
    rows, row, i, n = [], [], 0, len(data)
    while i < n:
        if data[i] == '"':
            j, val = i + 1, []
            while True:
                k = data.index('"', j)
                val.append(data[j:k])
                if data.startswith('""', k):
                    val.append('"')
                    j = k + 2
                else:
                    break
            field, i = "".join(val), k + 1
        else:
            j = i
            while j < n and data[j] not in ',\n':
                j += 1
            field = data[i:j] or None
            if field is not None and '"' in field:
                tt.fail(f"unquoted field with a quote: {field!r}")
            i = j
        row.append(field)
        if i < n and data[i] == ",":
            i += 1
            if i == n or data[i] == "\n":
                row.append(None)
        if i == n or data[i] == "\n":
            rows.append(row)
            row, i = [], i + 1
    return rows


def db_tables(db):
    """table -> (columns [(name, type, pk)], rows in rowid order, text as
    the CSV must hold it)"""
    con = sqlite3.connect(db)
    con.text_factory = bytes
    res = {}
    for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY rowid").fetchall():
        t = t.decode()
        cols = [(c[1].decode(), c[2].decode(), c[5]) for c in con.execute(f'PRAGMA table_info("{t}")')]
        rows = [tuple(tt.utf8_fixed(v) if isinstance(v, bytes) else v for v in r)
                for r in con.execute(f'SELECT * FROM "{t}" ORDER BY rowid')]
        res[t] = (cols, rows)
    con.close()
    return res


def typed(field, sqltype):
    if field is None:
        return None
    kind = sqltype.split()[0]
    return int(field) if kind == "INTEGER" else float(field) if kind == "REAL" else field


def same_tables(db, d, what):
    """Each table of the database: its CSV file, header, rows and values."""
    want = db_tables(db)
    if not os.path.isdir(d):
        tt.fail(f"{what}: no directory {d}")
        return want
    files = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".csv"))
    tt.eq(files, sorted(want), f"{what}: one CSV file per table")
    tt.expect(not [f for f in os.listdir(d) if f.endswith(".tmp")], f"{what}: no temporary file left")
    for t, (cols, rows) in want.items():
        raw = open(os.path.join(d, t + ".csv"), "rb").read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            tt.fail(f"{what}: {t}.csv is not UTF-8: {e}")
            continue
        mine = rfc4180(text)
        std = list(csv.reader(io.StringIO(text, newline="")))
        tt.eq(std, [[f or "" for f in r] for r in mine], f"{what}: {t}: Python's csv reads what RFC 4180 says")
        tt.eq(mine[:1], [[c[0] for c in cols]], f"{what}: {t}: header")
        got = [tuple(typed(f, c[1]) for f, c in zip(r, cols)) for r in mine[1:]]
        tt.eq(len(got), len(rows), f"{what}: {t}: row count")
        tt.expect(all(len(r) == len(cols) for r in mine), f"{what}: {t}: every row has {len(cols)} fields")
        keyed = any(c[2] and c[1] == "INTEGER" for c in cols)
        if keyed:
            got, rows = sorted(got, key=repr), sorted(rows, key=repr)
        for i, (g, w) in enumerate(zip(got, rows)):
            if g != w:
                tt.fail(f"{what}: {t} row {i}: csv {g!r} != sqlite {w!r}")
                break
    return want


QUERIES = [
    "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL), (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME),"
    " (SELECT count(*) FROM NVTX_EVENTS), (SELECT count(*) FROM StringIds)",
    'SELECT sum(k."end" - k.start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k'
    " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId",
    'SELECT s.value, count(*) AS n, sum(k."end" - k.start) AS ns FROM CUPTI_ACTIVITY_KIND_KERNEL k'
    " JOIN StringIds s ON s.id = k.shortName GROUP BY s.value ORDER BY ns DESC, s.value LIMIT 5",
]


def duckdb_same(db, d, what):
    """The queries on the CSV files, read by DuckDB (its own type
    detection), against sqlite3."""
    p = subprocess.run(["node", SCRIPT, "--build", B, "--json", d, *QUERIES], capture_output=True, text=True)
    if p.returncode == 3 or not shutil.which("node"):
        print(f"the DuckDB checks skipped: DuckDB not installed in {B}/npm (make deps)")
        return
    tt.eq(p.returncode, 0, f"{what}: duckdb-sql exit: {p.stderr.strip()}")
    got = [[[v if v is None or t == "VARCHAR" else int(v) for v, t in zip(r, o["types"])] for r in o["rows"]]
           for o in map(json.loads, p.stdout.splitlines())]
    con = sqlite3.connect(db)
    want = [[list(r) for r in con.execute(q)] for q in QUERIES]
    con.close()
    tt.eq(got, want, f"{what}: DuckDB on the CSV files gives sqlite3's answers")


with tt.tmpdir() as tmp:
    def path(name):
        return os.path.join(tmp, name)

    subprocess.run([GEN_EDGE, path("e.gpuprof")], check=True)
    subprocess.run([GEN_STACKS, path("s.gpuprof")], check=True, capture_output=True)
    traces = [os.path.join(ROOT, "examples", "mnist-h200.gpuprof"),
              os.path.join(ROOT, "examples", "vector_add-h200.gpuprof"), path("e.gpuprof"), path("s.gpuprof"),
              *sys.argv[2:]]
    for trace in traces:
        name = os.path.basename(trace)
        export("sqlite", trace, path(name + ".db"))
        export("csv", trace, path(name + ".csv"))
        same_tables(path(name + ".db"), path(name + ".csv"), name)
    mnist = traces[0]
    want = db_tables(path("mnist-h200.gpuprof.db"))
    tt.expect(len(want["CUPTI_ACTIVITY_KIND_KERNEL"][1]) > 1000, "mnist: the kernels are there")
    edge = db_tables(path("e.gpuprof.db"))
    tt.expect(any(None in r for r in edge["NVTX_EVENTS"][1]) and [""] in [list(r[1:]) for r in edge["StringIds"][1]],
              "gen_edge: NULLs and an empty string, told apart")
    raw = open(path("e.gpuprof.csv/StringIds.csv"), "rb").read()
    tt.expect(b',""\n' in raw and b'"kernel,with ""quotes""' in raw and b'"line one\nline two\r\n"' in raw,
              "gen_edge: the empty string, a quote, a comma and line breaks quoted")
    tt.expect(b"\xef\xbf\xbd" in raw, "gen_edge: U+FFFD for bytes that are not UTF-8")
    duckdb_same(path("mnist-h200.gpuprof.db"), path("mnist-h200.gpuprof.csv"), "mnist")

    # a selection, and a cut trace: what the SQLite export writes, the same exit (0, a warning)
    export("sqlite", mnist, path("w.db"), "--since", "8s", "--until", "9s")
    export("csv", mnist, path("w"), "--since", "8s", "--until", "9s")
    same_tables(path("w.db"), path("w"), "mnist --since 8s --until 9s")
    tt.expect(0 < len(db_tables(path("w.db"))["CUPTI_ACTIVITY_KIND_KERNEL"][1]) <
              len(want["CUPTI_ACTIVITY_KIND_KERNEL"][1]), "the selection keeps some kernels")
    data = open(mnist, "rb").read()
    open(path("cut.gpuprof"), "wb").write(data[:len(data) * 2 // 3])
    ps = tt.gp("export", "--format", "sqlite", path("cut.gpuprof"), "-o", path("cut.db"), check=False)
    pc = export("csv", path("cut.gpuprof"), path("cut"), code=ps.returncode)
    tt.expect("truncated" in pc.stderr, f"cut trace: says so: {pc.stderr.strip()!r}")
    same_tables(path("cut.db"), path("cut"), "cut trace")

    # --table: one table to a file or stdout, the directory's bytes
    kern = open(path("mnist-h200.gpuprof.csv/CUPTI_ACTIVITY_KIND_KERNEL.csv"), "rb").read()
    export("csv", mnist, path("k.csv"), "--table", "CUPTI_ACTIVITY_KIND_KERNEL")
    tt.eq(open(path("k.csv"), "rb").read(), kern, "--table to a file: the table's bytes")
    p = subprocess.run([tt.GPUPROF, "export", "--format", "csv", "--table", "CUPTI_ACTIVITY_KIND_KERNEL", mnist,
                        "-o", "-"], capture_output=True)
    tt.eq((p.returncode, p.stdout), (0, kern), "--table to stdout: the table's bytes")

    # an existing directory: the tables replaced, other files left alone
    os.makedirs(path("old"))
    open(path("old/StringIds.csv"), "w").write("stale")
    open(path("old/notes.txt"), "w").write("mine")
    export("csv", traces[1], path("old"))
    tt.eq(open(path("old/StringIds.csv"), "rb").read(),
          open(path("vector_add-h200.gpuprof.csv/StringIds.csv"), "rb").read(), "a stale table file replaced")
    tt.eq(open(path("old/notes.txt")).read(), "mine", "other files left alone")

    # bad output: a message, a non-zero exit, nothing left behind
    open(path("afile"), "w").write("x")
    p = export("csv", mnist, path("afile"), code=2)
    tt.expect("cannot create directory" in p.stderr and "a file has that name" in p.stderr,
              f"-o names a file: {p.stderr.strip()!r}")
    tt.eq(open(path("afile")).read(), "x", "-o names a file: the file untouched")
    if os.geteuid() == 0:
        ro = "/proc/1"  # a directory even root cannot create files in
    else:
        ro = path("ro")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
    p = export("csv", mnist, ro, code=2)
    tt.expect("cannot write" in p.stderr and ro in p.stderr, f"unwritable directory: {p.stderr.strip()!r}")
    tt.expect(not [f for f in os.listdir(ro) if f.endswith((".csv", ".tmp"))], "unwritable directory: no file")
    p = export("csv", mnist, ro + "/k.csv", "--table", "StringIds", code=2)
    tt.expect("cannot write" in p.stderr, f"--table to an unwritable place: {p.stderr.strip()!r}")
    p = export("csv", mnist, "-", code=1)
    tt.expect("csv output needs a directory name" in p.stderr, f"-o - without --table: {p.stderr.strip()!r}")
    p = export("sqlite", mnist, path("t.db"), "--table", "StringIds", code=1)
    tt.expect("--table applies to --format csv only" in p.stderr, f"--table with sqlite: {p.stderr.strip()!r}")
    tt.expect(not os.path.exists(path("t.db")), "--table with sqlite: no file")
    p = export("parquet", mnist, path("t.pq"), "--row-group", "10", "--table", "StringIds", code=1)
    tt.expect("--table applies to --format csv only" in p.stderr, f"--table with parquet: {p.stderr.strip()!r}")
    open(path("keep.csv"), "w").write("mine")
    p = export("csv", mnist, path("keep.csv"), "--table", "NoSuch", code=2)
    tt.expect("no table 'NoSuch' (META_DATA, StringIds," in p.stderr, f"unknown table: {p.stderr.strip()!r}")
    tt.eq(open(path("keep.csv")).read(), "mine", "unknown table: OUT untouched")

tt.finish()
