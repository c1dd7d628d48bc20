"""64 threads released together by a barrier, all launching; the odd ones
stop halfway and exit while the even ones go on.  Per thread: the trace's
launch records == what the thread says it launched — or, where the trace
reports drops, records + drops account for every attempt (nothing vanishes
silently).  The dropped records in the trace, the GPUPROF_SUMMARY line and
`gpuprof info` agree.  Run twice: default rings (expected: exact), and 4 KiB
rings (drops likely on a loaded machine; the accounting must still close).
Accounting: each launch is one API and one kernel record; API + kernel +
dropped must cover 2 x launches (nothing vanishes unreported) and exceed it
by no more than the few other records of the run (drops not over-counted);
the summary's events= equals the records in the file."""
import os
import re
import subprocess

import fl

NTHR, NL = 64, 2000
GP_DROP_NO_RING = 3


def one(d, tag, **extra):
    td = os.path.join(d, tag)
    os.mkdir(td)
    summ = os.path.join(td, "summary.txt")
    res = fl.run([fl.WORKLOAD, "threads", str(NTHR), str(NL)],
                 fl.traced_env(os.path.join(td, "t-%p.gpuprof"), GPUPROF_SUMMARY=summ, **extra), timeout=120)
    fl.check(res.desc() == "exit 0", f"{tag}: {res.desc()}")
    fl.check(res.foreign_lines() == [], f"{tag}: foreign stderr {res.foreign_lines()}")
    want = {}
    for l in res.out.splitlines():
        m = re.match(r"tid=(\d+) launches=(\d+)$", l)
        if m:
            want[int(m.group(1))] = int(m.group(2))
    fl.check(len(want) == NTHR, f"{tag}: workload reported {len(want)} threads")
    fl.check(sum(want.values()) == NTHR * NL * 3 // 4, f"{tag}: attempted {sum(want.values())}")
    ts = fl.traces(td)
    if not fl.check(len(ts) == 1, f"{tag}: want one trace, got {ts}"):
        return
    f = fl.facts(ts[0])
    if not fl.check(f["rc"] == 0, f"{tag}: trace unreadable: {f['raw'][-300:]}"):
        return
    total_drops = fl.dropped_total(f)
    no_ring = sum(n for where, _, n in f["dropped"] if where == GP_DROP_NO_RING)
    A = sum(want.values())
    api = fl.api_count(f, "cudaLaunchKernel")
    k = f["kernels"].get("k_aux", 0)
    if total_drops == 0:
        # nothing lost: exact, thread by thread
        for tid, n in want.items():
            got = fl.api_count(f, "cudaLaunchKernel", tid)
            fl.check(got == n, f"{tag}: thread {tid}: {got} launch records, launched {n}, no drops reported")
        fl.check(k == A, f"{tag}: {k} kernel records for {A} launches, no drops reported")
    else:
        for tid, n in want.items():
            got = fl.api_count(f, "cudaLaunchKernel", tid)
            fl.check(got <= n, f"{tag}: thread {tid}: {got} launch records, more than its {n} launches")
    # every launch is an API record + a kernel record: present + dropped
    # accounts for all of them; the only other records that can be among
    # the dropped are the few non-launch ones (thread names, malloc/free, ...)
    extra = 2 * NTHR + 64
    fl.check(api <= A and k <= A, f"{tag}: {api} API / {k} kernel records for {A} launches")
    fl.check(api + k + total_drops >= 2 * A,
             f"{tag}: {api} API + {k} kernel records + {total_drops} dropped < {2 * A}: records vanished unreported")
    fl.check(api + k + total_drops <= 2 * A + extra,
             f"{tag}: {api} + {k} + {total_drops} dropped > {2 * A} + {extra}: drops over-counted")
    # every record the recorder accepted is in the file
    present = sum(n for t, n in f["types"].items() if t not in ("string", "source", "dropped"))
    summ_line = open(summ).read() if os.path.exists(summ) else ""
    ev = re.search(r"events=(\d+)", summ_line)
    fl.check(ev is not None and int(ev.group(1)) == present,
             f"{tag}: summary events={ev.group(1) if ev else None}, records in the trace {present}")
    # the three reports agree
    m = re.search(r"dropped=(\d+)", summ_line)
    fl.check(m is not None, f"{tag}: no summary line: {summ_line!r}")
    if m:
        fl.check(int(m.group(1)) == total_drops, f"{tag}: summary dropped={m.group(1)}, trace {total_drops}")
    if os.path.exists(fl.GPUPROF):
        p = subprocess.run([fl.GPUPROF, "info", ts[0]], capture_output=True, text=True, timeout=120)
        m2 = re.search(r"^dropped:\s+(\d+)", p.stdout, re.M)
        fl.check(m2 is not None and int(m2.group(1)) == total_drops,
                 f"{tag}: gpuprof info dropped {m2.group(1) if m2 else None}, trace {total_drops}")
    if no_ring:
        fl.info(f"{tag}: {no_ring} records dropped because threads got no ring (memory cap)")
    print(f"{tag}: {A} launches by {NTHR} threads: {api} API + {k} kernel records, "
          f"{total_drops} dropped (reported in trace, summary, info)")


with fl.TmpDir() as d:
    one(d, "default")
    one(d, "tiny-rings", GPUPROF_RING_SIZE="4K")
fl.finish()
