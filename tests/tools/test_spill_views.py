"""test_spill_views.py — what grows per step (the steps' rows and phases,
comm_steps' steps, every table's rows: common/spill.h) read back from the
spill's temporary file gives the output it gives from memory.

On a bench trace of 4e6 events (~4,400 steps, 2 top-level ranges a step:
more step rows, phases, comm steps and step_rows table rows than the
spills' caches hold, 8 blocks of 64 KiB), with GPUPROF_SPILL_MEM=0 (no
block kept in memory but the cache's): stats (every report, JSON),
steps, advise and report -o give the bytes they give with the caps as
built, at 1 thread, and at 4 (the slices' engines spill their own rows,
advise's facts slices read the sealed rows through their own readers):
stats' per-step tables, steps and advise.  With a $TMPDIR that does not
exist: the same bytes again, and one line on stderr that says the spill
stays in memory (main: no such line, the check fails)."""
import os
import re
import subprocess

import tt

GEN_BIG = os.path.abspath(os.path.join(tt.B, "bench", "gen_bigtrace"))


def run(env, threads, args, d):
    e = dict(os.environ, **env)
    out = os.path.join(d, "r.html")
    if args[0] == "report":
        args = args + ["-o", out]
    p = subprocess.run([tt.GPUPROF, args[0], "--threads", str(threads)] + args[1:], capture_output=True,
                       text=True, errors="replace", env=e)
    text = p.stdout
    if args[0] == "report":
        with open(out) as f:
            text += f.read()
    return p.returncode, text, p.stderr


with tt.tmpdir() as d:
    trace = os.path.join(d, "t.gpuprof")
    g = subprocess.run([GEN_BIG, "--seed", "7", "4e6", trace], check=True, capture_output=True, text=True)
    nsteps = int(re.search(r"(\d+) steps", g.stdout + g.stderr).group(1))
    # more step rows (240 bytes), comm steps (72, two a step) and step_rows
    # table rows than a spill's cache holds (8 x 64 KiB)
    tt.expect(nsteps * 2 * 72 > 8 * 65536, f"{nsteps} steps: past the caches")
    every = ("api,kernels,occupancy,memops,memsize,sync,memory,nvtx,util,counters,windows,launch_sites,layers,comm,"
             "comm_steps,steps,step_buckets,step_launch,step_outliers,step_phases,step_rows,memory_steps")
    per_step = "comm,comm_steps,steps,step_buckets,step_launch,step_outliers,step_phases,step_rows,memory_steps"
    # at 4 threads the time summaries' medians and deviations (kernels, api,
    # ...: summed per slice, merged) may differ from run to run in their
    # last digits; the tables of what is spilled may not
    runs = [(1, ["stats", "--report", every, "--format", "json", trace]), (1, ["steps", trace]),
            (1, ["advise", trace]), (1, ["report", trace]),
            (4, ["stats", "--report", per_step, "--format", "json", trace]), (4, ["steps", trace]),
            (4, ["advise", trace])]
    for threads, c in runs:
        want = run({}, threads, c, d)
        tt.expect(want[0] == 0 and len(want[1]) > 1000, f"{c[0]}: output ({want[0]}: {want[2][-300:]})")
        got = run({"GPUPROF_SPILL_MEM": "0"}, threads, c, d)
        tt.eq(got, want, f"{c[0]} --threads {threads}, spilled vs in memory")
        if threads != 1:
            continue
        rc, out, err = run({"GPUPROF_SPILL_MEM": "0", "TMPDIR": os.path.join(d, "none")}, threads, c, d)
        said = [l for l in err.splitlines() if "cannot spill" in l]
        tt.expect(len(said) == 1 and "keeping it in memory" in said[0], f"{c[0]}: one line says so: {said}")
        rest = "\n".join(l for l in err.splitlines() if "cannot spill" not in l)
        tt.eq((rc, out, rest), (want[0], want[1], want[2].rstrip("\n")), f"{c[0]}: no $TMPDIR, the same output")
tt.finish()
