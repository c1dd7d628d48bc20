"""SIGKILL mid-run, GPUPROF_FLUSH_MS=100: the workload launches continuously
and prints "N MONO_NS" progress lines; it is killed with -9 after ~1 s.
The trace must be readable (truncated), and hold the API records of at
least every launch made up to 0.5 s before the last progress line — 5 flush
periods of slack; the loss bound the design promises is one period — and
as many kernel records (the shim's flush ticker calls
cuptiActivityFlushAll every GPUPROF_FLUSH_MS; the fake CUPTI, like the
real one, hands records over only when flushed or when a buffer fills).
GPUPROF_FAULT_LAX_ACTIVITY=1 reports the kernel count as INFO instead (for
a shim without the ticker)."""
import os
import signal
import time

import fl

SLACK_NS = 500_000_000
strict_activity = os.environ.get("GPUPROF_FAULT_LAX_ACTIVITY") != "1"

with fl.TmpDir() as d:
    prog = os.path.join(d, "progress")
    env = fl.traced_env(os.path.join(d, "t-%p.gpuprof"), GPUPROF_FLUSH_MS=100, GPUPROF_QUIET=1)
    with open(prog, "wb") as o, open(os.path.join(d, "err"), "wb") as e:
        p = fl.spawn([fl.WORKLOAD, "spin"], env, stdout=o, stderr=e)
        t0 = time.monotonic()
        while os.path.getsize(prog) == 0 and time.monotonic() - t0 < 20 * fl.SLOW:
            time.sleep(0.01)
        time.sleep(1.0)
        lines = open(prog).read().splitlines()
        os.kill(p.pid, signal.SIGKILL)
        st, to = fl.wait_status(p, 30)
    res = fl.Result(st, "", open(os.path.join(d, "err")).read(), to)
    fl.check(res.sig == signal.SIGKILL, f"workload ended with {res.desc()}, want SIGKILL")
    prog_pts = []
    for l in lines:
        w = l.split()
        if len(w) == 2:
            prog_pts.append((int(w[0]), int(w[1])))
    if not fl.check(len(prog_pts) >= 10, f"too little progress before the kill: {lines[-3:]}"):
        fl.finish()
    last_n, last_t = prog_pts[-1]
    need_n = max([n for n, t in prog_pts if t <= last_t - SLACK_NS] or [0])
    fl.check(need_n > 0, "no progress 0.5 s before the kill (machine too slow?)")
    ts = fl.traces(d)
    if fl.check(len(ts) == 1, f"want one trace, got {ts}"):
        f = fl.facts(ts[0])
        if fl.check(f["rc"] == 0, f"trace after SIGKILL unreadable: {f['raw'][-300:]}"):
            got = fl.api_count(f, "cudaLaunchKernel")
            fl.check(got >= need_n, f"trace has {got} launch API records; the job had made {need_n} "
                     f"0.5 s before its last progress line ({last_n} launches at the kill)")
            fl.check(got <= last_n + 21, f"trace has {got} launches, more than the job made ({last_n}+20)")
            end = fl.api_max_end(f, "cudaLaunchKernel")
            fl.check(end >= last_t - SLACK_NS,
                     f"last launch record ends {(last_t - end) / 1e6:.0f} ms before the last progress line")
            fl.check(f["integrity"].get("corrupt") == 0, f"corrupt frames: {f['integrity']}")
            k = f["kernels"].get("k_step", 0)
            msg = f"kernel records {k}, launches required {need_n} (periodic CUPTI flush)"
            if strict_activity:
                fl.check(k >= need_n, msg)
            else:
                fl.info(msg)
            print(f"sigkill: {got} of {last_n} launches in the trace (required >= {need_n}); "
                  f"lost the last {(last_t - end) / 1e6:.0f} ms; integrity {f['integrity']}")
fl.finish()
