"""SIGTERM/SIGINT when the job has its own handler (installed before or after
CUDA init, i.e. before or after the shim looked at the disposition):
the job's handler runs (it writes a marker), the exit status is the job's
(the same as untraced), stdout is the same, no foreign stderr, and the trace
is complete: exactly the launches the job made.  'chain': the job's handler
hands the signal on to the previous handler (the shim's when traced) — the
job dies of the signal, as it does untraced, and the trace holds every
launch made before the signal (plus at most the one it interrupted)."""
import os
import signal
import time

import fl


def run_one(d, tag, sig, when, traced):
    ready = os.path.join(d, f"{tag}.ready")
    marker = os.path.join(d, f"{tag}.marker")
    out_dir = os.path.join(d, tag)
    os.mkdir(out_dir)
    env = fl.traced_env(os.path.join(out_dir, "t-%p.gpuprof"), GPUPROF_QUIET=1) if traced else fl.base_env()
    o = open(os.path.join(d, f"{tag}.out"), "wb+")
    e = open(os.path.join(d, f"{tag}.err"), "wb+")
    p = fl.spawn([fl.WORKLOAD, "sighandler", sig, when, ready, marker], env, stdout=o, stderr=e)
    t0 = time.monotonic()
    while not os.path.exists(ready) and time.monotonic() - t0 < 20 * fl.SLOW:
        time.sleep(0.02)
    fl.check(os.path.exists(ready), f"{tag}: workload never got ready")
    time.sleep(0.2)
    os.kill(p.pid, signal.SIGTERM if sig == "TERM" else signal.SIGINT)
    st, to = fl.wait_status(p, 30 * fl.SLOW)
    o.seek(0)
    e.seek(0)
    res = fl.Result(st, o.read().decode(), e.read().decode("utf-8", "replace"), to)
    o.close()
    e.close()
    m = open(marker).read() if os.path.exists(marker) else None
    return res, m, out_dir


def launches_of(text):
    for line in (text or "").splitlines():
        if line.startswith("launches="):
            return int(line.split("=")[1])
    return None


with fl.TmpDir() as d:
    for sig in ("TERM", "INT"):
        signo = signal.SIGTERM if sig == "TERM" else signal.SIGINT
        for when in ("before", "after", "chain"):
            tag = f"{sig}-{when}"
            plain, pm, _ = run_one(d, tag + "-plain", sig, when, False)
            res, m, out_dir = run_one(d, tag, sig, when, True)
            fl.check(not res.timed_out, f"{tag}: traced job hung after the signal")
            fl.check(m is not None, f"{tag}: the job's own handler did not run (no marker)")
            fl.check(pm is not None, f"{tag}: untraced: handler did not run (test broken?)")
            if when == "chain":
                want = f"signal {signo}"
                fl.check(plain.desc() == want, f"{tag}: untraced run ended with {plain.desc()}, want {want}")
            else:
                fl.check(plain.desc() == "exit 3", f"{tag}: untraced run: {plain.desc()}, want exit 3")
            fl.check(res.desc() == plain.desc(), f"{tag}: traced status {res.desc()}, untraced {plain.desc()}")
            fl.check(res.foreign_lines() == [], f"{tag}: foreign stderr: {res.foreign_lines()}")
            fl.check(res.gp_lines() == [], f"{tag}: shim printed (quiet mode): {res.gp_lines()}")
            # what the job says it did
            n = launches_of(res.out) if when != "chain" else launches_of(m)
            fl.check(n is not None and n >= 21, f"{tag}: no launch count from the job ({res.out!r} / {m!r})")
            if when != "chain":
                fl.check(plain.out.replace(str(launches_of(plain.out)), "N") ==
                         res.out.replace(str(n), "N"), f"{tag}: stdout differs: {plain.out!r} vs {res.out!r}")
            ts = fl.traces(out_dir)
            if not fl.check(len(ts) == 1, f"{tag}: want one trace, got {ts}"):
                continue
            f = fl.facts(ts[0])
            if not fl.check(f["rc"] == 0, f"{tag}: trace unreadable: {f['raw'][-300:]}"):
                continue
            got = fl.api_count(f, "cudaLaunchKernel")
            if when == "chain":
                # the signal may interrupt a launch between its callbacks
                fl.check(n is not None and n <= got <= n + 1,
                         f"{tag}: trace has {got} launches, job made {n} (+1 in flight)")
            else:
                fl.check(got == n, f"{tag}: trace has {got} launches, job made {n}")
            fl.check(f["integrity"].get("footer") == 1 and f["integrity"].get("truncated") == 0,
                     f"{tag}: trace not closed properly: {f['integrity']}")
            fl.check(fl.dropped_total(f) == 0, f"{tag}: dropped {f['dropped']}")
            k = f["kernels"].get("k_step", 0)
            # chain: an interrupted launch may have its kernel but not its API record
            fl.check(k == got or (when == "chain" and k == got + 1),
                     f"{tag}: {k} kernel records for {got} launches (final flush lost activity)")
            print(f"{tag}: {res.desc()}, job's handler ran, {got} launches in the trace")
fl.finish()
