"""fork() without exec while tracing, like a DataLoader: 4 threads keep
launching (1000 each) while main forks 3 rounds of 8 workers; each worker
uses no CUDA, makes one NVTX mark, mallocs, and exits through exit() (so the
inherited atexit handlers run, as in Python).  No deadlock (every process
ends within the timeout), every worker exits 0, stdout is the untraced one,
the parent's counts are exact (4000 launch API records and 4000 kernels, no
drops) and the workers leave no trace files (a DataLoader worker costs
nothing)."""
import os

import fl

NTHR, NL, NCHILD, ROUNDS = 4, 1000, 8, 3
args = [fl.WORKLOAD, "fork", str(NTHR), str(NL), str(NCHILD), str(ROUNDS)]
with fl.TmpDir() as d:
    plain = fl.run(args, fl.base_env(), timeout=60)
    fl.check(plain.desc() == "exit 0", f"untraced: {plain.desc()} {plain.out!r} (test broken?)")
    for attempt in range(3):  # fork races are probabilistic: a few rounds
        td = os.path.join(d, f"run{attempt}")
        os.mkdir(td)
        res = fl.run(args, fl.traced_env(os.path.join(td, "t-%p.gpuprof"), GPUPROF_QUIET=1), timeout=60)
        tag = f"run {attempt}"
        fl.check(not res.timed_out, f"{tag}: deadlock: still running after 60 s")
        fl.check(res.desc() == "exit 0", f"{tag}: traced: {res.desc()}; stdout {res.out!r}")
        fl.check(res.out == plain.out, f"{tag}: stdout {res.out!r}, untraced {plain.out!r}")
        fl.check(res.err == "", f"{tag}: stderr {res.err!r}")
        ts = fl.traces(td)
        if not fl.check(len(ts) == 1, f"{tag}: want only the parent's trace, got {ts}"):
            continue
        f = fl.facts(ts[0])
        if not fl.check(f["rc"] == 0, f"{tag}: trace unreadable: {f['raw'][-300:]}"):
            continue
        got = fl.api_count(f, "cudaLaunchKernel")
        fl.check(got == NTHR * NL, f"{tag}: {got} launch API records, want {NTHR * NL}")
        k = f["kernels"].get("k_step", 0)
        fl.check(k == NTHR * NL, f"{tag}: {k} kernel records, want {NTHR * NL}")
        fl.check(fl.dropped_total(f) == 0, f"{tag}: dropped {f['dropped']}")
        fl.check(f["integrity"].get("footer") == 1, f"{tag}: trace not closed: {f['integrity']}")
        tids = {t for (n, t) in f["api"] if n == "cudaLaunchKernel"}
        fl.check(len(tids) == NTHR, f"{tag}: launches from {len(tids)} threads, want {NTHR}")
        print(f"{tag}: {NCHILD * ROUNDS} workers forked, {got} launches, {k} kernels, no deadlock")
fl.finish()
