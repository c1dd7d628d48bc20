"""The job segfaults (a store to a read-only page) 300 ms after 50 launches, traced with
GPUPROF_FLUSH_MS=100: its wait status is the untraced one (SIGSEGV, status
139 in sh; same core-dump flag with RLIMIT_CORE raised, both runs in their
own directory), stdout and stderr are unchanged, and the trace is readable
(truncated: the process never reached its exit path) with all 50 launch
API records and all 50 kernel records, flushed periodically before the
crash (the writer every 100 ms, CUPTI's buffers by the shim's flush
ticker)."""
import os
import resource

import fl

N = 50
with fl.TmpDir() as d:
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    core = {resource.RLIMIT_CORE: (hard, hard)}  # as large as allowed
    # sanitizer runs: let the kernel deliver SIGSEGV (no ASan/TSan report)
    san = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0",
           "TSAN_OPTIONS": os.environ.get("TSAN_OPTIONS", "") + ":handle_segv=0"} if fl.SANITIZER else {}
    pd, td = os.path.join(d, "plain"), os.path.join(d, "traced")
    os.mkdir(pd)
    os.mkdir(td)
    plain = fl.run([fl.WORKLOAD, "segv", str(N), "300"], dict(fl.base_env(), **san), cwd=pd, rlimits=core)
    res = fl.run([fl.WORKLOAD, "segv", str(N), "300"],
                 fl.traced_env(os.path.join(td, "t-%p.gpuprof"), GPUPROF_FLUSH_MS=100, GPUPROF_QUIET=1, **san),
                 cwd=td, rlimits=core)
    fl.check(plain.shell_status() == 139, f"untraced: {plain.desc()}, want SIGSEGV (test broken?)")
    fl.check(res.shell_status() == 139, f"traced: {res.desc()}, want SIGSEGV like the untraced job")
    fl.check(res.core == plain.core, f"core dump flag: traced {res.core}, untraced {plain.core}")
    fl.check(res.out == plain.out, f"stdout differs: {res.out!r} vs {plain.out!r}")
    fl.check(res.err == plain.err, f"stderr differs: {res.err!r} vs {plain.err!r}")
    cores = [x for x in os.listdir(pd) if x.startswith("core")]
    tcores = [x for x in os.listdir(td) if x.startswith("core")]
    fl.check(bool(cores) == bool(tcores), f"core files: untraced {cores}, traced {tcores}")
    fl.info(f"core limit {hard}, core flag {plain.core}, core files {cores} / {tcores}")
    ts = fl.traces(td)
    if fl.check(len(ts) == 1, f"want one trace, got {ts}"):
        f = fl.facts(ts[0])
        if fl.check(f["rc"] == 0, f"trace unreadable: {f['raw'][-300:]}"):
            got = fl.api_count(f, "cudaLaunchKernel")
            fl.check(got == N, f"{got} launch API records in the trace, want {N} (flushed before the crash)")
            fl.check(fl.api_count(f, "cudaDeviceSynchronize") == 1, "cudaDeviceSynchronize missing")
            fl.check(f["integrity"].get("corrupt") == 0, f"corrupt frames: {f['integrity']}")
            k = f["kernels"].get("k_step", 0)
            fl.check(k == N, f"{k} kernel records in the trace, want {N} (periodic CUPTI flush before the crash)")
            fl.info(f"integrity {f['integrity']}")
    # the tools read it too (a killed job's trace is not an error)
    if os.path.exists(fl.GPUPROF) and ts:
        import subprocess
        p = subprocess.run([fl.GPUPROF, "info", ts[0]], capture_output=True, text=True, timeout=60)
        fl.check(p.returncode == 0, f"gpuprof info on the crashed job's trace: exit {p.returncode} {p.stderr}")
    print(f"segv: traced {res.desc()} like untraced; trace readable")
fl.finish()
