"""Every subcommand on damaged input: a non-gpuprof file, an empty file, a
missing file and a file cut inside its header exit 2 with "gpuprof CMD:
cannot read FILE: cause"; a file cut mid-way (a killed job) shows its intact
prefix, warns "truncated" and exits 0 (2 with --strict); a corrupt chunk
exits 2 naming the damage (report still writes its page from the intact
frames).  Then byte flips and cuts at many offsets: never
a crash (signal) or a hang, always exit 0 or 2."""
import json
import os
import shutil
import sqlite3
import subprocess

import tt


def cmds(path, d):
    n = [0]

    def out(ext):
        n[0] += 1
        p = os.path.join(d, f"out{n[0]}.{ext}")
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.unlink(p)
        return p
    return [
        ["info", path], ["info", "--json", path], ["dump", path], ["dump", "--json", path],
        ["stats", path], ["stats", "--format", "csv", path],
        ["export", "--format", "perfetto", path, "-o", out("json")],
        ["export", "--format", "sqlite", path, "-o", out("db")],
        ["export", "--format", "parquet", path, "-o", out("parquet")],
        ["export", "--format", "csv", path, "-o", out("csv")],
        ["merge", path, "-o", out("gpuprof")],
        ["report", "-o", out("html"), path],
        ["diff", path, path],
    ]


def run(args):
    p = subprocess.run([tt.GPUPROF] + args, capture_output=True, text=True, errors="replace", timeout=60)
    tt.expect(p.returncode >= 0 and p.returncode < 128,
              f"gpuprof {' '.join(args)} crashed (status {p.returncode}): {p.stderr[-300:]}")
    return p


with tt.tmpdir() as d:
    good = tt.gen(os.path.join(d, "good.gpuprof"))
    data = open(good, "rb").read()
    full_dump = run(["dump", "--json", good]).stdout.splitlines()

    def write(name, content):
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(content)
        return p

    bad = {
        "text": write("text.gpuprof", b"this is not a trace\n" * 10),
        "empty": write("empty.gpuprof", b""),
        "missing": os.path.join(d, "missing.gpuprof"),
        "header": write("header.gpuprof", data[:20]),
    }
    for what, path in bad.items():
        for args in cmds(path, d):
            p = run(args)
            tt.eq(p.returncode, 2, f"{what}: gpuprof {' '.join(args)} exit")
            sub = args[0]
            tt.expect(f"gpuprof {sub}: cannot read {path}: " in p.stderr,
                      f"{what}: gpuprof {' '.join(args)} message: {p.stderr.strip()!r}")
    tt.expect("not a gpuprof trace" in run(["info", bad["text"]]).stderr, "bad magic named")
    tt.expect("No such file" in run(["info", bad["missing"]]).stderr, "missing file named")

    # cut in the middle: the first chunk(s) are intact
    cut = write("cut.gpuprof", data[:len(data) * 2 // 3])
    for args in cmds(cut, d):
        p = run(args)
        tt.eq(p.returncode, 0, f"truncated: gpuprof {' '.join(args)} exit (stderr {p.stderr.strip()!r})")
        tt.expect("truncated" in p.stderr, f"truncated: gpuprof {' '.join(args)} warns: {p.stderr.strip()!r}")
        if args[0] in ("info", "dump", "stats", "export") and "-o" not in args:
            tt.expect(p.stdout.strip() != "", f"truncated: gpuprof {' '.join(args)} printed the intact prefix")
        if args[0] in ("info", "dump", "stats"):
            strict = run(args[:1] + ["--strict"] + args[1:])
            tt.eq(strict.returncode, 2, f"truncated --strict: gpuprof {' '.join(args)}")
    info = run(["info", cut]).stdout
    tt.expect("integrity:  truncated after" in info, f"info says truncated: {info[-200:]}")
    prefix = run(["dump", "--json", cut]).stdout.splitlines()
    tt.expect(0 < len(prefix) < len(full_dump), f"dump of a cut file: {len(prefix)} of {len(full_dump)} lines")
    for l in prefix:
        json.loads(l)
    tt.eq(json.loads(run(["info", "--json", cut]).stdout)["integrity"]["status"], "truncated", "info --json status")
    # a cut file still exports a loadable database / JSON
    db = os.path.join(d, "cut.db")
    run(["export", "--format", "sqlite", cut, "-o", db])
    sqlite3.connect(db).execute("SELECT count(*) FROM StringIds").fetchall()
    pj = os.path.join(d, "cut.json")
    run(["export", "--format", "perfetto", cut, "-o", pj])
    json.load(open(pj))

    # corrupt bytes inside the last data chunk
    c = bytearray(data)
    mid = len(data) // 2
    for i in range(mid, mid + 16):
        c[i] ^= 0x5A
    corrupt = write("corrupt.gpuprof", bytes(c))
    for args in cmds(corrupt, d):
        p = run(args)
        tt.eq(p.returncode, 2, f"corrupt: gpuprof {' '.join(args)} exit")
        tt.expect(f"gpuprof {args[0]}: cannot read {corrupt}: " in p.stderr and "corrupt" in p.stderr,
                  f"corrupt: gpuprof {' '.join(args)} message: {p.stderr.strip()!r}")
    # issue #40: it said "1 corrupt frames skipped (0 bytes)": a chunk that
    # fails to decode is skipped whole, its bytes were never counted
    integ = [l for l in run(["info", corrupt]).stdout.splitlines() if l.startswith("integrity:")]
    tt.expect(len(integ) == 1 and "1 corrupt chunk skipped, " in integ[0] and "(0 bytes)" not in integ[0],
              f"info reports the corrupt chunk: {integ}")
    # report, like the others, writes its page from the intact frames (issue
    # #38: it said "output covers the intact frames only" and wrote none)
    page = os.path.join(d, "corrupt.html")
    p = run(["report", "-o", page, corrupt])
    tt.eq(p.returncode, 2, "corrupt: report exit")
    tt.expect(os.path.exists(page), "corrupt: report writes the page from the intact frames")
    if os.path.exists(page):
        html = open(page, encoding="utf-8").read()
        tt.expect('"frames_corrupt":' in html and '"frames_corrupt":0' not in html and html.rstrip().endswith("</html>"),
                  "corrupt: the whole page, its integrity saying frames were skipped")
    # a missing trace among good ones: the page has the good ones
    p = run(["report", "-o", page, bad["missing"], good])
    tt.eq(p.returncode, 2, "report missing + good: exit")
    tt.expect(os.path.exists(page) and good in open(page, encoding="utf-8").read(),
              "report missing + good: the page has the good trace")

    # many damages: no crash, no hang, exit 0 or 2, dump output stays JSON
    for off in range(0, len(data), max(1, len(data) // 60)):
        c = bytearray(data)
        c[off] ^= 0xFF
        p1 = write("flip.gpuprof", bytes(c))
        p2 = write("cutn.gpuprof", data[:off])
        for p in (p1, p2):
            for args in (["info", p], ["dump", "--json", p], ["stats", "--format", "json", p]):
                r = run(args)
                tt.expect(r.returncode in (0, 2), f"offset {off}: gpuprof {' '.join(args)} exit {r.returncode}")
                if args[0] == "dump":
                    for l in r.stdout.splitlines():
                        try:
                            json.loads(l)
                        except ValueError:
                            tt.fail(f"offset {off}: dump line not JSON: {l[:100]}")
                if args[0] == "stats" and r.stdout:
                    json.loads(r.stdout)
tt.finish()
