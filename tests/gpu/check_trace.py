#!/usr/bin/env python3
"""check_trace.py — checks a gpuprof trace against what the traced job did.

  check_trace.py --expect vector_add.stderr TRACE...   # EXPECT key=value lines
  check_trace.py --steps 105 --skip 2 --nested TRACE... # training-step mode
  check_trace.py --json dump.jsonl ...                  # pre-dumped JSON lines

Always checked: the dump is readable, no records were dropped, every kernel /
memcpy / memset correlates to a recorded API call, kernels on one stream do
not overlap, no GPU op starts before the API call that launched it, NVTX
push/pop nesting is consistent.  Expect mode compares counts (kernels by
name, memcpy count/bytes by kind, memsets, NVTX ranges/marks, kernels per
range, API calls by name).  Step mode: one "step <i>" range per step, nested
forward/backward/optimizer ranges inside each, the same multiset of kernel
names in every steady-state step (attributed through the correlation id of
the launching API call), memcpys present and the same in every steady step.

Prints one PASS/FAIL/SKIP line per check and 'check_trace: N passed, N
failed'; exits 1 when any check failed, 2 on usage/IO errors.
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gptrace  # noqa: E402


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.results = []

    def check(self, name, ok, detail=""):
        self.results.append({"check": name, "ok": bool(ok), "detail": detail})
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
        return ok

    def skip(self, name, why):
        self.results.append({"check": name, "ok": None, "detail": why})
        print(f"SKIP {name}: {why}", flush=True)

    def info(self, msg):
        print(f"INFO {msg}", flush=True)


def parse_expect(path):
    exp = {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("EXPECT "):
                continue
            for tok in line.split()[1:]:
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    exp[k] = int(v)
    return exp


# ------------------------------------------------------------ generic checks
def generic_checks(t, c, args):
    c.check("records", t.lines > 0, f"{t.lines} records from {len(t.files)} file(s)")
    counts = collections.Counter({k: len(v) for k, v in t.by_type.items()})
    c.info("record types: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    if t.events() and t.file_bytes:
        c.info(f"file bytes={t.file_bytes} events={t.events()} (records {t.lines}) "
               f"bytes/event={t.file_bytes / t.events():.2f}")
    if t.errors:
        c.check("dump", args.allow_truncated, "; ".join(t.errors)[:400]
                + (" (tolerated: --allow-truncated)" if args.allow_truncated else ""))
    dropped = t.dropped_total()
    where = collections.Counter(str(d.get("where")) for d in t.by_type["dropped"])
    c.check("no dropped records", dropped == 0,
            f"dropped={dropped}" + (f" where={dict(where)}" if dropped else ""))
    if t.kernels:
        c.check("device record", len(t.by_type["device"]) > 0,
                f"{len(t.by_type['device'])} device record(s)")

    # Correlation: every GPU op has its launching API call.
    apis = t.api_by_corr()
    for typ in gptrace.GPU_TYPES:
        recs = t.by_type[typ]
        if not recs:
            continue
        orphans = [r for r in recs if (r.get("pid"), r.get("corr")) not in apis]
        names = collections.Counter(gptrace.kname(r) if typ == "kernel" else typ for r in orphans)
        detail = f"{len(recs) - len(orphans)}/{len(recs)} {typ} records have their API call"
        if orphans:
            detail += f"; orphans e.g. {names.most_common(3)}"
        if orphans and (args.allow_orphans or args.allow_truncated):
            c.skip(f"{typ} correlation", detail + " (tolerated: --allow-orphans/--allow-truncated)")
        else:
            c.check(f"{typ} correlation", not orphans, detail)

    # Times: end >= start; no op before its launch; per-stream serial order.
    bad = [r for typ in gptrace.GPU_TYPES + ("api",) for r in t.by_type[typ]
           if r.get("end", 0) < r.get("start", 0)]
    c.check("end >= start", not bad, f"{len(bad)} records end before they start"
            + (f", e.g. {json.dumps(bad[0])[:200]}" if bad else ""))
    tol = args.tolerance_ns
    early = []
    for typ in gptrace.GPU_TYPES:
        for r in t.by_type[typ]:
            a = apis.get((r.get("pid"), r.get("corr")))
            if a and r.get("start", 0) + tol < a.get("start", 0):
                early.append((a.get("start", 0) - r.get("start", 0), typ, gptrace.kname(r)))
    early.sort(reverse=True)
    c.check("GPU op starts after its API call", not early,
            f"{len(early)} ops start > {tol} ns before their launch call"
            + (f"; worst {early[0][0]} ns ({early[0][1]} {early[0][2][:60]})" if early else ""))
    streams = collections.defaultdict(list)
    for k in t.kernels:
        streams[(k.get("pid"), k.get("device"), k.get("stream"))].append(k)
    # (Programmatic dependent launch lets a kernel start before its
    # predecessor ends; the names of the worst pair are printed to tell.)
    overlaps, worst, pair = 0, 0, None
    for ks in streams.values():
        ks.sort(key=lambda k: k.get("start", 0))
        for p, q in zip(ks, ks[1:]):
            ov = p.get("end", 0) - q.get("start", 0)
            if ov > tol:
                overlaps += 1
                if ov > worst:
                    worst, pair = ov, (gptrace.kname(p)[:60], gptrace.kname(q)[:60])
    if t.kernels:
        c.check("kernels on one stream do not overlap", overlaps == 0,
                f"{len(streams)} streams, {overlaps} overlaps > {tol} ns"
                + (f" (worst {worst} ns: {pair[0]} then {pair[1]})" if overlaps else ""))

    # NVTX push/pop nesting: a depth-d range lies inside a depth-(d-1) range
    # of the same thread.
    pp = [r for r in t.by_type["nvtx_range"] if r.get("kind") == "pushpop"]
    by_thread = collections.defaultdict(list)
    for r in pp:
        by_thread[(r.get("pid"), r.get("tid"))].append(r)
    broken = open_parent = 0
    for rs in by_thread.values():
        parents = collections.defaultdict(list)
        for r in rs:
            parents[r.get("depth", 0)].append((r.get("start", 0), r.get("end", 0)))
        for r in rs:
            d = r.get("depth", 0)
            if d > 0 and not any(s <= r.get("start", 0) and r.get("end", 0) <= e
                                 for s, e in parents.get(d - 1, ())):
                # A killed job never pops the ranges open at the kill: their
                # children are in the trace (written at their own pop), the
                # parent is not.  Such a child starts after every closed range
                # of the parent's depth on that thread.
                last_end = max((e for _, e in parents.get(d - 1, ())), default=0)
                if args.allow_truncated and r.get("start", 0) >= last_end:
                    open_parent += 1
                else:
                    broken += 1
    if pp:
        c.check("NVTX nesting", broken == 0,
                f"{len(pp)} push/pop ranges on {len(by_thread)} thread(s), {broken} not inside a parent"
                + (f", {open_parent} inside a range still open when the job was killed" if open_parent else ""))


# ------------------------------------------------------------ expect mode
def expect_checks(t, c, exp):
    kern = t.kernels
    base = collections.Counter(gptrace.kernel_base(gptrace.kname(k)) for k in kern)
    copies = collections.defaultdict(lambda: [0, 0])
    for m in t.by_type["memcpy"]:
        copies[m.get("kind")][0] += 1
        copies[m.get("kind")][1] += int(m.get("bytes", 0))
    ranges = t.by_type["nvtx_range"]
    marks = t.by_type["nvtx_mark"]
    api_names = collections.Counter(gptrace.norm_api(a.get("name")) for a in t.apis)
    for key, want in sorted(exp.items()):
        parts = key.split(".")
        got = None
        if parts[0] == "kernels" and len(parts) == 2:
            if parts[1] == "total":
                got = len(kern)
            elif parts[1] == "graph":
                if kern and "graph_id" not in kern[0]:
                    c.skip(key, "dump has no graph_id field")
                    continue
                got = sum(1 for k in kern if k.get("graph_id"))
            else:
                got = base.get(parts[1], 0)
        elif parts[0] == "memcpy" and len(parts) == 3:
            got = copies[parts[1]][0 if parts[2] == "count" else 1]
        elif parts[0] == "memset" and len(parts) == 2:
            ms = t.by_type["memset"]
            got = len(ms) if parts[1] == "count" else sum(int(m.get("bytes", 0)) for m in ms)
        elif key == "nvtx.pushpop" or key == "nvtx.startend":
            got = sum(1 for r in ranges if r.get("kind") == parts[1])
        elif key == "nvtx.mark":
            got = len(marks)
        elif key == "nvtx.maxdepth":
            got = max((r.get("depth", 0) for r in ranges if r.get("kind") == "pushpop"), default=-1)
        elif parts[0] == "nvtx" and parts[1] in ("range", "mark") and len(parts) >= 3:
            msg = ".".join(parts[2:])
            pool = ranges if parts[1] == "range" else marks
            got = sum(1 for r in pool if r.get("message") == msg)
        elif parts[0] == "range_kernels":
            msg = ".".join(parts[1:])
            rs = [r for r in ranges if r.get("message") == msg]
            got = sum(sum(1 for x in items if x.get("type") == "kernel")
                      for items in t.attribute(rs, types=("kernel",)))
        elif key == "streams.min":
            n = len({(k.get("pid"), k.get("device"), k.get("stream")) for k in kern})
            c.check(key, n >= want, f"{n} distinct streams (want >= {want})")
            continue
        elif parts[0] == "api" and len(parts) == 2:
            got = api_names.get(parts[1], 0)
        if got is None:
            c.skip(key, "unknown expectation key")
            continue
        detail = f"got {got}, want {want}"
        if got != want and parts[0] == "kernels":
            detail += f"; kernels by name: {dict(base.most_common(8))}"
        if got != want and parts[0] == "api":
            near = {n: v for n, v in api_names.items() if parts[1][:8].lower() in n.lower()}
            detail += f"; similar API names: {near}"
        c.check(key, got == want, detail)


# ------------------------------------------------------------ step mode
def step_checks(t, c, args):
    pids = collections.Counter(r.get("pid") for r in t.ranges(pattern=gptrace.STEP_RX.pattern))
    if not pids:
        c.check("step ranges", False, "no NVTX range named 'step <i>' in the trace")
        return
    pid = args.pid or pids.most_common(1)[0][0]
    steps, dups = gptrace.step_ranges(t, pid)
    idx = sorted(steps)
    if args.allow_truncated and idx:
        # A killed job's last step may be cut short; compare only whole steps.
        idx = idx[:-1]
    if args.steps is not None:
        ok = len(steps) == args.steps and idx[:1] == [0] and not dups and \
            sorted(steps) == list(range(args.steps))
        c.check("step ranges", ok, f"{len(steps)} 'step <i>' ranges in pid {pid} "
                f"(want {args.steps}, indices {idx[:1]}..{idx[-1:]}, duplicates {dups[:5]})")
    else:
        c.check("step ranges", len(idx) >= args.min_steps and not dups,
                f"{len(idx)} whole 'step <i>' ranges in pid {pid} (want >= {args.min_steps})")
    if args.nested:
        for name in ("forward", "backward", "optimizer"):
            rs = [r for r in t.ranges(pattern=f"^{name}$") if r.get("pid") == pid]
            inside = 0
            for r in rs:
                for i in idx:
                    s = steps[i]
                    if (s.get("tid") == r.get("tid") and s["start"] <= r["start"]
                            and r["end"] <= s["end"] and r.get("depth") == s.get("depth", 0) + 1):
                        inside += 1
                        break
            want = len(idx) if args.allow_truncated else (args.steps or len(idx))
            ok = inside >= want if args.allow_truncated else (len(rs) == want and inside == want)
            c.check(f"nested '{name}' ranges", ok,
                    f"{len(rs)} ranges, {inside} inside a step one level deeper (want {want})")

    ordered = [steps[i] for i in idx]
    work = t.attribute(ordered, same_thread=args.same_thread)
    if args.allow_truncated:
        # GPU activity reaches the file later than API/NVTX records (CUPTI
        # hands it over in buffers), so a killed job's last steps may have
        # no or only part of their kernels: keep the steps before the last
        # one that has any.
        has = [k for k, items in enumerate(work) if any(x["type"] == "kernel" for x in items)]
        keep = has[-1] if has else 0
        c.info(f"killed job: {len(idx) - keep} trailing step(s) without all their GPU records "
               f"left out (steps {idx[keep:keep + 1]}..{idx[-1:]})")
        idx, work = idx[:keep], work[:keep]
        c.check("whole steps with GPU records", len(idx) >= args.min_steps,
                f"{len(idx)} steps (want >= {args.min_steps})")
        if not idx:
            return
    kern_ms = []
    copies_ms = []
    for items in work:
        kern_ms.append(collections.Counter(gptrace.kname(x) for x in items if x["type"] == "kernel"))
        copies_ms.append(collections.Counter((x["type"], x.get("kind", ""), int(x.get("bytes", 0)))
                                             for x in items if x["type"] != "kernel"))
    steady = [k for k, i in enumerate(idx) if i >= args.skip]
    if not steady:
        c.check("steady-state steps", False, f"no step index >= --skip {args.skip}")
        return
    per_step = [sum(kern_ms[k].values()) for k in steady]
    c.info(f"kernels/step (steady, {len(steady)} steps): min={min(per_step)} max={max(per_step)}; "
           f"first steps: {[sum(m.values()) for m in kern_ms[:args.skip]]}")
    c.info(f"kernel names/step: {len(kern_ms[steady[0]])} distinct")
    c.check("kernels in every steady step", min(per_step) > 0,
            f"fewest kernels in a steady step: {min(per_step)}")

    def same_everywhere(name, ms):
        ref = collections.Counter(tuple(sorted(ms[k].items())) for k in steady).most_common(1)[0][0]
        ref = collections.Counter(dict(ref))
        diff = [(idx[k], ms[k]) for k in steady if ms[k] != ref]
        detail = f"{len(steady) - len(diff)}/{len(steady)} steady steps have the reference multiset " \
                 f"({sum(ref.values())} items, {len(ref)} distinct)"
        for i, m in diff[:3]:
            miss = ref - m
            extra = m - ref
            detail += f"; step {i}: missing {dict(list(miss.items())[:3])} extra {dict(list(extra.items())[:3])}"
        c.check(name, not diff, detail)
        return ref

    same_everywhere("same kernels every steady step", kern_ms)
    total_copies = len(t.by_type["memcpy"])
    c.check("memcpys present", total_copies > 0, f"{total_copies} memcpy records in the trace; "
            f"per steady step: {sum(copies_ms[steady[0]].values())}")
    same_everywhere("same memcpys/memsets every steady step", copies_ms)
    ev = t.events()
    rep = {"steps": len(idx), "kernels_per_step": per_step[0] if len(set(per_step)) == 1 else per_step,
           "events": ev, "records": t.lines, "file_bytes": t.file_bytes,
           "bytes_per_event": (t.file_bytes / ev) if ev else None}
    print(f"SUMMARY steps={len(idx)} kernels_per_step={per_step[0]} events={ev} "
          f"file_bytes={t.file_bytes} bytes_per_event={rep['bytes_per_event'] or 0:.2f}", flush=True)
    return rep


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("traces", nargs="*", help="trace file(s) written by gpuprof")
    p.add_argument("--gpuprof", help="gpuprof CLI (default $GPUPROF or build/bin/gpuprof)")
    p.add_argument("--json", dest="json_input", help="read JSON lines from this file instead")
    p.add_argument("--expect", help="file with 'EXPECT key=value ...' lines")
    p.add_argument("--steps", type=int, help="step mode: this many 'step <i>' ranges")
    p.add_argument("--step-mode", action="store_true", help="step mode without an exact count")
    p.add_argument("--min-steps", type=int, default=1)
    p.add_argument("--skip", type=int, default=2, help="steps before steady state")
    p.add_argument("--nested", action="store_true", help="expect forward/backward/optimizer ranges")
    p.add_argument("--pid", type=int, help="process whose steps to check (default: most steps)")
    p.add_argument("--each-pid", action="store_true",
                   help="step checks for every process with step ranges (multi-process jobs)")
    p.add_argument("--min-pids", type=int, default=1)
    p.add_argument("--same-thread", action="store_true",
                   help="attribute only launches on the thread that pushed the step range")
    p.add_argument("--allow-orphans", action="store_true")
    p.add_argument("--allow-truncated", action="store_true",
                   help="killed job: tolerate a dump error and a cut last step")
    p.add_argument("--tolerance-ns", type=int, default=1000)
    p.add_argument("--report", help="write the results as JSON here")
    args = p.parse_args(argv)
    if not args.traces and not args.json_input:
        p.error("give trace files or --json")
    c = Checks()
    try:
        t = gptrace.load(args.traces, args.gpuprof, args.json_input,
                         tolerate_errors=args.allow_truncated)
    except (gptrace.DumpError, OSError) as e:
        print(f"FAIL load: {e}")
        print("check_trace: 0 passed, 1 failed")
        return 2
    generic_checks(t, c, args)
    rep = None
    if args.expect:
        exp = parse_expect(args.expect)
        c.check("EXPECT lines", bool(exp), f"{len(exp)} expectations from {args.expect}")
        expect_checks(t, c, exp)
    if args.each_pid:
        pids = sorted({r.get("pid") for r in t.ranges(pattern=gptrace.STEP_RX.pattern)})
        c.check("processes with steps", len(pids) >= args.min_pids,
                f"{len(pids)} process(es) with 'step <i>' ranges: {pids} (want >= {args.min_pids})")
        rep = {}
        for pid in pids:
            c.info(f"--- process {pid}")
            args.pid = pid
            rep[pid] = step_checks(t, c, args)
    elif args.steps is not None or args.step_mode:
        rep = step_checks(t, c, args)
    print(f"check_trace: {c.passed} passed, {c.failed} failed", flush=True)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"results": c.results, "summary": rep, "files": t.files}, f, indent=1,
                      default=str)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
