"""gpuprof top on hand-written status files (the shim's format, see
docs/CLI.md): a fresh running job, a stale one (running, not rewritten for
10 s), an exited one, a range with control characters (escaped) and a long
one (cut so that the line fits --width, else 120 columns when stdout is not
a terminal); then missing,
truncated, non-JSON, partial (no pid), newer-version files: a line saying
why for each, the good lines still shown, exit 0 while one file was shown
and 1 when none was.  The redraw mode prints blocks separated by a blank
line (no ANSI codes off a terminal) and exits 0 on SIGINT.  Hostile inputs
(deep nesting, binary, huge, a FIFO) never crash or hang it."""
import json
import os
import signal
import subprocess
import time

import tt


def status(**kw):
    now = time.time_ns()
    s = {"version": 1, "pid": 4242, "host": "node7", "rank": 3, "trace": "/x/t.gpuprof",
         "updated_realtime_ns": now, "uptime_s": 12.0, "kernels_total": 9000,
         "kernels_per_s": 812, "gpu_busy_pct": 63.5, "rate_lag_ms": 750,
         "memcpy_bytes_total": 1, "device_mem_used_bytes": 2500000000,
         "device_mem_source": "cupti", "last_nvtx_range": "forward", "dropped": 0,
         "state": "running"}
    s.update(kw)
    return json.dumps(s)


def write(d, name, text, mode="w"):
    p = os.path.join(d, name)
    with open(p, mode) as f:
        f.write(text)
    return p


def line_for(out, needle):
    for ln in out.splitlines():
        if needle in ln:
            return ln
    tt.fail(f"no line with {needle!r} in:\n{out}")
    return ""


def main():
    with tt.tmpdir() as d:
        good = write(d, "good.json", status())
        stale = write(d, "stale.json", status(pid=5001, updated_realtime_ns=time.time_ns() - 10 * 10**9))
        exited = write(d, "exited.json", status(pid=5002, state="exited", rank=None,
                                               updated_realtime_ns=time.time_ns() - 2 * 3600 * 10**9))
        esc = write(d, "esc.json", status(pid=5003, last_nvtx_range="a\u001b[31mb\tc"))
        long_ = write(d, "long.json", status(pid=5004, last_nvtx_range="L" * 100,
                                             device_mem_source="none"))
        missing = os.path.join(d, "missing.json")
        trunc = write(d, "trunc.json", status()[:60])
        notjson = write(d, "notjson.json", "hello\n")
        partial = write(d, "partial.json", json.dumps({"version": 1, "state": "running"}))
        newer = write(d, "newer.json", status(version=2))

        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # the default off a terminal: 120
        p = tt.gp("top", "--once", good, stale, exited, esc, long_, missing, trunc, notjson, partial, newer, env=env)
        out = p.stdout
        tt.expect(out.splitlines()[0].split()[:3] == ["HOST", "PID", "RANK"], f"header: {out.splitlines()[0]!r}")
        ln = line_for(out, " 4242 ")
        tt.eq(ln.split()[:9], ["node7", "4242", "3", "running", ln.split()[4], "812", "63.5", "2.5", "GB"],
              "good line fields")
        tt.expect(ln.split()[4].endswith("s") and float(ln.split()[4][:-1]) < 5, f"age of a fresh file: {ln!r}")
        tt.expect(ln.rstrip().endswith("forward"), f"good line range: {ln!r}")
        tt.expect(" stale " in line_for(out, " 5001 "), "running but 10 s old shows stale")
        ln = line_for(out, " 5002 ")
        tt.expect(" exited " in ln and " stale " not in ln and " 2h " in ln and " - " in ln,
                  f"exited, two hours old, no rank: {ln!r}")
        ln = line_for(out, " 5003 ")
        tt.expect(ln.endswith("a\\x1b[31mb\\x09c"), f"control characters escaped: {ln!r}")
        tt.expect("\x1b" not in out and "\t" not in out, "no raw control character in the output")
        ln = line_for(out, " 5004 ")
        tt.expect(ln.endswith("L" * 43 + "...") and len(ln) == 120, f"long range cut: the line fits 120 columns: {ln!r}")
        tt.expect(" - " in ln.split("LLL")[0], f"memory source none shows '-': {ln!r}")
        tt.expect(f"{missing}: cannot read: No such file or directory" in out, "missing file line")
        tt.expect(f"{trunc}: not a status file (" in out and "unexpected end" in out, "truncated file line")
        tt.expect(f"{notjson}: not a status file (not a JSON object at byte 0)" in out, "non-JSON line")
        tt.expect(f"{partial}: incomplete status" in out, "partial file line")
        tt.expect(f"{newer}: status format version 2 (this gpuprof reads 1)" in out, "newer version line")
        tt.eq(len(out.splitlines()), 11, "one header and one line per file")
        # --width N: the line fits N; --width 0: the range whole
        ln = line_for(tt.gp("top", "--once", "--width", "100", long_).stdout, " 5004 ")
        tt.expect(ln.endswith("L" * 23 + "...") and len(ln) == 100, f"--width 100: the line fits: {ln!r}")
        ln = line_for(tt.gp("top", "--once", "--width", "0", long_).stdout, " 5004 ")
        tt.expect(ln.endswith("LLL") and "..." not in ln and len(ln) > 120, f"--width 0: the range whole: {ln!r}")

        # the flight recorder's line: a step line only once a step is known
        # (the shim writes -1 before); a negative rank shows as '-'
        armed = {"capture_state": "armed", "captures": 0, "step_ms_median": 8.0, "steps_per_s": 2.5,
                 "last_capture_why": "", "last_capture_file": "", "api_history": "all"}
        out = tt.gp("top", "--once", write(d, "armed.json", status(pid=6001, step=-1, rank=-1, **armed))).stdout
        tt.expect(" step " not in out and "capture state: armed" in out, f"step -1: no step line:\n{out}")
        tt.eq(line_for(out, " 6001 ").split()[2], "-", "rank -1 shows '-'")
        out = tt.gp("top", "--once", write(d, "armed12.json", status(pid=6002, step=12, **armed))).stdout
        tt.expect("  step 12, step time median 8.000 ms, 2.50 steps/s" in out, f"step 12:\n{out}")

        # none shown: exit 1; usage errors: exit 1 with a message
        p = tt.gp("top", "--once", missing, trunc, check=False)
        tt.eq(p.returncode, 1, "--once with no good file")
        tt.eq(len(p.stdout.splitlines()), 3, "header and two reason lines")
        for args in (["top"], ["top", "--interval", "0", good], ["top", "--interval", "x", good],
                     ["top", "--bogus", good]):
            p = tt.gp(*args, check=False)
            tt.eq(p.returncode, 1, f"gpuprof {' '.join(args)}")
            tt.expect(p.stderr.strip() != "", f"gpuprof {' '.join(args)} says why")

        # redraw mode, not a terminal: blocks separated by a blank line, SIGINT ends it
        proc = subprocess.Popen([tt.GPUPROF, "top", "--interval", "0.2", good], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.9)
        proc.send_signal(signal.SIGINT)
        try:
            so, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            so, _ = proc.communicate()
            tt.fail("top did not stop on SIGINT")
        tt.eq(proc.returncode, 0, "redraw mode exit on SIGINT")
        blocks = [b for b in so.split("\n\n") if b.strip()]
        tt.expect(len(blocks) >= 3, f"blocks every 0.2 s for 0.9 s: {len(blocks)}")
        tt.expect(all(b.strip().splitlines()[0].startswith("HOST") and len(b.strip().splitlines()) == 2
                      for b in blocks), f"each block a header and one line:\n{so}")
        tt.expect("\x1b" not in so, "no ANSI codes when stdout is not a terminal")

        # hostile inputs: a line and exit 1, never a crash or a hang
        hostile = {
            "deep.json": "{\"a\":" + "[" * 100000 + "]" * 100000 + "}",
            "bin.json": bytes(range(256)) * 16,
            "huge.json": "{\"version\":1,\"x\":\"" + "y" * 100000 + "\"}",
            "esc.json": "{\"version\":1,\"pid\":1,\"state\":\"\\ud800\\u0000\\uZZZZ\"}",
            "num.json": "{\"version\":1e999999,\"pid\":-1}",
            "empty.json": "",
        }
        for name, text in hostile.items():
            path = write(d, "h-" + name, text, "wb" if isinstance(text, bytes) else "w")
            p = tt.gp("top", "--once", path, check=False, timeout=10)
            tt.eq(p.returncode, 1, f"hostile {name}")
            tt.expect(len(p.stdout.splitlines()) == 2 and p.stdout.splitlines()[1].startswith(path + ": "),
                      f"hostile {name}: {p.stdout[:300]!r}")
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        p = tt.gp("top", "--once", fifo, check=False, timeout=10)
        tt.expect(p.returncode == 1 and "not a regular file" in p.stdout, f"FIFO: {p.stdout!r}")
        # byte flips and cuts of a good file: exit 0 or 1, never a signal
        base = status().encode()
        for i in range(0, len(base), 7):
            for mutated in (base[:i], base[:i] + b"\xff" + base[i + 1:], base[:i] + b"\"" + base[i + 1:]):
                path = write(d, "m.json", mutated, "wb")
                p = tt.gp("top", "--once", path, check=False, timeout=10)
                if p.returncode not in (0, 1):
                    tt.fail(f"mutation at {i}: exit {p.returncode}")
                    break
    tt.finish()


main()
