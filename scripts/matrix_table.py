#!/usr/bin/env python3
"""matrix_table.py — the checks and the table of the compatibility matrix
(scripts/matrix.sh; docs/RELIABILITY.md "Compatibility matrix").  Stdlib only.

  matrix_table.py cell --workload W --option O --row OUT.csv [--state run|"not run"|skip]
      [--args "ARGS"] [--rc N] [--wall-ms MS] [--stdout F] [--stderr F]
      [--bare-stdout F] [--bare-stderr F] [--traces DIR/PREFIX] [--status DIR/PREFIX]
      [--gpuprof G] [--expect-no-trace]
    The facts of one run, as one CSV row (with its header) in OUT.csv; one
    progress line on stdout.  Option `bare` is the untraced run.  --traces
    and --status name files DIR/PREFIX<pid>.gpuprof and DIR/PREFIX<pid>.json
    (the run's -o PREFIX%p.gpuprof and --status PREFIX%p.json).  Exit 1 when
    the run fails a check of its own (exit status, RESULT line, traces there,
    whole and decodable, status files), 0 otherwise: matrix.sh keeps the
    traces of such runs.

  matrix_table.py table ROW.csv... [--md OUT.md] [--csv OUT.csv] [--title LINE]...
      [--kernels-na LIST] [--no-trace LIST]
    Judges each cell against its workload's bare and default runs, prints the
    markdown table (rows: workloads, columns: bare then the options in the
    order of the rows given), one line per failing cell with its reasons,
    notes, a table of seconds per run and a summary line; --md writes the same
    text, --csv all rows in one file.  Exit 1 when a cell failed or was
    skipped (its bare run failed), 0 otherwise ("not run" cells, cut by the
    time budget, do not fail).

A cell passes when: its exit status equals the bare run's; its RESULT line(s)
equal the bare run's; no stdout line starts with "gpuprof"; at least one trace
file was written and every one of them decodes (`gpuprof info --json` exit 0
with integrity "complete" and a footer, `gpuprof dump` exit 0); the status
files, where the option asks for them, are JSON objects with "state":"exited";
and, for options outside --kernels-na (default: gpu-window, capture-range,
sample-steps: they record GPU activity for a part of the run), its kernel
count (summed over its trace files) equals the default run's; no new stderr line says a
process crashed (a child such as OpenMPI's orted may crash while the job
exits 0: "Segmentation fault", "*** Process received signal", "Aborted",
heap corruption, "Fatal Python error"); for those of
--kernels-na it is at most the default run's.  Options of --no-trace
(default: flight-recorder: armed, never triggered) must write NO trace file
and say so (a `gpuprof:` line "nothing was captured").  New stderr lines (not in the bare
run's, after digits and hex numbers are masked, `gpuprof` lines aside) and
`gpuprof:` messages other than the end-of-run summary are reported, not
failed."""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

FIELDS = ["workload", "option", "args", "state", "rc", "wall_s", "result", "stdout_gpuprof", "new_stdout",
          "new_stderr", "new_stderr_sample", "gpuprof_msgs", "err_tail", "traces", "files", "decode",
          "integrity", "kernels", "dropped", "status", "crash"]
KERNELS_NA = "gpu-window,capture-range,sample-steps"
# options whose run must write no trace: the flight recorder armed, with
# nothing triggering a capture (docs/FLIGHT.md "No capture, no file")
NO_TRACE = "flight-recorder"
NOTHING_CAPTURED_RE = re.compile(r"^gpuprof: .*nothing was captured")
# a process of the job crashed even when the job's own exit status is 0
# (OpenMPI's orted, a DataLoader worker): these on a new stderr line fail
CRASH_RE = re.compile(r"Segmentation fault|\*\*\* Process received signal|Signal: [A-Z][a-z]|Aborted|core dumped|"
                      r"corrupted (double-linked|size)|double free|free\(\): invalid|Fatal Python error|"
                      r"fake cupti: .* after")
# gpuprof run's end-of-run summary; every other gpuprof line is a message
# ("no trace written" among them: the job made no CUDA calls)
SUMMARY_OK_RE = re.compile(r"^gpuprof: \d+ events, \d+ dropped, wrote ")


def read_lines(path):
    if not path:
        return []
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def norm(line):
    """A line with what changes from run to run masked: hex numbers, digits."""
    line = re.sub(r"0x[0-9a-fA-F]+", "0x_", line.strip())
    return re.sub(r"\d+", "#", line)


def is_gpuprof(line):
    return line.lstrip().startswith("gpuprof")


def new_lines(lines, bare_lines, skip):
    """Lines (not empty, not skip()) whose masked form the bare run never printed."""
    seen = {norm(b) for b in bare_lines}
    return [l for l in lines if l.strip() and not skip(l) and norm(l) not in seen]


def clip(s, n):
    s = s.replace("\n", " ")
    return s if len(s) <= n else s[:n - 3] + "..."


def matching(spec, ext):
    """Files DIR/PREFIX<digits>EXT for spec DIR/PREFIX, sorted."""
    d, prefix = os.path.split(spec)
    pat = re.compile(re.escape(prefix) + r"\d+" + re.escape(ext) + "$")
    try:
        names = sorted(n for n in os.listdir(d or ".") if pat.match(n))
    except OSError:
        return []
    return [os.path.join(d, n) for n in names]


def check_traces(gpuprof, files):
    """(decode, integrity, kernels, dropped, files text) over the trace files."""
    decode, integ, kernels, dropped, per = "ok", set(), 0, 0, []
    for f in files:
        name = os.path.basename(f)
        try:
            p = subprocess.run([gpuprof, "info", "--json", f], capture_output=True, text=True,
                               errors="replace", timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            decode = decode if decode != "ok" else "info %s: %s" % (name, e)
            integ.add("unread")
            continue
        try:
            j = json.loads(p.stdout) if p.stdout.strip() else None
        except ValueError:
            j = None
        if p.returncode != 0 or not isinstance(j, dict):
            if decode == "ok":
                decode = "info exit %d on %s: %s" % (p.returncode, name, clip(p.stderr.strip(), 160))
            integ.add("unread")
            per.append("%s:unread" % name)
            continue
        ig = j.get("integrity", {})
        st = ig.get("status", "?")
        if st == "complete" and not ig.get("has_footer"):
            st = "no footer"
        integ.add(st)
        k = int(j.get("counts", {}).get("kernel", 0))
        kernels += k
        dropped += int(j.get("dropped", 0))
        per.append("%s:k=%d:%s" % (j.get("pid", name), k, st.replace(" ", "-")))
        try:
            with open(os.devnull, "w") as null:
                d = subprocess.run([gpuprof, "dump", f], stdout=null, stderr=subprocess.PIPE, text=True,
                                   errors="replace", timeout=120)
            if d.returncode != 0 and decode == "ok":
                decode = "dump exit %d on %s: %s" % (d.returncode, name, clip(d.stderr.strip(), 160))
        except (OSError, subprocess.TimeoutExpired) as e:
            if decode == "ok":
                decode = "dump %s: %s" % (name, e)
    return decode, ",".join(sorted(integ)), kernels, dropped, " ".join(per)


def check_status(files):
    if not files:
        return "missing"
    for f in files:
        try:
            with open(f) as fh:
                j = json.load(fh)
        except (OSError, ValueError) as e:
            return "bad: %s: %s" % (os.path.basename(f), clip(str(e), 80))
        if not isinstance(j, dict) or j.get("state") != "exited":
            return "bad: %s: state %r" % (os.path.basename(f), j.get("state") if isinstance(j, dict) else None)
    return "ok"


def cmd_cell(a):
    row = dict.fromkeys(FIELDS, "")
    row.update(workload=a.workload, option=a.option, args=a.args, state=a.state)
    local_ok = True
    if a.state == "run":
        out, err = read_lines(a.stdout), read_lines(a.stderr)
        row["rc"] = a.rc
        row["wall_s"] = "%.1f" % (a.wall_ms / 1000.0)
        row["result"] = " | ".join(l.strip() for l in out if l.startswith("RESULT"))
        row["stdout_gpuprof"] = sum(1 for l in out if is_gpuprof(l))
        if a.option != "bare":
            nout = new_lines(out, read_lines(a.bare_stdout), lambda l: l.startswith("RESULT") or is_gpuprof(l))
            nerr = new_lines(err, read_lines(a.bare_stderr), is_gpuprof)
            row["new_stdout"] = len(nout)
            row["new_stderr"] = len(nerr)
            row["new_stderr_sample"] = " | ".join(clip(l.strip(), 160) for l in nerr[:2])
            crash = [l for l in nerr if CRASH_RE.search(l)]
            row["crash"] = clip(" | ".join(l.strip() for l in crash[:3]), 300)
        msgs = []
        for l in err:
            l = l.strip()
            if is_gpuprof(l) and not SUMMARY_OK_RE.match(l) and l not in msgs:
                msgs.append(l)
        row["gpuprof_msgs"] = clip(" | ".join(msgs), 400)
        tail = [l.strip() for l in err if l.strip() and not is_gpuprof(l)]
        row["err_tail"] = clip(tail[-1], 200) if tail else ""
        local_ok = a.rc == 0 and row["result"] != "" and row["stdout_gpuprof"] == 0 and not row["crash"]
        if a.traces is not None:
            files = matching(a.traces, ".gpuprof")
            row["traces"] = len(files)
            if a.expect_no_trace:
                said = any(NOTHING_CAPTURED_RE.match(l.strip()) for l in err)
                row["decode"] = "no trace, as expected" if not files and said else \
                    ("%d trace(s) written" % len(files) if files else "no 'nothing was captured' line")
                local_ok = local_ok and not files and said
            elif files:
                (row["decode"], row["integrity"], row["kernels"], row["dropped"],
                 row["files"]) = check_traces(a.gpuprof, files)
                local_ok = local_ok and row["decode"] == "ok" and row["integrity"] == "complete"
            else:
                local_ok = False
        if a.status is not None:
            row["status"] = check_status(matching(a.status, ".json"))
            local_ok = local_ok and row["status"] == "ok"
    with open(a.row, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerow(row)
    print("MATRIX cell %s %s state=%s rc=%s t=%ss k=%s traces=%s decode=%s %s" % (
        a.workload, a.option, a.state.replace(" ", "-"), row["rc"], row["wall_s"], row["kernels"],
        row["traces"], row["decode"] or "-", "ok" if local_ok else "CHECK"), flush=True)
    return 0 if local_ok else 1


# ---- the table -------------------------------------------------------------

def as_int(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def bare_verdict(b):
    """(text, reasons) of a workload's bare run; reasons empty when usable."""
    if b is None or b["state"] != "run":
        return "not run", ["bare run not run"]
    rc = as_int(b["rc"])
    if rc != 0:
        return ("FAIL timeout" if rc == 124 else "FAIL rc=%s" % b["rc"]), \
            ["bare run exit %s" % b["rc"]]
    if not b["result"]:
        return "FAIL no RESULT", ["bare run printed no RESULT line"]
    return "ok", []


def cell_verdict(c, bare, default, na, no_trace=frozenset()):
    """(text, reasons, kind) with kind ok / fail / skip / notrun."""
    if c["state"] == "not run":
        return "not run", [], "notrun"
    if c["state"] == "skip":
        return "skip", ["its bare run failed"], "skip"
    reasons = []
    rc = as_int(c["rc"])
    brc = as_int(bare["rc"]) if bare else None
    if rc != brc:
        reasons.append("timeout" if rc == 124 else "rc=%s" % c["rc"])
    if bare is None or c["result"] != bare["result"]:
        reasons.append("out≠")
    if as_int(c["stdout_gpuprof"]):
        reasons.append("stdout")
    if c.get("crash"):
        reasons.append("crash")
    if c["option"] in no_trace:
        if as_int(c["traces"]):
            reasons.append("trace written")
        elif not c["decode"].startswith("no trace"):
            reasons.append("not said")
    elif c["option"] != "bare":
        if not as_int(c["traces"]):
            reasons.append("no trace")
        elif c["decode"] != "ok":
            reasons.append("decode")
        elif c["integrity"] != "complete":
            reasons.append("corrupt" if "corrupt" in c["integrity"] else "truncated")
        if c["status"] not in ("", "ok"):
            reasons.append("status")
    k = as_int(c["kernels"])
    notes = []
    if c["option"] != "default" and k is not None:
        dk = as_int(default["kernels"]) if default else None
        dok = default is not None and default["state"] == "run" and default["decode"] == "ok" \
            and default["integrity"] == "complete" and dk is not None
        if c["option"] in na:
            if dok and k > dk:
                reasons.append("k=%d>%d" % (k, dk))
            else:
                notes.append("n/a")
        elif not dok:
            notes.append("no ref")
        elif k != dk:
            reasons.append("k=%d≠%d" % (k, dk))
    if reasons:
        return "FAIL " + reasons[0], reasons, "fail"
    if as_int(c["new_stderr"]):
        notes.append("+%s err" % c["new_stderr"])
    if as_int(c["new_stdout"]):
        notes.append("+%s out" % c["new_stdout"])
    if as_int(c["dropped"]):
        notes.append("d=%s" % c["dropped"])
    if c["option"] in no_trace:
        notes.append("no trace")
    head = "ok*" if c["gpuprof_msgs"] and c["option"] not in no_trace else "ok"
    inner = ([] if k is None else ["k=%d" % k]) + notes
    return head + (" (%s)" % ", ".join(inner) if inner else ""), [], "ok"


def load_rows(paths):
    rows = []
    for p in paths:
        try:
            with open(p, newline="") as f:
                for r in csv.DictReader(f):
                    rows.append({k: (r.get(k) or "") for k in FIELDS})
        except OSError as e:
            print("matrix_table: cannot read %s: %s" % (p, e.strerror), file=sys.stderr)
    return rows


def build_table(rows, na, titles, no_trace=frozenset()):
    """(markdown text, number of failed + skipped cells)."""
    wls, opts, by = [], [], {}
    for r in rows:
        if r["workload"] not in wls:
            wls.append(r["workload"])
        if r["option"] != "bare" and r["option"] not in opts:
            opts.append(r["option"])
        by[(r["workload"], r["option"])] = r
    out = list(titles)
    if titles:
        out.append("")
    args = {}
    for r in rows:
        if r["option"] != "bare" and r["args"] and r["option"] not in args:
            args[r["option"]] = r["args"]
    if args:
        out.append("Options of `gpuprof run -o FILE`: " + "; ".join(
            "%s = `%s`" % (o, args[o]) if o in args else "%s = none" % o for o in opts) + ".")
        out.append("")
    out.append("| workload | bare | " + " | ".join(opts) + " |")
    out.append("|---|---|" + "---|" * len(opts))
    fails, notes = [], []
    count = {"ok": 0, "fail": 0, "skip": 0, "notrun": 0}
    for wl in wls:
        bare, default = by.get((wl, "bare")), by.get((wl, "default"))
        btext, breasons = bare_verdict(bare)
        if breasons and btext != "not run":
            fails.append("FAIL %s × bare: %s%s" % (wl, "; ".join(breasons),
                                                    " — stderr: " + bare["err_tail"] if bare["err_tail"] else ""))
        cells = [btext]
        for o in opts:
            c = by.get((wl, o))
            if c is None:
                cells.append("not run")
                count["notrun"] += 1
                continue
            text, reasons, kind = cell_verdict(c, bare, default, na, no_trace)
            count[kind] += 1
            cells.append(text)
            if kind == "fail":
                extra = ""
                if c["err_tail"] and ("out≠" in reasons or reasons[0].startswith(("rc=", "timeout"))):
                    extra += " — stderr: " + c["err_tail"]
                if c["decode"] not in ("", "ok"):
                    extra += " — " + c["decode"]
                if c["files"] and any(x in ("truncated", "corrupt") or x.startswith("k=") for x in reasons):
                    extra += " — files: " + c["files"]
                if c["gpuprof_msgs"]:
                    extra += " — " + c["gpuprof_msgs"]
                if c.get("crash"):
                    extra += " — crash: " + c["crash"]
                fails.append("FAIL %s × %s: %s%s" % (wl, o, "; ".join(reasons), extra))
            elif kind == "ok":
                if c["gpuprof_msgs"] and o not in no_trace:
                    notes.append("note %s × %s: %s" % (wl, o, c["gpuprof_msgs"]))
                if as_int(c["new_stderr"]):
                    notes.append("note %s × %s: %s new stderr line(s), e.g. %s" % (
                        wl, o, c["new_stderr"], c["new_stderr_sample"]))
        out.append("| %s | %s |" % (wl, " | ".join(cells)))
    out.append("")
    out.extend(fails)
    out.extend(notes)
    if fails or notes:
        out.append("")
    out.append("Seconds per run (wall, including gpuprof's start and the end of the trace):")
    out.append("")
    out.append("| workload | bare | " + " | ".join(opts) + " |")
    out.append("|---|---|" + "---|" * len(opts))
    for wl in wls:
        secs = [(by.get((wl, o)) or {}).get("wall_s") or "-" for o in ["bare"] + opts]
        out.append("| %s | %s |" % (wl, " | ".join(secs)))
    out.append("")
    total = sum(count.values())
    out.append("MATRIX %d ok, %d FAIL, %d skipped, %d not run (of %d cells)" % (
        count["ok"], count["fail"], count["skip"], count["notrun"], total))
    return "\n".join(out) + "\n", count["fail"] + count["skip"]


def cmd_table(a):
    rows = load_rows(a.rows)
    if not rows:
        print("matrix_table: no rows", file=sys.stderr)
        return 2
    na = {o for o in a.kernels_na.split(",") if o}
    no_trace = {o for o in a.no_trace.split(",") if o}
    text, bad = build_table(rows, na, a.title or [], no_trace)
    sys.stdout.write(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cell")
    c.add_argument("--workload", required=True)
    c.add_argument("--option", required=True)
    c.add_argument("--row", required=True)
    c.add_argument("--state", default="run", choices=["run", "not run", "skip"])
    c.add_argument("--args", default="")
    c.add_argument("--rc", type=int, default=0)
    c.add_argument("--wall-ms", type=int, default=0)
    c.add_argument("--stdout")
    c.add_argument("--stderr")
    c.add_argument("--bare-stdout")
    c.add_argument("--bare-stderr")
    c.add_argument("--traces")
    c.add_argument("--status")
    c.add_argument("--gpuprof", default="build/bin/gpuprof")
    c.add_argument("--expect-no-trace", action="store_true",
                   help="the run must write no trace and say 'nothing was captured'")
    t = sub.add_parser("table")
    t.add_argument("rows", nargs="+")
    t.add_argument("--md")
    t.add_argument("--csv")
    t.add_argument("--title", action="append")
    t.add_argument("--kernels-na", default=KERNELS_NA)
    t.add_argument("--no-trace", default=NO_TRACE)
    a = ap.parse_args(argv)
    return cmd_cell(a) if a.cmd == "cell" else cmd_table(a)


if __name__ == "__main__":
    sys.exit(main())
