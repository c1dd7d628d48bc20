"""Time-window reads (format 1.4, docs/FORMAT.md "Metadata apart"): `dump`,
`export --format perfetto` and `export --format sqlite` with a selection
read only the chunks of its span, and print what a whole read prints.

The trace (tests/tools/gen_window.c, written by the in-process recorder as
the shim writes one): thread names, a module, stacks, a clock, graph nodes
and a GPU-activity window written before step 0, 60 steps of 1 ms from
10 ms, one chunk per step and thread, the activity thread's steps from 20 on
in swapped pairs (a source out of time order).

The reference is the same file with the header flag GP_HDR_FLAG_META_APART
cleared: the tools must then read it whole (as an older trace), and filter.
Asserted:
  * the recorder sets the flag, and `gpuprof merge` of two such traces;
  * for each selection, the windowed outputs are byte-identical to the
    reference's (dump text and --json, perfetto JSON, the SQLite tables),
    and the windowed dump holds the metadata written before the window
    (threads, module, stacks, clock, graph nodes, the window record): a
    window that dropped them, or that reordered the out-of-order source's
    records, fails here;
  * the window is used: a damaged data chunk before the selection is not
    read (no warning) by the windowed export, and is by the reference."""
import os
import sqlite3
import struct
import subprocess
import zlib

import tt

GEN_WINDOW = os.path.join(os.path.dirname(tt.GEN), "gen_window")
T0 = 1_000_000_000
MS = 1_000_000
FLAG_META_APART = 2


def check(cond, what):
    if not cond:
        tt.fail(what)


def header(path):
    with open(path, "rb") as f:
        b = f.read(16)
        hsize = struct.unpack_from("<I", b, 12)[0]
        f.seek(0)
        return bytearray(f.read(hsize))


def write_flags(path, flags):
    b = header(path)
    struct.pack_into("<I", b, 44, flags)
    struct.pack_into("<I", b, len(b) - 4, zlib.crc32(bytes(b[:-4])) & 0xFFFFFFFF)
    with open(path, "r+b") as f:
        f.write(b)


def chunks(path):
    """(offset, csize, source, first_ts, last_ts) of each chunk, from the
    40-byte chunk headers (docs/FORMAT.md "Chunk")."""
    data = open(path, "rb").read()
    off = len(header(path))
    out = []
    while off + 40 <= len(data) and data[off:off + 4] == b"GPCK":
        csize, _usize, src, _n, first, last = struct.unpack_from("<IIIIQQ", data, off + 4)
        out.append((off, csize, src, first, last))
        off += 40 + csize
    return out


def sqlite_rows(db):
    """The database as SQL, but the input's path (META_DATA source_file)."""
    con = sqlite3.connect(db)
    rows = [r for r in con.iterdump() if "'source_file'" not in r]
    con.close()
    return rows


def outputs(d, trace, sel, tag, check=True):
    """Every output of the selection sel on trace: dump text and JSON,
    perfetto, the SQLite database's content; and export's exit status and
    stderr."""
    dump = tt.gp("dump", *sel, trace, check=check).stdout
    dj = tt.gp("dump", "--json", *sel, trace, check=check).stdout
    pj = os.path.join(d, tag + ".json")
    p = tt.gp("export", "--format", "perfetto", *sel, trace, "-o", pj, check=check)
    db = os.path.join(d, tag + ".db")
    tt.gp("export", "--format", "sqlite", *sel, trace, "-o", db, check=check)
    rows = sqlite_rows(db)
    os.unlink(db)
    return dump, dj, open(pj, "rb").read(), rows, p.returncode, p.stderr


with tt.tmpdir() as d:
    t = os.path.join(d, "t.gpuprof")
    subprocess.run([GEN_WINDOW, t], check=True)
    flags = struct.unpack_from("<I", header(t), 44)[0]
    check(flags & FLAG_META_APART, f"the recorder sets GP_HDR_FLAG_META_APART (flags {flags:#x})")
    u = os.path.join(d, "u.gpuprof")
    with open(t, "rb") as a, open(u, "wb") as b:
        b.write(a.read())
    write_flags(u, flags & ~FLAG_META_APART)

    sels = [
        ["--since", "55ms"],                      # the last steps
        ["--since", "40ms", "--until", "41ms"],   # step 30: its pair 31 comes first in the activity source
        ["--since", "41ms", "--until", "42ms"],   # step 31
        ["--since", "40500us", "--until", "41300us"],
        ["--until", "20ms"],                      # before the swapped pairs
        ["--since", "100ms"],                     # nothing timed
        ["--steps", "44:53"],                     # ten steps
        ["--range", "step 47"],
        ["--steps", "30:31", "--since", "40200us"],
    ]
    for sel in sels:
        got = outputs(d, t, sel, "w")
        ref = outputs(d, u, sel, "r")
        name = " ".join(sel)
        check(got[0] == ref[0], f"dump {name}: same text as a whole read ({len(got[0])} bytes)")
        check(got[1] == ref[1], f"dump --json {name}: same lines as a whole read")
        check(got[2] == ref[2], f"export perfetto {name}: same bytes as a whole read ({len(got[2])})")
        check(got[3] == ref[3], f"export sqlite {name}: same tables as a whole read")
        # what was written before the window is there (independently of the tool:
        # the generator wrote one module, three stacks, a clock, two graph nodes)
        types = [line.split()[1] for line in got[0].splitlines() if len(line.split()) > 1]
        for typ, n in (("thread", 2), ("module", 1), ("stack", 3), ("clock", 1), ("graph_node", 2)):
            check(types.count(typ) == n, f"dump {name}: {n} {typ} record(s) ({types.count(typ)})")
        check(b'"trainer"' in got[2], f"export perfetto {name}: the thread's name")
        check(b"cudaLaunchKernel" not in got[2] or b'"layer1 (train.py:11)"' in got[2],
              f"export perfetto {name}: the calls' stacks")

    # A merged trace keeps it: the later input's metadata goes to a source
    # of kind meta, which the writer and the reader take as metadata too.
    t2 = os.path.join(d, "t2.gpuprof")
    subprocess.run([GEN_WINDOW, t2], check=True)
    m = os.path.join(d, "m.gpuprof")
    tt.gp("merge", "-o", m, t, t2)
    mflags = struct.unpack_from("<I", header(m), 44)[0]
    check(mflags & FLAG_META_APART, f"gpuprof merge of two such traces sets the flag (flags {mflags:#x})")
    mu = os.path.join(d, "mu.gpuprof")
    with open(m, "rb") as a, open(mu, "wb") as b:
        b.write(a.read())
    write_flags(mu, mflags & ~FLAG_META_APART)
    for sel in (["--since", "55ms"], ["--since", "40ms", "--until", "41ms"], ["--steps", "44:53"]):
        got = outputs(d, m, sel, "w")
        ref = outputs(d, mu, sel, "r")
        name = "merged " + " ".join(sel)
        check(got[:4] == ref[:4], f"{name}: the same outputs as a whole read")
        types = [line.split()[1] for line in got[0].splitlines() if len(line.split()) > 1]
        check(types.count("graph_node") == 4 and types.count("thread") == 4,
              f"{name}: both inputs' graph nodes and threads ({types.count('graph_node')}, {types.count('thread')})")

    # The window is used: damage a data chunk of step 2 (before every
    # selection below), in both files.
    victim = [c for c in chunks(t) if c[2] != 0 and c[3] and c[4] < T0 + 13 * MS]
    check(len(victim) > 0, "a data chunk before the selection")
    off, csize = victim[-1][0], victim[-1][1]
    for path in (t, u):
        with open(path, "r+b") as f:
            f.seek(off + 40 + csize // 2)
            byte = f.read(1)
            f.seek(off + 40 + csize // 2)
            f.write(bytes([byte[0] ^ 0xFF]))
    sel = ["--since", "50ms", "--until", "60ms"]
    got = outputs(d, t, sel, "w")
    ref = outputs(d, u, sel, "r", check=False)
    check(got[:4] == ref[:4], "damaged early chunk: the same outputs")
    check(ref[4] == 2 and "corrupt" in ref[5], f"a whole read reports the damaged chunk: {ref[5].strip()!r}")
    check(got[4] == 0 and not got[5], f"the windowed export does not read it: {got[5].strip()!r}")

tt.finish()
