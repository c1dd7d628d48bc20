"""test_stats_estimates.py — the estimated medians of `stats` past a table's
limit of exact values (analysis/core/summary.h) are the same at every
--threads and every run, and the names estimated are those of the rule.

On a generated training trace (gen_bigtrace, 600,000 events: 318,000 API
calls, 250,000 kernels) with the limit lowered to 2^15 values
(GPUPROF_SUMMARY_EXACT, for tests), so that the api and kernels tables go
past it:
 * every report together and kernels alone, as JSON (every figure
   lossless), at --threads 1, 2, 4 and 16, two runs each: byte for byte
   the same (before the rule, which names got estimated depended on the
   slices' timing, and an estimated name's StdDev on the merge order);
 * the rule, computed here from the counts of the table without the lowered
   limit (where every median is exact): a name of n >= 1024 values is
   estimated when the sum over the table's names of min(count, n) exceeds
   the limit.  A name it keeps exact has the median and StdDev of the
   exact table; one it estimates has its median within 0.5 % of the exact
   one, and some differ (so the estimate was read)."""
import json
import os
import subprocess

import tt

GEN_BIG = os.path.abspath(os.path.join(tt.B, "bench", "gen_bigtrace"))
LIMIT = 1 << 15
MIN_SWITCH = 1024


def stats(path, threads, *opts, limit=None):
    env = dict(os.environ)
    env.pop("GPUPROF_SUMMARY_EXACT", None)
    if limit:
        env["GPUPROF_SUMMARY_EXACT"] = str(limit)
    return tt.gp("stats", "--threads", threads, *opts, path, env=env).stdout


def stats_json(path, threads, *opts, limit=None):
    return stats(path, threads, "--format", "json", *opts, limit=limit)


def estimated(counts, n):
    return n >= MIN_SWITCH and sum(min(c, n) for c in counts) > LIMIT


with tt.tmpdir() as d:
    big = os.path.join(d, "big.gpuprof")
    subprocess.run([GEN_BIG, "600000", big], check=True, capture_output=True)

    notes = stats(big, 1, limit=LIMIT)
    tt.eq(notes.count("estimated from a log-bucketed histogram"), 2, "the api and kernels tables say they have estimated medians")
    for opts in ((), ("--report", "kernels")):
        one = stats_json(big, 1, *opts, limit=LIMIT)
        for n in (1, 2, 4, 16):
            for run in range(2):
                out = stats_json(big, n, *opts, limit=LIMIT)
                tt.expect(out == one, f"{opts}: --threads {n}, run {run + 1}: the output of --threads 1")

    exact = json.loads(stats_json(big, 1, "--report", "api,kernels"))
    est = json.loads(stats_json(big, 4, "--report", "api,kernels", limit=LIMIT))
    for table, count in (("api", "num_calls"), ("kernels", "instances")):
        rows_x, rows_e = exact[table], est[table]
        tt.eq(len(rows_e), len(rows_x), f"{table}: rows")
        counts = [r[count] for r in rows_x]
        tt.expect(sum(counts) > LIMIT, f"{table}: more than 2^15 values ({sum(counts)})")
        kept = moved = 0
        for x, e in zip(rows_x, rows_e):
            what = f"{table} {x['name']} ({x[count]} values)"
            tt.eq((e["name"], e[count]), (x["name"], x[count]), f"{what}: same row")
            if estimated(counts, x[count]):
                tt.expect(abs(e["med_ns"] - x["med_ns"]) <= 0.005 * x["med_ns"],
                          f"{what}: estimated median {e['med_ns']} within 0.5 % of {x['med_ns']}")
                moved += e["med_ns"] != x["med_ns"]
            else:
                kept += 1
                tt.eq((e["med_ns"], e["stddev_ns"]), (x["med_ns"], x["stddev_ns"]), f"{what}: exact median, stddev")
        tt.expect(kept > 0 and moved > 0, f"{table}: names kept exact ({kept}) and estimates that differ ({moved})")

tt.finish()
