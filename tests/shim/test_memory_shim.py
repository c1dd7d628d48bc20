"""The shim's half of the memory view (issue #39; docs/MEMORY.md, docs/FLIGHT.md
"Rules") on the fake CUDA: the workload's `steps` mode, where WL_LEAK makes
each step's wl_leak_alloc keep a 1,000,000-byte cudaMalloc and WL_ERROR_AT=I
makes step I's wl_oom_alloc ask for 1 TiB, which fails (status 2).

M1. --stacks: every cudaMalloc record has a stack (not sampled: 20 calls of
    one site), so `gpuprof memory` names the leaking line, wl_leak_alloc,
    alone, with its growth of exactly 1,000,000 B a step.  Without stacks
    the site is the call and its size.
M2. Out of memory in a plain trace: one alloc_fail record, joined to the
    failed call by correlation id, with the size asked for (2^40), the
    device (0) and NVML's total and free (the fake NVML: 80 GiB total);
    none for the nested driver call.  `memory` names the failing line and
    the request, and the live memory by site at the failure (11 leaks and
    the job's 4096 B); advise's first finding says the same.
M3. Armed mode (GPUPROF_FLIGHT_RECORDER, no GPUPROF_TRIGGER): the oom rule
    is on by default: one capture, its mark and stderr line naming the rule
    and the request, reason counter 7, holding the alloc_fail record.
    The failure in the last step of a 50-step job (it exits at once): the
    capture is written all the same.  GPUPROF_FLIGHT_API=capture (no API
    records between captures): the failure is still seen, and advise names
    it from its alloc_fail record alone.  A rule list
    without oom: no capture.  oom with cuda-error: one capture, named oom.
M4. Armed mode's capture holds the live memory by site at the failure (the
    shim's live table, mem_live records), with no memory records at all:
    WL_LEAK (1,000,000 B kept each step at wl_leak_alloc), WL_TEMP
    (3,000,000 B allocated and freed each step at wl_temp_alloc), main's
    4096 B; the failure in step 100, so 101 leaked allocations live.  The
    records, `memory`'s memory_oom and advise name exactly
    {wl_leak_alloc: 101,000,000 B, main: 4096 B} (with --stacks), or the
    call and size without stacks, and nothing of wl_temp_alloc; the note
    says where the figures come from and NVML's used beside them; the
    failed request's own record has its size and (with --stacks) its stack.
    The same with GPUPROF_FLIGHT_API=capture (no API records between
    captures: the table fed by the callbacks kept on for it, stacks taken
    there; the failing line named from the failed request's record).
Each job: exit 0, its stdout, only gpuprof: lines on stderr."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flightlib import Facts, run_job  # noqa: E402
from stackslib import Env  # noqa: E402

E = Env(sys.argv[1])
NVML = os.path.join(E.build, "tests/fake/libnvidia-ml.so.1")
LEAK = 1000000
TIB = 1 << 40
NVML_TOTAL = 80 << 30  # tests/fake/fake_nvml.c
MEM = {"GPUPROF_ACTIVITY": "default,memory", "GPUPROF_NVML": NVML, "FAKE_NVML_DEVICES": "1"}


def gp(*args):
    p = subprocess.run([E.gpuprof] + [str(a) for a in args], capture_output=True, text=True)
    E.check(p.returncode == 0, "gpuprof %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p.stdout


def memory(trace):
    return json.loads(gp("memory", "--format", "json", trace))


def the_trace(j):
    t = [p for p in j.traces() if "-cap" not in p]
    E.check(len(t) == 1, "%s: traces %s" % (j.name, t))
    return t[0] if t else None


# M1: stacks at every allocation call, the leaking line named
j = run_job(E, "m1", 20, dict(MEM, GPUPROF_STACKS="1", WL_LEAK=str(LEAK)), ms=1)
t = the_trace(j)
if t:
    f = Facts(E, t)
    mallocs = [a for a in f.apis if a["name"] == "cudaMalloc"]
    E.check(len(mallocs) == 21 and all(a.get("stack") for a in mallocs),
            "M1: cudaMalloc records and their stacks %s" % [(a["corr"], a.get("stack")) for a in mallocs])
    v = memory(t)
    leaks = [s for s in v["memory_sites"] if s["leaks"] == "yes"]
    E.check([s["site"] for s in leaks] == ["wl_leak_alloc"], "M1: leaking sites %s" % [s["site"] for s in leaks])
    if leaks:
        E.check(leaks[0]["growth_per_step_bytes"] == LEAK and leaks[0]["end_bytes"] == 20 * LEAK,
                "M1: the leak's growth and what it holds %s" % leaks[0])
j = run_job(E, "m1-nostk", 20, dict(MEM, WL_LEAK=str(LEAK)), ms=1)
t = the_trace(j)
if t:
    leaks = [s["site"] for s in memory(t)["memory_sites"] if s["leaks"] == "yes"]
    E.check(leaks == ["(no stack) cudaMalloc %d B" % LEAK], "M1 without stacks: leaking sites %s" % leaks)

# M2: the failed request in a plain trace
j = run_job(E, "m2", 12, dict(MEM, GPUPROF_STACKS="1", WL_LEAK=str(LEAK), WL_ERROR_AT="10"), ms=1)
t = the_trace(j)
if t:
    f = Facts(E, t)
    fails = [r for r in f.recs if r["type"] == "alloc_fail"]
    failed = [a for a in f.apis if a["status"] == 2]
    E.check(len(fails) == 1 and len(failed) == 1, "M2: alloc_fail records %s, failed calls %s" % (fails, failed))
    if fails and failed:
        r = fails[0]
        E.check(r["corr"] == failed[0]["corr"] and r["cbid"] == 20 and r["domain"] == "runtime" and
                r["status"] == 2 and r["device"] == 0 and r["tid"] == failed[0]["tid"],
                "M2: the record names the failed call %s / %s" % (r, failed[0]))
        E.check(r["bytes"] == TIB and r["total_bytes"] == NVML_TOTAL and 0 < r["free_bytes"] < NVML_TOTAL,
                "M2: request and device memory %s" % r)
        E.check(r["ts"] == failed[0]["start"], "M2: the record's time is the call's start %s" % r)
    v = memory(t)
    oom = v["memory_oom"]
    sites = {row["site"]: row["live_bytes"] for row in oom}
    E.check(sites == {"wl_leak_alloc": 11 * LEAK, "main": 4096}, "M2: live by site at the failure %s" % sites)
    text = gp("memory", "--report", "memory_oom", "--width", "0", t)  # notes unwrapped
    want = "cudaMalloc failed (status 2, 1 failed allocation call) at wl_oom_alloc"
    E.check(want in text and "requested 1099.5 GB; " in text and "free of 85.9 GB (NVML)" in text,
            "M2: memory_oom's note names the site, the request and NVML's memory:\n" + text)
    a = json.loads(gp("advise", "--format", "json", t))["advise"][0]["findings"][0]
    E.check(a["rule"] == "out-of-memory" and "wl_oom_alloc" in a["where"] and "requested 1099.5 GB" in a["what"] and
            "wl_leak_alloc" in a["what"], "M2: advise's first finding %s" % a)
    E.check(a.get("evidence", {}).get("requested_bytes") == TIB and
            a["evidence"].get("device_free_bytes") == (fails[0]["free_bytes"] if fails else None),
            "M2: advise's evidence %s" % a.get("evidence"))

# M3: armed mode's default rule
FLIGHT = {"GPUPROF_FLIGHT_RECORDER": "1s", "GPUPROF_NVML": NVML, "FAKE_NVML_DEVICES": "1"}


def oom_captures(j, want):
    caps = j.captures()
    E.check(len(caps) == want, "%s: captures %s" % (j.name, caps))
    return [Facts(E, c) for c in caps]


j = run_job(E, "m3", 200, dict(FLIGHT, WL_ERROR_AT="100"))
for f in oom_captures(j, 1):
    E.check(len(f.marks) == 1 and f.marks[0].startswith("gpuprof capture 1: rule oom: cudaMalloc of %d B out of "
                                                         "memory (" % TIB) and
            " B free of %d B); " % NVML_TOTAL in f.marks[0], "M3: mark %s" % f.marks)
    E.check(f.counters["gpuprof.capture.reason"] == [7], "M3: reason %s" % f.counters["gpuprof.capture.reason"])
    fails = [r for r in f.recs if r["type"] == "alloc_fail"]
    E.check(len(fails) == 1 and fails[0]["bytes"] == TIB, "M3: the capture's alloc_fail %s" % fails)
E.check(any("capture 1 (rule oom: cudaMalloc of %d B out of memory" % TIB in l for l in j.gp_lines()),
        "M3: the capture's line %s" % j.gp_lines())

j = run_job(E, "m3-last", 50, dict(FLIGHT, WL_ERROR_AT="49"), ms=1)
for f in oom_captures(j, 1):
    E.check(len([r for r in f.recs if r["type"] == "alloc_fail"]) == 1 and f.marks and "rule oom" in f.marks[0],
            "M3 at the exit: %s" % f.marks)

j = run_job(E, "m3-api-capture", 200, dict(FLIGHT, GPUPROF_FLIGHT_API="capture", WL_ERROR_AT="100"))
for c, f in zip(j.captures(), oom_captures(j, 1)):
    E.check(f.marks and "rule oom: cudaMalloc" in f.marks[0], "M3 API in captures only: %s" % f.marks)
    # no API record of the failed call (API records were off): advise names
    # it from its alloc_fail record
    E.check(not [a for a in f.apis if a["status"] == 2], "M3 API in captures only: no failed call's record")
    a = json.loads(gp("advise", "--format", "json", c))["advise"][0]["findings"][0]
    E.check(a["rule"] == "out-of-memory" and a["what"].startswith("cudaMalloc failed") and
            "requested 1099.5 GB" in a["what"], "M3 API in captures only: advise %s" % a)

j = run_job(E, "m3-other-rule", 200, dict(FLIGHT, GPUPROF_TRIGGER="step>100x", WL_ERROR_AT="100"))
oom_captures(j, 0)

j = run_job(E, "m3-both", 200, dict(FLIGHT, GPUPROF_TRIGGER="cuda-error,oom", WL_ERROR_AT="100"))
for f in oom_captures(j, 1):
    E.check(f.marks and "rule oom: cudaMalloc" in f.marks[0], "M3 oom and cuda-error: %s" % f.marks)

# M4: armed mode's capture, the live memory by site from the shim's table
TEMP = 3000000
LIVE = {"wl_leak_alloc": 101 * LEAK, "main": 4096}
LIVE_NOSTK = {"(no stack) cudaMalloc %d B" % LEAK: 101 * LEAK, "(no stack) cudaMalloc 4096 B": 4096}
for name, extra, want in (("m4", {"GPUPROF_STACKS": "1"}, LIVE),
                          ("m4-nostk", {}, LIVE_NOSTK),
                          ("m4-api-capture", {"GPUPROF_STACKS": "1", "GPUPROF_FLIGHT_API": "capture"}, LIVE),
                          ("m4-api-capture-nostk", {"GPUPROF_FLIGHT_API": "capture"}, LIVE_NOSTK)):
    j = run_job(E, name, 200, dict(FLIGHT, WL_ERROR_AT="100", WL_LEAK=str(LEAK), WL_TEMP=str(TEMP), **extra), ms=1)
    caps = j.captures()
    for c, f in zip(caps, oom_captures(j, 1)):
        E.check(not [r for r in f.recs if r["type"] == "memory"], "%s: no memory records in the capture" % name)
        fails = [r for r in f.recs if r["type"] == "alloc_fail"]
        recs = [r for r in f.recs if r["type"] == "mem_live"]
        E.check(len(fails) == 1 and recs and all(r["corr"] == fails[0]["corr"] and r["ts"] == fails[0]["ts"] and
                                                 r["device"] == 0 for r in recs),
                "%s: mem_live records of the failed call %s / %s" % (name, recs, fails))
        lives = [r for r in recs if r["kind"] == "site"]
        failed = [r for r in recs if r["kind"] == "failed"]
        E.check(len(lives) + len(failed) == len(recs) and len(failed) == 1 and failed[0]["bytes"] == TIB and
                bool(failed[0]["stack"]) == ("GPUPROF_STACKS" in extra),
                "%s: the failed request's own record (its stack with --stacks) %s" % (name, failed))
        E.check(sorted((r["bytes"], r["allocs"]) for r in lives) == [(4096, 1), (101 * LEAK, 101)],
                "%s: live bytes and allocations by site %s" % (name, lives))
        v = memory(c)
        oom = v["memory_oom"]
        sites = {row["site"]: row["live_bytes"] for row in oom}
        E.check(sites == want, "%s: memory_oom's live by site %s" % (name, sites))
        text = gp("memory", "--report", "memory_oom", "--width", "0", c)
        E.check("at wl_oom_alloc" in text if "GPUPROF_STACKS" in extra else "at (no stack)" in text,
                "%s: the failing site:\n%s" % (name, text))
        E.check("live by site from the shim's live table (102 allocations made while it ran); NVML's used " in text,
                "%s: memory_oom's note says where the live memory comes from:\n%s" % (name, text))
        a = json.loads(gp("advise", "--format", "json", c))["advise"][0]["findings"][0]
        ev = a.get("evidence", {})
        E.check(a["rule"] == "out-of-memory" and "requested 1099.5 GB" in a["what"] and
                all(s in a["what"] for s in want) and "wl_temp_alloc" not in a["what"] and
                "Live by site from the shim's live table" in a["what"], "%s: advise's finding %s" % (name, a))
        E.check(ev.get("live_bytes") == 101 * LEAK + 4096 and ev.get("table_allocations") == 102 and
                ev.get("untabled_bytes") == 0, "%s: advise's evidence %s" % (name, ev))
        E.check("GPUPROF_STACKS" not in extra or "wl_oom_alloc" in a["where"], "%s: advise's where %s" % (name, a))

E.finish()
