"""The steps' index (tools/analysis/steps/step_index.h): a run that finds a
trace's steps keeps them in GPUPROF_CACHE_DIR, and a later --steps window
takes them from there instead of reading the trace.

  - the window's output is the same with and without the index, and its
    errors too, for steps by NVTX ranges and by the trace method;
  - the index is what the window reads: a step's start changed in the file
    changes the window;
  - it is not used once the trace changes (its modification time), when its
    file is cut short, for other detection options, or with
    GPUPROF_CACHE_DIR=off; a directory that cannot be made is no error;
  - a trace not cleanly closed (no footer) is never indexed;
  - advise's facts go beside the trace method's steps where the index has
    their rows (checked against the steps' after the pass).

The file's layout (step_index.c): a 368-byte head, then per step 32 bytes
(plan and partial: 32-bit, number, start, end: 64-bit; little-endian), then 8 bytes."""
import json
import os
import shutil
import struct
import subprocess

import tt

GEN_STEPS = os.path.join(os.path.dirname(tt.GEN), "gen_steps")
HEAD, STEP = 368, 32


def run(cache, *args, check=True):
    env = dict(os.environ, GPUPROF_CACHE_DIR=cache)
    return tt.gp(*args, check=check, env=env)


def window(cache, t, steps, out):
    """export --format perfetto of a window of steps: its events' times"""
    p = run(cache, "export", "--format", "perfetto", "--steps", steps, "-o", out, t, check=False)
    if p.returncode:
        return ("exit", p.returncode, p.stderr.strip())
    with open(out) as f:
        ev = json.load(f)["traceEvents"]
    return sorted((e.get("ts"), e.get("name")) for e in ev if e.get("ph") == "X")


def files(d):
    return sorted(f for f in os.listdir(d)) if os.path.isdir(d) else []


def files_after_window(cache, t, out):
    """the index files after a window of steps 5:9 of t read its index"""
    run(cache, "export", "--format", "perfetto", "--steps", "5:9", "-o", out, t)
    return files(cache)


with tt.tmpdir() as d:
    ix = os.path.join(d, "ix")
    nvtx = os.path.join(d, "nvtx.gpuprof")
    trace = os.path.join(d, "trace.gpuprof")
    subprocess.run([GEN_STEPS, "--steady", "--steps", "40", nvtx], check=True)
    subprocess.run([GEN_STEPS, "--steady", "--no-nvtx", "--steps", "40", trace], check=True)
    w = os.path.join(d, "w.json")

    for t, name in ((nvtx, "NVTX"), (trace, "trace method")):
        want = {a: window("off", t, a, w) for a in ("3:5", "20:20", "38:39", "900:901")}
        tt.expect(want["3:5"] and want["3:5"][0] != "exit", "%s: a window has events (off)" % name)
        tt.expect(want["900:901"][0] == "exit" and want["900:901"][1] == 1, "%s: no such step: exit 1" % name)
        shutil.rmtree(ix, ignore_errors=True)
        tt.eq(files(ix), [], "%s: no index before" % name)
        run(ix, "steps", t)
        tt.eq(len(files(ix)), 1, "%s: gpuprof steps keeps one index" % name)
        f = os.path.join(ix, files(ix)[0])
        st = os.stat(f)
        with open(f, "rb") as fh:
            was = fh.read()
        run(ix, "steps", t)
        with open(f, "rb") as fh:
            tt.eq((os.stat(f).st_ino, fh.read()), (st.st_ino, was),
                  "%s: a second run leaves a whole index of the same key as it is (not written again)" % name)
        for a, v in want.items():
            tt.eq(window(ix, t, a, w), v, "%s: --steps %s from the index as without it" % (name, a))
        # the window's own run keeps an index too
        shutil.rmtree(ix)
        tt.eq(window(ix, t, "3:5", w), want["3:5"], "%s: the first window, no index" % name)
        tt.eq(len(files(ix)), 1, "%s: the first window keeps the index" % name)
        tt.eq(window(ix, t, "20:20", w), want["20:20"], "%s: the second window from it" % name)

    # the index is what is read: step 20's start moved to step 21's moves the window's start
    shutil.rmtree(ix)
    run(ix, "steps", trace)
    f = os.path.join(ix, files(ix)[0])
    with open(f, "rb") as fh:
        raw = bytearray(fh.read())
    n = (len(raw) - HEAD - 8) // STEP
    tt.eq(len(raw), HEAD + n * STEP + 8, "the index's size: head, steps, end")
    rows = [struct.unpack_from("<IIqQQ", raw, HEAD + k * STEP) for k in range(n)]
    k20 = [k for k, r in enumerate(rows) if r[2] == 20][0]
    tt.eq(rows[k20 + 1][2], 21, "the steps in order of their numbers")
    real = window(ix, trace, "20:20", w)
    moved = bytearray(raw)
    struct.pack_into("<Q", moved, HEAD + k20 * STEP + 16, rows[k20 + 1][3])
    with open(f, "wb") as fh:
        fh.write(moved)
    got = window(ix, trace, "20:20", w)
    tt.expect(got != real and all(ts >= real[0][0] for ts, _ in got),
             "a window from a changed index differs: the index was read")

    # a changed trace (its modification time): not used, and replaced
    st = os.stat(trace)
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    tt.eq(window(ix, trace, "20:20", w), real, "a changed trace: the index not used")
    with open(f, "rb") as fh:
        again = fh.read()
    tt.expect(again != bytes(raw) and again[HEAD:] == bytes(raw[HEAD:]),
              "the index made again for the trace as it is now: a new key, the steps as before")
    raw = again

    # an index cut short: not used
    with open(f, "r+b") as fh:
        fh.truncate(len(raw) - 1)
    with open(f, "rb") as fh:
        tt.eq(len(fh.read()), len(raw) - 1, "cut")
    tt.eq(window(ix, trace, "20:20", w), real, "an index cut short: not used")

    # other detection options are another index: --step-range on the NVTX trace
    shutil.rmtree(ix)
    run(ix, "steps", nvtx)
    base = run("off", "dump", "--steps", "3:4", "--type", "kernel", nvtx).stdout
    other = run("off", "stats", "--report", "steps", "--step-range", "train_step", "--steps", "3:4", nvtx,
                check=False)
    got = run(ix, "stats", "--report", "steps", "--step-range", "train_step", "--steps", "3:4", nvtx, check=False)
    tt.eq((got.returncode, got.stdout, got.stderr), (other.returncode, other.stdout, other.stderr),
          "--step-range: not the default detection's index")
    tt.eq(run(ix, "dump", "--steps", "3:4", "--type", "kernel", nvtx).stdout, base, "dump --steps from the index")

    # off: nothing kept; a directory that cannot be made: no error, no message
    shutil.rmtree(ix)
    p = run("off", "steps", trace)
    tt.eq(files(ix), [], "GPUPROF_CACHE_DIR=off: no index")
    blocker = os.path.join(d, "file")
    open(blocker, "w").close()
    p = run(os.path.join(blocker, "ix"), "steps", trace)
    tt.eq(p.stderr, "", "an index directory that cannot be made: no message")
    tt.eq(window(os.path.join(blocker, "ix"), trace, "3:5", w)[:1], window("off", trace, "3:5", w)[:1],
          "... and windows as without it")

    # advise beside the trace method's steps: with the index, advise's facts
    # run in the steps' pass (reports/advise_drive.c expect_load), and
    # adv_facts_settle checks the rows were the steps'; the findings as
    # without the index, at one thread and in 4 slices.  An index whose
    # step starts were moved (its key intact) fails that check: the facts
    # in a pass of their own, the findings still the same.
    big = os.path.join(d, "big.gpuprof")
    subprocess.run([os.path.join(tt.B, "bench", "gen_bigtrace"), "--seed", "9", "--no-nvtx", "200000", big],
                   check=True, capture_output=True)
    shutil.rmtree(ix, ignore_errors=True)
    want = {n: run("off", "advise", "--all", "--format", "json", "--threads", n, big).stdout for n in ("1", "4")}
    tt.expect('"findings"' in want["1"], "advise without the index: findings")
    tt.eq(want["4"], want["1"], "advise without the index: 4 slices as one thread")
    run(ix, "steps", big)
    for n in ("1", "4"):
        tt.eq(run(ix, "advise", "--all", "--format", "json", "--threads", n, big).stdout, want["1"],
              f"advise --threads {n} from the index: the findings as without it")
    v = run(ix, "advise", "--verbose", "--threads", "4", big).stderr
    tt.expect("the facts in the steps' pass in 4 slices" in v, f"advise with the index: the facts beside the steps: {v!r}")
    v = run("off", "advise", "--verbose", "--threads", "4", big).stderr
    tt.expect("the facts in a pass of their own in 4 slices" in v, f"advise without it: a pass of their own: {v!r}")
    f = os.path.join(ix, files(ix)[0])
    with open(f, "rb") as fh:
        raw = bytearray(fh.read())
    n = (len(raw) - HEAD - 8) // STEP
    for k in range(n // 2, n // 2 + 3):  # three steps start 1 us later
        s0 = struct.unpack_from("<Q", raw, HEAD + k * STEP + 16)[0]
        struct.pack_into("<Q", raw, HEAD + k * STEP + 16, s0 + 1000)
    with open(f, "wb") as fh:
        fh.write(raw)
    p = run(ix, "advise", "--all", "--format", "json", "--verbose", "--threads", "4", big)
    tt.eq(p.stdout, want["1"], "advise from an index with other rows: the findings as without it")
    tt.expect("the facts in a pass of their own in 4 slices" in p.stderr,
              f"advise from an index with other rows: the facts' own pass: {p.stderr!r}")

    # an index of the right key and size whose steps are noise (plan 0, the
    # partial flag 0 or 1): advise still gives its findings (settle refuses
    # the rows), a window exits 0 or 1, neither crashes
    import random
    rnd = random.Random(41)
    for trial in range(4):
        noisy = bytearray(raw)
        for k in range(n):
            struct.pack_into("<IIqQQ", noisy, HEAD + k * STEP, 0, rnd.randrange(2), rnd.randrange(-5, n + 5),
                             rnd.randrange(1 << 40), rnd.randrange(1 << 40))
        with open(f, "wb") as fh:
            fh.write(noisy)
        for threads in ("1", "4"):
            p = run(ix, "advise", "--all", "--format", "json", "--threads", threads, big, check=False)
            tt.eq((p.returncode, p.stdout), (0, want["1"]), f"advise from a noisy index ({trial}, --threads {threads})")
        p = run(ix, "export", "--format", "perfetto", "--steps", "5:9", "-o", w, big, check=False)
        tt.expect(p.returncode in (0, 1), f"a window from a noisy index ({trial}): exit {p.returncode} {p.stderr!r}")

    # the directory's indexes past GPUPROF_CACHE_MAX: the least recently
    # used go, never the one just written
    shutil.rmtree(ix)
    run(ix, "steps", nvtx)
    old = files(ix)[0]
    os.utime(os.path.join(ix, old), ns=(1, 1))  # written long ago
    run(ix, "steps", trace)
    new = [f for f in files(ix) if f != old]
    tt.eq(len(new), 1, "two traces: two indexes, no cap reached")
    size = os.path.getsize(os.path.join(ix, new[0]))
    for cap, what in ((size, "room for the newest alone"), (0, "no room at all")):
        os.remove(os.path.join(ix, new[0]))
        tt.gp("steps", trace, env=dict(os.environ, GPUPROF_CACHE_DIR=ix, GPUPROF_CACHE_MAX=str(cap)))
        tt.eq(files(ix), new, f"GPUPROF_CACHE_MAX {what}: the oldest index removed, the one just written kept")
        shutil.copy(os.path.join(ix, new[0]), os.path.join(ix, old))  # an old one again
        os.utime(os.path.join(ix, old), ns=(1, 1))

    # least recently used first: the index a window read stays, one written
    # after it and not read since goes
    shutil.rmtree(ix)
    run(ix, "steps", nvtx)
    nvtx_ix = files(ix)[0]
    run(ix, "steps", trace)
    trace_ix = [f for f in files(ix) if f != nvtx_ix][0]
    os.utime(os.path.join(ix, nvtx_ix), ns=(1, 1))  # written first
    os.utime(os.path.join(ix, trace_ix), ns=(2, 2))
    tt.eq(files_after_window(ix, nvtx, os.path.join(d, "u.json")), sorted([nvtx_ix, trace_ix]),
          "a window reads an index: both stay")
    tt.expect(os.stat(os.path.join(ix, nvtx_ix)).st_mtime_ns > 2, "the index a window read: its time is now")
    third = os.path.join(d, "third.gpuprof")
    shutil.copy(trace, third)
    cap = os.path.getsize(os.path.join(ix, nvtx_ix)) + os.path.getsize(os.path.join(ix, trace_ix))
    tt.gp("steps", third, env=dict(os.environ, GPUPROF_CACHE_DIR=ix, GPUPROF_CACHE_MAX=str(cap)))
    after = files(ix)
    tt.expect(nvtx_ix in after and trace_ix not in after and len(after) == 2,
              f"past the cap the index not read since goes, the one a window read stays: {after}")

    # a trace with no footer (cut short): never indexed
    cut = os.path.join(d, "cut.gpuprof")
    with open(trace, "rb") as a, open(cut, "wb") as b:
        data = a.read()
        b.write(data[:len(data) - 36])
    shutil.rmtree(ix)
    run(ix, "steps", cut, check=False)
    tt.eq(files(ix), [], "a trace with no footer: no index")

tt.finish()
