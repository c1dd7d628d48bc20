"""test_memory.py — the memory view (stats --report memory_steps, docs/MEMORY.md)
and advise's out-of-memory rule on the traces of gen_memory
(tests/tools/gen_memory.c): every expected figure below is worked out here
from the generator's timeline, not read from the tool."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, approx, eq, expect, finish, gp, run_workload, tmpdir  # noqa: E402
import subprocess  # noqa: E402

GEN_MEMORY = os.path.abspath(os.path.join(B, "tests", "tools", "gen_memory"))
MiB = 1 << 20
NSTEPS = 10
LEAK = 1000000          # bytes a step at train.py:31 train_step (gen_memory.c LEAK_BYTES)
WEIGHTS = 20 * MiB      # before step 0, never freed
ACT = 4 * MiB           # steady/leak: each step's activation, freed in the step
TOTAL = 80 << 30        # the device record's memory


def trace(d, mode, stacks=True, noise=False, live=False):
    p = os.path.join(d, f"{mode}{'' if stacks else '-nostk'}{'-noise' if noise else ''}{'-live' if live else ''}"
                        ".gpuprof")
    subprocess.run([GEN_MEMORY] + ([] if stacks else ["--no-stacks"]) + (["--noise"] if noise else []) +
                   (["--live"] if live else []) + [mode, p], check=True)
    return p


def view(p):
    r = gp("stats", "--report", "memory_steps", "--format", "json", p)
    return json.loads(r.stdout)


with tmpdir() as d:
    # --- leak: held at each step's end = weights + (k+1) leaks; growth = LEAK a step
    v = view(trace(d, "leak"))
    ends = [row["held_end_bytes"] for row in v["memory_steps"]]
    eq(ends, [WEIGHTS + (k + 1) * LEAK for k in range(NSTEPS)], "leak: held at each step's end")
    peaks = [row["peak_bytes"] for row in v["memory_steps"]]
    eq(peaks, [WEIGHTS + k * LEAK + ACT + LEAK for k in range(NSTEPS)], "leak: each step's peak")
    g = v["memory_growth"][0]
    approx(g["growth_per_step_bytes"], LEAK, "leak: growth per step within 5 % of the truth", tol=0.05)
    eq(g["verdict"], "grows", "leak: the series grows")
    eq(g["device_total_bytes"], TOTAL, "leak: the device's total memory")
    leaking = [s for s in v["memory_sites"] if s["leaks"] == "yes"]
    eq([s["site"] for s in leaking], ["train.py:31 train_step"], "leak: the leaking site named, alone")
    approx(leaking[0]["growth_per_step_bytes"], LEAK, "leak: the site's growth per step", tol=0.05)
    eq(leaking[0]["end_bytes"], NSTEPS * LEAK, "leak: the site holds every step's leak at the end")
    eq(v["memory_sites"][0]["site"], "train.py:31 train_step", "leak: the leaking site first")
    eq(v["memory_oom"], [], "leak: no failed allocation")
    owners = {o["owner"]: o for o in v["memory_owners"]}
    eq(owners["caching allocator (by size)"]["end_bytes"], WEIGHTS, "leak: 20 MiB (2 MiB multiple) is the allocator's by size")

    # `gpuprof memory` is stats --report memory_steps
    eq(gp("memory", "--format", "json", os.path.join(d, "leak.gpuprof")).stdout,
       gp("stats", "--report", "memory_steps", "--format", "json", os.path.join(d, "leak.gpuprof")).stdout,
       "gpuprof memory = stats --report memory_steps")

    # without stacks the site is the call and its size: still one site, still named
    v = view(trace(d, "leak", stacks=False))
    leaking = [s["site"] for s in v["memory_sites"] if s["leaks"] == "yes"]
    eq(leaking, [f"(no stack) cudaMalloc {LEAK} B"], "leak without stacks: the site by call and size")

    # with noise: 3 MiB held over the end of each odd step; the fit's +/- (2
    # standard errors) must cover the truth, the leaking site stays exact
    v = view(trace(d, "leak", noise=True))
    ends = [row["held_end_bytes"] for row in v["memory_steps"]]
    eq(ends, [WEIGHTS + (k + 1) * LEAK + (3 * MiB if k % 2 else 0) for k in range(NSTEPS)], "noisy leak: held at ends")
    g = v["memory_growth"][0]
    # the least-squares slope of those ends, computed here
    xs, ys = list(range(NSTEPS)), ends
    mx, my = sum(xs) / NSTEPS, sum(ys) / NSTEPS
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    ssr = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, ys))
    approx(g["growth_per_step_bytes"], slope, "noisy leak: the least-squares slope", tol=1e-9)
    approx(g["growth_bound_bytes"], 2 * (ssr / (NSTEPS - 2) / sxx) ** 0.5, "noisy leak: 2 standard errors", tol=1e-6)
    expect(abs(g["growth_per_step_bytes"] - LEAK) <= g["growth_bound_bytes"],
           f"noisy leak: the truth {LEAK} within {g['growth_per_step_bytes']} +/- {g['growth_bound_bytes']}")
    leaking = [s for s in v["memory_sites"] if s["leaks"] == "yes"]
    eq([s["site"] for s in leaking], ["train.py:31 train_step"], "noisy leak: the 3 MiB that comes and goes is no leak")
    eq(leaking[0]["growth_per_step_bytes"], LEAK, "noisy leak: the site's growth exact")

    # --- steady: nothing grows
    v = view(trace(d, "steady"))
    eq([row["held_end_bytes"] for row in v["memory_steps"]], [WEIGHTS] * NSTEPS, "steady: held at each step's end")
    g = v["memory_growth"][0]
    eq(g["growth_per_step_bytes"], 0, "steady: no growth")
    eq(g["verdict"], "no growth", "steady: the verdict")
    eq(g["peak_bytes"], WEIGHTS + ACT, "steady: the run's peak")
    eq([s["site"] for s in v["memory_sites"] if s["leaks"] == "yes"], [], "steady: no leaking site")

    # --- oom: step k holds (k+1) x 8 MiB at forward and (k+1) x 16 MiB at attention;
    # the last step's attention allocation fails with forward's 80 MiB and the weights live
    p = trace(d, "oom")
    v = view(p)
    live = {s["site"]: s["live_bytes"] for s in v["memory_oom"]}
    eq(live, {"model.py:88 forward": NSTEPS * 8 * MiB, f"(no stack) cudaMalloc {WEIGHTS} B": WEIGHTS},
       "oom: live at the failure by site")
    eq(v["memory_oom"][0]["site"], "model.py:88 forward", "oom: the largest live site first")
    eq(v["memory_growth"][0]["peak_bytes"], WEIGHTS + (NSTEPS - 1) * 24 * MiB, "oom: the run's peak (step 8)")
    eq([s["site"] for s in v["memory_sites"] if s["leaks"] == "yes"], [],
       "oom: activations held once at the failing step are no leak")
    t = gp("stats", "--report", "memory_oom", p).stdout
    expect("cudaMalloc failed (status 2, 1 failed allocation call) at model.py:95 attention" in t,
           "oom: the failing call and its site named, runtime and driver failure counted once:\n" + t)
    expect("104.9 MB live of 85.9 GB" in t, "oom: live and the device total:\n" + t)

    # advise: the out-of-memory finding first, with the site, the live memory and what to change
    a = json.loads(gp("advise", "--format", "json", p).stdout)["advise"][0]
    f = a["findings"][0]
    eq(f["rule"], "out-of-memory", "oom: advise's first finding")
    expect("model.py:95 attention" in f["where"], "oom: advise names the failing site: " + f["where"])
    expect("model.py:88 forward" in f["what"], "oom: advise names the live memory by site: " + f["what"])
    expect("expandable_segments" in f["change"] and "checkpoint" in f["change"],
           "oom: advise says what to change: " + f["change"])
    a = json.loads(gp("advise", "--format", "json", trace(d, "steady")).stdout)["advise"][0]
    eq([x["rule"] for x in a["findings"] if x["rule"] == "out-of-memory"], [], "steady: no out-of-memory finding")

    # --- oom with the shim's live table (mem_live records, gen_memory --live): the
    # live memory by site is the table's, not the memory records' (80 MiB at forward
    # there); device 1's record left out (the failed call is on device 0); the rest
    # a row of its own; the untabled and NVML's used (79 GiB) in the note
    for stk in (True, False):
        p = trace(d, "oom", stacks=stk, live=True)
        v = view(p)
        live = {s["site"]: s["live_bytes"] for s in v["memory_oom"]}
        eq(live, {"model.py:88 forward": 64 * MiB, f"(no stack) cudaMalloc {WEIGHTS} B": WEIGHTS,
                  "(7 more allocations at other sites)": 5 * MiB}, "oom --live: live by site from the table")
        t = gp("stats", "--report", "memory_oom", "--width", "0", p).stdout
        used = (80 << 30) - (1 << 30)
        expect("cudaMalloc failed (status 2, 1 failed allocation call) at model.py:95 attention" in t,
               "oom --live: the failing site, from the failed request's record without API stacks:\n" + t)
        expect("%.1f MB live of 85.9 GB" % ((64 * MiB + WEIGHTS + 5 * MiB) / 1e6) in t and
               "live by site from the shim's live table (10 allocations made while it ran); NVML's used "
               "%.1f GB is %.1f GB more" % (used / 1e9, (used - 64 * MiB - WEIGHTS - 5 * MiB) / 1e9) in t and
               "; 2 allocations (%.1f MB) seen but not tabled" % (3 * MiB / 1e6) in t,
               "oom --live: the note's live, source, NVML's used and the untabled:\n" + t)
        f = json.loads(gp("advise", "--format", "json", p).stdout)["advise"][0]["findings"][0]
        ev = f.get("evidence", {})
        eq((f["rule"], ev.get("live_bytes"), ev.get("table_allocations"), ev.get("untabled_bytes")),
           ("out-of-memory", 64 * MiB + WEIGHTS + 5 * MiB, 10, 3 * MiB), "oom --live: advise's evidence")
        expect("model.py:95 attention" in f["where"] and "Live by site from the shim's live table" in f["what"],
               "oom --live: advise's where and what: %s | %s" % (f["where"], f["what"]))

    # the real shim on the fake CUDA (tests/fake/workload.c "steps"): step 5
    # makes a cudaMalloc of 1 TiB that fails; the runtime call and the driver
    # call inside it are recorded with status 2 and count as one failure
    os.mkdir(os.path.join(d, "wl"))
    w = run_workload(os.path.join(d, "wl"), "steps", "8", "1", GPUPROF_ACTIVITY="default,memory", WL_ERROR_AT="5")[0]
    t = gp("stats", "--report", "memory_oom", w).stdout
    expect("cudaMalloc failed (status 2, 1 failed allocation call)" in t, "workload: the failed call found:\n" + t)
    a = json.loads(gp("advise", "--format", "json", w).stdout)["advise"][0]
    eq(a["findings"][0]["rule"], "out-of-memory", "workload: advise's first finding")
    os.mkdir(os.path.join(d, "wl2"))
    w = run_workload(os.path.join(d, "wl2"), "steps", "8", "1", GPUPROF_ACTIVITY="default,memory")[0]
    eq(view(w)["memory_oom"], [], "workload without the failure: no out-of-memory rows")

finish()
