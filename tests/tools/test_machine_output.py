"""Lossless machine output of `gpuprof stats` and `dump` (issue 21): sizes in
bytes (memsize JSON rounded to MB before: a 4-byte copy was 0.0), unrounded
numbers, pid/device/mangled name in kernel rows, enums as names and "not
applicable" ids as null (a context synchronisation's stream was
4294967295), one CSV file per report with --csv-dir."""
import json
import os

import tt

with tt.tmpdir() as d:
    trace = tt.gen(os.path.join(d, "t.gpuprof"))
    j = json.loads(tt.gp("stats", "--format", "json", trace).stdout)
    # ---- memsize in bytes: gen_trace's copies are 1e6 (HtoD) and 3e6 (DtoH) B, the memset 2e6 B
    ms = {r["operation"]: r for r in j["memsize"]}
    tt.eq({k: (r["total_bytes"], r["min_bytes"], r["max_bytes"], r["avg_bytes"]) for k, r in ms.items()},
          {"[CUDA memcpy Host-to-Device]": (1000000,) * 4, "[CUDA memcpy Device-to-Host]": (3000000,) * 4,
           "[CUDA memset]": (2000000,) * 4}, "memsize in bytes")
    tt.expect(not any(k.endswith("_mb") for r in j["memsize"] for k in r), "no *_mb keys in JSON")
    # ---- percentages and means unrounded: 13000 of 28000 ns of API time
    lk = j["api"][0]
    tt.eq(lk["time_pct"], 100 * 13000 / 28000, "api time % exact (46.428571428571...)")
    tt.eq(j["kernels"][0]["time_pct"], 100 * 25000 / 49000, "kernel time % exact")
    tt.approx(j["kernels"][0]["stddev_ns"], 7500 * 2 ** 0.5, "stddev unrounded", tol=1e-9)
    # ---- kernel rows: pid, device, mangled name
    tt.eq([(r["pid"], r["device"], r["mangled"]) for r in j["kernels"]],
          [(1000, 0, "my_plain_kernel"), (1000, 0, "_Z6vecAddPKfS0_Pfi")], "kernel rows carry pid/device/mangled")
    csv = tt.gp("stats", "--report", "api", "--format", "csv", trace).stdout.splitlines()
    tt.eq(csv[1].split(",")[0], repr(100 * 13000 / 28000), "CSV time % unrounded")
    two = tt.gp("stats", "--report", "kernels,api", "--format", "csv", trace).stdout.splitlines()
    tt.eq([l for l in two if l.startswith("# ")], ["# api", "# kernels"], "CSV: a '# NAME' line a table when several")
    # the table still rounds
    tab = tt.gp("stats", "--report", "memsize", trace).stdout
    tt.expect("Total (MB)" in tab and " 3.000 " in tab and "Total (B)" not in tab, "memsize table in MB")

    # ---- one CSV file per report, each as --report NAME --format csv prints it
    cdir = os.path.join(d, "csv")
    p = tt.gp("stats", "--csv-dir", cdir, trace)
    tt.eq(p.stdout, "", "--csv-dir: nothing on stdout")
    names = sorted(os.listdir(cdir))
    tt.eq(names, sorted(f"{n}.csv" for n in j), "--csv-dir: one file per report of the default set")
    for n in names:
        want = tt.gp("stats", "--report", n[:-4], "--format", "csv", trace).stdout
        if want.startswith("# "):  # a report's first table brings its others: that section
            want = next(sec.split("\n", 1)[1] for sec in ("\n" + want).split("\n# ")[1:]
                        if sec.split("\n", 1)[0] == n[:-4])
            want = want.rstrip("\n") + "\n"
        tt.eq(open(os.path.join(cdir, n)).read(), want, f"--csv-dir {n}")
    p = tt.gp("stats", "--csv-dir", cdir, "--format", "json", trace, check=False)
    tt.expect(p.returncode == 1 and "cannot be combined" in p.stderr, f"--csv-dir with json: {p.stderr}")
    open(os.path.join(d, "afile"), "w").close()
    p = tt.gp("stats", "--csv-dir", os.path.join(d, "afile"), trace, check=False)
    tt.expect(p.returncode == 2 and "cannot create directory" in p.stderr, f"--csv-dir on a file: {p.stderr}")

    # ---- dump: enums as names, "not applicable" ids as null (fake workload, all activity kinds)
    parent = tt.run_workload(d, GPUPROF_ACTIVITY="all")[0]
    recs = [json.loads(l) for l in tt.gp("dump", "--json", "--type", "sync,kernel,memory", parent).stdout.splitlines()]
    syncs = [r for r in recs if r["type"] == "sync"]
    tt.expect(len(syncs) == 5, f"5 sync records, got {len(syncs)}")
    tt.eq(sorted({r["sync_type"] for r in syncs}), ["context_synchronize", "stream_synchronize"], "sync_type names")
    ctx = [r for r in syncs if r["sync_type"] == "context_synchronize"]
    tt.expect(ctx and all(r["stream"] is None and r["event"] is None for r in ctx),
              f"context sync: stream and event null, got {ctx[:1]}")
    tt.expect(all(isinstance(r["stream"], int) for r in syncs if r["sync_type"] == "stream_synchronize"),
              "stream sync: its stream")
    tt.expect(all(r["launch_type"] == "regular" for r in recs if r["type"] == "kernel"), "launch_type name")
    text = tt.gp("dump", "--type", "sync", parent).stdout
    tt.expect("type=context_synchronize stream=- event=-" in text and "4294967295" not in text,
              "dump text: sync type name, no-stream as -")
tt.finish()
